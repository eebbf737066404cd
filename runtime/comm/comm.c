/*
 * Communicators: creation (bootstrap, backend, loading), the error that breaks one, abort,
 * destruction and what can be asked of one.
 */
#include "rt_internal.h"

#include "exec/gpu_exec.h"

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

typedef struct {
    int32_t status;
    char text[252];
} verdict_t;

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

acc_status_t comm_agree(acc_comm_t *c, acc_status_t mine, const char *step)
{
    verdict_t v, *all = acc_mem_calloc((size_t)c->nranks, sizeof(verdict_t));
    acc_status_t st;

    if (!all)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    memset(&v, 0, sizeof(v));
    v.status = mine;
    if (mine != ACC_OK)
        snprintf(v.text, sizeof(v.text), "%s", acc_error_message());
    if ((st = boot_allgather(c->boot, &v, sizeof(v), all)) == ACC_OK)
        for (int r = 0; r < c->nranks; r++)
            if (all[r].status != ACC_OK) {
                st = acc_error_set((acc_status_t)all[r].status, "%s, at rank %d: %s", step, r,
                                   all[r].text);
                break;
            }
    acc_mem_free(all);
    return st;
}

void comm_refuse(acc_comm_t *c, const acc_plan_t *plan)
{
    if (acc_array_reserve((void **)&c->refused, &c->refused_cap, c->nrefused + 1,
                          sizeof(*c->refused)) == ACC_OK)
        c->refused[c->nrefused++] = plan;
}

acc_status_t comm_refused(const acc_comm_t *c, const acc_plan_t *plan)
{
    for (size_t i = 0; i < c->nrefused; i++)
        if (c->refused[i] == plan)
            return acc_error_set(ACC_ERR_UNSUPPORTED, "the plan could not be set up before");
    return ACC_OK;
}

acc_status_t comm_break(acc_comm_t *c, acc_status_t st)
{
    if (c->error == ACC_OK) {
        c->error = st;
        snprintf(c->error_msg, sizeof(c->error_msg), "%s", acc_error_message());
        /* A caller that runs the fallback itself (the drop-in NCCL) hands the call on and says
         * so in its own line, which carries this message. */
        acc_log(c->external_fallback ? ACC_LOG_DEBUG : ACC_LOG_ERROR, ACC_SUBSYS_RUNTIME,
                "rank %d: the communicator is broken: %s", c->rank, c->error_msg);
    }
    return st;
}

/* The backend the options and ACC_BACKEND ask for, before the ranks have met. */
static acc_status_t wanted_backend(const acc_comm_opts_t *opts, acc_backend_t *out)
{
    acc_status_t st;
    *out = opts ? opts->backend : ACC_BACKEND_AUTO;
    if (*out == ACC_BACKEND_AUTO &&
        (st = acc_backend_parse(acc_setting_str(ACC_SETTING_BACKEND), out)) != ACC_OK)
        return acc_error_prefix(st, "ACC_BACKEND: ");
    return ACC_OK;
}

/* The backend every rank uses: cuda when it was asked for, or 'auto' and every rank has a GPU;
 * else host.  Decided together, since the ranks must run the same plans the same way. */
static acc_status_t choose_backend(acc_comm_t *c, acc_backend_t want)
{
    int ndev = 0,
        gpu = want != ACC_BACKEND_HOST && rt_cuda_device_count(&ndev) == ACC_OK && ndev > 0;
    acc_status_t st = ACC_OK;

    if (want == ACC_BACKEND_CUDA && !gpu)
        st = acc_error_set(ACC_ERR_NO_DEVICE, "ACC_BACKEND=cuda, but rank %d has no GPU (%s)",
                           c->rank, acc_error_message());
    if ((st = comm_agree(c, st, "choosing the backend")) != ACC_OK)
        return st;
    if (want == ACC_BACKEND_AUTO)
        gpu = comm_agree(c, gpu ? ACC_OK : ACC_ERR_NO_DEVICE, "looking for GPUs") == ACC_OK;
    c->backend_kind = gpu ? ACC_BACKEND_CUDA : ACC_BACKEND_HOST;
    c->be = gpu ? &rt_cuda_backend : &rt_host_backend;
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
    if ((opts && opts->topo && !(c->opts.topo = c->opts_topo = acc_mem_strdup(opts->topo))) ||
        (opts && opts->db && !(c->opts.db = c->opts_db = acc_mem_strdup(opts->db))))
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
    c->rank = rank;
    c->nranks = nranks;
    c->duplicate = duplicate;
    c->external_fallback = opts && opts->external_fallback;
    c->device_opt = opts ? opts->device : -1;
    if ((st = keep_opts(c, opts)) != ACC_OK ||
        (st = read_timeout(opts, &c->timeout_ms)) != ACC_OK ||
        (st = wanted_backend(opts, &want)) != ACC_OK ||
        (st = boot_create(id, rank, nranks, c->timeout_ms, &c->abort, &c->boot)) != ACC_OK ||
        (st = choose_backend(c, want)) != ACC_OK || (st = comm_prepare(c, opts)) != ACC_OK ||
        (st = c->be->create(c, &c->be_state)) != ACC_OK)
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
    acc_mem_free(c->fallbacks);
    acc_topo_destroy(c->topo);
    acc_mem_free(c->refused);
    acc_mem_free(c->node_of);
    boot_destroy(c->boot);
    acc_mem_free(c->opts_topo);
    acc_mem_free(c->opts_db);
    acc_mem_free(c);
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

void comm_stop(acc_comm_t *c)
{
    if (c)
        __atomic_store_n(&c->abort, 1, __ATOMIC_RELEASE);
}

acc_status_t acc_comm_abort(acc_comm_t *c)
{
    if (!c)
        return ACC_OK;
    comm_stop(c);
    /* A call in flight on another thread sees the flag within one wait slice and returns
     * ACC_ERR_ABORTED; only then is its memory freed. */
    while (__atomic_load_n(&c->inflight, __ATOMIC_ACQUIRE) > 0)
        usleep(1000);
    comm_free(c, 1);
    return ACC_OK;
}

acc_status_t acc_comm_get_async_error(acc_comm_t *c, acc_status_t *err)
{
    acc_status_t found;
    if (!c || !err)
        return acc_error_set(ACC_ERR_INVALID, "acc_comm_get_async_error: NULL argument");
    if (c->error == ACC_OK && c->be && c->be->async_error &&
        (found = c->be->async_error(c, c->be_state)) != ACC_OK)
        comm_break(c, found);
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
