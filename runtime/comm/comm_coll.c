/*
 * The collectives: arguments checked before any memory is touched, the table's range looked
 * up, acc's plan or the fallback handed to the backend, what ran counted; groups queue calls
 * and run them at their end.
 */
#include "rt_internal.h"

#include <string.h>

/* ---- checking a call -------------------------------------------------------------------- */

/* Element sizes from the one list of types, here where every call reads one. */
static const uint8_t dtype_bytes[ACC_DT_COUNT] = {
#define DTYPE_BYTES(id, name, bytes) bytes,
    ACC_DTYPE_MAP(DTYPE_BYTES)
#undef DTYPE_BYTES
};

static acc_status_t check_call(acc_comm_t *c, rt_call_t *k)
{
    size_t es;
    uint64_t mult = 1, bytes, total;
    int me, has_send, has_recv;

    /* The name is looked up on the error paths only: this runs at every call. */
#define NAME acc_coll_name(k->coll)
    if (k->dt < 0 || k->dt >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_%s: unknown data type %d", NAME, (int)k->dt);
    if ((k->coll == ACC_COLL_ALLREDUCE || k->coll == ACC_COLL_REDUCE_SCATTER ||
         k->coll == ACC_COLL_REDUCE) &&
        (k->op < 0 || k->op >= ACC_RED_COUNT))
        return acc_error_set(ACC_ERR_INVALID, "acc_%s: unknown reduction %d", NAME, (int)k->op);
    if ((k->coll == ACC_COLL_BROADCAST || k->coll == ACC_COLL_REDUCE) &&
        (k->root < 0 || k->root >= c->nranks))
        return acc_error_set(ACC_ERR_INVALID, "acc_%s: root %d is not a rank (0 to %d)", NAME,
                             k->root, c->nranks - 1);
    es = dtype_bytes[k->dt];
    if (k->coll == ACC_COLL_ALLGATHER || k->coll == ACC_COLL_REDUCE_SCATTER)
        mult = (uint64_t)c->nranks;
    if (__builtin_mul_overflow(k->count, (uint64_t)es, &bytes) ||
        __builtin_mul_overflow(bytes, mult, &total) || total > (uint64_t)PTRDIFF_MAX)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_%s: %llu elements of %zu bytes (times %llu ranks) overflow", NAME,
                             (unsigned long long)k->count, es, (unsigned long long)mult);
    k->nbytes = total;
    me = c->rank;
    has_send = k->coll != ACC_COLL_BROADCAST || me == k->root;
    has_recv = k->coll != ACC_COLL_REDUCE || me == k->root;
    if (k->count && ((has_send && !k->send) || (has_recv && !k->recv)))
        return acc_error_set(ACC_ERR_INVALID, "acc_%s: rank %d: %s is NULL for %llu elements", NAME,
                             me, has_send && !k->send ? "sendbuf" : "recvbuf",
                             (unsigned long long)k->count);
    /* NCCL's in place: the input where the output keeps it. */
    if (k->coll == ACC_COLL_ALLGATHER)
        k->inplace = k->recv && k->send == (const char *)k->recv + (uint64_t)me * bytes;
    else if (k->coll == ACC_COLL_REDUCE_SCATTER)
        k->inplace =
            k->send && (const char *)k->recv == (const char *)k->send + (uint64_t)me * bytes;
    else
        k->inplace = k->send == k->recv;
    if (comm_error(c) != ACC_OK)
        return acc_error_set(comm_error(c), "acc_%s: the communicator is broken (%s)", NAME,
                             c->error_msg);
    return ACC_OK;
#undef NAME
}

/* ---- running a call --------------------------------------------------------------------- */

/* acc's plan for this call, or NULL for the fallback; *entry receives the plan's table row
 * (untouched without a plan). */
static acc_plan_t *table_plan(acc_comm_t *c, const rt_call_t *k, size_t *entry)
{
    rt_table_t *t = &c->tables[k->coll];
    const acc_select_entry_t *e;
    acc_plan_t *p;

    if (!c->use_tables || !t->table)
        return NULL;
    /* A job's calls repeat their sizes: the range found last first, the search else. */
    e = t->last < t->table->n ? &t->table->entries[t->last] : NULL;
    if (!e || k->nbytes < e->min_bytes || k->nbytes > e->max_bytes) {
        if (!(e = acc_select_lookup(t->table, k->nbytes)))
            return NULL;
        t->last = (size_t)(e - t->table->entries);
    }
    /* A plan this kind of backend cannot run (one whose steps cross nodes, on the cuda backend)
     * is not offered: the range is the fallback's, NCCL's on GPUs, as the table says
     * (acc_select_entry_runs_on), and its plan is never read. */
    if (!acc_select_entry_runs_on(e, c->backend_kind))
        return NULL;
    p = t->plans[e - t->table->entries];
    if (!p && !t->read[e - t->table->entries])
        p = comm_table_plan(c, k->coll, (size_t)(e - t->table->entries));
    if (p && (k->coll == ACC_COLL_BROADCAST || k->coll == ACC_COLL_REDUCE) && p->root != k->root)
        return NULL; /* the table's plan is for another root: the fallback serves this one, as
                      * it serves the ranges the tables give NCCL */
    *entry = (size_t)(e - t->table->entries);
    return p;
}

/* A call the tables do not give acc, or acc's plan could not serve: the backend's own way
 * (NCCL), else acc's ring plan.  The slot each took is remembered in the route (as its index
 * + 1: the array may move when it grows), so that a repeated call finds it without a search. */
static acc_status_t run_fallback(acc_comm_t *c, const rt_call_t *k, rt_route_t *route,
                                 rt_fallback_t **fb, int *broken)
{
    acc_status_t st = ACC_ERR_UNSUPPORTED;

    if (c->be->fallback &&
        (st = c->be->fallback(c, c->be_state, k, broken)) != ACC_ERR_UNSUPPORTED) {
        if (route->nccl_slot)
            *fb = &c->fallbacks[route->nccl_slot - 1];
        else if ((*fb = comm_fallback_slot(c, k->coll, k->root, "NCCL")) != NULL)
            route->nccl_slot = (size_t)(*fb - c->fallbacks) + 1;
        return st;
    }
    if (route->ring_slot)
        *fb = &c->fallbacks[route->ring_slot - 1];
    else if (comm_fallback_plan(c, k->coll, k->root, fb) != NULL)
        route->ring_slot = (size_t)(*fb - c->fallbacks) + 1;
    else
        return ACC_ERR_INTERNAL;
    return c->be->run(c, c->be_state, (*fb)->plan, k, broken);
}

/* The call's route: the last one when the call has its size and root, else a new look-up. */
static rt_route_t *route_of(acc_comm_t *c, const rt_call_t *k)
{
    rt_route_t *r = &c->route[k->coll];
    if (r->known && r->nbytes == k->nbytes && r->root == k->root)
        return r;
    r->entry = SIZE_MAX;
    r->plan = table_plan(c, k, &r->entry);
    r->nbytes = k->nbytes;
    r->root = k->root;
    r->nccl_slot = 0;
    r->ring_slot = 0;
    r->known = 1;
    return r;
}

static acc_status_t run_call(acc_comm_t *c, const rt_call_t *k)
{
    rt_route_t *route = route_of(c, k);
    size_t entry = route->entry;
    acc_plan_t *plan = route->plan;
    rt_fallback_t *fb = NULL;
    acc_status_t st = ACC_ERR_UNSUPPORTED;
    int broken = 0, forced;

    if (plan && !c->tables[k->coll].unfit[entry])
        st = c->be->run(c, c->be_state, plan, k, &broken);
    if (st == ACC_OK) {
        c->tables[k->coll].calls[entry]++;
        c->tables[k->coll].bytes[entry] += k->nbytes;
        return ACC_OK;
    }
    if (broken)
        return comm_break(c, st);
    forced = plan != NULL;
    if (forced && !c->forced_said && c->rank == 0) {
        /* Said once per communicator: acc's plan could not be set up here (the backend agreed
         * on that on every rank), and its calls go to the fallback.  A plan the backend cannot
         * run here at all is asked again, for its reason. */
        if (c->tables[k->coll].unfit_why[entry])
            acc_error_set(ACC_ERR_UNSUPPORTED, "%s", c->tables[k->coll].unfit_why[entry]);
        else if (c->tables[k->coll].unfit[entry])
            (void)c->be->supports(c, plan);
        ACC_WARN(RUNTIME,
                 "%s: acc's plan %s for %llu bytes cannot run here, the fallback serves "
                 "it (%s)",
                 acc_coll_name(k->coll), plan->algo, (unsigned long long)k->nbytes,
                 acc_error_message());
        c->forced_said = 1;
    }
    /* The tables give this size to NCCL or have no range for it, or acc's plan cannot run here:
     * the fallback serves it, ours or the caller's. */
    if (c->external_fallback)
        return acc_error_set(ACC_NO_DATA, "acc_%s: not acc's to run (%llu bytes)",
                             acc_coll_name(k->coll), (unsigned long long)k->nbytes);
    if ((st = run_fallback(c, k, route, &fb, &broken)) != ACC_OK)
        return broken || !fb ? comm_break(c, st) : st;
    if (forced) {
        fb->forced++;
        fb->forced_bytes += k->nbytes;
    } else {
        fb->calls++;
        fb->bytes += k->nbytes;
    }
    return ACC_OK;
}

acc_status_t acc_comm_serves(const acc_comm_t *c, acc_coll_t coll, size_t count, acc_dtype_t dt,
                             int root, int *serves)
{
    rt_call_t k = {.coll = coll, .count = count, .dt = dt, .op = ACC_RED_SUM, .root = root};
    size_t entry;
    acc_plan_t *plan;

    acc_status_t st;
    if (!serves || coll < 0 || coll >= ACC_COLL_COUNT || dt < 0 || dt >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_serves: bad argument");
    if ((st = comm_begin_call((acc_comm_t *)c, "acc_comm_serves")) != ACC_OK)
        return st;
    k.nbytes = (uint64_t)count * acc_dtype_size(dt) *
               (coll == ACC_COLL_ALLGATHER || coll == ACC_COLL_REDUCE_SCATTER ? c->nranks : 1);
    plan = table_plan((acc_comm_t *)c, &k, &entry);
    *serves = plan && comm_error(c) == ACC_OK && !c->tables[coll].unfit[entry];
    comm_end_call((acc_comm_t *)c);
    return ACC_OK;
}

acc_status_t acc_comm_run_plan(acc_comm_t *c, const acc_plan_t *plan, const void *sendbuf,
                               void *recvbuf, size_t count, acc_dtype_t dt, acc_redop_t op,
                               acc_stream_t stream)
{
    rt_call_t k = {
        .send = sendbuf, .recv = recvbuf, .count = count, .dt = dt, .op = op, .stream = stream};
    acc_status_t st;
    int broken = 0;

    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_run_plan: the plan is NULL");
    k.coll = plan->coll;
    k.root = plan->root;
    if ((st = check_call(c, &k)) != ACC_OK)
        return st;
    if (plan->nranks != c->nranks)
        return acc_error_set(ACC_ERR_INVALID,
                             "acc_comm_run_plan: the plan %s has %d ranks, the communicator %d",
                             plan->algo, plan->nranks, c->nranks);
    if ((st = c->be->supports(c, plan)) != ACC_OK || k.count == 0)
        return st;
    __atomic_add_fetch(&c->inflight, 1, __ATOMIC_ACQ_REL);
    st = c->be->run(c, c->be_state, plan, &k, &broken);
    __atomic_sub_fetch(&c->inflight, 1, __ATOMIC_ACQ_REL);
    return broken ? comm_break(c, st) : st;
}

/* ---- groups ---------------------------------------------------------------------------- */

typedef struct {
    acc_comm_t *comm;
    rt_call_t call;
} queued_t;

static _Thread_local int group_depth;
/* Threads with a group open: a call reads its thread's depth (a call into the TLS resolver in
 * a shared library) only when some thread has one. */
static int groups_open;
static _Thread_local queued_t *group_calls;
static _Thread_local size_t group_n, group_cap;

acc_status_t acc_group_start(void)
{
    if (group_depth++ == 0)
        __atomic_add_fetch(&groups_open, 1, __ATOMIC_RELAXED);
    return ACC_OK;
}

acc_status_t acc_group_end(void)
{
    acc_status_t st = ACC_OK, one;
    size_t i;

    if (group_depth == 0)
        return acc_error_set(ACC_ERR_INVALID, "acc_group_end without acc_group_start");
    if (--group_depth > 0)
        return ACC_OK;
    __atomic_sub_fetch(&groups_open, 1, __ATOMIC_RELAXED);
    for (i = 0; i < group_n; i++) {
        acc_comm_t *c = group_calls[i].comm;
        const char *name = acc_coll_name(group_calls[i].call.coll);
        if ((one = comm_begin_call(c, name)) == ACC_OK) {
            one = comm_error(c) != ACC_OK
                      ? acc_error_set(comm_error(c), "acc_%s: the communicator is broken (%s)",
                                      name, c->error_msg)
                      : run_call(c, &group_calls[i].call);
            comm_end_call(c);
        }
        if (one != ACC_OK && st == ACC_OK)
            st = one; /* the message of the first failure stays */
    }
    group_n = 0;
    acc_mem_free(group_calls);
    group_calls = NULL;
    group_cap = 0;
    return st;
}

/* A call: the communicator entered before anything of it is read (so that acc_comm_abort on
 * another thread waits for it, or it sees the communicator closed), checked, queued in a group
 * or run. */
static acc_status_t submit(acc_comm_t *c, rt_call_t *k)
{
    static const char *const api[ACC_COLL_COUNT] = {[ACC_COLL_ALLREDUCE] = "acc_allreduce",
                                                    [ACC_COLL_ALLGATHER] = "acc_allgather",
                                                    [ACC_COLL_REDUCE_SCATTER] =
                                                        "acc_reduce_scatter",
                                                    [ACC_COLL_BROADCAST] = "acc_broadcast",
                                                    [ACC_COLL_REDUCE] = "acc_reduce"};
    acc_status_t st;

    if ((st = comm_begin_call(c, api[k->coll])) != ACC_OK)
        return st;
    if ((st = check_call(c, k)) != ACC_OK || k->count == 0)
        goto out;
    if (__atomic_load_n(&groups_open, __ATOMIC_RELAXED) && group_depth > 0) {
        if (acc_array_reserve((void **)&group_calls, &group_cap, group_n + 1, sizeof(queued_t)) !=
            ACC_OK) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a group");
            goto out;
        }
        group_calls[group_n].comm = c;
        group_calls[group_n++].call = *k;
        goto out;
    }
    st = run_call(c, k);
out:
    comm_end_call(c);
    return st;
}

acc_status_t acc_allreduce(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                           acc_redop_t op, acc_comm_t *comm, acc_stream_t stream)
{
    rt_call_t k = {.coll = ACC_COLL_ALLREDUCE,
                   .send = sendbuf,
                   .recv = recvbuf,
                   .count = count,
                   .dt = dt,
                   .op = op,
                   .stream = stream};
    return submit(comm, &k);
}

acc_status_t acc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount, acc_dtype_t dt,
                           acc_comm_t *comm, acc_stream_t stream)
{
    rt_call_t k = {.coll = ACC_COLL_ALLGATHER,
                   .send = sendbuf,
                   .recv = recvbuf,
                   .count = sendcount,
                   .dt = dt,
                   .op = ACC_RED_SUM,
                   .stream = stream};
    return submit(comm, &k);
}

acc_status_t acc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                acc_dtype_t dt, acc_redop_t op, acc_comm_t *comm,
                                acc_stream_t stream)
{
    rt_call_t k = {.coll = ACC_COLL_REDUCE_SCATTER,
                   .send = sendbuf,
                   .recv = recvbuf,
                   .count = recvcount,
                   .dt = dt,
                   .op = op,
                   .stream = stream};
    return submit(comm, &k);
}

acc_status_t acc_broadcast(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                           int root, acc_comm_t *comm, acc_stream_t stream)
{
    rt_call_t k = {.coll = ACC_COLL_BROADCAST,
                   .send = sendbuf,
                   .recv = recvbuf,
                   .count = count,
                   .dt = dt,
                   .op = ACC_RED_SUM,
                   .root = root,
                   .stream = stream};
    return submit(comm, &k);
}

acc_status_t acc_reduce(const void *sendbuf, void *recvbuf, size_t count, acc_dtype_t dt,
                        acc_redop_t op, int root, acc_comm_t *comm, acc_stream_t stream)
{
    rt_call_t k = {.coll = ACC_COLL_REDUCE,
                   .send = sendbuf,
                   .recv = recvbuf,
                   .count = count,
                   .dt = dt,
                   .op = op,
                   .root = root,
                   .stream = stream};
    return submit(comm, &k);
}

/* ---- statistics ---------------------------------------------------------------------- */

acc_status_t acc_comm_stats(const acc_comm_t *c, acc_comm_stat_t **out, size_t *n)
{
    acc_comm_stat_t *rows = NULL;
    size_t cap = 0, count = 0;

    acc_status_t st;
    if (!out || !n)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_stats: NULL argument");
    if ((st = comm_begin_call((acc_comm_t *)c, "acc_comm_stats")) != ACC_OK)
        return st;
    for (int coll = 0; coll < ACC_COLL_COUNT; coll++) {
        const rt_table_t *t = &c->tables[coll];
        for (size_t i = 0; t->table && i < t->table->n; i++) {
            const acc_select_entry_t *e = &t->table->entries[i];
            if (!t->calls[i])
                continue;
            if (acc_array_reserve((void **)&rows, &cap, count + 1, sizeof(*rows)) != ACC_OK)
                goto nomem;
            rows[count] = (acc_comm_stat_t){.coll = (acc_coll_t)coll,
                                            .min_bytes = e->min_bytes,
                                            .max_bytes = e->max_bytes,
                                            .calls = t->calls[i],
                                            .bytes = t->bytes[i]};
            snprintf(rows[count++].ran, sizeof(rows->ran), "%.31s %.63s", e->algo, e->params);
        }
        for (size_t i = 0; i < c->nfallbacks; i++) {
            const rt_fallback_t *f = &c->fallbacks[i];
            for (int forced = 0; (int)f->coll == coll && forced < 2; forced++) {
                uint64_t calls = forced ? f->forced : f->calls;
                if (!calls)
                    continue;
                if (acc_array_reserve((void **)&rows, &cap, count + 1, sizeof(*rows)) != ACC_OK)
                    goto nomem;
                rows[count] = (acc_comm_stat_t){.coll = (acc_coll_t)coll,
                                                .max_bytes = UINT64_MAX,
                                                .fallback = 1,
                                                .calls = calls,
                                                .bytes = forced ? f->forced_bytes : f->bytes};
                snprintf(rows[count++].ran, sizeof(rows->ran), "fallback: %s%s%s", f->name,
                         forced ? " (acc's plan could not run here)" : "",
                         c->use_tables ? "" : " (no tables)");
            }
        }
    }
    comm_end_call((acc_comm_t *)c);
    *out = rows;
    *n = count;
    return ACC_OK;
nomem:
    comm_end_call((acc_comm_t *)c);
    acc_mem_free(rows);
    return acc_error_set(ACC_ERR_NOMEM, "out of memory for statistics");
}
