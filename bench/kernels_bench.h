/*
 * kernels_bench.h - what the parts of bench_kernels share: the GPU part (kernels_gpu.c) and the
 * floors it measures and predicts with (kernels_floor.c).  Internal to bench/.
 */
#ifndef KERNELS_BENCH_H
#define KERNELS_BENCH_H

#include "acc_compiler.h"
#include "acc_cost.h"
#include "acc_runtime.h"

typedef struct {
    const char *topo, *arch;
    int coll; /* -1: all */
    int cpu_only, gpu_only, iters;
    uint64_t min, max;
} kb_opts_t;

/* What the device does in the same run, measured by kernels_floor.c. */
typedef struct {
    acc_cuda_info_t info;
    double copy_gbs;       /* device-to-device copy: GB read + written per second */
    double launch_us;      /* an empty kernel, back to back */
    double handoff_gpu_us; /* a flag from one block to another, release/acquire at GPU scope */
    double handoff_sys_us; /* the same at system scope */
} kb_device_t;

/* Measure the copy rate, the launch and the hand-offs on the current device (s: a stream;
 * a and b: buffers of `bytes` each). */
acc_status_t kb_measure(kb_device_t *d, void *a, void *b, size_t bytes, acc_cuda_stream_t s);

/* Two simulators of nranks ranks on the measured device (acc_sim_set_device), each over a
 * topology that describes it (nranks GPUs whose links are the device's memory, their latency
 * the hand-off at GPU scope, the single-GPU executor's): *pred with the device's figures and
 * links at the copy rate, for predictions, and *unit with no launch, a hand-off of 1 us and
 * memory and links too fast to matter, whose times are the hand-offs on a plan's critical
 * path.  Everything taken (also on failure, as far as made). */
acc_status_t kb_device_sims(const kb_device_t *d, int nranks, acc_topo_t *topo[2], acc_sim_t **pred,
                            acc_sim_t **unit);

/* fn(ctx, plan) for the plan as it is (Simple) and, when it has an LL kernel, for an LL copy. */
void kb_with_protocols(const acc_plan_t *p, void (*fn)(void *ctx, const acc_plan_t *p), void *ctx);

/* The GPU part: every plan with every protocol it has a kernel for, at every size. */
int kb_bench_gpu(acc_plan_t **plans, size_t np, const kb_opts_t *o);
/* Without a GPU: the predictions and floors for a device of d's figures (copy_gbs, launch_us,
 * handoff_gpu_us; info.sm and info.name describe it). */
int kb_model(acc_plan_t **plans, size_t np, const kb_opts_t *o, const kb_device_t *d);

#endif
