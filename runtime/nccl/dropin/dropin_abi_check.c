/*
 * Built only where NCCL's own nccl.h is installed: every entry of dropin_api.h must have the
 * type nccl.h gives that function, so that the drop-in's list cannot drift from NCCL's API.
 * (The drop-in itself builds without nccl.h, from nccl_abi.h.)
 */
#include <nccl.h>

#include "dropin_api.h"

#define DROPIN_SAME_TYPE(ret, name, params, args)                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&nccl##name), ret(*) params),           \
                   "dropin_api.h: nccl" #name " differs from nccl.h");                             \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&pnccl##name), ret(*) params),          \
                   "dropin_api.h: pnccl" #name " differs from nccl.h");
DROPIN_API(DROPIN_SAME_TYPE)
