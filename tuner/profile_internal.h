/* Shared between the profile files of the tuner; not installed. */
#ifndef ACC_PROFILE_INTERNAL_H
#define ACC_PROFILE_INTERNAL_H

#include "acc_tune.h"

/* Limits a profile may declare.  They keep a malformed or hostile file from making the loader
 * allocate without bound; real models are far below them (GPT-2 XL: 580 tensors, 1.6e9
 * parameters). */
#define PROFILE_NAME_MAX    64
#define PROFILE_MAX_TENSORS (1 << 20)
#define PROFILE_MAX_PARAMS  (1ull << 50)

int profile_name_ok(const char *name);
int profile_precision_ok(const char *s);
/* "sm_80" or a GPU model name known to topo's hardware table -> compute capability. */
acc_status_t profile_resolve_gpu(const char *gpu, int *sm);
/* Compute entry i's invariants (see acc_profile_check). */
acc_status_t profile_check_compute(const acc_profile_t *p, const acc_profile_compute_t *c,
                                   size_t i);

#endif
