/*
 * bench_kernels on a GPU: every plan of the topology with every protocol it has a kernel for
 * (Simple; LL up to 64 MiB, where it could win), at every size from --min to --max (x4), on the
 * single-GPU executor (all ranks emulated on the device), beside the device's own figures
 * measured first in the same run (kernels_floor.c):
 *   - per call: the time, the simulator's prediction for the device (acc_sim_set_device over
 *     a topology whose links are the device's memory) and their ratio, the bytes the plan's
 *     operations read and write and that traffic's rate against the copy rate;
 *   - per plan at 4 KiB and 64 KiB: the floor - launch + the hand-offs on the plan's critical
 *     path x one hand-off at GPU scope - and the measured time's ratio to it (target <= 1.5);
 *   - "fit" lines: every figure the simulator's constants are to be fitted from, with the
 *     device, driver and date, for a later session to read back.
 * SIZE is the bytes of each rank's largest buffer (nccl-tests' convention: allreduce in and out,
 * allgather out, reduce_scatter in), which is NCCL's nBytes; fp32 sums.
 */
#include "kernels_bench.h"

#include "exec/gpu_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* LL carries half a line of data; past this it cannot win and its staging is twice Simple's. */
#define LL_MAX_BYTES (64ull << 20)
#define FLOOR_SIZES  2
static const uint64_t floor_sizes[FLOOR_SIZES] = {4096, 65536};

typedef struct {
    const kb_opts_t *o;
    kb_device_t d;
    acc_cuda_stream_t s;
    acc_cuda_event_t e0, e1;
    void *in[ACC_GPU_MAX_RANKS], *out[ACC_GPU_MAX_RANKS];
    acc_topo_t *dev_topo[2]; /* the device as topologies, for predictions and floors */
    acc_sim_t *sim, *unit;
    double floor_us[FLOOR_SIZES]; /* of the current plan, at floor_sizes; 0: not measured */
    double meas_us[FLOOR_SIZES];
    double handoffs[FLOOR_SIZES];
    acc_buf_t floors; /* the floors table, a line per plan and protocol */
} bench_t;

/* Elements per rank of a call whose largest per-rank buffer is `bytes`. */
static uint64_t count_for(const acc_plan_t *p, uint64_t bytes)
{
    uint64_t count = bytes / 4;
    if (p->coll == ACC_COLL_ALLGATHER || p->coll == ACC_COLL_REDUCE_SCATTER)
        count /= (uint64_t)p->nranks;
    return count;
}

/* One call of count elements, timed over iters launches after 3 to warm up; 0 on failure. */
static double time_call(bench_t *b, acc_gpu_exec_t *x, uint64_t count, int iters)
{
    float ms = 0;
    int it;
    for (it = 0; it < 3; it++)
        acc_gpu_exec_launch(x, count, b->in, b->out, 0, b->s);
    acc_cuda_event_record(b->e0, b->s);
    for (it = 0; it < iters; it++)
        acc_gpu_exec_launch(x, count, b->in, b->out, 0, b->s);
    acc_cuda_event_record(b->e1, b->s);
    if (acc_gpu_exec_check(x, b->s) != ACC_OK || acc_cuda_event_ms(b->e0, b->e1, &ms) != ACC_OK)
        return 0;
    return (double)ms * 1e3 / iters;
}

static void fit_line(const acc_plan_t *p, uint64_t size, double us, double pred, double h,
                     uint64_t operand, int copies)
{
    printf("fit run coll=%s algo=%s proto=%s ranks=%d lanes=%d bytes=%llu measured_us=%.3f "
           "predicted_us=%.3f handoffs=%.2f operand_bytes=%llu copies=%d\n",
           acc_coll_name(p->coll), p->algo, acc_proto_name(p->proto), p->nranks, p->nlanes,
           (unsigned long long)size, us, pred, h, (unsigned long long)operand, copies);
}

/* One size of one plan: measure, predict, print. */
static void one_size(bench_t *b, const acc_plan_t *p, acc_gpu_exec_t *x, uint64_t size)
{
    uint64_t count = count_for(p, size), rd = 0, wr = 0;
    int copies = acc_gpu_exec_copies(x, count), iters = b->o->iters * (size < (16u << 20) ? 10 : 1);
    unsigned threads = acc_kthreads(p->proto, gx_slice_bytes(4, gx_max_chunk(p, count), copies));
    double us = time_call(b, x, count, iters), pred = 0, rate;
    acc_sim_result_t r;
    int f;

    if (us <= 0) {
        printf("%-14s %-8s %-6s %11llu %s\n", acc_coll_name(p->coll), p->algo,
               acc_proto_name(p->proto), (unsigned long long)size, acc_error_message());
        return;
    }
    if (acc_sim_plan(b->sim, p, size, ACC_DT_F32, &r) == ACC_OK)
        pred = r.time_us;
    acc_kernel_traffic(p, ACC_DT_F32, count, &rd, &wr);
    rate = (double)(rd + wr) / (us * 1e-6) / 1e9;
    printf("%-14s %-8s %-6s %11llu %6d %4u %10.1f %10.1f %6.2f %14llu %8.0f %7.2f\n",
           acc_coll_name(p->coll), p->algo, acc_proto_name(p->proto), (unsigned long long)size,
           copies, threads, us, pred, pred > 0 ? pred / us : 0, (unsigned long long)(rd + wr), rate,
           rate / b->d.copy_gbs);
    fit_line(p, size, us, pred, b->handoffs[0], rd + wr, copies);
    for (f = 0; f < FLOOR_SIZES; f++)
        if (floor_sizes[f] == size)
            b->meas_us[f] = us;
}

/* Every size of one plan with its protocol; its floors into the summary (b->floors). */
static void one_plan(void *ctx, const acc_plan_t *p)
{
    bench_t *b = ctx;
    acc_buf_t *floors = &b->floors;
    uint64_t max = p->proto == ACC_PROTO_LL && b->o->max > LL_MAX_BYTES ? LL_MAX_BYTES : b->o->max;
    acc_gpu_exec_t *x = NULL;
    acc_gpu_opts_t go;
    uint64_t size;
    int f;

    memset(&go, 0, sizeof(go));
    /* A kernel that waits for ever gives up after this and leaves the rest of the run its time
     * (its later launches give up at once, seeing the failure). */
    go.timeout_s = 2.0;
    memset(b->meas_us, 0, sizeof(b->meas_us));
    /* The hand-offs on the plan's critical path, and its floors. */
    for (f = 0; f < FLOOR_SIZES; f++) {
        acc_sim_result_t r;
        b->handoffs[f] =
            acc_sim_plan(b->unit, p, floor_sizes[f], ACC_DT_F32, &r) == ACC_OK ? r.time_us : 0;
        b->floor_us[f] = b->d.launch_us + b->handoffs[f] * b->d.handoff_gpu_us;
    }
    if (acc_gpu_exec_create(p, ACC_DT_F32, ACC_RED_SUM, count_for(p, max), &go, &x) != ACC_OK) {
        printf("%-14s %-8s %-6s %s\n", acc_coll_name(p->coll), p->algo, acc_proto_name(p->proto),
               acc_error_message());
        return;
    }
    for (size = b->o->min; size <= max; size *= 4)
        if (count_for(p, size))
            one_size(b, p, x, size);
    acc_gpu_exec_destroy(x);
    acc_buf_printf(floors, "%-14s %-8s %-6s", acc_coll_name(p->coll), p->algo,
                   acc_proto_name(p->proto));
    for (f = 0; f < FLOOR_SIZES; f++) {
        if (b->meas_us[f] > 0)
            acc_buf_printf(floors, "   %5.1f %7.1f %8.1f %6.2f", b->handoffs[f], b->floor_us[f],
                           b->meas_us[f], b->meas_us[f] / b->floor_us[f]);
        else
            acc_buf_printf(floors, "   %5s %7s %8s %6s", "-", "-", "-", "-");
    }
    acc_buf_puts(floors, "\n");
}

static void print_device(const bench_t *b, int nranks)
{
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("# %s (sm_%d, %d SMs, %.0f GiB), driver %d; %d ranks emulated on it\n", b->d.info.name,
           b->d.info.sm, b->d.info.sm_count, (double)b->d.info.mem_bytes / (1 << 30),
           b->d.info.driver_version, nranks);
    printf("device-to-device copy: %.0f GB/s (bytes read + written per second)\n", b->d.copy_gbs);
    printf("empty launch, back to back: %.2f us; flag hand-off between blocks: %.3f us at GPU "
           "scope, %.3f us at system scope\n",
           b->d.launch_us, b->d.handoff_gpu_us, b->d.handoff_sys_us);
    printf("fit device name=\"%s\" sm=%d sms=%d driver=%d date=%s copy_gbs=%.1f launch_us=%.3f "
           "handoff_gpu_us=%.4f handoff_sys_us=%.4f\n",
           b->d.info.name, b->d.info.sm, b->d.info.sm_count, b->d.info.driver_version, when,
           b->d.copy_gbs, b->d.launch_us, b->d.handoff_gpu_us, b->d.handoff_sys_us);
}

/* The plans with every protocol they have a kernel for: Simple, then LL. */
static void run_all(bench_t *b, acc_plan_t **plans, size_t np)
{
    size_t i;

    acc_buf_init(&b->floors);
    printf("%-14s %-8s %-6s %11s %6s %4s %10s %10s %6s %14s %8s %7s\n", "collective", "algo",
           "proto", "size B", "copies", "thr", "time us", "pred us", "p/m", "operand B", "GB/s",
           "of copy");
    for (i = 0; i < np; i++)
        kb_with_protocols(plans[i], one_plan, b);
    printf("(operand B: what the plan's operations read and write, each operand counted once; "
           "repeated reads that L2 serves count too - one-shot's peer reads of small inputs -\n"
           " so 'of copy' is a roofline only where every byte is touched once.  Targets from "
           "256 MiB: 0.9 of the copy rate for ring, rhd and twoshot allreduce and the allgathers, "
           "0.75 for tree)\n");
    printf("\n# floors: launch %.2f us + hand-offs on the critical path x %.3f us (GPU scope, as "
           "the executor releases); target: measured <= 1.5 x floor at <= 64 KiB\n",
           b->d.launch_us, b->d.handoff_gpu_us);
    printf("%-14s %-8s %-6s   %5s %7s %8s %6s   %5s %7s %8s %6s\n", "collective", "algo", "proto",
           "hand", "4K flr", "4K us", "ratio", "hand", "64K flr", "64K us", "ratio");
    fputs(b->floors.data ? b->floors.data : "", stdout);
    acc_buf_free(&b->floors);
}

int kb_bench_gpu(acc_plan_t **plans, size_t np, const kb_opts_t *o)
{
    bench_t b;
    int r, n = plans[0]->nranks, rc = 1;

    memset(&b, 0, sizeof(b));
    b.o = o;
    if (acc_cuda_init(0) != ACC_OK || acc_cuda_info(0, &b.d.info) != ACC_OK) {
        printf("# GPU part skipped: %s\n", acc_error_message());
        return 0;
    }
    if (n > ACC_GPU_MAX_RANKS) {
        printf("# GPU part skipped: %d ranks, the executor emulates at most %d\n", n,
               ACC_GPU_MAX_RANKS);
        return 0;
    }
    for (r = 0; r < n; r++)
        if (acc_cuda_malloc(o->max, &b.in[r]) != ACC_OK ||
            acc_cuda_malloc(o->max, &b.out[r]) != ACC_OK ||
            acc_cuda_memset(b.in[r], 0, o->max) != ACC_OK)
            goto out;
    if (acc_cuda_stream_create(&b.s) != ACC_OK || acc_cuda_event_create(&b.e0) != ACC_OK ||
        acc_cuda_event_create(&b.e1) != ACC_OK ||
        kb_measure(&b.d, b.in[0], b.out[0], o->max, b.s) != ACC_OK ||
        kb_device_sims(&b.d, n, b.dev_topo, &b.sim, &b.unit) != ACC_OK)
        goto out;
    print_device(&b, n);
    run_all(&b, plans, np);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_kernels: %s\n", acc_error_message());
    for (r = 0; r < n; r++) {
        acc_cuda_free(b.in[r]);
        acc_cuda_free(b.out[r]);
    }
    acc_sim_destroy(b.sim);
    acc_sim_destroy(b.unit);
    acc_topo_destroy(b.dev_topo[0]);
    acc_topo_destroy(b.dev_topo[1]);
    acc_cuda_event_destroy(b.e0);
    acc_cuda_event_destroy(b.e1);
    acc_cuda_stream_destroy(b.s);
    return rc;
}
