/*
 * The host backend's lanes: the threads that run them, the waits between them (rings, signal
 * counters, dependencies) and how a wait gives up.
 */
#include "host_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Spins before a waiter sleeps: long enough to catch a peer that is about to answer, short
 * enough not to steal a core from it on a loaded machine. */
#define SPINS 200
/* How long one sleep lasts before the waiter looks at the abort flag and the deadline. */
#define SLICE_NS 100000000L

/* Futexes of words in shared memory: the non-private operations, which work across
 * processes (and within one). */
static void futex_sleep(_Atomic uint32_t *addr, uint32_t seen, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, seen, &ts, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int reached(uint32_t value, uint32_t target)
{
    return (int32_t)(value - target) >= 0;
}

void hb_raise(hb_word_t *w)
{
    atomic_fetch_add_explicit(&w->value, 1, memory_order_seq_cst);
    /* A sleeper announces itself before it checks the value one last time (seq_cst on both
     * sides), so either it sees the new value or this load sees it. */
    if (atomic_load_explicit(&w->sleepers, memory_order_seq_cst))
        futex_wake_all(&w->value);
}

int hb_fail(hb_lane_t *lc, acc_status_t st, const char *fmt, ...)
{
    hb_call_t *call = lc->call;
    const acc_plan_t *p = call->in->plan;
    char what[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&call->lock);
    if (call->status == ACC_OK) {
        call->status = st;
        if (lc->op)
            snprintf(call->msg, sizeof(call->msg), "%s %s: rank %d lane %d operation %u (%s): %s",
                     acc_coll_name(p->coll), p->algo, call->in->rank, lc->lane, lc->k,
                     acc_op_name((acc_opcode_t)lc->op->code), what);
        else
            snprintf(call->msg, sizeof(call->msg), "%s %s: rank %d lane %d: %s",
                     acc_coll_name(p->coll), p->algo, call->in->rank, lc->lane, what);
    }
    pthread_mutex_unlock(&call->lock);
    return -1;
}

int hb_wait(hb_lane_t *lc, hb_word_t *w, uint32_t target, int peer, const char *fmt, ...)
{
    hb_call_t *call = lc->call;
    uint32_t v;
    int i;

    for (i = 0; i < SPINS; i++) {
        if (reached(atomic_load_explicit(&w->value, memory_order_acquire), target))
            return 0;
        cpu_relax();
    }
    for (;;) {
        atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_seq_cst);
        v = atomic_load_explicit(&w->value, memory_order_seq_cst);
        if (!reached(v, target))
            futex_sleep(&w->value, v, SLICE_NS);
        atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_relaxed);
        if (reached(atomic_load_explicit(&w->value, memory_order_acquire), target))
            return 0;
        if (__atomic_load_n(call->abort_flag, __ATOMIC_ACQUIRE))
            return hb_fail(lc, ACC_ERR_ABORTED, "the communicator was aborted");
        if (call->status != ACC_OK)
            return -1; /* another lane failed: this call is over */
        if (call->deadline > 0 && acc_now_s() >= call->deadline) {
            char what[200];
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(what, sizeof(what), fmt, ap);
            va_end(ap);
            if (peer >= 0)
                return hb_fail(lc, ACC_ERR_TIMEOUT,
                               "waited %d ms (ACC_TIMEOUT_MS) for %s; rank %d may have died or "
                               "be stuck",
                               call->timeout_ms, what, peer);
            return hb_fail(lc, ACC_ERR_TIMEOUT, "waited %d ms (ACC_TIMEOUT_MS) for %s",
                           call->timeout_ms, what);
        }
    }
}

int hb_wait_until(hb_word_t *w, uint32_t target, const volatile int *stop)
{
    for (;;) {
        uint32_t v = atomic_load_explicit(&w->value, memory_order_acquire);
        if (reached(v, target))
            return 0;
        if (__atomic_load_n(stop, __ATOMIC_ACQUIRE))
            return -1;
        atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_seq_cst);
        v = atomic_load_explicit(&w->value, memory_order_seq_cst);
        if (!reached(v, target))
            futex_sleep(&w->value, v, SLICE_NS);
        atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_relaxed);
    }
}

/* ---- a lane --------------------------------------------------------------------------------- */

static void run_lane(hb_call_t *call, int lane)
{
    hb_inst_t *in = call->in;
    const acc_plan_t *p = in->plan;
    int me = in->rank;
    const acc_lane_prog_t *prog = acc_plan_prog(p, me, lane);
    hb_lane_t lc = {.call = call, .lane = lane};
    const void *ptrs_small[16];
    uint32_t k;

    lc.ptrs = p->npeer_pool + 2 <= 16 ? ptrs_small : acc_calloc(p->npeer_pool + 2, sizeof(void *));
    if (!lc.ptrs) {
        hb_fail(&lc, ACC_ERR_NOMEM, "out of memory");
        return;
    }
    for (k = 0; k < prog->nops; k++) {
        const acc_op_t *op = &prog->ops[k];
        lc.k = k;
        lc.op = op;
        if (op->dep_lane >= 0) {
            uint32_t nops = acc_plan_prog(p, me, op->dep_lane)->nops;
            uint32_t target = (uint32_t)(in->calls * nops + (uint64_t)op->dep_op + 1);
            if (hb_wait(&lc, &in->progress[op->dep_lane], target, -1,
                        "operation %d of lane %d of this rank", op->dep_op, op->dep_lane) != 0)
                break;
        }
        if (hb_run_op(&lc) != 0)
            break;
        hb_raise(&in->progress[lane]);
    }
    if (lc.ptrs != ptrs_small)
        acc_free((void *)lc.ptrs);
}

/* ---- the threads ------------------------------------------------------------------------------
 */

typedef struct {
    hb_state_t *s;
    int index;
    uint32_t gen; /* the generation it starts at: calls before it are not its business */
} worker_arg_t;

static void *worker_main(void *arg)
{
    worker_arg_t a = *(worker_arg_t *)arg;
    hb_state_t *s = a.s;
    uint32_t gen = a.gen;

    acc_free(arg);
    for (;;) {
        uint32_t v = atomic_load_explicit(&s->go.value, memory_order_acquire);
        if (atomic_load(&s->quit))
            return NULL;
        if (v == gen) {
            atomic_fetch_add(&s->go.sleepers, 1);
            if (atomic_load(&s->go.value) == gen && !atomic_load(&s->quit))
                futex_sleep(&s->go.value, gen, SLICE_NS);
            atomic_fetch_sub(&s->go.sleepers, 1);
            continue;
        }
        gen = v;
        if (a.index + 1 < s->nlanes) {
            run_lane(s->call, a.index + 1);
            hb_raise(&s->done);
        }
    }
}

acc_status_t hb_pool_grow(hb_state_t *s, int nlanes)
{
    int want = nlanes - 1;
    pthread_t *t;

    if (want <= s->nthreads)
        return ACC_OK;
    if (!(t = acc_realloc_array(s->threads, (size_t)want, sizeof(pthread_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for lane threads");
    s->threads = t;
    while (s->nthreads < want) {
        worker_arg_t *a = acc_malloc(sizeof(*a));
        if (!a)
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for lane threads");
        a->s = s;
        a->index = s->nthreads;
        a->gen = atomic_load(&s->go.value);
        if (pthread_create(&s->threads[s->nthreads], NULL, worker_main, a) != 0) {
            acc_free(a);
            return acc_error_set(ACC_ERR_SYSTEM, "cannot start lane thread %d: %s", s->nthreads + 1,
                                 strerror(errno));
        }
        s->nthreads++;
    }
    return ACC_OK;
}

void hb_pool_stop(hb_state_t *s)
{
    int i;
    atomic_store(&s->quit, 1);
    futex_wake_all(&s->go.value);
    for (i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    acc_free(s->threads);
    s->threads = NULL;
    s->nthreads = 0;
}

acc_status_t hb_run_lanes(hb_state_t *s, hb_call_t *call)
{
    int nlanes = call->in->plan->nlanes;
    uint32_t target = atomic_load(&s->done.value) + (uint32_t)(nlanes - 1);
    acc_status_t st;

    if ((st = hb_pool_grow(s, nlanes)) != ACC_OK)
        return st;
    s->call = call;
    s->nlanes = nlanes;
    if (nlanes > 1)
        hb_raise(&s->go);
    run_lane(call, 0);
    /* The other lanes give up on their own (deadline, abort, a failed lane), so this wait
     * needs no deadline of its own. */
    while (!reached(atomic_load_explicit(&s->done.value, memory_order_acquire), target)) {
        uint32_t v;
        atomic_fetch_add(&s->done.sleepers, 1);
        v = atomic_load(&s->done.value);
        if (!reached(v, target))
            futex_sleep(&s->done.value, v, SLICE_NS);
        atomic_fetch_sub(&s->done.sleepers, 1);
    }
    return call->status;
}
