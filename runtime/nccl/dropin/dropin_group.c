/*
 * Groups, decided per communicator.  ncclGroupStart/End always reach NCCL too, so that NCCL's
 * own group (communicators made inside it, and NCCL's calls of its own API) stays intact.
 * Inside a group the drop-in holds back every collective until the outermost end; there, for
 * each communicator, its collectives of the group go to acc when acc serves every one of them,
 * else all of them go to NCCL, inside NCCL's still open group.  The choice for a communicator
 * depends only on that communicator's collectives in the group - which NCCL requires to be the
 * same on every rank - so ranks that share it route it alike whatever else their groups hold:
 * ranks 0-1 grouping [allreduce(c), allreduce(c2)] and ranks 2-7 grouping [allreduce(c)] all
 * run c's allreduce the same way.  (Deciding per group instead once sent c to NCCL on ranks 0-1
 * and to acc on the others: every rank stalled for ACC_TIMEOUT_MS.)  Point-to-point calls
 * differ between ranks by nature, so they go to NCCL as they come and decide nothing.
 *
 * After NCCL's group has ended, acc joins the communicators it takes that it had not joined (in
 * the order the group first named them) and runs their calls, communicator after communicator
 * in an order every rank shares (acc's nonce), each communicator's calls in the job's order.
 * A call acc does not finish sends it and the rest of its communicator's calls to NCCL, as one
 * group of their own.
 */
#include "dropin_internal.h"

#include <stdlib.h>

/* This thread's group: its depth, the calls held back, and whether holding one failed. */
static _Thread_local struct {
    int depth;
    dropin_op_t *ops;
    size_t n, cap;
    int spilled; /* out of memory: a call went to NCCL at once, so the whole group goes there */
} grp;

int dropin_group_depth(void)
{
    return grp.depth;
}

ncclResult_t dropin_group_add(const dropin_op_t *k)
{
    if (acc_array_reserve((void **)&grp.ops, &grp.cap, grp.n + 1, sizeof(*grp.ops)) == ACC_OK) {
        grp.ops[grp.n++] = *k;
        return ncclSuccess;
    }
    if (!grp.spilled)
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory in a group; NCCL runs all of it");
    grp.spilled = 1;
    return dropin_forward(k);
}

static void group_reset(void)
{
    acc_mem_free(grp.ops);
    grp.ops = NULL;
    grp.n = grp.cap = 0;
    grp.spilled = 0;
}

/* One communicator of the group: its record (used until the group is over), where its
 * collectives go, and whether its ranks vote first (their first collective acc could run). */
typedef struct {
    ncclComm_t comm;
    dropin_comm_t *s;
    int acc;
    int vote;
} member_t;

static member_t *member_of(member_t *m, size_t n, ncclComm_t comm)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].comm == comm)
            return &m[i];
    return NULL;
}

static int by_order(const void *a, const void *b)
{
    const member_t *x = *(member_t *const *)a, *y = *(member_t *const *)b;
    return dropin_order(x->s, y->s);
}

/* Is m's communicator idle, not yet voted on, with a collective of the group acc could run? */
static int needs_vote(const member_t *m)
{
    acc_dtype_t dt;
    acc_redop_t op;
    int idle;

    pthread_mutex_lock(&m->s->mu);
    idle = m->s->state == DROPIN_IDLE && !m->s->voted && !m->s->closing;
    pthread_mutex_unlock(&m->s->mu);
    for (size_t i = 0; idle && i < grp.n; i++)
        if (grp.ops[i].comm == m->comm && dropin_acc_kind(&grp.ops[i], &dt, &op))
            return dropin_shape(m->s);
    return 0;
}

/* Does acc serve every collective of m's communicator in the group? */
static int wants_all(member_t *m)
{
    for (size_t i = 0; i < grp.n; i++)
        if (grp.ops[i].comm == m->comm && !dropin_wants(m->s, &grp.ops[i]))
            return 0;
    return 1;
}

/* A communicator's calls of the group from `from` on, as one NCCL group of their own. */
static ncclResult_t rest_to_nccl(ncclComm_t comm, size_t from)
{
    __typeof__(&pncclGroupStart) start = DROPIN_FN(GroupStart);
    __typeof__(&pncclGroupEnd) end = DROPIN_FN(GroupEnd);
    ncclResult_t rc = ncclSuccess, one;

    if (!start || !end)
        return dropin_unavailable(start ? DROPIN_IDX_GroupEnd : DROPIN_IDX_GroupStart);
    if ((rc = DROPIN_INTO(start())) != ncclSuccess)
        return rc;
    for (size_t i = from; i < grp.n; i++)
        if (grp.ops[i].comm == comm && (one = dropin_forward(&grp.ops[i])) != ncclSuccess &&
            rc == ncclSuccess)
            rc = one;
    one = DROPIN_INTO(end());
    return rc != ncclSuccess ? rc : one;
}

/* acc runs a communicator's calls; from the first it does not finish on, NCCL the rest. */
static ncclResult_t run_member(const member_t *m)
{
    for (size_t i = 0; i < grp.n; i++) {
        int ran;
        if (grp.ops[i].comm != m->comm)
            continue;
        if ((ran = dropin_run_acc(m->s, &grp.ops[i])) > 0)
            continue;
        if (ran == 0)
            return rest_to_nccl(m->comm, i);
        rest_to_nccl(m->comm, i + 1);
        return (ncclResult_t)-ran;
    }
    return ncclSuccess;
}

/* The outermost end: what goes to NCCL joins NCCL's open group, NCCL's group ends, acc runs
 * the rest. */
static ncclResult_t group_end(__typeof__(&pncclGroupEnd) real_end)
{
    member_t *m = acc_mem_calloc(grp.n + 1, sizeof(*m)), **order = NULL;
    size_t nm = 0, nacc = 0;
    ncclResult_t rc = ncclSuccess, one;

    if (!m) {
        grp.spilled = 1;
        ACC_WARN(RUNTIME, "acc drop-in NCCL: out of memory in a group; NCCL runs all of it");
    }
    for (size_t i = 0; m && i < grp.n; i++) {
        member_t *x = member_of(m, nm, grp.ops[i].comm);
        if (!x) {
            x = &m[nm++];
            x->comm = grp.ops[i].comm;
            x->s = dropin_comm_get(x->comm);
            x->vote = x->s != NULL && !grp.spilled && needs_vote(x);
            x->acc = x->s != NULL && !grp.spilled && !x->vote && wants_all(x);
        }
    }
    for (size_t i = 0; i < grp.n; i++) {
        member_t *x = m ? member_of(m, nm, grp.ops[i].comm) : NULL;
        if ((!x || (!x->acc && !x->vote)) && (one = dropin_forward(&grp.ops[i])) != ncclSuccess &&
            rc == ncclSuccess)
            rc = one;
    }
    one = DROPIN_INTO(real_end());
    rc = rc != ncclSuccess ? rc : one;
    /* Communicators whose ranks have not voted yet held their calls back (the same ones on
     * every rank: dropin_wants says no to all until they have); they vote now, outside NCCL's
     * group, in the group's order, and their calls go where the vote leaves them - to acc, or
     * to NCCL as a group of their own, as calls acc declines do. */
    for (size_t i = 0; i < nm; i++)
        if (m[i].vote) {
            dropin_vote(m[i].s);
            m[i].acc = wants_all(&m[i]);
            if (!m[i].acc && (one = rest_to_nccl(m[i].comm, 0)) != ncclSuccess && rc == ncclSuccess)
                rc = one;
        }
    for (size_t i = 0; i < nm; i++)
        nacc += m[i].acc;
    if (nacc && (order = acc_mem_calloc(nacc, sizeof(*order)))) {
        size_t j = 0;
        /* Joins first, in the group's order; then the calls, in the ranks' shared order. */
        for (size_t i = 0; i < nm; i++)
            if (m[i].acc && dropin_join_for(m[i].s, grp.ops, grp.n))
                order[j++] = &m[i];
            else if (m[i].acc && (one = rest_to_nccl(m[i].comm, 0)) != ncclSuccess &&
                     rc == ncclSuccess)
                rc = one;
        qsort(order, j, sizeof(*order), by_order);
        for (size_t i = 0; i < j; i++)
            if ((one = run_member(order[i])) != ncclSuccess && rc == ncclSuccess)
                rc = one;
    } else {
        for (size_t i = 0; i < nm; i++)
            if (m[i].acc && (one = rest_to_nccl(m[i].comm, 0)) != ncclSuccess && rc == ncclSuccess)
                rc = one;
    }
    for (size_t i = 0; i < nm; i++)
        dropin_comm_put(m[i].s);
    acc_mem_free(order);
    acc_mem_free(m);
    return rc;
}

ncclResult_t pncclGroupStart(void)
{
    __typeof__(&pncclGroupStart) f;
    ncclResult_t rc;

    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(GroupStart, ());
    if (!(f = DROPIN_FN(GroupStart)))
        return dropin_unavailable(DROPIN_IDX_GroupStart);
    rc = DROPIN_INTO(f());
    grp.depth += rc == ncclSuccess;
    return rc;
}
DROPIN_ALIAS(GroupStart);

ncclResult_t pncclGroupEnd(void)
{
    __typeof__(&pncclGroupEnd) f;
    ncclResult_t rc;

    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(GroupEnd, ());
    if (!(f = DROPIN_FN(GroupEnd)))
        return dropin_unavailable(DROPIN_IDX_GroupEnd);
    if (grp.depth == 0 || --grp.depth > 0)
        return DROPIN_INTO(f()); /* NCCL judges an end without a start, and keeps its own depth */
    rc = group_end(f);
    group_reset();
    return rc;
}
DROPIN_ALIAS(GroupEnd);

/* NCCL simulates the group instead of running it: everything held back joins it first. */
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *info)
{
    __typeof__(&pncclGroupSimulateEnd) f;
    ncclResult_t rc = ncclSuccess, one;

    if (DROPIN_FROM_NCCL())
        DROPIN_PASS(GroupSimulateEnd, (info));
    if (!(f = DROPIN_FN(GroupSimulateEnd)))
        return dropin_unavailable(DROPIN_IDX_GroupSimulateEnd);
    if (grp.depth == 1) {
        for (size_t i = 0; i < grp.n; i++)
            if ((one = dropin_forward(&grp.ops[i])) != ncclSuccess && rc == ncclSuccess)
                rc = one;
        group_reset();
    }
    if (grp.depth > 0)
        grp.depth--;
    one = DROPIN_INTO(f(info));
    return rc != ncclSuccess ? rc : one;
}
DROPIN_ALIAS(GroupSimulateEnd);
