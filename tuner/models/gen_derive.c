/*
 * Compute times where none is published: every shipped profile must have one for the GPU of
 * every shipped platform (schedules/platforms/), and where no publication gives it, the
 * generator derives it and marks it assumed (tuner/models/README.md, "Compute times"):
 *
 *   iteration_ms = 3 x forward FLOPs per sample x batch / (the GPU's sustained rate),
 *   sustained rate = its published peak x the fraction of peak this model reaches on the
 *                    GPU with a published time whose peak is nearest,
 *
 * 3 x forward FLOPs being a training step (the backward pass costs twice the forward), the
 * peak that of mixed precision (dense tensor-core fp16/bf16 with fp32 accumulation), and the
 * batch, accumulation and precision those of that published entry (fp16 on GPUs without
 * bf16).  The utilization carries over the model's own efficiency (memory-bound CNNs reach a
 * fifth of peak, transformers half) from the most similar GPU; it does not know that a newer
 * GPU usually reaches a smaller fraction of its peak, so derived times lean fast.
 */
#include "gen_net.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Published peak throughput for mixed-precision training, per compute capability of the GPUs
 * the profiles or the shipped platforms name.  `gpu` is the name derived entries carry. */
typedef struct {
    int sm;
    const char *gpu;
    double tflops; /* dense fp16/bf16 tensor cores, fp32 accumulation */
    int bf16;
    const char *source;
} gen_gpu_t;

static const gen_gpu_t gpus[] = {
    {70, "V100 SXM2 16GB", 125.0, 0,
     "NVIDIA Tesla V100 datasheet: Tensor Performance 125 TFLOPS (SXM2)"},
    {80, "A100 SXM4 40GB", 312.0, 1,
     "NVIDIA A100 datasheet: BF16 and FP16 Tensor Core 312 TFLOPS (624 with sparsity)"},
    {86, "RTX 3090 (sm_86)", 71.0, 1,
     "NVIDIA Ampere GA102 architecture whitepaper: GeForce RTX 3090, peak FP16 Tensor TFLOPS "
     "with FP32 accumulate 71 (142 with sparsity)"},
    {89, "L40S", 362.05, 1,
     "NVIDIA L40S datasheet: BF16 and FP16 Tensor Core 362.05 TFLOPS (733 "
     "with sparsity)"},
    {90, "H100 SXM5 80GB", 989.4, 1,
     "NVIDIA H100 datasheet: BF16 and FP16 Tensor Core 1,979 TFLOPS with sparsity, 989.4 dense "
     "(the H200 has the same)"},
    {100, "B200", 2250.0, 1,
     "NVIDIA HGX B200 datasheet: FP16 and BF16 Tensor Core 36 PFLOPS for 8 GPUs with sparsity, "
     "2,250 "
     "TFLOPS dense per GPU at 1,000 W (glennklockwood.com/garden/processors/B200; the GB200 "
     "part at 1,200 W: 2,500)"},
};

/* The compute capabilities of the shipped platforms' GPUs (V100, A100, L40S, H100 and H200,
 * B200 and GB200); tests/tuner/test_profiles.c checks that every platform's GPU is among them. */
static const int platform_sms[] = {70, 80, 89, 90, 100};

static const gen_gpu_t *gpu_of(int sm)
{
    for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
        if (gpus[i].sm == sm)
            return &gpus[i];
    return NULL;
}

static int mixed(const char *precision)
{
    return strcmp(precision, "fp16") == 0 || strcmp(precision, "bf16") == 0;
}

static int has_sm(const acc_profile_t *p, int sm)
{
    for (size_t i = 0; i < p->ncompute; i++)
        if (p->compute[i].sm == sm)
            return 1;
    return 0;
}

acc_status_t gen_derive_compute(acc_profile_t *p)
{
    size_t n = p->ncompute; /* the published entries; derived ones are appended */

    for (size_t t = 0; t < sizeof(platform_sms) / sizeof(platform_sms[0]); t++) {
        const gen_gpu_t *target = gpu_of(platform_sms[t]), *from = NULL;
        const acc_profile_compute_t *src = NULL;
        acc_profile_compute_t c;
        double best = 0, util, ms;
        char source[1024];
        acc_status_t st;

        if (has_sm(p, target->sm))
            continue;
        for (size_t i = 0; i < n; i++) {
            const gen_gpu_t *g = gpu_of(p->compute[i].sm);
            double d = g ? fabs(log(g->tflops / target->tflops)) : 0;
            if (g && mixed(p->compute[i].precision) && (!src || d < best)) {
                src = &p->compute[i];
                from = g;
                best = d;
            }
        }
        if (!src || !p->forward_flops)
            return acc_error_set(ACC_ERR_NOT_FOUND,
                                 "%s: no published mixed-precision time (or no FLOP count) to "
                                 "derive sm_%d's from",
                                 p->name, target->sm);
        /* FLOPs of one micro-batch over the time, against the GPU's peak. */
        util = 3.0 * (double)p->forward_flops * src->batch / (src->iteration_ms * 1e-3) /
               (from->tflops * 1e12);
        ms = 3.0 * (double)p->forward_flops * src->batch / (target->tflops * 1e12 * util) * 1e3;
        memset(&c, 0, sizeof(c));
        c.gpu = (char *)target->gpu;
        c.precision = (char *)(target->bf16 ? src->precision : "fp16");
        c.batch = src->batch;
        c.accumulation = src->accumulation;
        c.iteration_ms = round(ms * 1e3) / 1e3;
        c.assumed = 1;
        snprintf(source, sizeof(source),
                 "derived, not published (no time found for this GPU): 3 x %.2f GFLOP per "
                 "sample x batch %d at %.1f%% of the %s's %.1f TFLOPS (%s), the fraction of peak "
                 "this profile reaches on %s (%.3f ms at batch %d, %.1f of %.1f TFLOPS)",
                 (double)p->forward_flops * 1e-9, src->batch, 100.0 * util, target->gpu,
                 target->tflops, target->source,
                 strncmp(src->gpu, "sm_", 3) == 0 ? from->gpu : src->gpu, src->iteration_ms,
                 src->batch, util * from->tflops, from->tflops);
        c.source = source;
        if ((st = acc_profile_add_compute(p, &c)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}
