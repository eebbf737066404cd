/*
 * acc_tune.h - the tuner: model profiles, the training-iteration simulator and the search for the
 * best gradient-fusion size and stream count per (model, topology, network).
 *
 * Conventions (as in acc_common.h).  Functions that can fail return an acc_status_t and record a
 * message naming the file and line (or the object) involved.  acc_x_create / acc_x_load hand the
 * caller a new object to release with acc_x_destroy; destroy(NULL) does nothing.  Pointer
 * parameters are borrowed unless marked "taken"; strings inside a returned object live as long as
 * the object.  Objects are not locked: one object, one thread at a time; a loaded profile is
 * read-only and may then be shared between threads.
 *
 * Sections: model profiles (below).  The iteration simulator and the search strategies build on
 * the profile types and are declared after them.
 */
#ifndef ACC_TUNE_H
#define ACC_TUNE_H

#include "acc_common.h"
#include "acc_plan.h" /* acc_dtype_t */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- model profiles -----------------------------------------------------------------------
 *
 * A model profile describes what data-parallel training of one model asks of the network: every
 * parameter tensor, in the order its gradient becomes final during the backward pass, with its
 * element count, the data type its gradient is reduced in, and the moment it is ready as a
 * fraction of the backward pass; and, per GPU generation, the measured compute time of one
 * training iteration, each with the publication it comes from.  The text form (YAML, version 1)
 * is documented in tuner/models/README.md; the shipped profiles are generated from the models'
 * architecture definitions by tuner/models/gen_profiles.c.
 */

/* The YAML format version this library reads and writes. */
#define ACC_PROFILE_VERSION 1

typedef struct {
    char *name;        /* the framework's parameter name, e.g. "layer4.2.conv3.weight" */
    uint64_t elems;    /* elements, > 0 */
    acc_dtype_t dtype; /* of the gradient as it is all-reduced */
    /* Fraction of the backward pass (0..1) after which this gradient is final.  Non-decreasing
     * along the tensor list; 1 means at the very end of the backward pass. */
    double ready;
} acc_profile_tensor_t;

typedef struct {
    char *gpu;       /* as written: "sm_80" or a GPU model name acc knows ("A100 SXM4 80GB") */
    int sm;          /* compute capability resolved from gpu, e.g. 80 */
    char *precision; /* math precision: "fp32", "tf32", "fp16" or "bf16" (the last two: mixed) */
    int batch;       /* samples per GPU in one forward+backward pass (one micro-batch) */
    /* Micro-batches the source's recipe accumulates before each gradient reduction (>= 1).  The
     * gradients are reduced once per accumulation, during the backward pass of the last one. */
    int accumulation;
    double iteration_ms; /* one micro-batch: forward + backward (+ optimizer step), one GPU */
    double forward_ms;   /* the forward part when published; 0 when not */
    char *source;        /* where the figure comes from, and how it was turned into a time */
} acc_profile_compute_t;

typedef struct {
    char *name;        /* file stem and database key: "resnet50" */
    char *description; /* "" when none */
    char *sample;      /* what one sample of `batch` is ("one 224x224 RGB image"); "" when none */
    char **sources;    /* where the architecture and the published totals come from */
    size_t nsources;
    uint64_t params;        /* total elements = sum of the tensors' elems */
    uint64_t forward_flops; /* forward FLOPs of one sample (2 per multiply-add); 0 unknown */
    acc_profile_tensor_t *tensors;
    size_t ntensors;
    acc_profile_compute_t *compute;
    size_t ncompute;
} acc_profile_t;

/* An empty profile named `name` (letters, digits, '.', '_', '-'), to be filled with the calls
 * below; acc_profile_check() tells when it is complete. */
acc_status_t acc_profile_create(const char *name, acc_profile_t **out);
void acc_profile_destroy(acc_profile_t *p);

acc_status_t acc_profile_set_description(acc_profile_t *p, const char *text);
acc_status_t acc_profile_set_sample(acc_profile_t *p, const char *text);
acc_status_t acc_profile_add_source(acc_profile_t *p, const char *text);
/* Append a tensor (the list is in gradient-ready order) and add its elements to p->params. */
acc_status_t acc_profile_add_tensor(acc_profile_t *p, const char *name, uint64_t elems,
                                    acc_dtype_t dtype, double ready);
/* Append a compute entry; the strings are copied and c->sm is resolved from c->gpu (an
 * unknown GPU is ACC_ERR_NOT_FOUND). */
acc_status_t acc_profile_add_compute(acc_profile_t *p, const acc_profile_compute_t *c);

/* The invariants every loaded or dumped profile satisfies: at least one tensor, unique names,
 * elems > 0, ready within 0..1 and non-decreasing, params equal to the sum of the tensors,
 * compute entries with batch >= 1, accumulation >= 1, iteration_ms > 0, 0 <= forward_ms <
 * iteration_ms.  The message names the tensor or entry at fault. */
acc_status_t acc_profile_check(const acc_profile_t *p);

/* Text form.  `name` (a path or "<string>") is used in messages, which read "NAME:LINE: ...".
 * load(dump(p)) equals p, and dumping a loaded dump gives the same bytes. */
acc_status_t acc_profile_load_yaml(const char *text, size_t len, const char *name,
                                   acc_profile_t **out);
acc_status_t acc_profile_load_file(const char *path, acc_profile_t **out);
acc_status_t acc_profile_dump_yaml(const acc_profile_t *p, acc_buf_t *out);

/* The first compute entry for compute capability `sm` and, unless `precision` is NULL, that
 * precision; NULL when there is none.  Entries are listed mixed precision first. */
const acc_profile_compute_t *acc_profile_find_compute(const acc_profile_t *p, int sm,
                                                      const char *precision);
/* Backward time of one micro-batch: iteration_ms - forward_ms when forward_ms is known, else
 * two thirds of iteration_ms (backward costs about twice the forward pass). */
double acc_profile_backward_ms(const acc_profile_compute_t *c);
/* Bytes of gradient reduced per iteration: the sum of elems x the size of each dtype. */
uint64_t acc_profile_grad_bytes(const acc_profile_t *p);

/* The directory of shipped profiles: ACC_MODEL_DIR when set, else the installed copy, else the
 * source tree this build came from.  Borrowed. */
const char *acc_profile_builtin_dir(void);
/* Names of the profiles there (file stems of *.yaml), sorted; free with acc_profile_names_free. */
acc_status_t acc_profile_builtin_list(char ***names, size_t *count);
void acc_profile_names_free(char **names, size_t count);
/* Load <builtin dir>/<name>.yaml.  An unknown name is ACC_ERR_NOT_FOUND naming the directory
 * and the profiles it holds. */
acc_status_t acc_profile_load_builtin(const char *name, acc_profile_t **out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_TUNE_H */
