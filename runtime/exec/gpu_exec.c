/*
 * The single-GPU executor: every rank of a plan emulated on one device.  Each rank's buffers
 * are device memory; one launch of the generated kernel holds every rank's blocks
 * (gridDim.y = ranks, gridDim.x = lanes x copies), peer-memory operations touch the other
 * ranks' buffers directly, and messages go through a staging buffer per connection.
 *
 * Blocks spin on each other's counters, so all of them must be resident at once: the
 * executor asks the driver how many blocks of this kernel fit per multiprocessor and refuses
 * (or uses fewer copies) rather than risk a launch that waits for blocks that never start.
 * A wait that takes longer than the time limit gives up and is reported by
 * acc_gpu_exec_check() with where it was and what it waited for.
 *
 * Device memory, laid out once for max_count elements:
 *   counters  u32 words, zero at the start: per rank scratch lengths [kmax][scratch chunks],
 *             progress and epochs [lanes][kmax]; per connection sent and acked [kmax]; per
 *             signal counter [kmax]; the status words;
 *   staging   per connection, enough slots for any number of copies up to kmax, of Simple
 *             messages or of LL lines (twice the bytes) as the plan's protocol says;
 *   scratch   per rank, scratch chunks of scratch_cap elements (a multiple of 16 bytes);
 *   tables    the rank, connection and counter tables and the parameter rows.
 * Every rank is on this GPU, so every connection and counter is released and acquired at GPU
 * scope; a launch runs as many threads per block as its slices need (acc_kthreads).
 */
#include "gpu_exec.h"

#include <stdlib.h>
#include <string.h>

/* More copies than this add waiting, not bandwidth: 32 x 8 ranks x 2 lanes already fills
 * an H100's 132 multiprocessors about twice. */
#define MAX_COPIES 32
/* Bytes a block of a lane should move per chunk before another copy pays (a guess to be
 * tuned with bench_kernels on the GPU). */
#define BYTES_PER_COPY    (256u * 1024u)
#define DEFAULT_TIMEOUT_S 20.0
/* Copies a host-memory executor may choose between when none is fixed. */
#define HOST_COPIES 4

/* Where the buffers live: the GPU's memory, or the host's for the emulation tests. */
typedef struct {
    acc_status_t (*alloc)(size_t bytes, void **out);
    void (*release)(void *p);
    acc_status_t (*fill)(void *dst, int byte, size_t bytes);
    acc_status_t (*put)(void *dst, const void *src, size_t bytes);
} mem_t;

static acc_status_t host_alloc(size_t bytes, void **out)
{
    /* 256-byte alignment, as cuMemAlloc gives, so that the layout is the GPU's exactly. */
    if (posix_memalign(out, 256, bytes ? bytes : 16) != 0) {
        *out = NULL;
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for %zu bytes", bytes);
    }
    memset(*out, 0, bytes ? bytes : 16);
    return ACC_OK;
}

static acc_status_t host_fill(void *dst, int byte, size_t bytes)
{
    memset(dst, byte, bytes);
    return ACC_OK;
}

static acc_status_t host_put(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return ACC_OK;
}

static const mem_t gpu_mem = {acc_cuda_malloc, acc_cuda_free, acc_cuda_memset, acc_cuda_htod};
static const mem_t host_mem = {host_alloc, free, host_fill, host_put};

struct acc_gpu_exec {
    const mem_t *mem;
    acc_plan_t *plan;
    acc_kernel_t *kernel;
    acc_kcache_t *own_cache;
    acc_dtype_t dt;
    size_t es;
    uint64_t max_count, scratch_cap;
    int nranks, nlanes, kmax, fixed_copies, capacity;
    uint64_t timeout_ns;
    void *module, *fn, *fn_avg;
    void *counters, *stage, *scratch, *tables;
    size_t counter_bytes;
    uint64_t d_ranks, d_conns, d_ctrs, d_params, d_status;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

uint64_t gx_max_chunk(const acc_plan_t *p, uint64_t count)
{
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, count);
    uint64_t a = (ein + p->in_chunks - 1) / p->in_chunks;
    uint64_t b = (eout + p->out_chunks - 1) / p->out_chunks;
    return a > b ? a : b;
}

uint64_t gx_slice_bytes(size_t es, uint64_t cap, int copies)
{
    return acc_kslice(cap, (uint32_t)copies, (uint32_t)(16 / es)) * es;
}

uint64_t gx_stage_bytes(int slots, size_t es, const acc_kconn_t *c, uint64_t cap, int kmax)
{
    uint64_t best = 0, b;
    int k;
    for (k = 1; k <= kmax; k++) {
        b = (uint64_t)k * (uint64_t)slots *
            acc_kslot_bytes(c->proto, c->maxcnt, gx_slice_bytes(es, cap, k));
        if (b > best)
            best = b;
    }
    return align_up(best, 256);
}

/* Where the kernel's counters live in x->counters (in u32 words). */
typedef struct {
    size_t rank, per_rank, scratch_len, progress, epoch, conn, ctr, status, total;
} layout_t;

static layout_t counter_layout(const acc_gpu_exec_t *x)
{
    layout_t l;
    const acc_kernel_t *k = x->kernel;
    size_t km = (size_t)x->kmax;
    l.scratch_len = 0;
    l.progress = km * k->chunks[ACC_BUF_SCRATCH];
    l.epoch = l.progress + (size_t)x->nlanes * km;
    l.per_rank = align_up(l.epoch + (size_t)x->nlanes * km, 32);
    l.rank = 0;
    l.conn = l.per_rank * (size_t)x->nranks;
    l.ctr = l.conn + 2 * km * k->nconns;
    l.status = align_up(l.ctr + km * k->nctrs, 32);
    l.total = l.status + ACC_KSTATUS_WORDS;
    return l;
}

static acc_status_t layout(acc_gpu_exec_t *x)
{
    const acc_kernel_t *k = x->kernel;
    layout_t l = counter_layout(x);
    uint64_t cap = gx_max_chunk(x->plan, x->max_count), stage_total = 0, sbytes, off, word;
    acc_krank_t *ranks = NULL;
    acc_kconn_dev_t *conns = NULL;
    acc_kctr_dev_t *ctrs = NULL;
    size_t rank_b, conn_b, ctr_b, param_b, tables_b;
    unsigned char *host = NULL;
    uint32_t i;
    int r;
    acc_status_t st;

    /* Chunk lengths travel as 32-bit words (message headers, scratch lengths) and slices are
     * computed in 32 bits: keep well clear of 2^32. */
    if (cap >= (1ull << 31))
        return acc_error_set(ACC_ERR_RANGE,
                             "GPU executor: %llu elements make chunks of %llu elements; chunks "
                             "hold fewer than 2^31",
                             (unsigned long long)x->max_count, (unsigned long long)cap);
    x->scratch_cap = align_up(cap ? cap : 1, 16 / x->es);
    for (i = 0; i < k->nconns; i++)
        stage_total += gx_stage_bytes(x->plan->slots, x->es, &k->conns[i], cap, x->kmax);
    sbytes = align_up(x->scratch_cap * x->es * k->chunks[ACC_BUF_SCRATCH], 256);
    x->counter_bytes = l.total * sizeof(uint32_t);
    if ((st = x->mem->alloc(x->counter_bytes, &x->counters)) != ACC_OK ||
        (st = x->mem->fill(x->counters, 0, x->counter_bytes)) != ACC_OK ||
        (st = x->mem->alloc(stage_total ? stage_total : 256, &x->stage)) != ACC_OK ||
        (st = x->mem->alloc(sbytes * (uint64_t)x->nranks + 256, &x->scratch)) != ACC_OK)
        return acc_error_prefix(st, "GPU executor: allocating %llu bytes of buffers: ",
                                (unsigned long long)(stage_total + sbytes * x->nranks));

    /* The tables, built on the host and copied once. */
    rank_b = align_up(sizeof(acc_krank_t) * (size_t)x->nranks, 256);
    conn_b = align_up(sizeof(acc_kconn_dev_t) * (k->nconns + 1), 256);
    ctr_b = align_up(sizeof(acc_kctr_dev_t) * (k->nctrs + 1), 256);
    param_b = sizeof(uint32_t) * (size_t)x->nranks * x->nlanes * k->param_stride;
    tables_b = rank_b + conn_b + ctr_b + param_b;
    if (!(host = acc_mem_calloc(1, tables_b)))
        return acc_error_set(ACC_ERR_NOMEM, "GPU executor: out of memory for its tables");
    if ((st = x->mem->alloc(tables_b, &x->tables)) != ACC_OK)
        goto out;
    ranks = (acc_krank_t *)host;
    conns = (acc_kconn_dev_t *)(host + rank_b);
    ctrs = (acc_kctr_dev_t *)(host + rank_b + conn_b);
    memcpy(host + rank_b + conn_b + ctr_b, k->params, param_b);
    word = (uint64_t)(uintptr_t)x->counters;
    for (r = 0; r < x->nranks; r++) {
        uint64_t base = word + 4 * (l.rank + (size_t)r * l.per_rank);
        ranks[r].scratch = (uint64_t)(uintptr_t)x->scratch + (uint64_t)r * sbytes;
        ranks[r].scratch_len = base + 4 * l.scratch_len;
        ranks[r].progress = base + 4 * l.progress;
        ranks[r].epoch = base + 4 * l.epoch;
    }
    for (i = 0, off = 0; i < k->nconns; i++) {
        conns[i].stage = (uint64_t)(uintptr_t)x->stage + off;
        conns[i].sent = word + 4 * (l.conn + 2 * (size_t)x->kmax * i);
        conns[i].acked = conns[i].sent + 4 * (size_t)x->kmax;
        conns[i].msgs = k->conns[i].msgs;
        conns[i].maxcnt = k->conns[i].maxcnt;
        conns[i].flags = 0; /* every rank on this GPU: GPU scope */
        off += gx_stage_bytes(x->plan->slots, x->es, &k->conns[i], cap, x->kmax);
    }
    for (i = 0; i < k->nctrs; i++) {
        ctrs[i].val = word + 4 * (l.ctr + (size_t)x->kmax * i);
        ctrs[i].per_launch = k->ctrs[i].per_launch;
        ctrs[i].flags = 0;
    }
    if ((st = x->mem->put(x->tables, host, tables_b)) != ACC_OK)
        goto out;
    x->d_ranks = (uint64_t)(uintptr_t)x->tables;
    x->d_conns = x->d_ranks + rank_b;
    x->d_ctrs = x->d_conns + conn_b;
    x->d_params = x->d_ctrs + ctr_b;
    x->d_status = word + 4 * l.status;
out:
    acc_mem_free(host);
    return st;
}

/* Compile (through the cache), load, and find how many blocks fit at once. */
static acc_status_t load(acc_gpu_exec_t *x, const acc_gpu_opts_t *o)
{
    acc_cuda_info_t info;
    acc_kcache_t *cache = o->cache;
    const void *cubin;
    size_t size;
    char arch[16];
    int major = 0, minor = 0, per_sm = 0, need = x->nranks * x->nlanes;
    acc_status_t st;

    if ((st = acc_cuda_init(o->device)) != ACC_OK || (st = acc_cuda_info(o->device, &info)))
        return st;
    if ((st = acc_nvrtc_version(&major, &minor)) != ACC_OK)
        return st;
    if (info.driver_version < major * 1000 + minor * 10)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "the CUDA driver supports CUDA %d.%d, but kernels built with NVRTC "
                             "%d.%d need a driver for CUDA %d.%d or newer",
                             info.driver_version / 1000, info.driver_version % 1000 / 10, major,
                             minor, major, minor);
    snprintf(arch, sizeof(arch), "sm_%d", info.sm);
    if (!cache) {
        if ((st = acc_kcache_create("", &x->own_cache)) != ACC_OK)
            return st;
        cache = x->own_cache;
    }
    if ((st = acc_kcache_kernel(cache, x->kernel, arch, &cubin, &size)) != ACC_OK ||
        (st = rt_cuda_module_load(cubin, &x->module)) != ACC_OK ||
        (st = rt_cuda_module_function(x->module, "acc_kernel", &x->fn)) != ACC_OK)
        return st;
    if (x->kernel->op == ACC_RED_AVG && x->kernel->reduces &&
        (st = rt_cuda_module_function(x->module, "acc_avg", &x->fn_avg)) != ACC_OK)
        return st;
    if ((st = rt_cuda_occupancy(x->fn, ACC_KTHREADS, &per_sm)) != ACC_OK)
        return st;
    x->capacity = per_sm * info.sm_count;
    if (x->capacity < need)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "GPU executor: plan '%s' needs %d thread blocks resident at once "
                             "(%d ranks x %d lanes), but %s holds only %d of this kernel (%d per "
                             "multiprocessor); emulate fewer ranks or lanes",
                             x->plan->algo, need, x->nranks, x->nlanes, info.name, x->capacity,
                             per_sm);
    x->kmax = x->capacity / need;
    if (x->kmax > MAX_COPIES)
        x->kmax = MAX_COPIES;
    if (o->copies > 0) {
        if (o->copies > x->kmax)
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "GPU executor: %d copies of %d ranks x %d lanes need %d "
                                 "resident blocks; %s holds %d (at most %d copies, and %d in "
                                 "any case)",
                                 o->copies, x->nranks, x->nlanes, o->copies * need, info.name,
                                 x->capacity, x->capacity / need, MAX_COPIES);
        x->fixed_copies = x->kmax = o->copies;
    }
    return ACC_OK;
}

/* What both kinds of executor share: checks, the plan's copy, the kernel. */
static acc_status_t begin(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                          uint64_t max_count, const acc_gpu_opts_t *o, const mem_t *mem,
                          acc_gpu_exec_t **out)
{
    acc_gpu_exec_t *x;
    acc_status_t st;

    *out = NULL;
    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "GPU executor: no plan");
    if (plan->nranks > ACC_GPU_MAX_RANKS)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "GPU executor: plan '%s' has %d ranks; one GPU emulates at most %d",
                             plan->algo, plan->nranks, ACC_GPU_MAX_RANKS);
    /* A plan that is wrong would hang a GPU, not just fail: prove it first. */
    if ((st = acc_plan_verify(plan)) != ACC_OK)
        return acc_error_prefix(st, "GPU executor: ");
    if (!(x = acc_mem_calloc(1, sizeof(*x))))
        return acc_error_set(ACC_ERR_NOMEM, "GPU executor: out of memory");
    x->mem = mem;
    x->dt = dt;
    x->es = acc_dtype_size(dt);
    x->max_count = max_count;
    x->nranks = plan->nranks;
    x->nlanes = plan->nlanes;
    x->timeout_ns = o->timeout_s < 0    ? 0
                    : o->timeout_s == 0 ? (uint64_t)(DEFAULT_TIMEOUT_S * 1e9)
                                        : (uint64_t)(o->timeout_s * 1e9);
    if ((st = acc_plan_clone(plan, &x->plan)) != ACC_OK ||
        (st = acc_kernel_generate(plan, dt, op, &x->kernel)) != ACC_OK) {
        acc_gpu_exec_destroy(x);
        return st;
    }
    *out = x;
    return ACC_OK;
}

acc_status_t acc_gpu_exec_create(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 uint64_t max_count, const acc_gpu_opts_t *opts,
                                 acc_gpu_exec_t **out)
{
    acc_gpu_opts_t o;
    acc_gpu_exec_t *x;
    acc_status_t st;

    memset(&o, 0, sizeof(o));
    if (opts)
        o = *opts;
    if ((st = begin(plan, dt, op, max_count, &o, &gpu_mem, &x)) != ACC_OK)
        return st;
    if ((st = load(x, &o)) != ACC_OK || (st = layout(x)) != ACC_OK) {
        acc_gpu_exec_destroy(x);
        return st;
    }
    *out = x;
    return ACC_OK;
}

acc_status_t gx_create_host(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                            uint64_t max_count, const acc_gpu_opts_t *opts, acc_gpu_exec_t **out)
{
    acc_gpu_opts_t o;
    acc_gpu_exec_t *x;
    acc_status_t st;

    memset(&o, 0, sizeof(o));
    if (opts)
        o = *opts;
    if ((st = begin(plan, dt, op, max_count, &o, &host_mem, &x)) != ACC_OK)
        return st;
    /* A fixed number of copies, or up to HOST_COPIES chosen per call as on a GPU. */
    x->kmax = o.copies > 0 ? o.copies : HOST_COPIES;
    x->fixed_copies = o.copies > 0 ? o.copies : 0;
    x->capacity = x->kmax * x->nranks * x->nlanes;
    if ((st = layout(x)) != ACC_OK) {
        acc_gpu_exec_destroy(x);
        return st;
    }
    *out = x;
    return ACC_OK;
}

void acc_gpu_exec_destroy(acc_gpu_exec_t *x)
{
    if (!x)
        return;
    if (x->mem) {
        x->mem->release(x->tables);
        x->mem->release(x->scratch);
        x->mem->release(x->stage);
        x->mem->release(x->counters);
    }
    rt_cuda_module_unload(x->module);
    acc_kcache_destroy(x->own_cache);
    acc_kernel_destroy(x->kernel);
    acc_plan_destroy(x->plan);
    acc_mem_free(x);
}

int gx_copies_for(uint64_t count, size_t es, int nlanes, int kmax)
{
    uint64_t bytes = count * es, k;
    k = (bytes + (uint64_t)nlanes * BYTES_PER_COPY - 1) / ((uint64_t)nlanes * BYTES_PER_COPY);
    if (k < 1)
        k = 1;
    return k > (uint64_t)kmax ? kmax : (int)k;
}

int acc_gpu_exec_copies(const acc_gpu_exec_t *x, uint64_t count)
{
    if (x->fixed_copies)
        return x->fixed_copies;
    return gx_copies_for(count, x->es, x->nlanes, x->kmax);
}

int acc_gpu_exec_capacity(const acc_gpu_exec_t *x)
{
    return x ? x->capacity : 0;
}

const acc_kernel_t *acc_gpu_exec_kernel(const acc_gpu_exec_t *x)
{
    return x ? x->kernel : NULL;
}

acc_status_t gx_args(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                     int inplace, acc_kargs_t *a, unsigned *gx, unsigned *gy)
{
    const acc_plan_t *p = x->plan;
    uint64_t shift = count * x->es;
    int r, copies = acc_gpu_exec_copies(x, count);

    if (count > x->max_count)
        return acc_error_set(ACC_ERR_RANGE,
                             "GPU executor: %llu elements, more than the %llu it was laid out "
                             "for",
                             (unsigned long long)count, (unsigned long long)x->max_count);
    if (inplace && !p->inplace)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "GPU executor: plan '%s' does not support in-place operation",
                             p->algo);
    memset(a, 0, sizeof(*a));
    a->ranks = x->d_ranks;
    a->conns = x->d_conns;
    a->ctrs = x->d_ctrs;
    a->params = x->d_params;
    a->status = x->d_status;
    a->elems_in = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    a->elems_out = acc_plan_buf_elems(p, ACC_BUF_OUT, count);
    a->scratch_cap = x->scratch_cap;
    a->slice_bytes = align_up(gx_slice_bytes(x->es, gx_max_chunk(p, count), copies), 16);
    a->timeout_ns = x->timeout_ns;
    a->copies = (uint32_t)copies;
    a->kmax = (uint32_t)x->kmax;
    a->param_stride = x->kernel->param_stride;
    a->slots = (uint32_t)p->slots;
    a->chunks[0] = p->in_chunks;
    a->chunks[1] = p->out_chunks;
    a->chunks[2] = p->scratch_chunks;
    /* Buffers as acc_host_exec maps them; in place the caller passes the larger one in
     * out[r]. */
    for (r = 0; r < x->nranks; r++) {
        uint64_t o = out ? (uint64_t)(uintptr_t)out[r] : 0;
        if (inplace) {
            a->io[0][r] = a->io[1][r] = o;
            if (p->coll == ACC_COLL_ALLGATHER && o)
                a->io[0][r] = o + (uint64_t)r * shift;
            if (p->coll == ACC_COLL_REDUCE_SCATTER && o)
                a->io[1][r] = o + (uint64_t)r * shift;
        } else {
            a->io[0][r] = in ? (uint64_t)(uintptr_t)in[r] : 0;
            a->io[1][r] = o;
        }
    }
    *gx = (unsigned)(x->nlanes * copies);
    *gy = (unsigned)x->nranks;
    return ACC_OK;
}

acc_status_t acc_gpu_exec_launch(acc_gpu_exec_t *x, uint64_t count, void *const *in,
                                 void *const *out, int inplace, acc_cuda_stream_t s)
{
    acc_kargs_t a;
    void *params[1];
    unsigned gx, gy;
    uint64_t blocks;
    acc_status_t st;

    if (!x->fn)
        return acc_error_set(ACC_ERR_INVALID, "GPU executor: this executor has no GPU module");
    if ((st = gx_args(x, count, in, out, inplace, &a, &gx, &gy)) != ACC_OK)
        return st;
    params[0] = &a;
    st = rt_cuda_launch(x->fn, gx, gy, acc_kthreads(x->kernel->proto, a.slice_bytes), params, s);
    if (st != ACC_OK || !x->fn_avg || !a.elems_out)
        return st;
    blocks = (a.elems_out + ACC_KTHREADS - 1) / ACC_KTHREADS;
    return rt_cuda_launch(x->fn_avg, (unsigned)(blocks > 1024 ? 1024 : blocks), gy, ACC_KTHREADS,
                          params, s);
}

acc_status_t gx_describe_failure(const acc_plan_t *p, const acc_kernel_t *k, const uint32_t *w,
                                 double timeout_s)
{
    char what[256];
    int rank = (int)w[1], lane = (int)w[2];
    uint32_t opi = w[4], idx = w[5];
    const char *opname = "?";

    if (rank >= 0 && rank < p->nranks && lane >= 0 && lane < p->nlanes &&
        opi < acc_plan_prog(p, rank, lane)->nops)
        opname = acc_op_name((acc_opcode_t)acc_plan_prog(p, rank, lane)->ops[opi].code);
    switch (w[0]) {
    case ACC_KW_MSG:
    case ACC_KW_SPACE:
        if (idx < k->nconns)
            snprintf(what, sizeof(what), "%s on the connection rank %d -> rank %d lane %d",
                     w[0] == ACC_KW_MSG ? "a message" : "room for a message", k->conns[idx].from,
                     k->conns[idx].to, k->conns[idx].lane);
        else
            snprintf(what, sizeof(what), "connection %u", idx);
        break;
    case ACC_KW_SIGNAL:
        if (idx < k->nctrs)
            snprintf(what, sizeof(what), "signals from rank %d on slot %u", k->ctrs[idx].from,
                     k->ctrs[idx].slot);
        else
            snprintf(what, sizeof(what), "counter %u", idx);
        break;
    default:
        snprintf(what, sizeof(what), "lane %u to complete an operation", idx);
        break;
    }
    return acc_error_set(ACC_ERR_INTERNAL,
                         "GPU executor: rank %d lane %d (block copy %u) operation %u (%s) gave "
                         "up waiting for %s after %.1f s: counter at %u, wanted %u (a deadlock, "
                         "or blocks that were not all resident)",
                         rank, lane, w[3], opi, opname, what, timeout_s, w[7], w[6]);
}

acc_status_t acc_gpu_exec_check(acc_gpu_exec_t *x, acc_cuda_stream_t s)
{
    uint32_t w[ACC_KSTATUS_WORDS];
    acc_status_t st;

    if ((st = acc_cuda_stream_sync(s)) != ACC_OK ||
        (st = acc_cuda_dtoh(w, (void *)(uintptr_t)x->d_status, sizeof(w))) != ACC_OK)
        return st;
    if (w[0] == 0)
        return ACC_OK;
    return gx_failure(x, w);
}

acc_status_t gx_failure(acc_gpu_exec_t *x, const uint32_t *status)
{
    acc_status_t st = gx_describe_failure(x->plan, x->kernel, status, (double)x->timeout_ns / 1e9);
    /* Counters of an interrupted launch are inconsistent: start again from zero. */
    if (x->mem->fill(x->counters, 0, x->counter_bytes) != ACC_OK)
        ACC_WARN(RUNTIME, "GPU executor: could not reset its counters after a failure");
    return st;
}

acc_status_t acc_gpu_exec_host(acc_gpu_exec_t *x, uint64_t count, void *const *in, void *const *out,
                               int inplace)
{
    const acc_plan_t *p = x->plan;
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, count) * x->es;
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, count) * x->es;
    uint64_t big = ein > eout ? ein : eout;
    void **din = acc_mem_calloc((size_t)x->nranks, sizeof(void *));
    void **dout = acc_mem_calloc((size_t)x->nranks, sizeof(void *));
    acc_status_t st = ACC_OK;
    int r;

    if (!din || !dout) {
        st = acc_error_set(ACC_ERR_NOMEM, "GPU executor: out of memory");
        goto out;
    }
    for (r = 0; r < x->nranks && st == ACC_OK; r++) {
        int has_in = p->coll != ACC_COLL_BROADCAST || r == p->root;
        int has_out = p->coll != ACC_COLL_REDUCE || r == p->root;
        if (inplace) {
            if (out && out[r] && (st = acc_cuda_malloc(big, &dout[r])) == ACC_OK)
                st = acc_cuda_htod(dout[r], out[r], big);
            else if (st == ACC_OK && (has_in || has_out) && big)
                st = acc_error_set(ACC_ERR_INVALID, "GPU executor: out[%d] is NULL", r);
            continue;
        }
        if (in && in[r]) {
            if ((st = acc_cuda_malloc(ein, &din[r])) == ACC_OK)
                st = acc_cuda_htod(din[r], in[r], ein);
        } else if (has_in && ein) {
            st = acc_error_set(ACC_ERR_INVALID, "GPU executor: in[%d] is NULL", r);
        }
        if (st == ACC_OK && out && out[r]) {
            if ((st = acc_cuda_malloc(eout, &dout[r])) == ACC_OK)
                st = acc_cuda_htod(dout[r], out[r], eout);
        } else if (st == ACC_OK && has_out && eout) {
            st = acc_error_set(ACC_ERR_INVALID, "GPU executor: out[%d] is NULL", r);
        }
    }
    if (st == ACC_OK)
        st = acc_gpu_exec_launch(x, count, din, dout, inplace, NULL);
    if (st == ACC_OK)
        st = acc_gpu_exec_check(x, NULL);
    for (r = 0; r < x->nranks && st == ACC_OK; r++)
        if (dout[r])
            st = acc_cuda_dtoh(out[r], dout[r], inplace ? big : eout);
out:
    for (r = 0; din && dout && r < x->nranks; r++) {
        acc_cuda_free(din[r]);
        acc_cuda_free(dout[r]);
    }
    acc_mem_free(din);
    acc_mem_free(dout);
    return st;
}
