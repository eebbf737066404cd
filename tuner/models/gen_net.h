/*
 * gen_net.h - what the profile generator knows about a network: its operations in forward
 * order, each with its forward FLOPs per sample and the parameter tensors it owns, and the
 * published compute times of a training iteration.  gen_models.c describes the models with it;
 * gen_profiles.c turns a description into a profile (gradient-ready order and timeline).
 */
#ifndef ACC_GEN_NET_H
#define ACC_GEN_NET_H

#include "acc_tune.h"

typedef struct net net_t;

/* Start the next operation in forward order.  flops: forward FLOPs per sample, 2 per
 * multiply-add of a convolution or matrix product; 0 for normalisation, embedding look-ups and
 * other element-wise work.  data_input: the operation reads the network's input, so its backward
 * pass computes only the weight gradient (half the work of the other layers). */
void net_op(net_t *n, uint64_t flops, int data_input);
/* A parameter tensor of the current operation, in the framework's definition order. */
void net_param(net_t *n, uint64_t elems, const char *fmt, ...) ACC_PRINTF(3, 4);

/* One published compute figure.  Exactly one of samples_per_s (throughput of one GPU) and
 * step_ms (time of one optimizer step of batch x accumulation samples) is set. */
typedef struct {
    const char *gpu;       /* "sm_70" or a GPU model name acc knows */
    const char *precision; /* fp32, tf32, fp16, bf16 */
    int batch;             /* per GPU, per micro-batch */
    int accumulation;      /* micro-batches per optimizer step */
    double samples_per_s;
    double step_ms;
    const char *source;
} gen_compute_t;

typedef struct {
    const char *name;
    const char *description;
    const char *sample;
    const char *const *sources; /* NULL-terminated */
    const gen_compute_t *compute;
    size_t ncompute;
    void (*build)(net_t *n);
} gen_model_t;

extern const gen_model_t gen_models[];
extern const size_t gen_model_count;

/* Append a compute entry, marked assumed, for each shipped platform's GPU that p has none for,
 * derived from p's forward FLOPs and a published time on another GPU (gen_derive.c). */
acc_status_t gen_derive_compute(acc_profile_t *p);

#endif
