/*
 * Running a rank's lanes on one thread: each lane as far as it can go without waiting, then the
 * next; asleep on the rank's doorbell when none can move; a failure when none has moved for
 * ACC_TIMEOUT_MS (host_internal.h explains why one thread).
 */
#include "host_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long one sleep lasts before the abort flag and the timeout are looked at again. */
#define SLICE_NS 100000000L
/* Passes over the lanes that find nothing to do before the thread sleeps: a peer that is about
 * to answer is cheaper to wait for than a system call each way. */
#define IDLE_PASSES 64
/* How long one poll() lasts when lanes wait on sockets and on the doorbell at once (only
 * passes over the lanes see the doorbell then): short, yet far from a busy wait. */
#define MIXED_SLICE_MS 1
/* How often a rank that waits looks for peers that have exited, so that a dead peer is named
 * within a second instead of at ACC_TIMEOUT_MS: its node's ranks by process id (one system
 * call each), and the peers its lanes wait for on other machines by their listening address. */
#define PEER_CHECK_S 0.25
/* Every how many of those checks the peers on other machines are probed (a connection attempt
 * to a listener nobody accepts on; their sockets' end of file usually says it first). */
#define PEER_PROBE_EVERY 4

/* Non-private futex operations: the words may be in memory shared between processes. */
static void futex_sleep(_Atomic uint32_t *addr, uint32_t seen, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, seen, &ts, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void hb_raise(hb_word_t *w)
{
    atomic_fetch_add_explicit(&w->value, 1, memory_order_seq_cst);
    /* A sleeper counts itself before it looks at the value a last time (both sequentially
     * consistent): either it sees the new value, or this load sees it. */
    if (atomic_load_explicit(&w->sleepers, memory_order_seq_cst))
        futex_wake_all(&w->value);
}

void hb_sleep(hb_word_t *w, uint32_t seen, long ns)
{
    atomic_fetch_add_explicit(&w->sleepers, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&w->value, memory_order_seq_cst) == seen)
        futex_sleep(&w->value, seen, ns);
    atomic_fetch_sub_explicit(&w->sleepers, 1, memory_order_relaxed);
}

int hb_fail(hb_lane_t *lc, acc_status_t st, const char *fmt, ...)
{
    hb_call_t *call = lc->call;
    const acc_plan_t *p = call->in->plan;
    char what[384];
    va_list ap;

    if (call->status != ACC_OK)
        return -1;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    call->status = st;
    if (lc->op)
        snprintf(call->msg, sizeof(call->msg), "%s %s: rank %d lane %d operation %u (%s): %s",
                 acc_coll_name(p->coll), p->algo, call->in->rank, lc->lane, lc->k,
                 acc_op_name((acc_opcode_t)lc->op->code), what);
    else
        snprintf(call->msg, sizeof(call->msg), "%s %s: rank %d lane %d: %s", acc_coll_name(p->coll),
                 p->algo, call->in->rank, lc->lane, what);
    return -1;
}

/* Is the lane's next operation free to run: its dependency met, what it needs there? */
static int ready(hb_lane_t *lc)
{
    const acc_op_t *op = lc->op;
    hb_inst_t *in = lc->call->in;
    if (op->dep_lane >= 0 && in->next[op->dep_lane] <= (uint32_t)op->dep_op)
        return 0;
    return hb_op_ready(lc);
}

/* Take lane l as far as it goes: operations run, or -1 on failure. */
static int advance(hb_call_t *call, hb_lane_t *lc, int l)
{
    hb_inst_t *in = call->in;
    const acc_lane_prog_t *prog = acc_plan_prog(in->plan, in->rank, l);
    int ran = 0, r;

    lc->lane = l;
    while (in->next[l] < prog->nops) {
        lc->k = in->next[l];
        lc->op = &prog->ops[lc->k];
        if ((r = ready(lc)) < 0)
            return -1;
        if (!r)
            break;
        if (hb_run_op(lc) != 0)
            return -1;
        in->next[l]++;
        ran++;
    }
    return ran;
}

/* Point lc at lane l's next operation: 0 when the lane has finished. */
static int lane_next(hb_inst_t *in, hb_lane_t *lc, int l)
{
    const acc_lane_prog_t *prog = acc_plan_prog(in->plan, in->rank, l);
    if (in->next[l] >= prog->nops)
        return 0;
    lc->lane = l;
    lc->k = in->next[l];
    lc->op = &prog->ops[lc->k];
    return 1;
}

/* Has process pid of this PID namespace ended?  One that exited but that its parent has not
 * reaped yet (a zombie: a launcher that waits for its children in another order) has too; where
 * /proc cannot say, a process that exists counts as running. */
static int process_ended(pid_t pid)
{
    char path[64], buf[512];
    const char *close_paren;
    ssize_t n;
    int fd;

    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "PID (COMM) STATE ...": the command may hold spaces and parentheses, the last ')' ends it. */
    close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* Is rank r gone?  On this machine and in this PID namespace its process id says so exactly;
 * elsewhere, a listening address that refuses connections says its process has exited or
 * closed the communicator (it held that socket until then; forked children do not keep it:
 * net.c). */
static int same_machine(const acc_comm_t *c, const hb_state_t *s, int r)
{
    return s->machine[r] && s->machine[r] == s->machine[c->rank] &&
           s->pidns[r] == s->pidns[c->rank];
}

static int gone(const acc_comm_t *c, const hb_state_t *s, int r, int *probed)
{
    if (same_machine(c, s, r))
        return process_ended(s->pids[r]);
    /* A rank on another node that this one never connected to: its address is rank 0's to
     * know (boot_fetch_addrs), and the peers this rank waits for are among those it knows. */
    if (!boot_peer_known(c->boot, r))
        return 0;
    *probed = 1;
    return net_probe(boot_peer_addr(c->boot, r), 100) == 0;
}

/* The ranks that are gone, as "rank 1 has exited" or "ranks 1 and 2 have exited" (then "(or
 * closed the communicator)" where a rank on another machine was asked), or nothing.
 * The rank a lane waits for is only its upstream neighbour, which may wait in turn for the one
 * that died (in a ring of 4 where rank 1 died, rank 0 waits for rank 3), so every rank this
 * one can judge is asked, for at most a second in all: its node's ranks by process id, and
 * the ranks of other nodes whose addresses it has (rank 0 has every rank's; the others those
 * of the peers they connect to, which is what keeps a set-up O(1) per rank: docs/scale.md). */
static void dead_peers(const hb_call_t *call, char *buf, size_t n)
{
    const acc_comm_t *c = call->comm;
    const hb_state_t *s = c ? c->be_state : NULL;
    double until = acc_now_s() + 1.0;
    int *dead, ndead = 0, len = 0, probed = 0;

    buf[0] = '\0';
    if (!s || !c->boot || !(dead = acc_mem_calloc((size_t)c->nranks, sizeof(int))))
        return;
    for (int r = 0; r < c->nranks && acc_now_s() < until; r++)
        if (r != c->rank && gone(c, s, r, &probed))
            dead[ndead++] = r;
    for (int i = 0; i < ndead && len >= 0 && (size_t)len < n; i++)
        len += snprintf(buf + len, n - (size_t)len, "%s%d",
                        i == 0           ? (ndead > 1 ? "ranks " : "rank ")
                        : i == ndead - 1 ? " and "
                                         : ", ",
                        dead[i]);
    if (ndead && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " %s exited%s", ndead > 1 ? "have" : "has",
                 probed ? " (or closed the communicator)" : "");
    acc_mem_free(dead);
}

/* The first stuck lane's wait as text (a lane waiting on another lane of this rank names that
 * one), lc pointing at it; the peer it waits for, or -1. */
static int first_wait(hb_inst_t *in, hb_lane_t *lc, char *what, size_t n)
{
    for (int l = 0; l < in->plan->nlanes; l++) {
        if (!lane_next(in, lc, l))
            continue;
        if (lc->op->dep_lane >= 0 && in->next[lc->op->dep_lane] <= (uint32_t)lc->op->dep_op) {
            snprintf(what, n, "operation %d of lane %d of this rank", lc->op->dep_op,
                     lc->op->dep_lane);
            continue; /* that lane is the one to name */
        }
        return hb_op_wait_text(lc, what, n);
    }
    return -1;
}

/* While lanes wait: has a peer exited?  Every rank of this node (by process id: a rank the
 * lanes wait for may itself wait for the dead one) and, on other machines, the ranks the
 * stuck lanes wait for directly.  Fails the call naming the dead ranks and the wait. */
static int peers_exited(hb_call_t *call, hb_lane_t *lc, int probe)
{
    const acc_comm_t *c = call->comm;
    const hb_state_t *s = c ? c->be_state : NULL;
    hb_inst_t *in = call->in;
    char what[200] = "", dead[160];
    int found = 0, probed = 0;

    if (!s || !c->boot)
        return 0;
    for (int r = 0; r < c->nranks && !found; r++)
        if (r != c->rank && same_machine(c, s, r))
            found = gone(c, s, r, &probed);
    for (int l = 0; l < in->plan->nlanes && !found && probe; l++) {
        int peer;
        if (!lane_next(in, lc, l))
            continue;
        if ((peer = hb_op_wait_text(lc, what, sizeof(what))) >= 0 && peer != c->rank &&
            !same_machine(c, s, peer))
            found = gone(c, s, peer, &probed);
    }
    if (!found)
        return 0;
    /* Which lane waits on what, for the message; dead_peers names every rank that is gone. */
    (void)first_wait(in, lc, what, sizeof(what));
    dead_peers(call, dead, sizeof(dead));
    hb_fail(lc, ACC_ERR_TIMEOUT, "%s while this rank waited for %s",
            dead[0] ? dead : "a peer has exited", what);
    return 1;
}

/* The first stuck lane's wait, as the timeout's message, naming the ranks that died. */
static acc_status_t stuck(hb_call_t *call, hb_lane_t *lc)
{
    hb_inst_t *in = call->in;
    char what[200] = "", dead[160];
    int peer = first_wait(in, lc, what, sizeof(what));

    dead_peers(call, dead, sizeof(dead));
    if (dead[0])
        hb_fail(lc, ACC_ERR_TIMEOUT, "waited %d ms (ACC_TIMEOUT_MS) for %s: %s", call->timeout_ms,
                what, dead);
    else if (peer >= 0)
        hb_fail(lc, ACC_ERR_TIMEOUT,
                "waited %d ms (ACC_TIMEOUT_MS) for %s; rank %d, or a rank it waits for, is "
                "stuck",
                call->timeout_ms, what, peer);
    else
        hb_fail(lc, ACC_ERR_TIMEOUT, "waited %d ms (ACC_TIMEOUT_MS) for %s", call->timeout_ms,
                what);
    return call->status;
}

/* Sleep until something a stuck lane waits for may have happened, at most SLICE_NS: on the
 * doorbell when every lane waits on it; else in poll() on the sockets lanes wait to read and
 * the eventfd of outbox room, and only briefly when some lane waits on the doorbell too. */
static void idle_wait(hb_call_t *call, hb_lane_t *lc, uint32_t seen, struct pollfd *fds)
{
    hb_inst_t *in = call->in;
    int n = 0, bell = 0, event = 0;

    for (int l = 0; l < in->plan->nlanes; l++) {
        int w;
        if (!lane_next(in, lc, l))
            continue;
        if (lc->op->dep_lane >= 0 && in->next[lc->op->dep_lane] <= (uint32_t)lc->op->dep_op)
            continue; /* that lane's own wait covers it */
        w = hb_op_wait_on(lc);
        if (w == HB_WAIT_BELL)
            bell = 1;
        else if (w == HB_WAIT_EVENT)
            event = 1;
        else
            fds[n++] = (struct pollfd){.fd = w, .events = POLLIN};
    }
    if (!n && !event) {
        hb_sleep(hb_bell(in, in->rank), seen, SLICE_NS);
        return;
    }
    if (event)
        fds[n++] = (struct pollfd){.fd = in->evfd, .events = POLLIN};
    if (poll(fds, (nfds_t)n, bell ? MIXED_SLICE_MS : (int)(SLICE_NS / 1000000L)) > 0 && event &&
        (fds[n - 1].revents & POLLIN)) {
        uint64_t v;
        if (read(in->evfd, &v, sizeof(v)) < 0) {
            /* nothing to reset */
        }
    }
}

acc_status_t hb_run_lanes(hb_call_t *call)
{
    hb_inst_t *in = call->in;
    const acc_plan_t *p = in->plan;
    hb_word_t *bell = hb_bell(in, in->rank);
    const void *ptrs_small[16];
    struct pollfd fds_small[16], *fds = fds_small;
    hb_lane_t lc = {.call = call};
    double last = acc_now_s(), next_check = last + PEER_CHECK_S;
    int idle = 0, checks = 0;

    lc.ptrs =
        p->npeer_pool + 2 <= 16 ? ptrs_small : acc_mem_calloc(p->npeer_pool + 2, sizeof(void *));
    if (p->nlanes + 1 > 16)
        fds = acc_mem_calloc((size_t)p->nlanes + 1, sizeof(*fds));
    if (!lc.ptrs || !fds) {
        if (lc.ptrs != ptrs_small)
            acc_mem_free((void *)lc.ptrs);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    }
    memset(in->next, 0, (size_t)p->nlanes * sizeof(uint32_t));
    for (;;) {
        uint32_t seen = atomic_load_explicit(&bell->value, memory_order_acquire);
        int moved = 0, left = 0;
        for (int l = 0; l < p->nlanes; l++) {
            int ran = advance(call, &lc, l);
            if (ran < 0)
                goto out;
            moved += ran;
            left += in->next[l] < acc_plan_prog(p, in->rank, l)->nops;
        }
        if (!left)
            break;
        if (moved) {
            last = acc_now_s();
            next_check = last + PEER_CHECK_S;
            idle = 0;
            continue;
        }
        if (__atomic_load_n(call->abort_flag, __ATOMIC_ACQUIRE)) {
            lc.op = NULL;
            hb_fail(&lc, ACC_ERR_ABORTED, "the communicator was aborted");
            goto out;
        }
        if (call->timeout_ms > 0 && acc_now_s() - last >= call->timeout_ms / 1e3) {
            stuck(call, &lc);
            goto out;
        }
        if (idle >= IDLE_PASSES && acc_now_s() >= next_check) {
            if (peers_exited(call, &lc, ++checks % PEER_PROBE_EVERY == 0))
                goto out;
            next_check = acc_now_s() + PEER_CHECK_S;
        }
        /* A peer about to answer is cheaper to wait for than a sleep, but the core may be the
         * one that peer needs (more ranks than cores): give it up while waiting. */
        if (++idle >= IDLE_PASSES)
            idle_wait(call, &lc, seen, fds);
        else
            sched_yield();
    }
out:
    if (lc.ptrs != ptrs_small)
        acc_mem_free((void *)lc.ptrs);
    if (fds != fds_small)
        acc_mem_free(fds);
    return call->status;
}
