/*
 * acc.h - everything libacc offers, in one include: `#include <acc/acc.h>`, then link with
 * `pkg-config --libs acc` or the CMake target acc::acc.
 *
 * The conventions for errors (acc_status_t, acc_error_message()), ownership (create/destroy,
 * borrowed and taken pointers) and threads are stated once, at the top of acc_common.h.  The
 * headers below are in dependency order, each one a part of the library:
 *
 *   acc_common.h    status codes and messages, the logger, the settings table, hashing
 *   acc_topo.h      the machine: loading every topology format, paths, the fingerprint
 *   acc_plan.h      the plan IR, its YAML form, the verifier, MSCCL XML
 *   acc_compiler.h  the algorithm generators that turn a topology into verified plans
 *   acc_cost.h      the cost models: the NCCL 2.28 replica, acc's plan simulator, the bound
 *   acc_select.h    selection tables (which schedule for which message size) and the report
 *   acc_kernels.h   CUDA code generation, NVRTC compilation and the kernel cache
 *   acc_db.h        the SQLite database of topologies, plans, tables, kernels and tuning runs
 *   acc_tune.h      model profiles, the training-iteration simulator and the fusion search
 *   acc_runtime.h   communicators, the host executor, the CUDA driver layer, the single-GPU
 *                   executor
 *   acc_fusion.h    the fusion engine: gradients in buckets on streams, tuned online
 *
 * The build checks that this list is exactly the set of installed headers.
 */
#ifndef ACC_H
#define ACC_H

#include "acc_common.h"
#include "acc_topo.h"
#include "acc_plan.h"
#include "acc_cplan.h"
#include "acc_compiler.h"
#include "acc_cost.h"
#include "acc_select.h"
#include "acc_kernels.h"
#include "acc_db.h"
#include "acc_tune.h"
#include "acc_runtime.h"
#include "acc_fusion.h"

#endif /* ACC_H */
