/*
 * acc-bench --runtime: the nccl-tests table measured through a communicator, so that what a
 * training job gets - the runtime's own choice per size from the tables, or the fallback - is
 * what is measured.  acc-bench starts the ranks itself (one process each), or runs as one rank
 * of a job an external launcher started (--rank, --bootstrap).
 *
 * Per size every rank runs `warmup` untimed and `iters` timed calls; the time reported is the
 * slowest rank's mean (an allreduce of the ranks' times through the same communicator, after
 * the timed calls).  With -c 1 one more call on fresh inputs is checked by every rank against
 * the reference, and the wrong elements of all ranks are summed.  The last column names what
 * ran: the table's plan or the fallback, from the communicator's statistics.
 */
#include "acc_bench.h"
#include "acc_runtime.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    const bench_comm_t *b;
    const bench_sweep_t *s;
    acc_comm_t *comm;
    FILE *out;                  /* rank 0's table; NULL on the others */
    unsigned char *in, *outbuf; /* what the collectives get: device memory on the cuda runtime */
    size_t bytes;               /* of each */
    int device;
    unsigned char *h_in, *h_out; /* the cuda runtime's host copies, for filling and checking */
    void *d_fig;                 /* the cuda runtime's device word for sharing figures */
    double bw_sum;
    int bw_count;
    double wrong_total;
    int failed;
} run_t;

static void header(run_t *w)
{
    const bench_sweep_t *s = w->s;
    if (!w->out)
        return;
    fprintf(w->out, "# acc-bench --runtime %s: %s on %d ranks, each a process\n", w->b->runtime,
            acc_coll_name(w->b->coll), w->b->nranks);
    if (acc_comm_fallback_reason(w->comm)[0])
        fprintf(w->out, "# every call takes the fallback: %s\n", acc_comm_fallback_reason(w->comm));
    fprintf(w->out, "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu ",
            (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes);
    if (s->factor > 1)
        fprintf(w->out, "step: %d(factor) ", s->factor);
    else
        fprintf(w->out, "step: %llu(bytes) ", (unsigned long long)s->step_bytes);
    fprintf(w->out, "warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n#\n",
            s->warmup, s->iters, s->check);
    fprintf(w->out,
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
            "in-place          \n",
            "", "", "", "", "");
    fprintf(w->out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  %s\n",
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
            "algbw", "busbw", "#wrong", "ran");
    fprintf(w->out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "");
}

static acc_status_t call(run_t *w, acc_dtype_t dt, acc_redop_t op, uint64_t count, int inplace)
{
    const bench_comm_t *b = w->b;
    int me = acc_comm_rank(w->comm);
    size_t es = acc_dtype_size(dt);
    unsigned char *in = w->in, *out = inplace ? w->in : w->outbuf;

    if (inplace && b->coll == ACC_COLL_ALLGATHER)
        in = w->in + (size_t)((uint64_t)me * count * es);
    if (inplace && b->coll == ACC_COLL_REDUCE_SCATTER)
        out = w->in + (size_t)((uint64_t)me * count * es);
    switch (b->coll) {
    case ACC_COLL_ALLREDUCE:
        return acc_allreduce(in, out, count, dt, op, w->comm, NULL);
    case ACC_COLL_ALLGATHER:
        return acc_allgather(in, out, count, dt, w->comm, NULL);
    case ACC_COLL_REDUCE_SCATTER:
        return acc_reduce_scatter(in, out, count, dt, op, w->comm, NULL);
    case ACC_COLL_BROADCAST:
        return acc_broadcast(in, out, count, dt, b->root, w->comm, NULL);
    case ACC_COLL_REDUCE:
        return acc_reduce(in, out, count, dt, op, b->root, w->comm, NULL);
    default:
        return acc_error_set(ACC_ERR_UNSUPPORTED, "acc-bench --runtime runs allreduce, allgather, "
                                                  "reduce_scatter, broadcast and reduce");
    }
}

/* What served the most calls since `before` (statistics rows' calls). */
static void what_ran(run_t *w, const acc_comm_stat_t *before, size_t nbefore, char *buf, size_t n)
{
    acc_comm_stat_t *now = NULL;
    size_t nnow = 0, i, j;
    uint64_t best = 0;

    snprintf(buf, n, "?");
    if (acc_comm_stats(w->comm, &now, &nnow) != ACC_OK)
        return;
    for (i = 0; i < nnow; i++) {
        uint64_t prev = 0;
        if (now[i].coll != w->b->coll)
            continue;
        for (j = 0; j < nbefore; j++)
            if (before[j].coll == now[i].coll && before[j].min_bytes == now[i].min_bytes &&
                before[j].fallback == now[i].fallback && !strcmp(before[j].ran, now[i].ran))
                prev = before[j].calls;
        if (now[i].calls - prev > best) {
            best = now[i].calls - prev;
            snprintf(buf, n, "%s", now[i].ran);
        }
    }
    acc_mem_free(now);
}

/* Host data into what the collective reads (a copy on the cuda runtime), and back. */
static acc_status_t to_api(run_t *w)
{
    return w->device ? acc_cuda_htod(w->in, w->h_in, w->bytes) : ACC_OK;
}

static acc_status_t from_api(run_t *w, int inplace)
{
    acc_status_t st;
    if (!w->device)
        return ACC_OK;
    if ((st = acc_cuda_stream_sync(NULL)) != ACC_OK)
        return st;
    return acc_cuda_dtoh(inplace ? w->h_in : w->h_out, inplace ? w->in : w->outbuf, w->bytes);
}

/* The ranks' figure through the communicator itself, in memory it takes. */
static acc_status_t share(run_t *w, double mine, acc_redop_t op, double *all)
{
    acc_status_t st;
    if (!w->device)
        return acc_allreduce(&mine, all, 1, ACC_DT_F64, op, w->comm, NULL);
    if ((st = acc_cuda_htod(w->d_fig, &mine, sizeof(mine))) != ACC_OK ||
        (st = acc_allreduce(w->d_fig, w->d_fig, 1, ACC_DT_F64, op, w->comm, NULL)) != ACC_OK ||
        (st = acc_cuda_stream_sync(NULL)) != ACC_OK)
        return st;
    return acc_cuda_dtoh(all, w->d_fig, sizeof(*all));
}

/* One placement of one size: time it, check it, print its columns. */
static void measure(run_t *w, acc_dtype_t dt, acc_redop_t op, uint64_t count, uint64_t bytes,
                    int inplace)
{
    const bench_sweep_t *s = w->s;
    int n = w->b->nranks, me = acc_comm_rank(w->comm);
    double t0 = 0, usec, slowest, wrong = 0, all_wrong = 0;
    char tstr[32], wstr[32];
    acc_status_t st = ACC_OK;
    unsigned char *in = w->h_in, *out = inplace ? w->h_in : w->h_out;
    size_t es = acc_dtype_size(dt);
    uint64_t shift =
        inplace && (w->b->coll == ACC_COLL_ALLGATHER || w->b->coll == ACC_COLL_REDUCE_SCATTER)
            ? (uint64_t)me * count * es
            : 0;
    int i;

    acc_host_fill_rank(w->b->coll, n, me, dt, op, ACC_FILL_RANDOM, 1, count,
                       w->b->coll == ACC_COLL_ALLGATHER ? in + shift : in);
    st = to_api(w);
    for (i = 0; i < s->warmup + s->iters && st == ACC_OK; i++) {
        if (i == s->warmup)
            t0 = acc_now_s();
        st = call(w, dt, op, count, inplace);
    }
    if (st == ACC_OK && w->device)
        st = acc_cuda_stream_sync(NULL); /* calls only queue their work on the cuda runtime */
    usec = s->iters > 0 ? (acc_now_s() - t0) * 1e6 / s->iters : 0;
    if (st == ACC_OK && s->check) {
        acc_host_fill_rank(w->b->coll, n, me, dt, op, ACC_FILL_RANDOM, 2, count,
                           w->b->coll == ACC_COLL_ALLGATHER ? in + shift : in);
        if ((st = to_api(w)) == ACC_OK && (st = call(w, dt, op, count, inplace)) == ACC_OK &&
            (st = from_api(w, inplace)) == ACC_OK)
            wrong = (double)acc_host_check_rank(
                w->b->coll, n, w->b->root, me, dt, op, ACC_FILL_RANDOM, 2, count,
                w->b->coll == ACC_COLL_REDUCE_SCATTER ? out + shift : out, NULL);
    }
    if (st != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s %s count %llu %s: %s\n", me, acc_dtype_name(dt),
                acc_redop_name(op), (unsigned long long)count,
                inplace ? "in place" : "out of place", acc_error_message());
        w->failed = 1;
        return;
    }
    /* Every rank's figures through the communicator itself: the slowest mean, all wrong. */
    if (share(w, usec, ACC_RED_MAX, &slowest) != ACC_OK ||
        share(w, wrong, ACC_RED_SUM, &all_wrong) != ACC_OK) {
        fprintf(stderr, "acc-bench: rank %d: %s\n", me, acc_error_message());
        w->failed = 1;
        return;
    }
    w->wrong_total += all_wrong;
    if (!w->out)
        return;
    bench_time_text(slowest, tstr, sizeof(tstr));
    if (s->check)
        snprintf(wstr, sizeof(wstr), "%5g", all_wrong);
    else
        snprintf(wstr, sizeof(wstr), "%5s", "N/A");
    {
        double algbw = slowest > 0 ? (double)bytes / slowest / 1e3 : 0;
        double busbw = algbw * bench_bus_factor(w->b->coll, n);
        w->bw_sum += busbw;
        w->bw_count++;
        fprintf(w->out, "  %7s  %6.2f  %6.2f  %s", tstr, algbw, busbw, wstr);
    }
}

static int sweep(run_t *w)
{
    const bench_sweep_t *s = w->s;
    int n = w->b->nranks;
    uint64_t size;
    int more;

    header(w);
    for (int t = 0; t < s->ndtypes && !w->failed; t++) {
        acc_dtype_t dt = s->dtypes[t];
        uint64_t mult = bench_size_mult(w->b->coll, n) * acc_dtype_size(dt);
        size_t bytes = (size_t)(s->max_bytes / mult * mult) + 64;
        w->bytes = bytes;
        w->h_in = malloc(bytes);
        w->h_out = malloc(bytes);
        if (w->device) {
            if (acc_cuda_malloc(bytes, (void **)&w->in) != ACC_OK ||
                acc_cuda_malloc(bytes, (void **)&w->outbuf) != ACC_OK ||
                acc_cuda_malloc(sizeof(double), &w->d_fig) != ACC_OK)
                w->failed = 1;
        } else {
            w->in = w->h_in;
            w->outbuf = w->h_out;
        }
        if (!w->h_in || !w->h_out || w->failed) {
            fprintf(stderr, "acc-bench: no memory for buffers of %zu bytes: %s\n", bytes,
                    acc_error_message());
            w->failed = 1;
        }
        for (int o = 0; o < s->nops && !w->failed; o++) {
            acc_redop_t op = s->ops[o];
            if (!acc_coll_reduces(w->b->coll) && o > 0)
                break;
            for (size = s->min_bytes, more = 1; more && !w->failed;
                 more = bench_advance(s, &size)) {
                uint64_t count = size / mult;
                acc_comm_stat_t *before = NULL;
                size_t nbefore = 0;
                char ran[128];
                acc_comm_stats(w->comm, &before, &nbefore);
                if (w->out)
                    fprintf(w->out, "%12llu  %12llu  %8s  %6s  %6d",
                            (unsigned long long)(count * mult), (unsigned long long)count,
                            acc_dtype_name(dt),
                            acc_coll_reduces(w->b->coll) ? acc_redop_name(op) : "none", w->b->root);
                measure(w, dt, op, count, count * mult, 0);
                what_ran(w, before, nbefore, ran, sizeof(ran));
                if (!w->failed)
                    measure(w, dt, op, count, count * mult, 1);
                acc_mem_free(before);
                if (w->out && !w->failed)
                    fprintf(w->out, "  %s\n", count ? ran : "(nothing to do)");
                if (w->out)
                    fflush(w->out);
            }
        }
        if (w->device) {
            acc_cuda_free(w->in);
            acc_cuda_free(w->outbuf);
            acc_cuda_free(w->d_fig);
        }
        free(w->h_in);
        free(w->h_out);
        w->in = w->outbuf = w->h_in = w->h_out = NULL;
        w->d_fig = NULL;
    }
    if (w->out) {
        fprintf(w->out, "# Out of bounds values : %.0f %s\n", w->wrong_total,
                w->wrong_total ? "FAILED" : "OK");
        fprintf(w->out, "# Avg bus bandwidth    : %g \n#\n",
                w->bw_count ? w->bw_sum / w->bw_count : 0.0);
    }
    return w->failed || w->wrong_total ? EXIT_INPUT : EXIT_OK;
}

/* One rank: join, sweep, leave. */
static int run_rank(const bench_comm_t *b, const acc_unique_id_t *id, int rank, FILE *out,
                    void *ctx)
{
    const bench_sweep_t *s = ctx;
    acc_comm_opts_t opts;
    run_t w;
    int rc;

    if ((rc = bench_comm_opts(b, &opts)) != EXIT_OK)
        return rc;
    memset(&w, 0, sizeof(w));
    w.b = b;
    w.s = s;
    w.out = rank == 0 ? out : NULL;
    w.device = opts.backend == ACC_BACKEND_CUDA;
    if (acc_comm_init_rank(&w.comm, b->nranks, id, rank, &opts) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    rc = sweep(&w);
    if (w.failed)
        acc_comm_abort(w.comm);
    else if (acc_comm_destroy(w.comm) != ACC_OK && rc == EXIT_OK)
        rc = EXIT_INPUT;
    return rc;
}

int bench_comm_opts(const bench_comm_t *b, acc_comm_opts_t *opts)
{
    acc_comm_opts_init(opts);
    opts->topo = b->topo;
    opts->db = b->db;
    if (acc_backend_parse(b->runtime, &opts->backend) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The rank processes, for the signal handler: SIGTERM or SIGINT to acc-bench (a launcher's
 * stop, ^C) is passed on to every rank, which would otherwise run on without it. */
static pid_t *launched;
static volatile sig_atomic_t nlaunched, stop_signal;

static void forward(int sig)
{
    int saved = errno;
    stop_signal = sig;
    for (sig_atomic_t r = 0; r < nlaunched; r++)
        if (launched[r] > 0)
            kill(launched[r], sig);
    errno = saved;
}

static void on_stop(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int bench_launch(const bench_comm_t *b, bench_rank_fn fn, void *ctx, FILE *out)
{
    acc_unique_id_t id;
    pid_t *pids, parent = getpid();
    int rc = EXIT_OK;

    if (b->rank >= 0) {
        if (acc_unique_id_from_string(b->bootstrap, &id) != ACC_OK) {
            fprintf(stderr, "acc-bench: --bootstrap: %s\n", acc_error_message());
            return EXIT_USAGE;
        }
        return fn(b, &id, b->rank, out, ctx);
    }
    /* Rank 0 serves the rendezvous: no thread of acc's runs here when the ranks are forked. */
    if (acc_unique_id_local(&id) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    if (!(pids = calloc((size_t)b->nranks, sizeof(pid_t))))
        return EXIT_INPUT;
    fflush(out);
    launched = pids;
    nlaunched = 0;
    on_stop(forward);
    for (int r = 0; r < b->nranks && !stop_signal; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            int code;
            /* A rank ends with acc-bench: on its signals (the defaults again), and when it
             * dies without sending any (killed outright). */
            on_stop(SIG_DFL);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != parent)
                _exit(EXIT_INPUT);
            code = fn(b, &id, r, out, ctx);
            fflush(NULL);
            _exit(code);
        }
        if (pids[r] < 0) {
            fprintf(stderr, "acc-bench: cannot start rank %d: %s\n", r, strerror(errno));
            rc = EXIT_INPUT;
            /* The ranks started cannot finish without it: stop them. */
            for (int k = 0; k < r; k++)
                kill(pids[k], SIGTERM);
            break;
        }
        nlaunched = r + 1;
    }
    for (int r = 0; r < nlaunched; r++) {
        int st;
        pid_t got;
        while ((got = waitpid(pids[r], &st, 0)) < 0 && errno == EINTR)
            ;
        if (got < 0)
            continue;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = rc ? rc : (WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_INPUT);
    }
    on_stop(SIG_DFL);
    nlaunched = 0;
    launched = NULL;
    free(pids);
    if (stop_signal) {
        /* Every rank has ended; end as the signal asked. */
        fflush(NULL);
        raise(stop_signal);
    }
    return rc;
}

int bench_comm(const bench_comm_t *b, const bench_sweep_t *s, FILE *out)
{
    return bench_launch(b, run_rank, (void *)s, out);
}
