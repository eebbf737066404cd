/*
 * Communicators: creation (bootstrap, backend, loading), the error that breaks one, abort,
 * destruction and what can be asked of one.
 *
 * A communicator's life.  Every call on one enters it (comm_enter: counted in flight, refused
 * once it closes) and leaves it; abort and destroy first close it to new calls, then wait for
 * those in flight (abort makes them give up at once), then free it.  What they free is
 * everything but the struct itself, which stays behind, marked dead, for the life of the
 * process: a call on a destroyed or aborted communicator - on any thread, at any time - reads
 * that mark and fails with a message instead of touching freed memory.  A process forked after
 * the communicator was made (net_forks) cannot use it: its calls fail, and destroying it there
 * releases nothing, since its sockets, memory and peers are the parent's.
 *
 * Set-up is all or nothing: every step that can fail on one rank ends with every rank knowing
 * (comm_agree), and the last step is rank 0's verdict that every rank got that far, which every
 * rank waits for (comm_agree_final).
 */
#include "rt_internal.h"

#include "exec/gpu_exec.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

/* The least a set-up step waits for a live peer (ACC_TIMEOUT_MS's default). */
#define SETUP_WAIT_MS 60000

void acc_comm_opts_init(acc_comm_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->device = -1;
}

acc_status_t acc_get_unique_id(acc_unique_id_t *id)
{
    int timeout_ms;
    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_get_unique_id: id is NULL");
    /* The rendezvous waits for its first rank as long as ranks wait for peers. */
    (void)comm_timeout_setting(&timeout_ms);
    return boot_root_start(timeout_ms, id);
}

acc_status_t acc_unique_id_from_string(const char *host_port, acc_unique_id_t *id)
{
    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_unique_id_from_string: id is NULL");
    return boot_id_from_string(host_port, id);
}

acc_status_t acc_unique_id_local(acc_unique_id_t *id)
{
    net_addr_t a;
    char text[48];
    int fd = -1;
    acc_status_t st;

    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_unique_id_local: id is NULL");
    /* A port the kernel hands out now is free; rank 0 binds it again (SO_REUSEADDR). */
    if ((st = net_resolve("127.0.0.1", "0", &a)) != ACC_OK ||
        (st = net_listen(&a, &fd, &a)) != ACC_OK)
        return st;
    net_addr_text(&a, text, sizeof(text));
    net_close(&fd);
    return boot_id_from_string(text, id);
}

static acc_status_t agree(acc_comm_t *c, acc_status_t mine, const char *step, int final)
{
    boot_vote_t *v = acc_mem_alloc(2 * sizeof(boot_vote_t));
    acc_status_t st;

    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    boot_vote_init(&v[0], mine);
    if (mine != ACC_OK)
        snprintf(v[0].text, sizeof(v[0].text), "%s", acc_error_message());
    st = (final ? boot_vote_final : boot_vote)(c->boot, &v[0], &v[1]);
    if (st != ACC_OK) {
        /* The ranks no longer agree on the bootstrap's steps: nothing collective can follow. */
        acc_error_prefix(st, "%s: ", step);
        if (c->created)
            comm_break(c, st);
    } else if (v[1].status != ACC_OK) {
        st = acc_error_set((acc_status_t)v[1].status, "%s, at rank %d: %s", step, v[1].rank,
                           v[1].text);
    }
    acc_mem_free(v);
    return st;
}

acc_status_t comm_agree(acc_comm_t *c, acc_status_t mine, const char *step)
{
    return agree(c, mine, step, 0);
}

acc_status_t comm_agree_final(acc_comm_t *c, acc_status_t mine, const char *step)
{
    return agree(c, mine, step, 1);
}

void comm_refuse_at(acc_comm_t *c, const acc_plan_t *plan, uint64_t bytes, acc_status_t status,
                    const char *why)
{
    for (size_t i = 0; i < c->nrefused; i++)
        if (c->refused[i].plan == plan) {
            if (bytes < c->refused[i].bytes)
                c->refused[i].bytes = bytes;
            return;
        }
    if (acc_array_reserve((void **)&c->refused, &c->refused_cap, c->nrefused + 1,
                          sizeof(*c->refused)) == ACC_OK) {
        c->refused[c->nrefused].plan = plan;
        c->refused[c->nrefused].bytes = bytes;
        c->refused[c->nrefused].status = status;
        snprintf(c->refused[c->nrefused++].why, sizeof(c->refused->why), "%s", why);
    }
}

acc_status_t comm_refused_at(const acc_comm_t *c, const acc_plan_t *plan, uint64_t bytes)
{
    for (size_t i = 0; i < c->nrefused; i++)
        if (c->refused[i].plan == plan && bytes >= c->refused[i].bytes)
            return acc_error_set(c->refused[i].status, "%s", c->refused[i].why);
    return ACC_OK;
}

void comm_refuse(acc_comm_t *c, const acc_plan_t *plan)
{
    comm_refuse_at(c, plan, 0, ACC_ERR_UNSUPPORTED, acc_error_message());
}

acc_status_t comm_refused(const acc_comm_t *c, const acc_plan_t *plan)
{
    return comm_refused_at(c, plan, UINT64_MAX);
}

acc_status_t comm_break(acc_comm_t *c, acc_status_t st)
{
    int first = 0;
    pthread_mutex_lock(&c->error_lock);
    if (comm_error(c) == ACC_OK) {
        snprintf(c->error_msg, sizeof(c->error_msg), "%s", acc_error_message());
        __atomic_store_n(&c->error, st, __ATOMIC_RELEASE);
        first = 1;
    }
    pthread_mutex_unlock(&c->error_lock);
    /* A caller that runs the fallback itself (the drop-in NCCL) hands the call on and says so
     * in its own line, which carries this message; an abort was the caller's own doing. */
    if (first)
        acc_log(c->external_fallback || st == ACC_ERR_ABORTED ? ACC_LOG_DEBUG : ACC_LOG_ERROR,
                ACC_SUBSYS_RUNTIME, "rank %d: the communicator is broken: %s", c->rank,
                c->error_msg);
    return st;
}

/* A setting the communicator cannot use: the first one's message is its loading's reason. */
static void setting_invalid(acc_comm_t *c)
{
    if (!c->settings_error[0])
        snprintf(c->settings_error, sizeof(c->settings_error), "%s", acc_error_message());
}

/* The backend the options and ACC_BACKEND ask for, before the ranks have met; an invalid
 * ACC_BACKEND is 'auto' (and turns acc's schedules off, saying why: comm_load). */
static void wanted_backend(acc_comm_t *c, const acc_comm_opts_t *opts, acc_backend_t *out)
{
    *out = opts ? opts->backend : ACC_BACKEND_AUTO;
    if (*out == ACC_BACKEND_AUTO &&
        acc_backend_parse(acc_setting_str(ACC_SETTING_BACKEND), out) != ACC_OK) {
        acc_error_set(ACC_ERR_INVALID, "ACC_BACKEND='%s' is not auto, host or cuda",
                      acc_setting_str(ACC_SETTING_BACKEND));
        setting_invalid(c);
        *out = ACC_BACKEND_AUTO;
    }
}

/* The backend every rank uses: cuda when it was asked for, or 'auto' and every rank has a GPU;
 * else host.  Decided together, since the ranks must run the same plans the same way. */
static acc_status_t choose_backend(acc_comm_t *c, acc_backend_t want)
{
    int ndev = 0,
        gpu = want != ACC_BACKEND_HOST && rt_cuda_device_count(&ndev) == ACC_OK && ndev > 0;
    acc_status_t st = ACC_OK;

    if (want == ACC_BACKEND_CUDA && !gpu)
        st = acc_error_prefix(ACC_ERR_NO_DEVICE,
                              "the cuda backend was asked for (%s), but this "
                              "rank has no usable GPU: ",
                              c->opts.backend == ACC_BACKEND_CUDA ? "options" : "ACC_BACKEND");
    if ((st = comm_agree(c, st, "choosing the backend")) != ACC_OK)
        return st;
    if (want == ACC_BACKEND_AUTO)
        gpu = comm_agree(c, gpu ? ACC_OK : ACC_ERR_NO_DEVICE, "looking for GPUs") == ACC_OK;
    c->backend_kind = gpu ? ACC_BACKEND_CUDA : ACC_BACKEND_HOST;
    c->be = gpu ? &rt_cuda_backend : &rt_host_backend;
    return ACC_OK;
}

acc_status_t comm_timeout_setting(int *out)
{
    int64_t v;
    acc_status_t st;
    *out = 60000; /* the settings table's default, when the value is not one */
    if ((st = acc_setting_int(ACC_SETTING_TIMEOUT_MS, &v)) != ACC_OK)
        return st;
    if (v < 0 || v > 24 * 3600 * 1000)
        return acc_error_set(ACC_ERR_INVALID,
                             "ACC_TIMEOUT_MS=%lld is not a timeout from 0 (none) to 86400000 ms",
                             (long long)v);
    *out = v ? (int)v : -1;
    return ACC_OK;
}

/* The options' timeout, else ACC_TIMEOUT_MS; an invalid one is the default (and turns acc's
 * schedules off, saying why: comm_load). */
static void read_timeout(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    if (opts && opts->timeout_ms) {
        c->timeout_ms = opts->timeout_ms;
        return;
    }
    if (comm_timeout_setting(&c->timeout_ms) != ACC_OK) {
        acc_error_prefix(ACC_ERR_INVALID, "%s", "");
        setting_invalid(c);
    }
}

/* A copy of the options, which a duplicate (acc_comm_dup) is made with. */
static acc_status_t keep_opts(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    if (opts)
        c->opts = *opts;
    else
        acc_comm_opts_init(&c->opts);
    c->opts.topo = c->opts.db = NULL;
    if ((opts && opts->topo && !(c->opts.topo = c->opts_topo = acc_mem_strdup(opts->topo))) ||
        (opts && opts->db && !(c->opts.db = c->opts_db = acc_mem_strdup(opts->db))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a communicator's options");
    return ACC_OK;
}

static void comm_free(acc_comm_t *c, int abort);

acc_status_t acc_comm_init_rank(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                                const acc_comm_opts_t *opts)
{
    return comm_init(out, nranks, id, rank, opts, 0);
}

acc_status_t comm_init(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                       const acc_comm_opts_t *opts, int duplicate)
{
    acc_comm_t *c;
    acc_backend_t want;
    acc_status_t st;

    if (!out)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_init_rank: out is NULL");
    *out = NULL;
    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_init_rank: id is NULL");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_comm_init_rank: rank %d of %d ranks (0 <= rank < nranks)", rank,
                             nranks);
    if (!(c = acc_mem_calloc(1, sizeof(*c))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a communicator");
    net_init();
    pthread_mutex_init(&c->error_lock, NULL);
    c->magic = COMM_MAGIC;
    c->state = COMM_LIVE;
    c->forks = net_forks();
    c->pid = (int)getpid();
    c->rank = rank;
    c->nranks = nranks;
    c->duplicate = duplicate;
    c->external_fallback = opts && opts->external_fallback;
    c->device_opt = opts ? opts->device : -1;
    if ((st = keep_opts(c, opts)) != ACC_OK)
        goto out;
    read_timeout(c, opts);
    wanted_backend(c, opts, &want);
    /* Every failure below ends this rank's part at once (its connections close), and the last
     * step is rank 0's verdict, so every rank fails, or none does. */
    if ((st = boot_create(id, rank, nranks, c->timeout_ms, &c->abort, &c->boot)) != ACC_OK)
        goto out;
    /* Once every rank has arrived, a peer that is slow to answer is loading and verifying its
     * tables, not stuck: set-up waits for it at least SETUP_WAIT_MS (a peer that dies fails it
     * at once). */
    boot_set_wait(c->boot, c->timeout_ms > 0 && c->timeout_ms < SETUP_WAIT_MS ? SETUP_WAIT_MS
                                                                              : c->timeout_ms);
    if ((st = choose_backend(c, want)) != ACC_OK || (st = comm_prepare(c, opts)) != ACC_OK)
        goto out;
    st = c->be->create(c, &c->be_state);
    if ((st = comm_agree_final(c, st, "finishing the set-up")) != ACC_OK)
        goto out;
    boot_set_wait(c->boot, c->timeout_ms);
    c->created = 1;
    *out = c;
    return ACC_OK;
out:
    acc_error_prefix(st, "rank %d: creating a communicator of %d ranks: ", rank, nranks);
    __atomic_store_n(&c->abort, 1, __ATOMIC_RELEASE);
    comm_free(c, 1);
    pthread_mutex_destroy(&c->error_lock);
    acc_mem_free(c);
    return st;
}

/* Free what the communicator holds, but not the struct. */
static void comm_free(acc_comm_t *c, int abort)
{
    if (c->be && c->be_state)
        c->be->destroy(c, c->be_state, abort);
    c->be_state = NULL;
    comm_unload(c);
    for (size_t i = 0; i < c->nfallbacks; i++)
        acc_plan_destroy(c->fallbacks[i].plan);
    acc_mem_free(c->fallbacks);
    c->fallbacks = NULL;
    c->nfallbacks = 0;
    acc_topo_destroy(c->topo);
    c->topo = NULL;
    acc_mem_free(c->refused);
    c->refused = NULL;
    c->nrefused = 0;
    acc_mem_free(c->node_of);
    c->node_of = NULL;
    boot_destroy(c->boot);
    c->boot = NULL;
    acc_mem_free(c->opts_topo);
    acc_mem_free(c->opts_db);
    c->opts_topo = c->opts_db = NULL;
    c->opts.topo = c->opts.db = NULL;
}

/* Closed communicators: their structs, kept so that a late call finds them dead. */
static pthread_mutex_t graveyard_lock = PTHREAD_MUTEX_INITIALIZER;
static acc_comm_t *graveyard;

static void bury(acc_comm_t *c)
{
    pthread_mutex_lock(&graveyard_lock);
    c->next_dead = graveyard;
    graveyard = c;
    pthread_mutex_unlock(&graveyard_lock);
    __atomic_store_n(&c->state, COMM_DEAD, __ATOMIC_SEQ_CST);
}

int comm_forked(const acc_comm_t *c)
{
    return c->forks != net_forks();
}

/* Why a call cannot enter c: NULL, not a communicator, made by the process this one forked
 * from, or closed (closing or dead, by abort or destroy).  ACC_OK when it may try. */
static acc_status_t refuse(acc_comm_t *c, const char *what, int closed)
{
    int state, aborted;
    if (!c)
        return acc_error_set(ACC_ERR_INVALID, "%s: the communicator is NULL", what);
    if (c->magic != COMM_MAGIC)
        return acc_error_set(ACC_ERR_INVALID, "%s: %p is not a communicator", what, (void *)c);
    if (comm_forked(c))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: the communicator belongs to process %d, which forked this one "
                             "after making it; a forked child cannot use its parent's "
                             "communicators (make one in the child)",
                             what, c->pid);
    if (!closed)
        return ACC_OK;
    state = __atomic_load_n(&c->state, __ATOMIC_SEQ_CST);
    aborted = __atomic_load_n(&c->closed_by_abort, __ATOMIC_SEQ_CST);
    return acc_error_set(aborted ? ACC_ERR_ABORTED : ACC_ERR_INVALID, "%s: the communicator %s",
                         what,
                         state == COMM_CLOSING ? "is being closed (acc_comm_abort or "
                                                 "acc_comm_destroy on another thread)"
                         : aborted             ? "was aborted (acc_comm_abort)"
                                               : "was destroyed (acc_comm_destroy)");
}

acc_status_t comm_enter(acc_comm_t *c, const char *what)
{
    acc_status_t st = refuse(c, what, 0);
    if (st != ACC_OK)
        return st;
    /* Counted first, then the state read (both sequentially consistent): a closer that set the
     * state before this count sees the count and waits, or this call sees the state. */
    __atomic_add_fetch(&c->inflight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->state, __ATOMIC_SEQ_CST) == COMM_LIVE)
        return ACC_OK;
    __atomic_sub_fetch(&c->inflight, 1, __ATOMIC_SEQ_CST);
    return refuse(c, what, 1);
}

void comm_leave(acc_comm_t *c)
{
    __atomic_sub_fetch(&c->inflight, 1, __ATOMIC_SEQ_CST);
}

/* The gate lets one call at a time into a communicator with a single atomic operation on the
 * way in and a plain release store on the way out (a mutex costs two locked operations and
 * the in-flight count two more, which was most of a call's dispatch).  A closer shuts it for
 * good once no call holds it.  A call that finds it held (another thread's call, a rare and
 * wrong use, or acc_comm_stats while a call runs) waits, spinning briefly and then sleeping
 * up to a millisecond at a time: the holder's exit cannot wake anyone, so waiting polls. */

static int gate_take(acc_comm_t *c)
{
    int free_ = GATE_FREE;
    return __atomic_compare_exchange_n(&c->gate, &free_, GATE_CALL, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static void gate_backoff(unsigned *round)
{
    if (*round < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ volatile("yield");
#endif
    } else if (*round < 128)
        sched_yield();
    else
        usleep(*round < 1024 ? 50 : 1000);
    (*round)++;
}

acc_status_t comm_begin_call_slow(acc_comm_t *c, const char *what)
{
    unsigned round = 0;
    acc_status_t st;

    if (__builtin_expect(!c || c->magic != COMM_MAGIC || comm_forked(c), 0))
        return refuse(c, what, 0);
    while (!gate_take(c)) {
        if (__atomic_load_n(&c->gate, __ATOMIC_ACQUIRE) == GATE_SHUT)
            return refuse(c, what, 1);
        gate_backoff(&round);
    }
    /* Closing began while this call came in: the closer waits for the gate, so leave it. */
    if (__builtin_expect(__atomic_load_n(&c->state, __ATOMIC_SEQ_CST) != COMM_LIVE, 0)) {
        st = refuse(c, what, 1);
        comm_end_call(c);
        return st;
    }
    return ACC_OK;
}

/* Close c to new calls and wait for those in flight; ACC_ERR_INVALID when it is closed (or
 * closing) already. */
static acc_status_t close_comm(acc_comm_t *c, int abort, const char *what)
{
    int live = COMM_LIVE;
    if (c->magic != COMM_MAGIC)
        return acc_error_set(ACC_ERR_INVALID, "%s: %p is not a communicator", what, (void *)c);
    if (!__atomic_compare_exchange_n(&c->state, &live, COMM_CLOSING, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return acc_error_set(ACC_ERR_INVALID, "%s: the communicator was %s already", what,
                             __atomic_load_n(&c->closed_by_abort, __ATOMIC_SEQ_CST) ? "aborted"
                                                                                    : "destroyed");
    __atomic_store_n(&c->closed_by_abort, abort, __ATOMIC_SEQ_CST);
    /* A call in flight on another thread sees the flag within one wait slice and returns
     * ACC_ERR_ABORTED; without it (destroy), it ends as it would have. */
    if (abort)
        __atomic_store_n(&c->abort, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&c->inflight, __ATOMIC_SEQ_CST) > 0)
        usleep(1000);
    /* The call holding the gate ends (an abort makes it give up); later ones find it shut. */
    for (unsigned round = 0; !gate_take(c);)
        gate_backoff(&round);
    __atomic_store_n(&c->gate, GATE_SHUT, __ATOMIC_RELEASE);
    return ACC_OK;
}

acc_status_t acc_comm_destroy(acc_comm_t *c)
{
    acc_status_t st = ACC_OK;
    if (!c)
        return ACC_OK;
    if (c->magic == COMM_MAGIC && comm_forked(c))
        return ACC_OK; /* the parent's: nothing of it is this process's to release */
    if ((st = close_comm(c, 0, "acc_comm_destroy")) != ACC_OK)
        return st;
    /* Wait for the peers: a rank that left early would take its shared memory and sockets
     * with it while the others still finish their last call.  A broken communicator does not
     * wait (its peers may be gone). */
    if (comm_error(c) == ACC_OK && c->boot && (st = boot_barrier(c->boot)) != ACC_OK)
        acc_error_prefix(st, "rank %d: destroying the communicator: ", c->rank);
    comm_free(c, comm_error(c) != ACC_OK || st != ACC_OK);
    bury(c);
    return st;
}

void comm_stop(acc_comm_t *c)
{
    if (c)
        __atomic_store_n(&c->abort, 1, __ATOMIC_RELEASE);
}

acc_status_t acc_comm_abort(acc_comm_t *c)
{
    acc_status_t st;
    if (!c)
        return ACC_OK;
    if (c->magic == COMM_MAGIC && comm_forked(c))
        return ACC_OK;
    if ((st = close_comm(c, 1, "acc_comm_abort")) != ACC_OK)
        return st;
    comm_free(c, 1);
    bury(c);
    return ACC_OK;
}

acc_status_t acc_comm_get_async_error(acc_comm_t *c, acc_status_t *err)
{
    acc_status_t found, st;
    if (!err)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_get_async_error: err is NULL");
    /* Not one of the calls (comm_begin_call): it answers while a call runs on another thread. */
    if ((st = comm_enter(c, "acc_comm_get_async_error")) != ACC_OK)
        return st;
    if (comm_error(c) == ACC_OK && c->be && c->be->async_error &&
        (found = c->be->async_error(c, c->be_state)) != ACC_OK)
        comm_break(c, found);
    *err = comm_error(c);
    if (*err != ACC_OK)
        acc_error_set(*err, "%s", c->error_msg);
    comm_leave(c);
    return ACC_OK;
}

/* A communicator that answers questions: made by acc and not yet closed. */
static int live(const acc_comm_t *c)
{
    return c && c->magic == COMM_MAGIC && __atomic_load_n(&c->state, __ATOMIC_SEQ_CST) != COMM_DEAD;
}

int acc_comm_rank(const acc_comm_t *c)
{
    return live(c) ? c->rank : -1;
}

int acc_comm_size(const acc_comm_t *c)
{
    return live(c) ? c->nranks : -1;
}

acc_backend_t acc_comm_backend(const acc_comm_t *c)
{
    return live(c) ? c->backend_kind : ACC_BACKEND_AUTO;
}

const char *acc_comm_fallback_reason(const acc_comm_t *c)
{
    return live(c) && !c->use_tables ? c->fallback_reason : "";
}
