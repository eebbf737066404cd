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

/* Run one call and return the wrong elements of this rank's output; the status in *st. */
static inline uint64_t call_checked(acc_comm_t *c, const call_t *k, acc_status_t *st)
{
    int n = acc_comm_size(c), me = acc_comm_rank(c);
    size_t es = acc_dtype_size(k->dt);
    uint64_t ein = k->count * (k->coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)n : 1);
    uint64_t eout = k->count * (k->coll == ACC_COLL_ALLGATHER ? (uint64_t)n : 1);
    uint64_t big = ein > eout ? ein : eout, wrong;
    unsigned char *a = malloc((size_t)(big * es) + 1), *b = malloc((size_t)(eout * es) + 1);
    unsigned char *in, *out;

    CHECK(a && b);
    memset(a, 0xa5, (size_t)(big * es));
    memset(b, 0xa5, (size_t)(eout * es));
    if (k->inplace) {
        in = a;
        out = a;
        if (k->coll == ACC_COLL_ALLGATHER)
            in = a + (size_t)((uint64_t)me * k->count * es);
        if (k->coll == ACC_COLL_REDUCE_SCATTER)
            out = a + (size_t)((uint64_t)me * k->count * es);
    } else {
        in = a;
        out = b;
    }
    acc_host_fill_rank(k->coll, n, me, k->dt, k->op, ACC_FILL_EXACT, k->seed, k->count, in);
    /* The API lets the buffers a rank does not use be NULL: use that. */
    *st = call_api(c, k, k->coll == ACC_COLL_BROADCAST && me != k->root && !k->inplace ? NULL : in,
                   k->coll == ACC_COLL_REDUCE && me != k->root && !k->inplace ? NULL : out);
    wrong = *st == ACC_OK ? acc_host_check_rank(k->coll, n, k->root, me, k->dt, k->op,
                                                ACC_FILL_EXACT, k->seed, k->count, out, NULL)
                          : 0;
    free(a);
    free(b);
    return wrong;
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
