/*
 * Communicators: creation (bootstrap, backend, loading), the error that breaks one, abort,
 * destruction and what can be asked of one.
 */
#include "rt_internal.h"

#include <string.h>
#include <unistd.h>

static const char *const backend_names[] = {"auto", "host", "cuda"};

const char *acc_backend_name(acc_backend_t b)
{
    return b >= 0 && b <= ACC_BACKEND_CUDA ? backend_names[b] : "?";
}

acc_status_t acc_backend_parse(const char *s, acc_backend_t *out)
{
    for (int i = 0; s && i <= ACC_BACKEND_CUDA; i++)
        if (acc_str_ieq(s, backend_names[i])) {
            *out = (acc_backend_t)i;
            return ACC_OK;
        }
    return acc_error_set(ACC_ERR_INVALID, "unknown backend '%s' (auto, host, cuda)", s ? s : "");
}

void acc_comm_opts_init(acc_comm_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->device = -1;
}

acc_status_t acc_get_unique_id(acc_unique_id_t *id)
{
    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_get_unique_id: id is NULL");
    return boot_root_start(id);
}

acc_status_t acc_unique_id_from_string(const char *host_port, acc_unique_id_t *id)
{
    if (!id)
        return acc_error_set(ACC_ERR_INVALID, "acc_unique_id_from_string: id is NULL");
    return boot_id_from_string(host_port, id);
}

acc_status_t comm_break(acc_comm_t *c, acc_status_t st)
{
    if (c->error == ACC_OK) {
        c->error = st;
        snprintf(c->error_msg, sizeof(c->error_msg), "%s", acc_error_message());
        ACC_ERROR(RUNTIME, "rank %d: the communicator is broken: %s", c->rank, c->error_msg);
    }
    return st;
}

/* The backend the options and ACC_BACKEND ask for; AUTO is the host backend until a GPU
 * backend is built in. */
static acc_status_t choose_backend(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    acc_backend_t b = opts ? opts->backend : ACC_BACKEND_AUTO;
    acc_status_t st;

    if (b == ACC_BACKEND_AUTO &&
        (st = acc_backend_parse(acc_setting_str(ACC_SETTING_BACKEND), &b)) != ACC_OK)
        return acc_error_prefix(st, "ACC_BACKEND: ");
    if (b == ACC_BACKEND_CUDA)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "the cuda backend is not part of this build of acc; use "
                             "ACC_BACKEND=host (or auto)");
    c->backend_kind = ACC_BACKEND_HOST;
    c->be = &rt_host_backend;
    return ACC_OK;
}

static acc_status_t read_timeout(const acc_comm_opts_t *opts, int *out)
{
    int64_t v;
    acc_status_t st;
    if (opts && opts->timeout_ms) {
        *out = opts->timeout_ms;
        return ACC_OK;
    }
    if ((st = acc_setting_int(ACC_SETTING_TIMEOUT_MS, &v)) != ACC_OK)
        return st;
    if (v < 0 || v > 24 * 3600 * 1000)
        return acc_error_set(ACC_ERR_INVALID,
                             "ACC_TIMEOUT_MS=%lld is not a timeout from 0 (none) to 86400000 ms",
                             (long long)v);
    *out = v ? (int)v : -1;
    return ACC_OK;
}

/* A copy of the options, which a duplicate (acc_comm_dup) is made with. */
static acc_status_t keep_opts(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    if (opts)
        c->opts = *opts;
    else
        acc_comm_opts_init(&c->opts);
    c->opts.topo = c->opts.db = NULL;
    if ((opts && opts->topo && !(c->opts.topo = c->opts_topo = acc_strdup(opts->topo))) ||
        (opts && opts->db && !(c->opts.db = c->opts_db = acc_strdup(opts->db))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a communicator's options");
    return ACC_OK;
}

acc_status_t acc_comm_init_rank(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                                const acc_comm_opts_t *opts)
{
    return comm_init(out, nranks, id, rank, opts, 0);
}

acc_status_t comm_init(acc_comm_t **out, int nranks, const acc_unique_id_t *id, int rank,
                       const acc_comm_opts_t *opts, int duplicate)
{
    acc_comm_t *c;
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
    if (!(c = acc_calloc(1, sizeof(*c))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a communicator");
    c->rank = rank;
    c->nranks = nranks;
    c->duplicate = duplicate;
    c->external_fallback = opts && opts->external_fallback;
    if ((st = keep_opts(c, opts)) != ACC_OK ||
        (st = read_timeout(opts, &c->timeout_ms)) != ACC_OK ||
        (st = choose_backend(c, opts)) != ACC_OK ||
        (st = boot_create(id, rank, nranks, c->timeout_ms, &c->abort, &c->boot)) != ACC_OK ||
        (st = comm_prepare(c, opts)) != ACC_OK || (st = c->be->create(c, &c->be_state)) != ACC_OK)
        goto out;
    *out = c;
    return ACC_OK;
out:
    acc_error_prefix(st, "rank %d: creating a communicator of %d ranks: ", rank, nranks);
    acc_comm_abort(c);
    return st;
}

static void comm_free(acc_comm_t *c, int abort)
{
    if (c->be && c->be_state)
        c->be->destroy(c, c->be_state, abort);
    comm_unload(c);
    for (size_t i = 0; i < c->nfallbacks; i++)
        acc_plan_destroy(c->fallbacks[i].plan);
    acc_free(c->fallbacks);
    acc_topo_destroy(c->topo);
    acc_free(c->node_of);
    boot_destroy(c->boot);
    acc_free(c->opts_topo);
    acc_free(c->opts_db);
    acc_free(c);
}

acc_status_t acc_comm_destroy(acc_comm_t *c)
{
    acc_status_t st = ACC_OK;
    if (!c)
        return ACC_OK;
    /* Wait for the peers: a rank that left early would take its shared memory and sockets
     * with it while the others still finish their last call.  A broken communicator does not
     * wait (its peers may be gone). */
    if (c->error == ACC_OK && c->boot && (st = boot_barrier(c->boot)) != ACC_OK)
        acc_error_prefix(st, "rank %d: destroying the communicator: ", c->rank);
    comm_free(c, c->error != ACC_OK);
    return st;
}

acc_status_t acc_comm_abort(acc_comm_t *c)
{
    if (!c)
        return ACC_OK;
    __atomic_store_n(&c->abort, 1, __ATOMIC_RELEASE);
    /* A call in flight on another thread sees the flag within one wait slice and returns
     * ACC_ERR_ABORTED; only then is its memory freed. */
    while (__atomic_load_n(&c->inflight, __ATOMIC_ACQUIRE) > 0)
        usleep(1000);
    comm_free(c, 1);
    return ACC_OK;
}

acc_status_t acc_comm_get_async_error(acc_comm_t *c, acc_status_t *err)
{
    if (!c || !err)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_get_async_error: NULL argument");
    *err = c->error;
    if (c->error != ACC_OK)
        acc_error_set(c->error, "%s", c->error_msg);
    return ACC_OK;
}

int acc_comm_rank(const acc_comm_t *c)
{
    return c ? c->rank : -1;
}

int acc_comm_size(const acc_comm_t *c)
{
    return c ? c->nranks : -1;
}

acc_backend_t acc_comm_backend(const acc_comm_t *c)
{
    return c ? c->backend_kind : ACC_BACKEND_AUTO;
}

const char *acc_comm_fallback_reason(const acc_comm_t *c)
{
    return c && !c->use_tables ? c->fallback_reason : "";
}
