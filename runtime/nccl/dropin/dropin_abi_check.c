/*
 * Compiled against NCCL's own nccl.h (the build's, where one is installed, and the copies of
 * 2.28.9 and 2.32.3 in tests/data/nccl/, a ctest each): every entry of dropin_api.h that the
 * header declares must have the type the header gives it, so that the drop-in's list cannot
 * drift from NCCL's API.  An entry newer than the header is not looked for (its `since`), so
 * the check builds against every nccl.h from 2.28 on.  With DROPIN_ABI_DEVICE, the host side of
 * the device API (nccl_device/host.h, which declares ncclName only) is checked as well.  Which
 * functions of the newest header the list lacks, test_nccl_dropin.c's export check finds.
 * (The drop-in itself builds without nccl.h, from nccl_abi.h.)
 */
#include <nccl.h>
#ifdef DROPIN_ABI_DEVICE
#include <nccl_device/host.h>
#endif

#include "dropin_api.h"

#define SAME(fn, ret, params)                                                                      \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ret(*) params),                   \
                   "dropin_api.h: " #fn " differs from NCCL's header");
#define BOTH(ret, name, params)      SAME(nccl##name, ret, params) SAME(pnccl##name, ret, params)
#define ONLY_NCCL(ret, name, params) SAME(nccl##name, ret, params)
#define SKIP(ret, name, params)

/* What this header declares, by the first version that has it. */
#define V22809_CHECK BOTH
#if NCCL_VERSION_CODE >= 22902
#define V22902_CHECK BOTH
#else
#define V22902_CHECK SKIP
#endif
#if NCCL_VERSION_CODE >= 22907
#define V22907_CHECK BOTH
#else
#define V22907_CHECK SKIP
#endif
#if NCCL_VERSION_CODE >= 23004
#define V23004_CHECK BOTH
#else
#define V23004_CHECK SKIP
#endif
#ifdef NCCL_COLLCONFIG_INITIALIZER
#define COLLCONFIG_CHECK BOTH
#else
#define COLLCONFIG_CHECK SKIP
#endif
#ifdef NCCL_ENCRYPTION_CONFIG_INITIALIZER
#define ENCRYPTION_CHECK BOTH
#else
#define ENCRYPTION_CHECK SKIP
#endif
/* From 2.30 nccl.h declares ncclResetDebugInit only under NCCL_OS_LINUX, which nothing defines,
 * and makes it an empty macro otherwise; the library exports it all the same. */
#ifdef ncclResetDebugInit
#define LINUX_CHECK SKIP
#else
#define LINUX_CHECK BOTH
#endif
#ifdef DROPIN_ABI_DEVICE
#define DEVICE_CHECK ONLY_NCCL
#else
#define DEVICE_CHECK SKIP
#endif
/* Declared for Windows only; checked against the library's export list instead. */
#define WINDOWS_CHECK SKIP

#define DROPIN_SAME_TYPE(since, ret, name, params, args) since##_CHECK(ret, name, params)
DROPIN_API(DROPIN_SAME_TYPE)

#ifdef DROPIN_ABI_SELFTEST
/* An entry that differs from the header (one parameter short), which the check must reject: a
 * ctest builds this and expects the build to fail. */
SAME(ncclAllReduce, ncclResult_t,
     (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t))
#endif

/* ISO C wants something in a translation unit besides assertions. */
extern const int dropin_abi_checked;
const int dropin_abi_checked = NCCL_VERSION_CODE;
