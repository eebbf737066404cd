/*
 * Instances of the cuda backend (cuda_internal.h explains the design): the module, the
 * layout of every rank's allocation, the IPC exchange, the kernel's tables.  Every step of the
 * set-up ends with comm_agree, so that the ranks give up together.
 */
#include "cuda_internal.h"

#include <string.h>

/* More copies add waiting, not bandwidth (the single-GPU executor's bound). */
#define MAX_COPIES 32

static uint64_t align(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static int peer_op(uint8_t code)
{
    return code == ACC_OP_PUT || code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

/* The module of the kernel for this GPU: the database's CUBIN when it was built from this very
 * source, else NVRTC's through the cache. */
static acc_status_t load_module(acc_comm_t *c, cb_state_t *s, cb_inst_t *in)
{
    const void *cubin = NULL;
    size_t size = 0, len = 0;
    acc_db_kernel_t k;
    acc_db_t *db = NULL;
    char plan_hash[ACC_SHA256_HEX_LEN + 1], src_hash[ACC_SHA256_HEX_LEN + 1];
    const char *src = acc_kernel_source(in->kernel, &len);
    acc_status_t st;

    memset(&k, 0, sizeof(k));
    if (c->db_path[0] && s->compiler[0] && acc_plan_hash(in->plan, plan_hash) == ACC_OK &&
        acc_sha256_hex(src, len, src_hash) == ACC_OK &&
        acc_db_open(c->db_path, ACC_DB_READONLY, &db) == ACC_OK &&
        acc_db_get_kernel(db, plan_hash, s->arch, in->dt, in->op, s->compiler, src_hash, &k) ==
            ACC_OK) {
        cubin = k.cubin;
        size = k.cubin_size;
    }
    acc_db_close(db);
    if (!cubin && (st = acc_kcache_kernel(s->cache, in->kernel, s->arch, &cubin, &size)) != ACC_OK)
        return acc_error_prefix(st, "no CUBIN for %s in the database and none compiled: ", s->arch);
    (void)size;
    st = rt_cuda_module_load(cubin, &in->module);
    acc_db_kernel_clear(&k);
    if (st == ACC_OK)
        st = rt_cuda_module_function(in->module, "acc_kernel", &in->fn);
    if (st == ACC_OK && in->op == ACC_RED_AVG && in->kernel->reduces)
        st = rt_cuda_module_function(in->module, "acc_avg", &in->fn_avg);
    return st;
}

/* Copies this GPU can hold for every rank on it at once. */
static acc_status_t local_kmax(const cb_state_t *s, const cb_inst_t *in, int *kmax)
{
    int per_sm = 0, need = in->plan->nlanes * s->sharers;
    acc_status_t st = rt_cuda_occupancy(in->fn, ACC_KTHREADS, &per_sm);
    if (st != ACC_OK)
        return st;
    *kmax = per_sm * s->info.sm_count / need;
    if (*kmax > MAX_COPIES)
        *kmax = MAX_COPIES;
    if (*kmax < 1)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s %s needs %d thread blocks resident at once on %s (%d lanes x %d "
                             "ranks on it), which holds %d",
                             acc_coll_name(in->plan->coll), in->plan->algo, need, s->info.name,
                             in->plan->nlanes, s->sharers, per_sm * s->info.sm_count);
    return ACC_OK;
}

/* Every rank's allocation, laid out at capacity with kmax copies. */
static acc_status_t lay_out(acc_comm_t *c, cb_inst_t *in)
{
    const acc_plan_t *p = in->plan;
    const acc_kernel_t *k = in->kernel;
    uint64_t cap = gx_max_chunk(p, in->cap), km = (uint64_t)in->kmax;
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, in->cap) * in->es;
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, in->cap) * in->es;
    uint32_t sc = k->chunks[ACC_BUF_SCRATCH];

    /* Chunk lengths travel as 32-bit words and slices are computed in 32 bits. */
    if (cap >= (1ull << 31))
        return acc_error_set(ACC_ERR_RANGE, "chunks of %llu elements; chunks hold fewer than 2^31",
                             (unsigned long long)cap);
    in->scratch_cap = align(cap ? cap : 1, 16 / in->es);
    in->layouts = acc_mem_calloc((size_t)p->nranks, sizeof(cb_layout_t));
    in->conn_off = acc_mem_calloc(k->nconns + 1, sizeof(uint64_t));
    in->conn_stage = acc_mem_calloc(k->nconns + 1, sizeof(uint64_t));
    in->ctr_off = acc_mem_calloc(k->nctrs + 1, sizeof(uint64_t));
    if (!in->layouts || !in->conn_off || !in->conn_stage || !in->ctr_off)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (int r = 0; r < p->nranks; r++) {
        cb_layout_t *l = &in->layouts[r];
        uint64_t off = 0;
        l->scratch_len = off;
        off += 4 * km * sc;
        l->progress = off;
        off += 4 * (uint64_t)p->nlanes * km;
        l->epoch = off;
        off = align(off + 4 * (uint64_t)p->nlanes * km, 256);
        for (uint32_t i = 0; i < k->nctrs; i++)
            if (k->ctrs[i].to == r) {
                in->ctr_off[i] = off;
                off = align(off + 4 * km, 256);
            }
        for (uint32_t i = 0; i < k->nconns; i++)
            if (k->conns[i].to == r) {
                in->conn_off[i] = off;
                in->conn_stage[i] = off + align(8 * km, 256);
                off = in->conn_stage[i] +
                      gx_stage_bytes(p->slots, in->es, &k->conns[i], cap, in->kmax);
            }
        l->scratch = align(off, 256);
        off = l->scratch + align(in->scratch_cap * in->es * sc, 256);
        if (in->staged) {
            l->in = align(off, 256);
            l->out = align(l->in + ein, 256);
            off = l->out + eout;
        }
        l->bytes = align(off ? off : 1, 4096);
    }
    (void)c;
    return ACC_OK;
}

/* Allocate and clear this rank's allocation, and the pinned status words. */
static acc_status_t allocate(acc_comm_t *c, cb_inst_t *in, unsigned char handle[])
{
    const cb_layout_t *l = &in->layouts[c->rank];
    void *seg = NULL;
    acc_status_t st;

    if (!(in->seg = acc_mem_calloc((size_t)in->plan->nranks, sizeof(unsigned char *))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    if ((st = acc_cuda_malloc(l->bytes, &seg)) != ACC_OK)
        return acc_error_prefix(
            st, "allocating %llu bytes of device memory: ", (unsigned long long)l->bytes);
    in->seg[c->rank] = seg;
    if ((st = acc_cuda_memset(seg, 0, l->bytes)) != ACC_OK ||
        (st = rt_cuda_ipc_get(seg, handle)) != ACC_OK)
        return st;
    return rt_cuda_host_alloc(ACC_KSTATUS_WORDS * sizeof(uint32_t), (void **)&in->status,
                              &in->d_status);
}

/* Open the allocations of the other ranks of this node from their IPC handles. */
static acc_status_t map_peers(acc_comm_t *c, cb_inst_t *in, const unsigned char *handles)
{
    acc_status_t st;
    for (int r = 0; r < c->nranks; r++) {
        if (r == c->rank || c->node_of[r] != c->node_of[c->rank])
            continue;
        if ((st = rt_cuda_ipc_open(handles + (size_t)r * RT_CUDA_IPC_BYTES,
                                   (void **)&in->seg[r])) != ACC_OK)
            return acc_error_prefix(st, "mapping rank %d's memory: ", r);
    }
    return ACC_OK;
}

static uint64_t at(const cb_inst_t *in, int r, uint64_t off)
{
    return in->seg[r] ? (uint64_t)(uintptr_t)in->seg[r] + off : 0;
}

/* Release and acquire between two ranks at GPU scope when they share a GPU, else at system
 * scope (ACC_KF_SYS), which a peer on another GPU needs and which costs more. */
static uint32_t scope(const cb_state_t *s, int a, int b)
{
    return s->gpu_of[a] == s->gpu_of[b] ? 0u : ACC_KF_SYS;
}

/* The kernel's tables with this process's addresses, copied to the device once. */
static acc_status_t build_tables(const cb_state_t *s, cb_inst_t *in)
{
    const acc_plan_t *p = in->plan;
    const acc_kernel_t *k = in->kernel;
    size_t rank_b = align(sizeof(acc_krank_t) * (size_t)p->nranks, 256);
    size_t conn_b = align(sizeof(acc_kconn_dev_t) * (k->nconns + 1), 256);
    size_t ctr_b = align(sizeof(acc_kctr_dev_t) * (k->nctrs + 1), 256);
    size_t param_b = sizeof(uint32_t) * (size_t)p->nranks * (size_t)p->nlanes * k->param_stride;
    size_t total = rank_b + conn_b + ctr_b + param_b;
    unsigned char *host = acc_mem_calloc(1, total);
    acc_krank_t *ranks = (acc_krank_t *)host;
    acc_kconn_dev_t *conns = (acc_kconn_dev_t *)(host + rank_b);
    acc_kctr_dev_t *ctrs = (acc_kctr_dev_t *)(host + rank_b + conn_b);
    acc_status_t st;

    if (!host)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the kernel's tables");
    memcpy(host + rank_b + conn_b + ctr_b, k->params, param_b);
    for (int r = 0; r < p->nranks; r++) {
        const cb_layout_t *l = &in->layouts[r];
        ranks[r].scratch = at(in, r, l->scratch);
        ranks[r].scratch_len = at(in, r, l->scratch_len);
        ranks[r].progress = at(in, r, l->progress);
        ranks[r].epoch = at(in, r, l->epoch);
        if (in->staged) {
            ranks[r].buf[0] = at(in, r, l->in);
            ranks[r].buf[1] = at(in, r, l->out);
        }
    }
    for (uint32_t i = 0; i < k->nconns; i++) {
        int to = k->conns[i].to;
        conns[i].stage = at(in, to, in->conn_stage[i]);
        conns[i].sent = at(in, to, in->conn_off[i]);
        conns[i].acked = conns[i].sent ? conns[i].sent + 4 * (uint64_t)in->kmax : 0;
        conns[i].msgs = k->conns[i].msgs;
        conns[i].maxcnt = k->conns[i].maxcnt;
        conns[i].flags = scope(s, k->conns[i].from, to);
    }
    for (uint32_t i = 0; i < k->nctrs; i++) {
        ctrs[i].val = at(in, k->ctrs[i].to, in->ctr_off[i]);
        ctrs[i].per_launch = k->ctrs[i].per_launch;
        ctrs[i].flags = scope(s, k->ctrs[i].from, k->ctrs[i].to);
    }
    if ((st = acc_cuda_malloc(total, &in->tables)) == ACC_OK &&
        (st = acc_cuda_htod(in->tables, host, total)) == ACC_OK) {
        in->d_ranks = (uint64_t)(uintptr_t)in->tables;
        in->d_conns = in->d_ranks + rank_b;
        in->d_ctrs = in->d_conns + conn_b;
        in->d_params = in->d_ctrs + ctr_b;
    }
    acc_mem_free(host);
    return st;
}

static acc_status_t agree_kmax(acc_comm_t *c, cb_inst_t *in)
{
    int32_t *all = acc_mem_calloc((size_t)c->nranks, sizeof(int32_t)), mine = in->kmax;
    acc_status_t st;
    if (!all)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    if ((st = boot_allgather(c->boot, &mine, sizeof(mine), all)) == ACC_OK)
        for (int r = 0; r < c->nranks; r++)
            if (all[r] < in->kmax)
                in->kmax = all[r];
    acc_mem_free(all);
    return st;
}

acc_status_t cb_inst_create(acc_comm_t *c, cb_state_t *s, const acc_plan_t *plan, acc_dtype_t dt,
                            acc_redop_t op, uint64_t cap, cb_inst_t **out)
{
    cb_inst_t *in = acc_mem_calloc(1, sizeof(*in));
    unsigned char mine[RT_CUDA_IPC_BYTES], *handles = NULL;
    acc_status_t st;

    *out = NULL;
    if (!in)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    in->plan = plan;
    in->rank = c->rank;
    in->dt = dt;
    in->op = op;
    in->es = acc_dtype_size(dt);
    in->cap = cap ? cap : 1;
    for (int r = 0; r < plan->nranks && !in->staged; r++)
        for (int l = 0; l < plan->nlanes && !in->staged; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(plan, r, l);
            for (uint32_t k = 0; k < prog->nops; k++)
                in->staged |= peer_op(prog->ops[k].code);
        }
    st = acc_kernel_generate(plan, dt, op, &in->kernel);
    if (st == ACC_OK)
        st = load_module(c, s, in);
    if (st == ACC_OK)
        st = local_kmax(s, in, &in->kmax);
    if ((st = comm_agree(c, st, "loading the plan's kernel")) != ACC_OK ||
        (st = agree_kmax(c, in)) != ACC_OK)
        goto out;
    st = lay_out(c, in);
    if (st == ACC_OK)
        st = allocate(c, in, mine);
    if ((st = comm_agree(c, st, "allocating the plan's device memory")) != ACC_OK)
        goto out;
    if (!(handles = acc_mem_alloc((size_t)c->nranks * RT_CUDA_IPC_BYTES))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = boot_allgather(c->boot, mine, RT_CUDA_IPC_BYTES, handles);
    if (st == ACC_OK)
        st = comm_agree(c, map_peers(c, in, handles), "mapping the peers' device memory");
    if (st == ACC_OK)
        st = comm_agree(c, build_tables(s, in), "building the kernel's tables");
out:
    acc_mem_free(handles);
    if (st != ACC_OK) {
        cb_inst_destroy(in);
        return acc_error_prefix(st, "cuda backend, %s %s: ", acc_coll_name(plan->coll), plan->algo);
    }
    *out = in;
    return ACC_OK;
}

void cb_inst_destroy(cb_inst_t *in)
{
    if (!in)
        return;
    for (int r = 0; in->seg && r < in->plan->nranks; r++) {
        if (r == in->rank)
            acc_cuda_free(in->seg[r]);
        else
            rt_cuda_ipc_close(in->seg[r]);
    }
    acc_mem_free(in->seg);
    acc_mem_free(in->layouts);
    acc_mem_free(in->conn_off);
    acc_mem_free(in->conn_stage);
    acc_mem_free(in->ctr_off);
    acc_cuda_free(in->tables);
    acc_cuda_free(in->tmp_in);
    rt_cuda_host_free(in->status);
    rt_cuda_module_unload(in->module);
    acc_kernel_destroy(in->kernel);
    acc_mem_free(in);
}

acc_status_t cb_inst_status(const cb_inst_t *in, int timeout_ms)
{
    uint32_t w[ACC_KSTATUS_WORDS];
    if (!in->status || !__atomic_load_n(&in->status[0], __ATOMIC_ACQUIRE))
        return ACC_OK;
    memcpy(w, in->status, sizeof(w));
    return gx_describe_failure(in->plan, in->kernel, w, timeout_ms > 0 ? timeout_ms / 1e3 : 0);
}
