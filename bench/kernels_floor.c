/*
 * bench_kernels' floors: what the device itself takes for the parts every kernel call is made
 * of, measured in the same run - the copy rate, an empty launch back to back, and one flag
 * passed from one block to another with release/acquire at GPU scope (ranks on one device) and
 * at system scope (ranks on different GPUs) - and the simulator set up with them, which gives a
 * plan's predicted time on the device and the hand-offs on its critical path.  A plan's floor
 * is launch + hand-offs x hand-off: no kernel that passes its data the plan's way can be faster.
 */
#include "kernels_bench.h"

#include "exec/gpu_exec.h"

#include <stdio.h>
#include <string.h>

/* Kernels of the floors, built with NVRTC for the device. */
static const char floor_src[] =
    "typedef unsigned int u32;\n"
    "extern \"C\" __global__ void acc_empty(void)\n"
    "{\n"
    "}\n"
    "template <int SYS> __device__ __forceinline__ u32 ld_acquire(const u32 *p)\n"
    "{\n"
    "    u32 v;\n"
    "    if (SYS)\n"
    "        asm volatile(\"ld.acquire.sys.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"ld.acquire.gpu.u32 %0, [%1];\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
    "    return v;\n"
    "}\n"
    "template <int SYS> __device__ __forceinline__ void st_release(u32 *p, u32 v)\n"
    "{\n"
    "    if (SYS)\n"
    "        asm volatile(\"st.release.sys.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "    else\n"
    "        asm volatile(\"st.release.gpu.u32 [%0], %1;\" : : \"l\"(p), \"r\"(v) : \"memory\");\n"
    "}\n"
    "/* Blocks 0 and 1 raise one counter in turn, each after seeing the other's value: block 0\n"
    " * to 1, 3, 5, ..., block 1 to 2, 4, 6, ...: 2n hand-offs.  The counter starts at 0. */\n"
    "template <int SYS> __device__ void pingpong(u32 *flag, u32 n)\n"
    "{\n"
    "    if (threadIdx.x != 0)\n"
    "        return;\n"
    "    for (u32 i = 0; i < n; ++i) {\n"
    "        u32 mine = 2u * i + 1u + blockIdx.x;\n"
    "        while (ld_acquire<SYS>(flag) != mine - 1u)\n"
    "            ;\n"
    "        st_release<SYS>(flag, mine);\n"
    "    }\n"
    "}\n"
    "extern \"C\" __global__ void acc_pingpong_gpu(u32 *flag, u32 n)\n"
    "{\n"
    "    pingpong<0>(flag, n);\n"
    "}\n"
    "extern \"C\" __global__ void acc_pingpong_sys(u32 *flag, u32 n)\n"
    "{\n"
    "    pingpong<1>(flag, n);\n"
    "}\n";

#define LAUNCHES 2000
/* The device that counts hand-offs: memory too fast to matter, and links at 10 TB/s, the most a
 * topology's link may have, over which 64 KiB (the largest floor size) take a few ns. */
#define UNIT_MEM_GBS  1e9
#define UNIT_LINK_GBS 1e4
/* Sizes up to this have a floor: above it, moving the data is what takes the time. */
#define FLOOR_MAX_BYTES 65536
#define PASSES          50000 /* per block: 2 x PASSES hand-offs, some tens of milliseconds */

typedef struct {
    acc_cuda_stream_t s;
    acc_cuda_event_t e0, e1;
} stopwatch_t;

static acc_status_t elapsed_ms(stopwatch_t *t, float *ms)
{
    acc_status_t st = acc_cuda_event_record(t->e1, t->s);
    if (st == ACC_OK)
        st = acc_cuda_stream_sync(t->s);
    return st == ACC_OK ? acc_cuda_event_ms(t->e0, t->e1, ms) : st;
}

static acc_status_t copy_rate(stopwatch_t *t, void *a, void *b, size_t bytes, double *gbs)
{
    float ms = 0;
    acc_status_t st;
    int i;
    if ((st = acc_cuda_dtod_async(b, a, bytes, t->s)) != ACC_OK ||
        (st = acc_cuda_event_record(t->e0, t->s)) != ACC_OK)
        return st;
    for (i = 0; i < 10 && st == ACC_OK; i++)
        st = acc_cuda_dtod_async(b, a, bytes, t->s);
    if (st != ACC_OK || (st = elapsed_ms(t, &ms)) != ACC_OK)
        return st;
    /* A copy reads and writes every byte. */
    *gbs = ms > 0 ? 2.0 * (double)bytes * 10 / (ms * 1e-3) / 1e9 : 0;
    return ACC_OK;
}

static acc_status_t launch_floor(stopwatch_t *t, void *fn, double *us)
{
    float ms = 0;
    acc_status_t st = ACC_OK;
    int i;
    for (i = 0; i < 10 && st == ACC_OK; i++)
        st = rt_cuda_launch(fn, 1, 1, 32, NULL, t->s);
    if (st == ACC_OK)
        st = acc_cuda_event_record(t->e0, t->s);
    for (i = 0; i < LAUNCHES && st == ACC_OK; i++)
        st = rt_cuda_launch(fn, 1, 1, 32, NULL, t->s);
    if (st == ACC_OK && (st = elapsed_ms(t, &ms)) == ACC_OK)
        *us = (double)ms * 1e3 / LAUNCHES;
    return st;
}

/* One launch of 2 x PASSES hand-offs, less the launch itself. */
static acc_status_t handoff(stopwatch_t *t, void *fn, void *flag, double launch_us, double *us)
{
    uint32_t n = PASSES;
    uint64_t dflag = (uint64_t)(uintptr_t)flag;
    void *args[2] = {&dflag, &n};
    float ms = 0;
    /* The memset runs on the legacy stream, which t->s does not wait for: wait for it here. */
    acc_status_t st = acc_cuda_memset(flag, 0, 4);
    if (st == ACC_OK)
        st = acc_cuda_stream_sync(NULL);
    if (st == ACC_OK)
        st = acc_cuda_event_record(t->e0, t->s);
    if (st == ACC_OK)
        st = rt_cuda_launch(fn, 2, 1, 32, args, t->s);
    if (st == ACC_OK && (st = elapsed_ms(t, &ms)) == ACC_OK)
        *us = ((double)ms * 1e3 - launch_us) / (2.0 * PASSES);
    return st;
}

acc_status_t kb_measure(kb_device_t *d, void *a, void *b, size_t bytes, acc_cuda_stream_t s)
{
    char arch[16];
    void *cubin = NULL, *module = NULL, *empty, *gpu, *sys;
    size_t size = 0;
    stopwatch_t t = {s, NULL, NULL};
    acc_status_t st;

    snprintf(arch, sizeof(arch), "sm_%d", d->info.sm);
    if ((st = acc_cuda_event_create(&t.e0)) != ACC_OK ||
        (st = acc_cuda_event_create(&t.e1)) != ACC_OK ||
        (st = copy_rate(&t, a, b, bytes, &d->copy_gbs)) != ACC_OK ||
        (st = acc_nvrtc_compile(floor_src, "floors", arch, &cubin, &size, NULL)) != ACC_OK ||
        (st = rt_cuda_module_load(cubin, &module)) != ACC_OK ||
        (st = rt_cuda_module_function(module, "acc_empty", &empty)) != ACC_OK ||
        (st = rt_cuda_module_function(module, "acc_pingpong_gpu", &gpu)) != ACC_OK ||
        (st = rt_cuda_module_function(module, "acc_pingpong_sys", &sys)) != ACC_OK)
        goto out;
    if ((st = launch_floor(&t, empty, &d->launch_us)) == ACC_OK &&
        (st = handoff(&t, gpu, a, d->launch_us, &d->handoff_gpu_us)) == ACC_OK)
        st = handoff(&t, sys, a, d->launch_us, &d->handoff_sys_us);
out:
    rt_cuda_module_unload(module);
    acc_mem_free(cubin);
    acc_cuda_event_destroy(t.e0);
    acc_cuda_event_destroy(t.e1);
    return st;
}

/* The device as a topology: nranks GPUs on one switch whose links are the device's memory at
 * link_gbs (the model name is no part's, so that nothing takes them for NVLink parts). */
static acc_status_t device_topo(const kb_device_t *d, int nranks, double link_gbs, acc_topo_t **out)
{
    acc_buf_t b;
    acc_status_t st;
    int r;

    acc_buf_init(&b);
    acc_buf_printf(&b,
                   "version: 1\nname: emulated-sm%d\n"
                   "description: \"%d ranks on one %s: every link is its memory at %.0f GB/s, "
                   "a hand-off %.2f us\"\n"
                   "node:\n  cpus:\n    - {id: 0}\n  gpus:\n",
                   d->info.sm, nranks, d->info.name, link_gbs, d->handoff_gpu_us);
    for (r = 0; r < nranks; r++)
        acc_buf_printf(&b, "    - {id: %d, model: \"emulated rank\", sm: %d, numa: 0}\n", r,
                       d->info.sm);
    acc_buf_puts(&b, "  pci_switches:\n    - {id: 0, numa: 0}\n  links:\n"
                     "    - {a: PCI0, b: CPU0, kind: pcie, gen: 5, width: 16}\n");
    for (r = 0; r < nranks; r++)
        acc_buf_printf(&b, "    - {a: GPU%d, b: PCI0, kind: pcie, bw: %.1f, lat_us: %.3f}\n", r,
                       link_gbs, d->handoff_gpu_us);
    st = acc_buf_status(&b);
    if (st == ACC_OK)
        st = acc_topo_load_buffer(b.data, b.len, "emulated-device.yaml", out);
    acc_buf_free(&b);
    return st;
}

acc_status_t kb_device_sims(const kb_device_t *d, int nranks, acc_topo_t *topo[2], acc_sim_t **pred,
                            acc_sim_t **unit)
{
    acc_sim_device_t dev = {d->launch_us, d->handoff_gpu_us, d->copy_gbs};
    acc_sim_device_t one = {0.0, 1.0, UNIT_MEM_GBS};
    acc_status_t st;

    *pred = *unit = NULL;
    if ((st = device_topo(d, nranks, d->copy_gbs, &topo[0])) != ACC_OK ||
        (st = device_topo(d, nranks, UNIT_LINK_GBS, &topo[1])) != ACC_OK)
        return st;
    if ((st = acc_sim_create(topo[0], pred)) == ACC_OK &&
        (st = acc_sim_set_device(*pred, &dev)) == ACC_OK &&
        (st = acc_sim_create(topo[1], unit)) == ACC_OK)
        st = acc_sim_set_device(*unit, &one);
    return st;
}

void kb_with_protocols(const acc_plan_t *p, void (*fn)(void *ctx, const acc_plan_t *p), void *ctx)
{
    acc_plan_t *ll = NULL;
    fn(ctx, p);
    if (acc_kernel_supports(p, ACC_PROTO_LL) != ACC_OK || acc_plan_clone(p, &ll) != ACC_OK) {
        acc_error_clear();
        return;
    }
    ll->proto = ACC_PROTO_LL;
    fn(ctx, ll);
    acc_plan_destroy(ll);
}

typedef struct {
    const kb_opts_t *o;
    const kb_device_t *d;
    acc_sim_t *pred, *unit;
} model_t;

static void model_plan(void *ctx, const acc_plan_t *p)
{
    model_t *m = ctx;
    uint64_t size;
    for (size = m->o->min; size <= m->o->max; size *= 4) {
        acc_sim_result_t pr, un;
        if (acc_sim_plan(m->pred, p, size, ACC_DT_F32, &pr) != ACC_OK ||
            acc_sim_plan(m->unit, p, size, ACC_DT_F32, &un) != ACC_OK) {
            printf("%-14s %-8s %-6s %11llu %s\n", acc_coll_name(p->coll), p->algo,
                   acc_proto_name(p->proto), (unsigned long long)size, acc_error_message());
            return;
        }
        printf("%-14s %-8s %-6s %11llu %10.1f", acc_coll_name(p->coll), p->algo,
               acc_proto_name(p->proto), (unsigned long long)size, pr.time_us);
        if (size <= FLOOR_MAX_BYTES)
            printf(" %8.1f %9.1f\n", un.time_us,
                   m->d->launch_us + un.time_us * m->d->handoff_gpu_us);
        else
            printf(" %8s %9s\n", "-", "-");
    }
}

int kb_model(acc_plan_t **plans, size_t np, const kb_opts_t *o, const kb_device_t *d)
{
    model_t m = {o, d, NULL, NULL};
    acc_topo_t *topo[2] = {NULL, NULL};
    size_t i;
    int rc = 1;

    if (kb_device_sims(d, plans[0]->nranks, topo, &m.pred, &m.unit) != ACC_OK) {
        fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
        goto out;
    }
    printf("# a model, no GPU: %d ranks on a device of launch %.2f us, hand-off %.3f us, copy "
           "%.0f GB/s\n",
           plans[0]->nranks, d->launch_us, d->handoff_gpu_us, d->copy_gbs);
    printf("%-14s %-8s %-6s %11s %10s %8s %9s\n", "collective", "algo", "proto", "size B",
           "pred us", "hand", "floor us");
    for (i = 0; i < np; i++)
        kb_with_protocols(plans[i], model_plan, &m);
    rc = 0;
out:
    acc_sim_destroy(m.pred);
    acc_sim_destroy(m.unit);
    acc_topo_destroy(topo[0]);
    acc_topo_destroy(topo[1]);
    return rc;
}
