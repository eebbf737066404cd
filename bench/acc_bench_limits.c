/*
 * acc-bench's bounds: how many rank processes it starts on this machine, and the memory a run
 * needs, estimated before anything is allocated or forked and refused with a message when the
 * machine cannot give it (acc_mem_check: the machine's available memory, its cgroup's limit,
 * or ACC_MEMORY_BUDGET).
 *
 * The estimates count the buffers a run holds at its largest size, which dominate, plus a
 * process's own memory for each rank process:
 *   --backend host     every rank's input and two outputs (out of place, in place) in one
 *                      process, and the executor's staging of about one buffer per rank;
 *   --runtime          per rank process its input and output, its shared-memory instance
 *                      (about two buffers: the connections it receives on and its scratch),
 *                      and the host copies of the cuda runtime counted alike;
 *   --model            per rank process the profile's gradients and the fusion engine's pack
 *                      buffer (as large again), and the 64 MiB calibration buffer.
 */
#include "acc_bench.h"
#include "acc_tune.h"

#include <string.h>
#include <sys/resource.h>

/* A rank process's own memory: libacc, the topology, the plans, the communicator's threads
 * (measured: 20 to 30 MiB resident for a host-backend rank of acc-bench). */
#define RANK_PROCESS_BYTES (32ull << 20)
/* The calibration buffer of the replay (acc_bench_replay.c). */
#define REPLAY_CALIB_BYTES (64ull << 20)

int bench_check_nranks(const bench_comm_t *b)
{
    struct rlimit r;

    if (b->rank >= 0) /* one rank of a job an external launcher started: nothing forked here */
        return 0;
    if (b->nranks > BENCH_NRANKS_MAX) {
        fprintf(stderr,
                "acc-bench: --nranks %d: acc-bench starts every rank as a process of this "
                "machine, at most %d; for more ranks start acc-bench once per rank with --rank "
                "and --bootstrap from a launcher, on several machines\n",
                b->nranks, BENCH_NRANKS_MAX);
        return EXIT_USAGE;
    }
    if (getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
        (rlim_t)b->nranks >= r.rlim_cur) {
        fprintf(stderr,
                "acc-bench: --nranks %d: this user may run only %llu processes (ulimit -u); "
                "use fewer ranks\n",
                b->nranks, (unsigned long long)r.rlim_cur);
        return EXIT_USAGE;
    }
    return 0;
}

static int refuse(void)
{
    fprintf(stderr, "acc-bench: %s\n", acc_error_message());
    return EXIT_INPUT;
}

/* a * b + c, saturating: the estimates of absurd requests must not wrap into small ones. */
static uint64_t mul_add(uint64_t a, uint64_t b, uint64_t c)
{
    if (b && a > (UINT64_MAX - c) / b)
        return UINT64_MAX;
    return a * b + c;
}

int bench_check_plan_memory(const acc_plan_t *plan, const bench_sweep_t *s)
{
    char what[160];
    snprintf(what, sizeof(what), "acc-bench's sweep of %d ranks up to %llu bytes per buffer",
             plan->nranks, (unsigned long long)s->max_bytes);
    if (acc_mem_check(mul_add(4 * (uint64_t)plan->nranks, s->max_bytes, 0), what,
                      "use a smaller -e (--maxbytes)") != ACC_OK)
        return refuse();
    return 0;
}

int bench_check_runtime_memory(const bench_comm_t *b, const bench_sweep_t *s,
                               const bench_replay_t *r)
{
    uint64_t per_rank, ranks = b->rank >= 0 ? 1 : (uint64_t)b->nranks;
    char what[256];

    if (r->model) {
        /* The profile as the ranks will find it (a file, a recording in the database, a
         * shipped one); its gradients' size does not depend on the GPU. */
        const char *path = b->db ? b->db : acc_setting_str(ACC_SETTING_DB);
        acc_profile_t *p = NULL;
        acc_db_t *db = NULL;
        acc_status_t st;
        if (path[0] && acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK)
            db = NULL; /* no database yet: the shipped profiles and files */
        st = acc_profile_find(r->model, 0, db, &p, NULL);
        acc_db_close(db);
        if (st != ACC_OK)
            return refuse();
        per_rank = mul_add(2, acc_profile_grad_bytes(p), REPLAY_CALIB_BYTES + RANK_PROCESS_BYTES);
        snprintf(what, sizeof(what),
                 "acc-bench --model %s on %llu rank process%s (its gradients and the fusion "
                 "engine's buffer, %llu MiB per rank)",
                 r->model, (unsigned long long)ranks, ranks == 1 ? "" : "es",
                 (unsigned long long)(2 * acc_profile_grad_bytes(p) >> 20));
        acc_profile_destroy(p);
        if (acc_mem_check(mul_add(ranks, per_rank, 0), what,
                          "use fewer ranks (--nranks) or a smaller model") != ACC_OK)
            return refuse();
        return 0;
    }
    per_rank = mul_add(4, s->max_bytes, RANK_PROCESS_BYTES);
    snprintf(what, sizeof(what),
             "acc-bench --runtime on %llu rank process%s with buffers of up to %llu bytes",
             (unsigned long long)ranks, ranks == 1 ? "" : "es", (unsigned long long)s->max_bytes);
    if (acc_mem_check(mul_add(ranks, per_rank, 0), what,
                      "use fewer ranks (--nranks) or a smaller -e (--maxbytes)") != ACC_OK)
        return refuse();
    return 0;
}
