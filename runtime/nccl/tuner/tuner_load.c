/*
 * The tuner plugin's tables: the topology and the database are found once per process (the
 * same way a communicator finds them, comm/comm_locate.c) and stay open while the plugin is
 * loaded; each communicator then reads NCCL's choices for its own shape into memory.
 */
#include "tuner_internal.h"

#include "acc_db.h"
#include "rt_internal.h"

#include <pthread.h>
#include <string.h>

/* NCCL's functions, Broadcast to AllReduce, as acc's collectives. */
static const acc_coll_t func_coll[TUNER_FUNCS] = {ACC_COLL_BROADCAST, ACC_COLL_REDUCE,
                                                  ACC_COLL_ALLGATHER, ACC_COLL_REDUCE_SCATTER,
                                                  ACC_COLL_ALLREDUCE};

/* Process-wide, under the lock: communicators can be created from several threads at once. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int looked;       /* the topology and database were looked for (once per process) */
static acc_topo_t *topo; /* NULL: see problem */
static acc_db_t *db;
static char problem[512];

static void open_once(void)
{
    const char *spec = rt_topo_source(NULL), *path = NULL;

    looked = 1;
    if (acc_topo_load(spec, &topo) != ACC_OK) {
        snprintf(problem, sizeof(problem), "topology '%s' (ACC_TOPO): %s", spec,
                 acc_error_message());
        return;
    }
    if (rt_db_locate(NULL, &path) != ACC_OK || acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK) {
        snprintf(problem, sizeof(problem), "%s", acc_error_message());
        acc_topo_destroy(topo);
        topo = NULL;
    }
}

/* The plugin's tables live as long as the plugin: NCCL unloads it when its last communicator
 * is destroyed. */
__attribute__((destructor)) static void close_all(void)
{
    acc_db_close(db);
    acc_topo_destroy(topo);
}

/* The fingerprint of the machine a communicator of this shape runs on: the topology itself, or
 * its node type on nnodes nodes.  Other shapes (a communicator over part of a node) have none:
 * *why says so. */
static int shape_fingerprint(size_t nranks, size_t nnodes, char fp[ACC_SHA256_HEX_LEN + 1],
                             char *why, size_t cap)
{
    const char *name = acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo);
    size_t per = (size_t)acc_topo_gpus_per_node(topo);
    acc_topo_t *scaled = NULL;
    char params[48];
    int rc = -1;

    if (nnodes == 0 || nranks % nnodes || nranks / nnodes != per) {
        snprintf(why, cap, "the topology %s has %zu GPUs per node, no shape of %zu ranks on %zu %s",
                 name, per, nranks, nnodes, nnodes == 1 ? "node" : "nodes");
        return -1;
    }
    snprintf(params, sizeof(params), "nodes=%zu", nnodes);
    if ((size_t)acc_topo_nodes(topo) == nnodes)
        rc = acc_topo_fingerprint(topo, fp) == ACC_OK ? 0 : -1;
    else if (acc_topo_with_network(topo, params, &scaled) == ACC_OK)
        rc = acc_topo_fingerprint(scaled, fp) == ACC_OK ? 0 : -1;
    if (rc != 0)
        snprintf(why, cap, "the topology %s on %zu nodes: %s", name, nnodes, acc_error_message());
    acc_topo_destroy(scaled);
    return rc;
}

/* Read every function's table; a damaged one drops them all (half a table set is not what the
 * image build made).  0, or -1 with *why set. */
static int read_tables(tuner_ctx_t *ctx, const char *fp, char *list, size_t cap, char *why,
                       size_t why_cap)
{
    size_t len = 0;
    for (int f = 0; f < TUNER_FUNCS; f++) {
        acc_status_t st = acc_db_get_nccl_choices(db, fp, func_coll[f], &ctx->tables[f]);
        if (st == ACC_ERR_NOT_FOUND)
            continue;
        if (st != ACC_OK) {
            snprintf(why, why_cap, "%s", acc_error_message());
            tuner_unload(ctx);
            return -1;
        }
        len += (size_t)snprintf(list + len, len < cap ? cap - len : 0, "%s%s %zu range%s",
                                len ? ", " : "", acc_coll_name(func_coll[f]), ctx->tables[f]->n,
                                ctx->tables[f]->n == 1 ? "" : "s");
    }
    return 0;
}

void tuner_load(tuner_ctx_t *ctx, char *line, size_t cap, ncclDebugLogLevel *level)
{
    char fp[ACC_SHA256_HEX_LEN + 1], why[512] = "", list[256] = "";
    int n = snprintf(line, cap, "acc tuner: %zu ranks on %zu node%s: ", ctx->nranks, ctx->nnodes,
                     ctx->nnodes == 1 ? "" : "s");
    char *rest = line + (n > 0 && (size_t)n < cap ? n : 0);
    size_t left = cap - (size_t)(rest - line);

    pthread_mutex_lock(&lock);
    if (!looked)
        open_once();
    *level = NCCL_LOG_INFO;
    if (!db) {
        *level = NCCL_LOG_WARN;
        snprintf(rest, left, "every choice stays NCCL's: %s", problem);
    } else if (shape_fingerprint(ctx->nranks, ctx->nnodes, fp, why, sizeof(why)) != 0) {
        snprintf(rest, left, "every choice stays NCCL's: %s", why);
    } else if (read_tables(ctx, fp, list, sizeof(list), why, sizeof(why)) != 0) {
        *level = NCCL_LOG_WARN;
        snprintf(rest, left, "every choice stays NCCL's: %s", why);
    } else if (!list[0]) {
        snprintf(rest, left,
                 "every choice stays NCCL's: %s has no NCCL choices for this machine "
                 "(fingerprint %.16s...; acc-info --db %s lists what it holds)",
                 acc_db_path(db), fp, acc_db_path(db));
    } else {
        snprintf(rest, left, "NCCL's choices of %s from %s: %s",
                 acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo),
                 acc_db_path(db), list);
    }
    pthread_mutex_unlock(&lock);
}

void tuner_unload(tuner_ctx_t *ctx)
{
    for (int f = 0; f < TUNER_FUNCS; f++) {
        acc_select_nccl_destroy(ctx->tables[f]);
        ctx->tables[f] = NULL;
    }
}
