/*
 * itersim.c - the training-iteration simulator: one data-parallel iteration as one rank sees
 * it, the backward pass releasing gradients, a fusion policy turning them into collectives,
 * streams running those concurrently over shared links.  The model and what it leaves out are
 * stated in acc_tune.h ("the training-iteration simulator").
 *
 * The simulation is driven by events: a gradient becoming ready, a Horovod cycle or an acc
 * timeout firing, a collective finishing its latency part or its bandwidth part, the backward
 * pass ending.  Between two events every rate is constant: compute advances at the share of
 * SMs the collectives in flight leave it, and each collective in its bandwidth part at 1/k of
 * the full rate when k are there.  The cost of a run is linear in tensors + buffers (+ cycles).
 */
#include <math.h>
#include <string.h>

#include "acc_tune.h"

/* Tolerances in milliseconds when comparing times that come from sums of differences. */
#define EPS_MS 1e-9

typedef struct {
    uint64_t bytes;
    double ready; /* ms of backward work after which the gradient is final */
    acc_dtype_t dtype;
    long next_same; /* the next unit of the same data type, -1 when none */
} unit_t;

struct acc_itersim {
    const acc_profile_t *profile;
    const acc_profile_compute_t *compute;
    const acc_tune_comm_t *comm; /* NULL: nothing to reduce */
    acc_itersim_opts_t opts;
    unit_t *units;
    size_t n;
    double backward_ms; /* of the last micro-batch, without SM contention */
    double pre_ms;      /* everything before it: earlier micro-batches, forward, optimizer */
    double compute_ms;  /* the iteration on one GPU */
};

void acc_itersim_opts_init(acc_itersim_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->fidelity = 1.0;
    opts->sm_contention = 1;
}

/* The tensors as units: each tensor alone at fidelity 1, else runs of consecutive tensors of
 * one data type merged until a group holds its share of the bytes (total / groups wanted). */
static acc_status_t make_units(acc_itersim_t *s)
{
    const acc_profile_t *p = s->profile;
    size_t want = (size_t)ceil(s->opts.fidelity * (double)p->ntensors), i, last[ACC_DT_COUNT];
    uint64_t total = acc_profile_grad_bytes(p), target, acc = 0;
    int d;

    if (want < 1)
        want = 1;
    target = s->opts.fidelity >= 1.0 ? 0 : total / want;
    if (!(s->units = acc_mem_calloc(p->ntensors, sizeof(*s->units))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for %zu tensors", p->ntensors);
    for (i = 0; i < p->ntensors; i++) {
        const acc_profile_tensor_t *t = &p->tensors[i];
        uint64_t b = t->elems * acc_dtype_size(t->dtype);
        unit_t *u = s->n ? &s->units[s->n - 1] : NULL;
        if (u && acc < target && u->dtype == t->dtype) {
            u->bytes += b;
            u->ready = t->ready * s->backward_ms;
            acc += b;
            continue;
        }
        u = &s->units[s->n++];
        u->bytes = b;
        u->dtype = t->dtype;
        u->ready = t->ready * s->backward_ms;
        acc = b;
    }
    for (d = 0; d < ACC_DT_COUNT; d++)
        last[d] = (size_t)-1;
    for (i = s->n; i-- > 0;) {
        d = (int)s->units[i].dtype;
        s->units[i].next_same = last[d] == (size_t)-1 ? -1 : (long)last[d];
        last[d] = i;
    }
    return ACC_OK;
}

acc_status_t acc_itersim_create(const acc_profile_t *profile, const acc_profile_compute_t *compute,
                                const acc_tune_comm_t *comm, const acc_itersim_opts_t *opts,
                                acc_itersim_t **out)
{
    acc_itersim_t *s;
    acc_status_t st;
    double iter;

    *out = NULL;
    if (!profile || !compute || profile->ntensors == 0)
        return acc_error_set(ACC_ERR_INVALID, "iteration simulator: needs a profile with tensors "
                                              "and one of its compute entries");
    if (compute < profile->compute || compute >= profile->compute + profile->ncompute)
        return acc_error_set(ACC_ERR_INVALID,
                             "iteration simulator: the compute entry is not one "
                             "of profile '%s''s",
                             profile->name);
    if (opts && (!(opts->fidelity > 0) || opts->fidelity > 1))
        return acc_error_set(ACC_ERR_RANGE, "iteration simulator: fidelity %g is outside (0, 1]",
                             opts->fidelity);
    if (!(s = acc_mem_calloc(1, sizeof(*s))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the iteration simulator");
    s->profile = profile;
    s->compute = compute;
    s->comm = comm;
    if (opts)
        s->opts = *opts;
    else
        acc_itersim_opts_init(&s->opts);
    iter = compute->iteration_ms;
    s->backward_ms = acc_profile_backward_ms(compute);
    s->pre_ms = (compute->accumulation - 1) * iter + (iter - s->backward_ms);
    s->compute_ms = compute->accumulation * iter;
    if ((st = make_units(s)) != ACC_OK) {
        acc_itersim_destroy(s);
        return st;
    }
    *out = s;
    return ACC_OK;
}

acc_status_t acc_itersim_refine(const acc_itersim_t *sim, double fidelity, acc_itersim_t **out)
{
    acc_itersim_opts_t o = sim->opts;
    o.fidelity = fidelity;
    return acc_itersim_create(sim->profile, sim->compute, sim->comm, &o, out);
}

void acc_itersim_destroy(acc_itersim_t *sim)
{
    if (!sim)
        return;
    acc_mem_free(sim->units);
    acc_mem_free(sim);
}

const acc_profile_t *acc_itersim_profile(const acc_itersim_t *sim)
{
    return sim->profile;
}

const acc_tune_comm_t *acc_itersim_comm(const acc_itersim_t *sim)
{
    return sim->comm;
}

double acc_itersim_fidelity(const acc_itersim_t *sim)
{
    return sim->opts.fidelity;
}

size_t acc_itersim_units(const acc_itersim_t *sim)
{
    return sim->n;
}

/* ---- one run ---- */

enum { B_QUEUED, B_LAT, B_BW, B_TAIL, B_DONE };

typedef struct {
    double lat;     /* its latency part, ms */
    double lat_end; /* when that ends, once started */
    double bw_left; /* ms of bandwidth part left at the full rate */
    double tail;    /* the copy out after the collective, ms (opts.copy_gbs) */
    double tail_end;
    int ctas;
    int state;
    long next; /* next buffer queued on the same stream; -1 */
} buf_t;

typedef struct {
    long head, tail; /* the buffer in flight (or next to go) and the last queued; -1 */
    double est_end;  /* when its queued work would end if it ran alone */
} stream_t;

typedef struct {
    const acc_itersim_t *sim;
    const acc_tune_config_t *cfg;
    int reduce;  /* 0: one GPU, nothing is reduced */
    buf_t *bufs; /* at most one per unit */
    size_t nbufs;
    stream_t streams[ACC_TUNE_MAX_STREAMS];
    unsigned rr;
    double t, w;  /* wall time and backward work done since the last backward began, ms */
    size_t ready; /* units ready so far (they become ready in list order) */
    /* units copied into their buffer (handed to the policy), when the copying thread is free,
     * and when each unit's copy ends */
    size_t packed;
    double pack_free, *pack_end;
    size_t sent; /* HOROVOD: units handed to a cycle so far */
    int inflight, inflight_bw, ctas;
    /* ACC: the open buffer of each data type */
    uint64_t open_bytes[ACC_DT_COUNT];
    double open_first[ACC_DT_COUNT];
    /* DDP: bucket of each unit, units still missing per bucket, bytes and type per bucket */
    long *bucket_of, *missing;
    uint64_t *bucket_bytes;
    acc_dtype_t *bucket_dtype;
    size_t nbuckets, next_bucket;
    /* HOROVOD, NEGOTIATE: rounds of agreement on what is ready.  A round starts at
     * round_start with the units copied by then (round_snap), lands round_ms later, and the
     * next starts a cycle after it started, or when it lands if that is later. */
    int round_open;
    double round_start, next_round, round_ms;
    size_t round_snap;
    double bwd_end, comm_end;
    acc_itersim_result_t *res;
    acc_status_t st;
} run_t;

static double compute_rate(const run_t *r)
{
    int sms = r->sim->comm ? acc_tune_comm_sm_count(r->sim->comm) : 0;
    double f;
    if (!r->sim->opts.sm_contention || sms <= 0 || r->ctas == 0)
        return 1.0;
    f = 1.0 - (double)r->ctas / sms;
    return f > 0 ? f : 0;
}

static void finish(run_t *r, long b);
static void end_comm(run_t *r, long b);

/* Milliseconds to copy `bytes` of gradients of type dt into or out of a buffer (out: the copy
 * after the allreduce) under the configuration's compression; 0 when copies are not modelled. */
static double copy_ms(const run_t *r, uint64_t bytes, acc_dtype_t dt, int out)
{
    const acc_itersim_opts_t *o = &r->sim->opts;
    double gbs = o->copy_gbs;
    if (!r->reduce)
        return 0; /* one GPU: no engine, no copies */
    if (acc_compress_dtype(r->cfg->compress, dt) != dt)
        gbs = out ? o->uncast_gbs : o->cast_gbs;
    return gbs > 0 ? (double)bytes / (gbs * 1e6) : 0;
}

/* Start the buffer at the head of stream s, if it is waiting; a call that costs nothing ends
 * at once and lets the next one start. */
static void start_head(run_t *r, int s)
{
    long b = r->streams[s].head;
    buf_t *x;

    if (b < 0 || r->bufs[b].state != B_QUEUED)
        return;
    x = &r->bufs[b];
    r->inflight++;
    r->ctas += x->ctas;
    if (r->inflight > r->res->peak_inflight)
        r->res->peak_inflight = r->inflight;
    x->lat_end = r->t + x->lat;
    if (x->lat > 0) {
        x->state = B_LAT;
        return;
    }
    if (x->bw_left > 0) {
        x->state = B_BW;
        r->inflight_bw++;
        return;
    }
    end_comm(r, b);
}

/* The collective of buffer b is over: its copy out follows, or it is done. */
static void end_comm(run_t *r, long b)
{
    buf_t *x = &r->bufs[b];
    if (x->tail <= 0) {
        finish(r, b);
        return;
    }
    if (x->state == B_BW)
        r->inflight_bw--;
    r->ctas -= x->ctas; /* a copy holds no SMs */
    x->ctas = 0;
    x->state = B_TAIL;
    x->tail_end = r->t + x->tail;
}

static void finish(run_t *r, long b)
{
    buf_t *x = &r->bufs[b];
    int s;

    for (s = 0; s < r->cfg->streams; s++)
        if (r->streams[s].head == b)
            break;
    if (x->state == B_BW)
        r->inflight_bw--;
    x->state = B_DONE;
    r->inflight--;
    r->ctas -= x->ctas;
    r->comm_end = r->t;
    r->streams[s].head = x->next;
    if (x->next < 0)
        r->streams[s].tail = -1;
    else
        start_head(r, s);
}

/* Hand a buffer of nbytes of gradients of type dt to a stream; under compression it puts
 * fewer bytes on the network. */
static void submit(run_t *r, uint64_t nbytes, acc_dtype_t dt)
{
    const acc_tune_config_t *c = r->cfg;
    acc_dtype_t wire = acc_compress_dtype(c->compress, dt);
    acc_tune_cost_t cost;
    stream_t *st;
    long b;
    int s = 0, i;

    if (!r->reduce || nbytes == 0 || r->st != ACC_OK)
        return;
    if ((r->st = acc_tune_comm_cost(r->sim->comm, c->algo,
                                    nbytes / acc_dtype_size(dt) * acc_dtype_size(wire), &cost)) !=
        ACC_OK)
        return;
    if (c->assign == ACC_STREAMS_ROUND_ROBIN) {
        s = (int)(r->rr++ % (unsigned)c->streams);
    } else {
        for (i = 1; i < c->streams; i++)
            if (r->streams[i].est_end < r->streams[s].est_end - EPS_MS)
                s = i;
    }
    b = (long)r->nbufs++;
    r->bufs[b] = (buf_t){.lat = cost.lat_us / 1000.0,
                         .bw_left = cost.bw_us / 1000.0,
                         .tail = copy_ms(r, nbytes, dt, 1),
                         .ctas = cost.ctas,
                         .state = B_QUEUED,
                         .next = -1};
    st = &r->streams[s];
    st->est_end = (st->est_end > r->t ? st->est_end : r->t) + cost.us / 1000.0 + r->bufs[b].tail;
    r->res->buffers++;
    r->res->bytes += nbytes;
    if (nbytes > r->res->largest)
        r->res->largest = nbytes;
    if (st->tail >= 0) {
        r->bufs[st->tail].next = b;
        st->tail = b;
        return;
    }
    st->head = st->tail = b;
    start_head(r, s);
}

/* ---- the policies ---- */

static void ddp_buckets(run_t *r)
{
    const acc_itersim_t *s = r->sim;
    uint64_t first = r->cfg->first_bytes ? r->cfg->first_bytes : r->cfg->fusion_bytes;
    long cur[ACC_DT_COUNT];
    int started[ACC_DT_COUNT] = {0}, d;
    size_t i;

    for (d = 0; d < ACC_DT_COUNT; d++)
        cur[d] = -1;
    for (i = 0; i < s->n; i++) {
        long b;
        d = (int)s->units[i].dtype;
        if (cur[d] < 0) {
            cur[d] = (long)r->nbuckets++;
            r->bucket_bytes[cur[d]] = 0;
            r->bucket_dtype[cur[d]] = (acc_dtype_t)d;
            r->missing[cur[d]] = 0;
        }
        b = cur[d];
        r->bucket_of[i] = b;
        r->missing[b]++;
        r->bucket_bytes[b] += s->units[i].bytes;
        /* DDP closes a bucket once it reaches its cap: the first at first_bytes. */
        if (r->bucket_bytes[b] >= (started[d] ? r->cfg->fusion_bytes : first)) {
            started[d] = 1;
            cur[d] = -1;
        }
    }
}

static void acc_flush(run_t *r, int d)
{
    if (r->open_bytes[d]) {
        uint64_t b = r->open_bytes[d];
        r->open_bytes[d] = 0;
        submit(r, b, (acc_dtype_t)d);
    }
}

static void unit_ready(run_t *r, size_t i)
{
    const unit_t *u = &r->sim->units[i];
    const acc_tune_config_t *c = r->cfg;
    int d = (int)u->dtype;

    switch (c->policy) {
    case ACC_FUSION_NONE:
        submit(r, u->bytes, u->dtype);
        break;
    case ACC_FUSION_DDP: {
        long b = r->bucket_of[i];
        r->missing[b]--;
        while (r->next_bucket < r->nbuckets && r->missing[r->next_bucket] == 0) {
            submit(r, r->bucket_bytes[r->next_bucket], r->bucket_dtype[r->next_bucket]);
            r->next_bucket++;
        }
        break;
    }
    case ACC_FUSION_HOROVOD:
    case ACC_FUSION_NEGOTIATE:
        break; /* the next round takes it */
    case ACC_FUSION_ACC:
        if (r->open_bytes[d] && r->open_bytes[d] + u->bytes > c->fusion_bytes)
            acc_flush(r, d);
        if (!r->open_bytes[d])
            r->open_first[d] = r->t;
        r->open_bytes[d] += u->bytes;
        if (r->open_bytes[d] >= c->fusion_bytes || u->next_same < 0 ||
            r->open_bytes[d] + r->sim->units[u->next_same].bytes > c->fusion_bytes)
            acc_flush(r, d);
        break;
    default:
        break;
    }
}

/* A round has landed: fuse every tensor it found ready and not yet taken, in order, per data
 * type, into buffers of at most fusion_bytes (every rank's tensors are ready together here). */
static void round_take(run_t *r)
{
    uint64_t cur[ACC_DT_COUNT] = {0};
    int d;

    for (; r->sent < r->round_snap; r->sent++) {
        const unit_t *u = &r->sim->units[r->sent];
        d = (int)u->dtype;
        if (cur[d] && cur[d] + u->bytes > r->cfg->fusion_bytes) {
            submit(r, cur[d], u->dtype);
            cur[d] = 0;
        }
        cur[d] += u->bytes;
    }
    for (d = 0; d < ACC_DT_COUNT; d++)
        if (cur[d])
            submit(r, cur[d], (acc_dtype_t)d);
}

/* ---- the event loop ---- */

static double next_event(const run_t *r, double rate)
{
    const acc_itersim_t *s = r->sim;
    double tn = INFINITY;
    int i;

    if (rate > 0) {
        if (r->ready < s->n)
            tn = fmin(tn, r->t + (s->units[r->ready].ready - r->w) / rate);
        if (r->bwd_end < 0 && r->w < s->backward_ms)
            tn = fmin(tn, r->t + (s->backward_ms - r->w) / rate);
    }
    if (r->packed < r->ready)
        tn = fmin(tn, r->pack_end[r->packed]);
    if (r->round_ms >= 0 && r->reduce && r->sent < s->n)
        tn = fmin(tn, r->round_open ? r->round_start + r->round_ms : r->next_round);
    if (r->cfg->policy == ACC_FUSION_ACC && r->cfg->cycle_ms > 0)
        for (i = 0; i < ACC_DT_COUNT; i++)
            if (r->open_bytes[i])
                tn = fmin(tn, r->open_first[i] + r->cfg->cycle_ms);
    for (i = 0; i < r->cfg->streams; i++) {
        long b = r->streams[i].head;
        if (b < 0)
            continue;
        if (r->bufs[b].state == B_LAT)
            tn = fmin(tn, r->bufs[b].lat_end);
        else if (r->bufs[b].state == B_BW)
            tn = fmin(tn, r->t + r->bufs[b].bw_left * r->inflight_bw);
        else if (r->bufs[b].state == B_TAIL)
            tn = fmin(tn, r->bufs[b].tail_end);
    }
    return tn;
}

static void advance(run_t *r, double tn, double rate)
{
    double dt = tn - r->t;
    int i;

    if (dt <= 0)
        return;
    if (r->inflight)
        r->res->comm_busy_ms += dt;
    r->w = fmin(r->sim->backward_ms, r->w + rate * dt);
    for (i = 0; i < r->cfg->streams; i++) {
        long b = r->streams[i].head;
        if (b >= 0 && r->bufs[b].state == B_BW)
            r->bufs[b].bw_left -= dt / r->inflight_bw;
    }
    r->t = tn;
}

static void process(run_t *r)
{
    const acc_itersim_t *s = r->sim;
    int i, d;

    /* Collectives first: SMs they free count for the compute that follows. */
    for (i = 0; i < r->cfg->streams; i++) {
        long b = r->streams[i].head;
        if (b < 0)
            continue;
        if (r->bufs[b].state == B_LAT && r->bufs[b].lat_end <= r->t + EPS_MS) {
            if (r->bufs[b].bw_left > 0) {
                r->bufs[b].state = B_BW;
                r->inflight_bw++;
            } else {
                end_comm(r, b);
            }
        }
    }
    for (i = 0; i < r->cfg->streams; i++) {
        long b = r->streams[i].head;
        if (b >= 0 && r->bufs[b].state == B_BW && r->bufs[b].bw_left <= EPS_MS * 1e-3)
            end_comm(r, b);
    }
    for (i = 0; i < r->cfg->streams; i++) {
        long b = r->streams[i].head;
        if (b >= 0 && r->bufs[b].state == B_TAIL && r->bufs[b].tail_end <= r->t + EPS_MS)
            finish(r, b);
    }
    /* Ready gradients queue for the copying thread; each reaches the policy when copied. */
    while (r->ready < s->n && s->units[r->ready].ready <= r->w + EPS_MS) {
        const unit_t *u = &s->units[r->ready];
        double start = r->pack_free > r->t ? r->pack_free : r->t;
        r->pack_free = r->pack_end[r->ready++] = start + copy_ms(r, u->bytes, u->dtype, 0);
    }
    while (r->packed < r->ready && r->pack_end[r->packed] <= r->t + EPS_MS)
        unit_ready(r, r->packed++);
    if (r->w >= s->backward_ms - EPS_MS)
        r->w = s->backward_ms;
    if (r->bwd_end < 0 && r->packed == s->n && r->w >= s->backward_ms) {
        r->bwd_end = r->t;
        if (r->cfg->policy == ACC_FUSION_ACC)
            for (d = 0; d < ACC_DT_COUNT; d++)
                acc_flush(r, d);
    }
    while (r->round_ms >= 0 && r->reduce && r->sent < s->n) {
        if (r->round_open && r->round_start + r->round_ms <= r->t + EPS_MS) {
            round_take(r);
            r->round_open = 0;
            r->next_round = fmax(r->round_start + r->cfg->cycle_ms, r->round_start + r->round_ms);
        } else if (!r->round_open && r->next_round <= r->t + EPS_MS) {
            r->round_open = 1;
            r->round_start = r->next_round;
            r->round_snap = r->packed;
        } else {
            break;
        }
    }
    if (r->cfg->policy == ACC_FUSION_ACC && r->cfg->cycle_ms > 0)
        for (d = 0; d < ACC_DT_COUNT; d++)
            if (r->open_bytes[d] && r->open_first[d] + r->cfg->cycle_ms <= r->t + EPS_MS)
                acc_flush(r, d);
}

/* How long a round of agreement takes (-1: the policy has none): one allreduce of a word per
 * tensor (NEGOTIATE), or a reduce to rank 0 and its broadcast back, two of them (Horovod's
 * coordinator); its first round starts a cycle after the backward pass does. */
static acc_status_t round_cost(run_t *r)
{
    const acc_tune_config_t *c = r->cfg;
    acc_tune_cost_t k = {0};
    acc_status_t st;

    r->round_ms = -1;
    if (c->policy != ACC_FUSION_HOROVOD && c->policy != ACC_FUSION_NEGOTIATE)
        return ACC_OK;
    if (r->reduce &&
        (st = acc_tune_comm_cost(r->sim->comm, c->algo, 4 * (uint64_t)r->sim->n, &k)) != ACC_OK)
        return st;
    r->round_ms = k.us / 1000.0 * (c->policy == ACC_FUSION_HOROVOD ? 2 : 1);
    r->next_round = c->cycle_ms;
    return ACC_OK;
}

static acc_status_t run_alloc(run_t *r)
{
    size_t n = r->sim->n;
    if (!(r->bufs = acc_mem_calloc(n, sizeof(*r->bufs))) ||
        !(r->pack_end = acc_mem_calloc(n, sizeof(*r->pack_end))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory simulating %zu tensors", n);
    if (r->cfg->policy != ACC_FUSION_DDP)
        return ACC_OK;
    r->bucket_of = acc_mem_calloc(n, sizeof(*r->bucket_of));
    r->missing = acc_mem_calloc(n, sizeof(*r->missing));
    r->bucket_bytes = acc_mem_calloc(n, sizeof(*r->bucket_bytes));
    r->bucket_dtype = acc_mem_calloc(n, sizeof(*r->bucket_dtype));
    if (!r->bucket_of || !r->missing || !r->bucket_bytes || !r->bucket_dtype)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory simulating %zu tensors", n);
    ddp_buckets(r);
    return ACC_OK;
}

acc_status_t acc_itersim_run(const acc_itersim_t *sim, const acc_tune_config_t *config,
                             acc_itersim_result_t *out)
{
    run_t r;
    acc_status_t st;
    double end;
    int i;

    memset(out, 0, sizeof(*out));
    if ((st = acc_tune_config_check(config)) != ACC_OK)
        return st;
    if (sim->comm && !acc_tune_comm_has(sim->comm, config->algo))
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "iteration simulator: the collective times have no '%s' choice "
                             "(built from NCCL's model only?)",
                             acc_tune_algo_name(config->algo));
    memset(&r, 0, sizeof(r));
    r.sim = sim;
    r.cfg = config;
    r.res = out;
    r.reduce = sim->comm && acc_tune_comm_ranks(sim->comm) > 1;
    r.bwd_end = -1;
    if ((st = round_cost(&r)) != ACC_OK)
        goto out;
    for (i = 0; i < ACC_TUNE_MAX_STREAMS; i++)
        r.streams[i].head = r.streams[i].tail = -1;
    if ((st = run_alloc(&r)) != ACC_OK)
        goto out;
    process(&r); /* gradients ready at once (ready = 0) */
    for (;;) {
        double rate = compute_rate(&r), tn = next_event(&r, rate);
        if (r.st != ACC_OK || isinf(tn))
            break;
        advance(&r, tn, rate);
        process(&r);
        out->events++;
    }
    if ((st = r.st) != ACC_OK)
        goto out;
    if (r.bwd_end < 0 || r.inflight) {
        st = acc_error_set(ACC_ERR_INTERNAL,
                           "iteration simulator: stopped at %.3f ms with the "
                           "backward pass or %d collectives unfinished",
                           r.t, r.inflight);
        goto out;
    }
    end = r.comm_end > r.bwd_end ? r.comm_end : r.bwd_end;
    out->backward_ms = r.bwd_end;
    out->tail_ms = end - r.bwd_end;
    out->compute_ms = sim->compute_ms;
    out->iteration_ms = sim->pre_ms + end;
    out->exposed_ms = out->iteration_ms - out->compute_ms;
    out->efficiency = out->compute_ms / out->iteration_ms;
out:
    acc_mem_free(r.bufs);
    acc_mem_free(r.pack_end);
    acc_mem_free(r.bucket_of);
    acc_mem_free(r.missing);
    acc_mem_free(r.bucket_bytes);
    acc_mem_free(r.bucket_dtype);
    return st;
}
