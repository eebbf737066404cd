/*************************************************************************
 * SPDX-FileCopyrightText: Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
 * SPDX-License-Identifier: Apache-2.0
 *
 * See LICENSE.txt for more license information
 *************************************************************************/

#ifndef _NCCL_DEVICE_GIN_SESSION__TYPES_H_
#define _NCCL_DEVICE_GIN_SESSION__TYPES_H_
#if defined(NCCL_OS_LINUX)
#include "../gin.h"
#endif
#endif
