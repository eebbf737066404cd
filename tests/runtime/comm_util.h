/*
 * comm_util.h - one collective call through a communicator, checked the way a user would:
 * every rank fills its input with the reference pattern, calls the API (in place or not), and
 * counts the wrong elements of its own output.  Header-only, for tests/runtime.
 */
#ifndef COMM_UTIL_H
#define COMM_UTIL_H

#include "acc_db.h"
#include "acc_runtime.h"
#include "acc_test.h"

#include <unistd.h>

/* The environment of a host-backend case: the machine, no database (the fallback serves every
 * call) unless the case sets ACC_DB itself, errors only in the log, and the timeout. */
static inline void comm_env(const char *topo, const char *timeout_ms)
{
    setenv("ACC_TOPO", topo, 1);
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", timeout_ms, 1);
}

/* The image build's database of the machine spec describes, at path (made anew). */
static inline void build_db(const char *path, const char *spec)
{
    acc_db_t *db = NULL;
    acc_topo_t *topo = NULL;
    unlink(path);
    CHECK_OK(acc_topo_load(spec, &topo));
    CHECK_OK(acc_db_open(path, 0, &db));
    CHECK_OK(acc_db_build(db, topo, NULL, NULL));
    acc_db_close(db);
    acc_topo_destroy(topo);
}

typedef struct {
    acc_coll_t coll;
    acc_dtype_t dt;
    acc_redop_t op;
    uint64_t count; /* as the API counts it */
    int inplace;
    int root;
    uint32_t seed;
} call_t;

static inline acc_status_t call_api(acc_comm_t *c, const call_t *k, const void *in, void *out)
{
    switch (k->coll) {
    case ACC_COLL_ALLREDUCE:
        return acc_allreduce(in, out, k->count, k->dt, k->op, c, NULL);
    case ACC_COLL_ALLGATHER:
        return acc_allgather(in, out, k->count, k->dt, c, NULL);
    case ACC_COLL_REDUCE_SCATTER:
        return acc_reduce_scatter(in, out, k->count, k->dt, k->op, c, NULL);
    case ACC_COLL_BROADCAST:
        return acc_broadcast(in, out, k->count, k->dt, k->root, c, NULL);
    case ACC_COLL_REDUCE:
        return acc_reduce(in, out, k->count, k->dt, k->op, k->root, c, NULL);
    default:
        return ACC_ERR_INVALID;
    }
}

/* One call's buffers on this rank: input filled with the reference pattern, output poisoned. */
typedef struct {
    call_t k;
    unsigned char *a, *b; /* what was allocated */
    unsigned char *in, *out;
} prepared_t;

static inline void call_prepare(acc_comm_t *c, const call_t *k, prepared_t *p)
{
    int n = acc_comm_size(c), me = acc_comm_rank(c);
    size_t es = acc_dtype_size(k->dt);
    uint64_t ein = k->count * (k->coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)n : 1);
    uint64_t eout = k->count * (k->coll == ACC_COLL_ALLGATHER ? (uint64_t)n : 1);
    uint64_t big = ein > eout ? ein : eout;

    p->k = *k;
    p->a = malloc((size_t)(big * es) + 1);
    p->b = malloc((size_t)(eout * es) + 1);
    CHECK(p->a && p->b);
    memset(p->a, 0xa5, (size_t)(big * es));
    memset(p->b, 0xa5, (size_t)(eout * es));
    p->in = p->a;
    p->out = k->inplace ? p->a : p->b;
    if (k->inplace && k->coll == ACC_COLL_ALLGATHER)
        p->in = p->a + (size_t)((uint64_t)me * k->count * es);
    if (k->inplace && k->coll == ACC_COLL_REDUCE_SCATTER)
        p->out = p->a + (size_t)((uint64_t)me * k->count * es);
    acc_host_fill_rank(k->coll, n, me, k->dt, k->op, ACC_FILL_EXACT, k->seed, k->count, p->in);
}

/* Make the call (the API lets the buffers a rank does not use be NULL: use that). */
static inline acc_status_t call_issue(acc_comm_t *c, const prepared_t *p)
{
    const call_t *k = &p->k;
    int me = acc_comm_rank(c);
    return call_api(c, k,
                    k->coll == ACC_COLL_BROADCAST && me != k->root && !k->inplace ? NULL : p->in,
                    k->coll == ACC_COLL_REDUCE && me != k->root && !k->inplace ? NULL : p->out);
}

/* The wrong elements of this rank's output; the buffers freed. */
static inline uint64_t call_verify(acc_comm_t *c, prepared_t *p)
{
    const call_t *k = &p->k;
    uint64_t wrong =
        acc_host_check_rank(k->coll, acc_comm_size(c), k->root, acc_comm_rank(c), k->dt, k->op,
                            ACC_FILL_EXACT, k->seed, k->count, p->out, NULL);
    free(p->a);
    free(p->b);
    return wrong;
}

static inline void call_release(prepared_t *p)
{
    free(p->a);
    free(p->b);
}

/* Run one call and return the wrong elements of this rank's output; the status in *st. */
static inline uint64_t call_checked(acc_comm_t *c, const call_t *k, acc_status_t *st)
{
    prepared_t p;
    call_prepare(c, k, &p);
    *st = call_issue(c, &p);
    if (*st == ACC_OK)
        return call_verify(c, &p);
    call_release(&p);
    return 0;
}

/* The same, failing the case on an error or a wrong element. */
static inline void call_ok(acc_comm_t *c, const call_t *k)
{
    acc_status_t st;
    uint64_t wrong = call_checked(c, k, &st);
    CHECK_MSG(st == ACC_OK, "rank %d: %s %s %s count %llu%s: %s: %s", acc_comm_rank(c),
              acc_coll_name(k->coll), acc_dtype_name(k->dt), acc_redop_name(k->op),
              (unsigned long long)k->count, k->inplace ? " in place" : "", acc_status_name(st),
              acc_error_message());
    CHECK_MSG(wrong == 0, "rank %d: %s %s %s count %llu%s root %d: %llu wrong elements",
              acc_comm_rank(c), acc_coll_name(k->coll), acc_dtype_name(k->dt),
              acc_redop_name(k->op), (unsigned long long)k->count, k->inplace ? " in place" : "",
              k->root, (unsigned long long)wrong);
}

#endif
