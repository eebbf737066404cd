/*
 * toy_model.h - a made-up model profile for the runtime's tests: n fp32 gradients of `elems`
 * elements ready evenly over the backward pass, `iteration_ms` of compute of which `forward_ms`
 * is the forward pass, on sm_90 (the GPU of the synthetic topology "gpus=4").  Header-only.
 */
#ifndef TOY_MODEL_H
#define TOY_MODEL_H

#include "acc_test.h"
#include "acc_tune.h"

#include <stdio.h>
#include <string.h>

static inline acc_profile_t *toy_model(const char *name, int n, uint64_t elems, double iteration_ms,
                                       double forward_ms)
{
    acc_profile_t *p = NULL;
    acc_profile_compute_t c;
    CHECK_OK(acc_profile_create(name, &p));
    for (int i = 0; i < n; i++) {
        char tensor[16];
        snprintf(tensor, sizeof(tensor), "t%03d", i);
        CHECK_OK(acc_profile_add_tensor(p, tensor, elems, ACC_DT_F32, (double)(i + 1) / n));
    }
    memset(&c, 0, sizeof(c));
    c.gpu = "sm_90";
    c.precision = "fp16";
    c.batch = 1;
    c.accumulation = 1;
    c.iteration_ms = iteration_ms;
    c.forward_ms = forward_ms;
    c.source = "tests/runtime/toy_model.h: a made-up model";
    CHECK_OK(acc_profile_add_compute(p, &c));
    return p;
}

/* The same, written as a profile file at path (a scratch file of the case's); path returned. */
static inline const char *toy_model_file(const char *path, const char *name, int n, uint64_t elems,
                                         double iteration_ms, double forward_ms)
{
    acc_profile_t *p = toy_model(name, n, elems, iteration_ms, forward_ms);
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_OK(acc_profile_dump_yaml(p, &b));
    CHECK_OK(acc_write_file(path, b.data, b.len));
    acc_buf_free(&b);
    acc_profile_destroy(p);
    return path;
}

#endif
