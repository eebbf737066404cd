/*
 * acc-bench's size sweep: time a plan on the host executor over a range of sizes and print the
 * table of nccl-tests (reference/02-nccl.md §5) column for column, so that its output can be
 * read, diffed and plotted with the same tools.
 *
 * Per size: `warmup` untimed runs, `iters` timed runs (the mean is reported), then, with -c 1,
 * one more run on fresh inputs compared element by element with the sequential reference
 * (host_check.c; floating-point sums within the bound derived there).  algbw = bytes / time,
 * where bytes is the size column (count x type size, times nranks for allgather, reduce-scatter
 * and alltoall); busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce-scatter
 * and alltoall, 1 for broadcast and reduce, as nccl-tests defines them.
 */
#include "acc_bench.h"
#include "acc_runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const acc_plan_t *plan;
    const bench_sweep_t *s;
    FILE *out;
    void **in, **out_oop, **out_ip; /* per rank, sized for the largest count */
    double bw_sum;
    int bw_count;
    uint64_t wrong_total;
    int failed;
    bench_points_t *pts; /* collecting while record is set */
    int record;
} sweep_t;

/* Elements per byte of the size column: the larger of a rank's two buffers. */
uint64_t bench_size_mult(acc_coll_t coll, int nranks)
{
    return coll == ACC_COLL_ALLGATHER || coll == ACC_COLL_REDUCE_SCATTER ||
                   coll == ACC_COLL_ALLTOALL
               ? (uint64_t)nranks
               : 1;
}

double bench_bus_factor(acc_coll_t coll, int nranks)
{
    double n = nranks;
    switch (coll) {
    case ACC_COLL_ALLREDUCE:
        return 2 * (n - 1) / n;
    case ACC_COLL_ALLGATHER:
    case ACC_COLL_REDUCE_SCATTER:
    case ACC_COLL_ALLTOALL:
        return (n - 1) / n;
    default:
        return 1;
    }
}

void bench_time_text(double usec, char *buf, size_t n)
{
    snprintf(buf, n, usec >= 10000.0 ? "%7.0f" : usec >= 100.0 ? "%7.1f" : "%7.2f", usec);
}

static void header(const sweep_t *w)
{
    const bench_sweep_t *s = w->s;
    char host[64] = "localhost";
    int r;

    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    if (s->factor <= 1)
        fprintf(w->out, "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(bytes) ",
                w->plan->nranks, (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes,
                (unsigned long long)s->step_bytes);
    else
        fprintf(w->out, "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %d(factor) ",
                w->plan->nranks, (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes,
                s->factor);
    fprintf(w->out,
            "warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n#\n"
            "# Using devices\n",
            s->warmup, s->iters, s->check);
    for (r = 0; r < w->plan->nranks; r++)
        fprintf(w->out,
                "#  Rank %2d Group  0 Pid %6d on %10s device %2d [host] acc host "
                "executor, %d lanes\n",
                r, (int)getpid(), host, r, w->plan->nlanes);
    fprintf(w->out, "#\n");
    fprintf(w->out,
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
            "in-place          \n",
            "", "", "", "", "");
    fprintf(w->out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong");
    fprintf(w->out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "");
}

/* One placement (out of place or in place) of one size: time it, check it, print its columns. */
static void measure(sweep_t *w, acc_dtype_t dt, acc_redop_t op, uint64_t count, uint64_t bytes,
                    int inplace)
{
    const acc_plan_t *p = w->plan;
    void **in = inplace ? NULL : w->in, **out = inplace ? w->out_ip : w->out_oop;
    double t0 = acc_now_s(), usec, algbw, busbw;
    char tstr[32], wstr[32];
    uint64_t wrong = 0;
    int i;

    if (inplace && !p->inplace) {
        fprintf(w->out, "  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
        return;
    }
    acc_host_prepare(p, dt, op, ACC_FILL_RANDOM, 1, count, in, out, inplace);
    for (i = 0; i < w->s->warmup + w->s->iters; i++) {
        if (i == w->s->warmup)
            t0 = acc_now_s();
        if (acc_host_exec(p, dt, op, count, in, out, inplace) != ACC_OK)
            goto failed;
    }
    if (w->s->iters == 0)
        t0 = acc_now_s();
    usec = (acc_now_s() - t0) * 1e6 / (w->s->iters > 0 ? w->s->iters : 1);
    if (w->s->check) {
        acc_host_prepare(p, dt, op, ACC_FILL_RANDOM, 2, count, in, out, inplace);
        if (acc_host_exec(p, dt, op, count, in, out, inplace) != ACC_OK)
            goto failed;
        wrong = acc_host_check(p, dt, op, ACC_FILL_RANDOM, 2, count, out, inplace, NULL);
        w->wrong_total += wrong;
        snprintf(wstr, sizeof(wstr), "%5g", (double)wrong);
    } else {
        snprintf(wstr, sizeof(wstr), "%5s", "N/A");
    }
    bench_time_text(usec, tstr, sizeof(tstr));
    algbw = usec > 0 ? (double)bytes / usec / 1e3 : 0;
    busbw = algbw * bench_bus_factor(p->coll, p->nranks);
    w->bw_sum += busbw;
    w->bw_count++;
    if (w->pts && w->record && !inplace && w->pts->n < w->pts->cap) {
        w->pts->bytes[w->pts->n] = bytes;
        w->pts->busbw[w->pts->n++] = busbw;
    }
    fprintf(w->out, "  %7s  %6.2f  %6.2f  %s", tstr, algbw, busbw, wstr);
    return;
failed:
    fprintf(w->out, "\n");
    fflush(w->out);
    fprintf(stderr, "acc-bench: %s %s count %llu %s: %s\n", acc_dtype_name(dt), acc_redop_name(op),
            (unsigned long long)count, inplace ? "in place" : "out of place", acc_error_message());
    w->failed = 1;
}

static void free_buffers(sweep_t *w)
{
    int r;
    for (r = 0; r < w->plan->nranks; r++) {
        if (w->in)
            free(w->in[r]);
        if (w->out_oop)
            free(w->out_oop[r]);
        if (w->out_ip)
            free(w->out_ip[r]);
    }
    free(w->in);
    free(w->out_oop);
    free(w->out_ip);
    w->in = w->out_oop = w->out_ip = NULL;
}

/* Buffers for the largest count of the sweep in type dt. */
static int alloc_buffers(sweep_t *w, uint64_t max_count, size_t es)
{
    const acc_plan_t *p = w->plan;
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, max_count);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, max_count);
    size_t n = (size_t)p->nranks;
    int r, ok = 1;

    w->in = calloc(n, sizeof(void *));
    w->out_oop = calloc(n, sizeof(void *));
    w->out_ip = calloc(n, sizeof(void *));
    ok = w->in && w->out_oop && w->out_ip;
    for (r = 0; ok && r < p->nranks; r++) {
        w->in[r] = malloc((size_t)(ein * es) + 1);
        w->out_oop[r] = malloc((size_t)(eout * es) + 1);
        if (p->inplace)
            w->out_ip[r] = malloc((size_t)((ein > eout ? ein : eout) * es) + 1);
        ok = w->in[r] && w->out_oop[r] && (!p->inplace || w->out_ip[r]);
    }
    if (!ok) {
        fprintf(stderr, "acc-bench: out of memory for %d ranks' buffers of %llu bytes\n", p->nranks,
                (unsigned long long)(eout * es));
        free_buffers(w);
    }
    return ok;
}

/* The next size of the sweep, as nccl-tests steps: times the factor when it is above 1, else
 * plus the step in bytes; 0 when the sweep is over (at -e, or past 2^64).  Unlike nccl-tests, a
 * step that would pass -e lands on it, so that the size asked for is measured (-b 8 -e 64M -f 4
 * ends at 64M, not 32M). */
int bench_advance(const bench_sweep_t *s, uint64_t *size)
{
    uint64_t next;
    if (*size >= s->max_bytes)
        return 0;
    if (s->factor > 1)
        next = *size > UINT64_MAX / (uint64_t)s->factor ? UINT64_MAX
               : *size                                  ? *size * (uint64_t)s->factor
                                                        : 1; /* from 0 on at 1: 0 x f stays 0 */
    else
        next = *size > UINT64_MAX - s->step_bytes ? UINT64_MAX : *size + s->step_bytes;
    if (next <= *size)
        return 0;
    *size = next > s->max_bytes ? s->max_bytes : next;
    return 1;
}

void bench_points_free(bench_points_t *pts)
{
    free(pts->bytes);
    free(pts->busbw);
    memset(pts, 0, sizeof(*pts));
}

int bench_sweep(const acc_plan_t *plan, const bench_sweep_t *s, FILE *out, bench_points_t *pts)
{
    sweep_t w;
    int t, o, more;
    uint64_t size;

    memset(&w, 0, sizeof(w));
    w.plan = plan;
    w.s = s;
    w.out = out;
    if (pts) {
        /* One point per size of the sweep: count them first. */
        size_t n = 1;
        for (size = s->min_bytes; bench_advance(s, &size);)
            n++;
        memset(pts, 0, sizeof(*pts));
        pts->bytes = calloc(n, sizeof(uint64_t));
        pts->busbw = calloc(n, sizeof(double));
        if (!pts->bytes || !pts->busbw) {
            fprintf(stderr, "acc-bench: out of memory for the plot's %zu points\n", n);
            bench_points_free(pts);
            return EXIT_INPUT;
        }
        pts->cap = n;
        w.pts = pts;
    }
    header(&w);
    for (t = 0; t < s->ndtypes && !w.failed; t++) {
        acc_dtype_t dt = s->dtypes[t];
        size_t es = acc_dtype_size(dt);
        uint64_t mult = bench_size_mult(plan->coll, plan->nranks) * es;
        if (!alloc_buffers(&w, s->max_bytes / mult, es))
            return EXIT_INPUT;
        for (o = 0; o < s->nops && !w.failed; o++) {
            acc_redop_t op = s->ops[o];
            /* collectives that only move data run once per type and say "none" */
            if (!acc_coll_reduces(plan->coll) && o > 0)
                break;
            w.record = t == 0 && o == 0;
            for (size = s->min_bytes, more = 1; more && !w.failed; more = bench_advance(s, &size)) {
                uint64_t count = size / mult;
                fprintf(out, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)(count * mult),
                        (unsigned long long)count, acc_dtype_name(dt),
                        acc_coll_reduces(plan->coll) ? acc_redop_name(op) : "none", plan->root);
                measure(&w, dt, op, count, count * mult, 0);
                if (!w.failed)
                    measure(&w, dt, op, count, count * mult, 1);
                if (!w.failed)
                    fprintf(out, "\n");
                fflush(out);
            }
        }
        free_buffers(&w);
    }
    fprintf(out, "# Out of bounds values : %llu %s\n", (unsigned long long)w.wrong_total,
            w.wrong_total ? "FAILED" : "OK");
    fprintf(out, "# Avg bus bandwidth    : %g \n#\n", w.bw_count ? w.bw_sum / w.bw_count : 0.0);
    return w.failed || w.wrong_total ? EXIT_INPUT : EXIT_OK;
}
