/* The binary form read back (acc_cplan.h): a head, checked, and one rank's view made from it
 * and the programs of that rank's own classes alone (cplan_bin.c writes them). */
#include "cplan_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint8_t sig;
    acc_cpeer_t peer;
    uint32_t chan;   /* signals: the slot */
    uint32_t maxcnt; /* messages: the largest */
    uint32_t count;
} hedge_t;

struct acc_chead {
    acc_cplan_t *cp; /* header, grid, tables; classes with their boxes and no operations */
    int staged;
    int fields;           /* an operation's fields in this version (cplan_op_fields_of) */
    uint32_t *lane_first; /* per lane (+ 1): its first class in the arrays below */
    uint32_t *nops;       /* per class */
    uint64_t *digest;     /* per class: of its program's bytes */
    uint32_t *edge_first; /* per class (+ 1): its edges */
    hedge_t *edges;
    char name[160];
};

void acc_chead_destroy(acc_chead_t *h)
{
    if (!h)
        return;
    acc_cplan_destroy(h->cp);
    acc_mem_free(h->lane_first);
    acc_mem_free(h->nops);
    acc_mem_free(h->digest);
    acc_mem_free(h->edge_first);
    acc_mem_free(h->edges);
    acc_mem_free(h);
}

static acc_status_t bad(const acc_chead_t *h, const cplan_rd_t *r)
{
    return acc_error_set(ACC_ERR_PARSE,
                         "%s: the stored class form is damaged (%s): rebuild the database with "
                         "acc-compile --db",
                         h->name, r->what);
}

static void get_str(cplan_rd_t *r, char *out, size_t cap, const char *what)
{
    uint64_t n = cplan_get_max(r, cap - 1, what);
    if (!r->failed && n > r->len - r->at) {
        snprintf(r->what, sizeof(r->what), "%s at byte %zu: the data ends there", what, r->at);
        r->failed = 1;
    }
    if (r->failed)
        n = 0;
    memcpy(out, r->p + r->at, (size_t)n);
    out[n] = '\0';
    r->at += (size_t)n;
}

static int rd_fail(cplan_rd_t *r, const char *fmt, ...) ACC_PRINTF(2, 3);
static int rd_fail(cplan_rd_t *r, const char *fmt, ...)
{
    va_list ap;
    if (!r->failed) {
        va_start(ap, fmt);
        vsnprintf(r->what, sizeof(r->what), fmt, ap);
        va_end(ap);
        r->failed = 1;
    }
    return 0;
}

void cplan_rows_start(cplan_rows_get_t *g, cplan_rd_t *r, int k, uint64_t rows)
{
    memset(g, 0, sizeof(*g));
    g->r = r;
    g->k = k;
    g->left = rows;
}

int cplan_rows_get(cplan_rows_get_t *g, int64_t *row)
{
    cplan_rd_t *r = g->r;
    if (r->failed || !g->left)
        return r->failed ? 0 : rd_fail(r, "a row past the end");
    if (!g->run) {
        uint64_t tag = cplan_get_u(r, "a record");
        if (tag == 0) {
            uint64_t mask = cplan_get_u(r, "a record's fields");
            if (g->k < 64 && mask >> g->k)
                return rd_fail(r, "a record of unknown fields (%llx)", (unsigned long long)mask);
            for (int j = 0; j < g->k; j++)
                g->diff[j] = mask >> j & 1 ? cplan_get_i(r, "a field's difference") : 0;
            g->run = 1;
        } else if (tag & 1 && tag >> 1 >= 1 && tag >> 1 <= g->left) {
            g->run = tag >> 1;
        } else {
            return rd_fail(r, "a record of kind %llu", (unsigned long long)tag);
        }
        if (r->failed)
            return 0;
    }
    for (int j = 0; j < g->k; j++)
        g->cur[j] = (int64_t)((uint64_t)g->cur[j] + (uint64_t)g->diff[j]);
    memcpy(row, g->cur, (size_t)g->k * sizeof(int64_t));
    g->run--;
    g->left--;
    return 1;
}

/* A lane's table: a permutation of the ranks, or row major; its first period from runs. */
static int get_table(cplan_rd_t *r, acc_cplan_t *cp, int lane)
{
    uint64_t p = cplan_get_max(r, (uint64_t)cp->nranks, "a table's period"), runs, at = 0;
    int64_t c;
    cplan_rows_get_t rows;
    int *rank_of;

    if (r->failed || !p)
        return !r->failed;
    c = cplan_get_i(r, "a table's step");
    runs = cplan_get_max(r, p, "a table's runs");
    if (r->failed)
        return 0;
    if (cp->nranks % p)
        return rd_fail(r, "a table's period %llu", (unsigned long long)p);
    if (!(rank_of = acc_mem_alloc((size_t)cp->nranks * sizeof(int))))
        return rd_fail(r, "out of memory for a table of %lld ranks", (long long)cp->nranks);
    cplan_rows_start(&rows, r, 3, runs);
    for (uint64_t i = 0; i < runs && !r->failed; i++) {
        int64_t row[3];
        if (!cplan_rows_get(&rows, row))
            break;
        if (row[2] < 1 || (uint64_t)row[2] > p - at)
            rd_fail(r, "a table's run %lld", (long long)i);
        for (int64_t j = 0; j < row[2] && !r->failed; j++)
            rank_of[at++] = (int)(row[0] + row[1] * j);
    }
    if (!r->failed && at != p)
        rd_fail(r, "a table's period of %lld points", (long long)at);
    for (uint64_t i = p; i < (uint64_t)cp->nranks && !r->failed; i++)
        rank_of[i] = (int)(rank_of[i - p] + c);
    for (uint64_t i = 0; i < (uint64_t)cp->nranks && !r->failed; i++)
        if (rank_of[i] < 0 || rank_of[i] >= cp->nranks)
            rd_fail(r, "lane %d's table names rank %d", lane, rank_of[i]);
    if (!r->failed && acc_cplan_set_ranks(cp, lane, rank_of) != ACC_OK)
        rd_fail(r, "lane %d's table is not a permutation of the ranks", lane);
    acc_mem_free(rank_of);
    return !r->failed;
}

static void get_cpeer(cplan_rd_t *r, const acc_cplan_t *cp, acc_cpeer_t *p)
{
    memset(p, 0, sizeof(*p));
    p->kind = (uint8_t)cplan_get_max(r, ACC_CPEER_XOR, "a peer's kind");
    if (p->kind == ACC_CPEER_REL || p->kind == ACC_CPEER_XOR)
        for (int d = 0; d < cp->ndims; d++) {
            int64_t v = cplan_get_i(r, "a peer's offset");
            if (v < INT32_MIN || v > INT32_MAX ||
                (p->kind == ACC_CPEER_XOR &&
                 (v < 0 || v >= cp->dims[d] || (cp->dims[d] & (cp->dims[d] - 1)))))
                rd_fail(r, "a peer's offset %lld", (long long)v);
            p->v[d] = (int32_t)v;
        }
    else if (p->kind == ACC_CPEER_ABS) {
        int64_t v = cplan_get_i(r, "a peer's rank");
        if (v < 0 || v >= cp->nranks)
            rd_fail(r, "a peer's rank %lld", (long long)v);
        p->v[0] = (int32_t)v;
    } else
        rd_fail(r, "an edge to no peer (kind %lld)", (long long)p->kind);
}

/* A lane's classes: their boxes, which must partition the grid, their programs' lengths and
 * digests, and their edges. */
static int get_classes(cplan_rd_t *r, acc_chead_t *h, int lane, size_t *ccap, size_t *ecap,
                       uint32_t *nc, uint32_t *ne, uint8_t *seen)
{
    acc_cplan_t *cp = h->cp;
    uint64_t n = cplan_get_max(r, (uint64_t)cp->nranks, "a lane's classes"), points = 0;
    memset(seen, 0, (size_t)cp->nranks);
    for (uint64_t c = 0; c < n && !r->failed; c++) {
        int32_t lo[ACC_CPLAN_MAX_DIMS], hi[ACC_CPLAN_MAX_DIMS];
        uint64_t edges;
        for (int d = 0; d < cp->ndims; d++) {
            lo[d] = (int32_t)cplan_get_max(r, (uint64_t)cp->dims[d] - 1, "a class's corner");
            hi[d] = (int32_t)cplan_get_max(r, (uint64_t)cp->dims[d], "a class's corner");
            if (!r->failed && hi[d] <= lo[d])
                return rd_fail(r, "an empty class (lane %lld)", (long long)lane);
        }
        if (r->failed || acc_cplan_add_class(cp, lane, lo, hi, NULL) != ACC_OK)
            return rd_fail(r, "a class of lane %lld", (long long)lane);
        if (acc_array_reserve((void **)&h->nops, ccap, *nc + 2, sizeof(uint32_t)) != ACC_OK ||
            !(h->digest = acc_mem_realloc_array(h->digest, *ccap, sizeof(uint64_t))) ||
            !(h->edge_first = acc_mem_realloc_array(h->edge_first, *ccap, sizeof(uint32_t))))
            return rd_fail(r, "out of memory for %lld classes", (long long)*nc);
        {
            /* One class over the whole grid needs no look at its points. */
            const acc_cclass_t *k = &cp->lanes[lane].classes[c];
            uint64_t vol = cplan_box_volume(cp, k);
            for (uint64_t i = 0; (n > 1 || vol != (uint64_t)cp->nranks) && i < vol; i++)
                if (seen[cplan_box_point(cp, k, i)]++)
                    return rd_fail(r, "two classes of lane %lld meet", (long long)lane);
            points += vol;
        }
        h->nops[*nc] = (uint32_t)cplan_get_max(r, UINT32_MAX, "a program's length");
        h->digest[*nc] = cplan_get_u(r, "a program's digest");
        h->edge_first[*nc] = *ne;
        edges = cplan_get_max(r, 1u << 24, "a class's edges");
        for (uint64_t j = 0; j < edges && !r->failed; j++) {
            hedge_t e;
            memset(&e, 0, sizeof(e));
            e.sig = (uint8_t)cplan_get_max(r, 1, "an edge's kind");
            get_cpeer(r, cp, &e.peer);
            if (e.sig)
                e.chan = (uint32_t)cplan_get_max(r, UINT16_MAX, "a signal's slot");
            else
                e.maxcnt = (uint32_t)cplan_get_max(r, UINT32_MAX, "a message's chunks");
            e.count = (uint32_t)cplan_get_max(r, UINT32_MAX, "an edge's count");
            if (acc_array_reserve((void **)&h->edges, ecap, *ne + 1, sizeof(hedge_t)) != ACC_OK)
                return rd_fail(r, "out of memory for %lld edges", (long long)*ne);
            h->edges[(*ne)++] = e;
        }
        (*nc)++;
        h->edge_first[*nc] = *ne;
    }
    if (!r->failed && points != (uint64_t)cp->nranks)
        rd_fail(r, "lane %lld's classes do not cover every point", (long long)lane);
    return !r->failed;
}

static int get_head(cplan_rd_t *r, acc_chead_t *h)
{
    int32_t dims[ACC_CPLAN_MAX_DIMS], steps[ACC_CPLAN_MAX_DIMS];
    char algo[ACC_PLAN_NAME_MAX], params[ACC_PLAN_PARAMS_MAX];
    uint64_t coll, nranks, in, out, scr, nlanes, slots, proto, inplace, ndims, prod = 1;
    int64_t root;
    uint8_t *seen = NULL;
    size_t ccap = 0, ecap = 0;
    uint32_t nc = 0, ne = 0;
    acc_cplan_t *cp;

    if (r->len < 4 || memcmp(r->p, CPLAN_BIN_MAGIC, 4) != 0)
        return rd_fail(r, "no class form here (%lld bytes)", (long long)r->len);
    r->at = 4;
    {
        uint64_t version = cplan_get_u(r, "the version");
        if (version < 1 || version > CPLAN_BIN_VERSION)
            return rd_fail(r, "a version this acc does not read (after byte %lld)", (long long)4);
        h->fields = cplan_op_fields_of(version);
    }
    coll = cplan_get_max(r, ACC_COLL_COUNT - 1, "the collective");
    nranks = cplan_get_max(r, INT32_MAX, "the rank count");
    root = cplan_get_i(r, "the root");
    get_str(r, algo, sizeof(algo), "the algorithm");
    get_str(r, params, sizeof(params), "the parameters");
    in = cplan_get_max(r, UINT32_MAX, "input chunks");
    out = cplan_get_max(r, UINT32_MAX, "output chunks");
    scr = cplan_get_max(r, UINT32_MAX, "scratch chunks");
    nlanes = cplan_get_max(r, 65536, "the lanes");
    slots = cplan_get_max(r, 65536, "the slots");
    proto = cplan_get_max(r, ACC_PROTO_COUNT - 1, "the protocol");
    inplace = cplan_get_max(r, 1, "in place");
    h->staged = (int)cplan_get_max(r, 1, "staged");
    ndims = cplan_get_max(r, ACC_CPLAN_MAX_DIMS, "the grid's dimensions");
    if (r->failed)
        return 0;
    if (!ndims || !nlanes || !slots || root < -1 || root >= (int64_t)nranks)
        return rd_fail(r, "a header out of range (root %lld)", (long long)root);
    for (uint64_t d = 0; d < ndims; d++) {
        dims[d] = (int32_t)cplan_get_max(r, INT32_MAX, "a grid dimension");
        prod *= dims[d] ? (uint64_t)dims[d] : 0;
        if (r->failed || !dims[d] || prod > nranks)
            return rd_fail(r, "a grid larger than its %lld ranks", (long long)nranks);
        steps[d] = (int32_t)cplan_get_max(r, (uint64_t)dims[d], "a symmetry step");
    }
    if (prod != nranks)
        return rd_fail(r, "a grid of %lld points", (long long)prod);
    if (acc_cplan_create((acc_coll_t)coll, (int)ndims, dims, (int)nlanes, (uint32_t)in,
                         (uint32_t)out, (uint32_t)scr, &h->cp) != ACC_OK)
        return rd_fail(r, "a grid this acc cannot make (%lld ranks)", (long long)nranks);
    cp = h->cp;
    cp->root = (int)root;
    memcpy(cp->algo, algo, sizeof(algo));
    memcpy(cp->params, params, sizeof(params));
    cp->slots = (int)slots;
    cp->proto = (acc_proto_t)proto;
    cp->inplace = (int)inplace;
    memcpy(cp->sym_step, steps, ndims * sizeof(int32_t));
    cp->npeer_pool = (uint32_t)cplan_get_max(r, 1u << 28, "the peer pool");
    if (!r->failed && cp->npeer_pool &&
        !(cp->peer_pool = acc_mem_alloc((size_t)cp->npeer_pool * sizeof(uint32_t))))
        return rd_fail(r, "out of memory for %lld pooled peers", (long long)cp->npeer_pool);
    cp->peer_pool_cap = cp->npeer_pool;
    for (uint32_t i = 0; i < cp->npeer_pool && !r->failed; i++)
        cp->peer_pool[i] = (uint32_t)cplan_get_max(r, nranks - 1, "a pooled peer");
    if (r->failed || !(h->lane_first = acc_mem_calloc(nlanes + 1, sizeof(uint32_t))) ||
        !(seen = acc_mem_alloc((size_t)nranks)))
        return r->failed ? 0 : rd_fail(r, "out of memory for %lld lanes", (long long)nlanes);
    for (int l = 0; l < (int)nlanes && !r->failed; l++) {
        h->lane_first[l] = nc;
        if (get_table(r, cp, l))
            get_classes(r, h, l, &ccap, &ecap, &nc, &ne, seen);
    }
    h->lane_first[nlanes] = nc;
    acc_mem_free(seen);
    if (!r->failed && r->at != r->len)
        rd_fail(r, "%lld bytes after the head's end", (long long)(r->len - r->at));
    return !r->failed;
}

acc_status_t acc_chead_load(const void *data, size_t len, const char *name, acc_chead_t **out)
{
    acc_chead_t *h = acc_mem_calloc(1, sizeof(*h));
    cplan_rd_t r;

    *out = NULL;
    if (!h)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading a class plan");
    snprintf(h->name, sizeof(h->name), "%s", name ? name : "a class plan");
    memset(&r, 0, sizeof(r));
    r.p = data;
    r.len = len;
    if (!get_head(&r, h)) {
        acc_status_t st = bad(h, &r);
        acc_chead_destroy(h);
        return st;
    }
    *out = h;
    return ACC_OK;
}

/* The class of lane holding rank's point. */
static uint32_t class_of(const acc_chead_t *h, int lane, int rank)
{
    const acc_clane_t *ln = &h->cp->lanes[lane];
    cplan_at_t at;
    cplan_at(h->cp, acc_cplan_point(h->cp, lane, rank), &at);
    for (uint32_t c = 0; c < ln->nclasses; c++) {
        int in = 1;
        for (int d = 0; d < h->cp->ndims && in; d++)
            in = at.x[d] >= ln->classes[c].lo[d] && at.x[d] < ln->classes[c].hi[d];
        if (in)
            return c;
    }
    return 0; /* not reached: acc_chead_load checked that the classes partition the grid */
}

/* ---- a rank's view ----------------------------------------------------------------------- */

/* A class's program: its operations, and its flags (NULL when it stored none). */
static int ref_ok(const acc_plan_t *p, const acc_ref_t *ref)
{
    uint32_t chunks = ref->buf == ACC_BUF_IN    ? p->in_chunks
                      : ref->buf == ACC_BUF_OUT ? p->out_chunks
                                                : p->scratch_chunks;
    return !ref->cnt || (ref->off <= chunks && ref->cnt <= chunks - ref->off);
}

/* Terms name dimensions of the grid. */
static int cop_ok(const acc_cplan_t *cp, const acc_cop_t *op)
{
    const acc_cref_t *refs[2] = {&op->src, &op->dst};
    if (op->peer2.kind == ACC_CPEER_ROW ||
        (op->peer.kind == ACC_CPEER_ROW && (op->code != ACC_OP_REDUCE_PEERS || op->npeers ||
                                            op->peer.v[0] < 0 || op->peer.v[0] >= cp->ndims)))
        return 0;
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < refs[i]->nterms; t++)
            if (refs[i]->term[t].dim >= cp->ndims)
                return 0;
    return cplan_xor_ok(cp, op);
}

/* What the runtime indexes with an operation's fields, in range: peers, chunks, the pool. */
static int op_ok(const acc_plan_t *p, const acc_op_t *op)
{
    return op->peer >= -1 && op->peer < p->nranks && op->peer2 >= -1 && op->peer2 < p->nranks &&
           ref_ok(p, &op->src) && ref_ok(p, &op->dst) &&
           (op->code != ACC_OP_REDUCE_PEERS ||
            (op->peers_off <= p->npeer_pool && op->npeers <= p->npeer_pool - op->peers_off)) &&
           op->dep_lane < p->nlanes && (op->dep_lane < 0) == (op->dep_op < 0);
}

/* A class's program at the point pt of lane: each operation decoded, checked and made concrete
 * as it is read (no class program is kept); or, given cops, the class's operations as they are
 * (no point); then its flags, when it stored them and flags is given. */
static int get_prog(cplan_rd_t *r, int fields, acc_plan_t *v, const acc_cplan_t *cp, int lane,
                    const cplan_at_t *pt, uint32_t nops, acc_op_t *out, acc_cop_t *cops,
                    uint8_t *flags, int *has_flags)
{
    cplan_rows_get_t rows;
    int64_t row[CPLAN_OP_FIELDS];
    uint32_t i;

    if (cplan_get_u(r, "the program's length") != nops && !r->failed)
        return rd_fail(r, "a program of another length than its head says (%lld)", (long long)nops);
    memset(row, 0, sizeof(row));
    cplan_rows_start(&rows, r, fields, nops);
    for (i = 0; i < nops && cplan_rows_get(&rows, row); i++) {
        acc_cop_t op;
        if (!cplan_op_from_fields(row, &op) || !cop_ok(cp, &op))
            return rd_fail(r, "operation %lld out of range", (long long)i);
        if (cops) { /* the class's own operations: the expansion's proof checks the rest */
            cops[i] = op;
            continue;
        }
        if (cplan_op_pool(cp, lane, pt, &op, v, NULL, &out[i]) != ACC_OK)
            return rd_fail(r, "operation %lld: %s", (long long)i, acc_error_message());
        if (!op_ok(v, &out[i]))
            return rd_fail(r, "operation %lld at this rank is out of the plan's bounds",
                           (long long)i);
    }
    if (r->failed)
        return 0;
    *has_flags = (int)cplan_get_max(r, 1, "the flags' presence");
    for (i = 0; *has_flags && i < nops && !r->failed; i++) {
        if (r->at >= r->len)
            return rd_fail(r, "the flags end at operation %lld", (long long)i);
        if (flags)
            flags[i] = r->p[r->at] >> (i % 8) & 1;
        if (i % 8 == 7 || i + 1 == nops)
            r->at++;
    }
    if (!r->failed && r->at != r->len)
        rd_fail(r, "%lld bytes after the program's end", (long long)(r->len - r->at));
    return !r->failed;
}

/* A program's bytes from read(), checked against the head's digest. */
static acc_status_t read_checked(const acc_chead_t *h, acc_cprog_read_fn read, void *ctx, int lane,
                                 uint32_t cls, cplan_rd_t *r)
{
    const void *data = NULL;
    size_t len = 0;
    acc_status_t st;
    if ((st = read(ctx, lane, cls, &data, &len)) != ACC_OK)
        return acc_error_prefix(st, "%s: lane %d class %u: ", h->name, lane, cls);
    if (acc_fnv1a64(data, len) != h->digest[h->lane_first[lane] + cls])
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: the program of lane %d class %u does not match the digest its "
                             "head keeps: it was altered; the plan is not used: rebuild the "
                             "database with acc-compile --db",
                             h->name, lane, cls);
    memset(r, 0, sizeof(*r));
    r->p = data;
    r->len = len;
    return ACC_OK;
}

/* Rank's programs, one per lane, at its point; the flags where every class stored them. */
static acc_status_t own_programs(const acc_chead_t *h, int rank, acc_cprog_read_fn read, void *ctx,
                                 acc_plan_t *v)
{
    const acc_cplan_t *cp = h->cp;
    size_t total = 0, at = 0;
    int flags_all = 1;
    acc_status_t st = ACC_OK;

    for (int l = 0; l < cp->nlanes; l++)
        total += h->nops[h->lane_first[l] + class_of(h, l, rank)];
    if (!(v->view->final = acc_mem_calloc(total + 1, 1)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    for (int l = 0; l < cp->nlanes && st == ACC_OK; l++) {
        uint32_t c = class_of(h, l, rank), k = h->lane_first[l] + c, n = h->nops[k];
        acc_lane_prog_t *prog = &v->progs[l];
        int has_flags = 0;
        cplan_rd_t r;
        cplan_at_t pt;

        if (!(prog->ops = acc_mem_alloc(((size_t)n + 1) * sizeof(acc_op_t))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for rank %d's program", rank);
        prog->cap = n + 1;
        if ((st = read_checked(h, read, ctx, l, c, &r)) != ACC_OK)
            return st;
        cplan_at(cp, acc_cplan_point(cp, l, rank), &pt);
        get_prog(&r, h->fields, v, cp, l, &pt, n, prog->ops, NULL, v->view->final + at, &has_flags);
        flags_all = flags_all && has_flags;
        prog->nops = r.failed ? 0 : n;
        at += n;
        if (r.failed)
            st = acc_error_set(ACC_ERR_PARSE,
                               "%s: rank %d's program on lane %d is damaged (%s): rebuild the "
                               "database with acc-compile --db",
                               h->name, rank, l, r.what);
    }
    /* Dependencies name operations of this rank's other lanes. */
    for (int l = 0; l < cp->nlanes && st == ACC_OK; l++)
        for (uint32_t i = 0; i < v->progs[l].nops && st == ACC_OK; i++) {
            const acc_op_t *op = &v->progs[l].ops[i];
            if (op->dep_lane >= 0 && (uint32_t)op->dep_op >= v->progs[op->dep_lane].nops)
                st = acc_error_set(ACC_ERR_PARSE,
                                   "%s: rank %d lane %d operation %u depends on an operation "
                                   "lane %d does not have: rebuild the database",
                                   h->name, rank, l, i, op->dep_lane);
        }
    if (st == ACC_OK && !flags_all) {
        acc_mem_free(v->view->final);
        v->view->final = NULL;
    }
    return st;
}

static acc_status_t add_edge(acc_plan_view_t *v, size_t *cap, const acc_plan_edge_t *e)
{
    if (acc_array_reserve((void **)&v->edges, cap, v->nedges + 1, sizeof(*e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a rank's view");
    v->edges[v->nedges++] = *e;
    return ACC_OK;
}

/* The edges into rank q: for each class of each lane, the points whose edge leads to q. */
static acc_status_t edges_into(const acc_chead_t *h, int q, acc_plan_view_t *v, size_t *cap)
{
    const acc_cplan_t *cp = h->cp;
    acc_status_t st = ACC_OK;

    for (int l = 0; l < cp->nlanes && st == ACC_OK; l++) {
        cplan_at_t at;
        cplan_at(cp, acc_cplan_point(cp, l, q), &at);
        for (uint32_t c = 0; c < cp->lanes[l].nclasses && st == ACC_OK; c++) {
            const acc_cclass_t *k = &cp->lanes[l].classes[c];
            uint32_t ki = h->lane_first[l] + c;
            for (uint32_t j = h->edge_first[ki]; j < h->edge_first[ki + 1] && st == ACC_OK; j++) {
                const hedge_t *e = &h->edges[j];
                acc_plan_edge_t out = {e->sig,    0,       q, e->sig ? e->chan : (uint32_t)l,
                                       e->maxcnt, e->count};
                if (e->peer.kind == ACC_CPEER_REL || e->peer.kind == ACC_CPEER_XOR) {
                    uint32_t idx = 0;
                    int in = 1;
                    for (int d = 0; d < cp->ndims; d++) {
                        int64_t m = ((int64_t)at.x[d] - e->peer.v[d]) % cp->dims[d];
                        int32_t x = e->peer.kind == ACC_CPEER_XOR
                                        ? at.x[d] ^ e->peer.v[d]
                                        : (int32_t)(m < 0 ? m + cp->dims[d] : m);
                        in = in && x >= k->lo[d] && x < k->hi[d];
                        idx = idx * (uint32_t)cp->dims[d] + (uint32_t)x;
                    }
                    if (in) {
                        out.from = acc_cplan_rank(cp, l, idx);
                        st = add_edge(v, cap, &out);
                    }
                } else if (e->peer.v[0] == q) {
                    for (uint64_t i = 0; i < cplan_box_volume(cp, k) && st == ACC_OK; i++) {
                        out.from = acc_cplan_rank(cp, l, cplan_box_point(cp, k, i));
                        st = add_edge(v, cap, &out);
                    }
                }
            }
        }
    }
    return st;
}

acc_status_t acc_cplan_rank_view(const acc_chead_t *h, int rank, acc_cprog_read_fn read, void *ctx,
                                 acc_plan_t **out)
{
    const acc_cplan_t *cp = h->cp;
    acc_plan_t *v = NULL, hdr;
    size_t cap = 0;
    acc_status_t st;

    *out = NULL;
    if (rank < 0 || rank >= cp->nranks)
        return acc_error_set(ACC_ERR_INVALID, "%s: rank %d of a %d-rank plan", h->name, rank,
                             cp->nranks);
    cplan_header(cp, &hdr);
    if ((st = plan_view_shell(&hdr, rank, &v)) != ACC_OK)
        return st;
    v->view->staged = h->staged;
    st = own_programs(h, rank, read, ctx, v);
    if (st == ACC_OK)
        st = plan_view_near(v);
    for (uint32_t i = 0; st == ACC_OK && i < v->view->nnear; i++)
        st = edges_into(h, v->view->near[i], v->view, &cap);
    if (st == ACC_OK)
        plan_view_finish(v->view);
    if (st != ACC_OK) {
        acc_plan_destroy(v);
        return st;
    }
    *out = v;
    return ACC_OK;
}

static acc_status_t bin_prog(void *ctx, int lane, uint32_t cls, const void **data, size_t *len)
{
    const acc_cplan_bin_t *bin = ctx;
    for (uint32_t i = 0; i < bin->nprogs; i++)
        if (bin->lane[i] == lane && bin->cls[i] == cls) {
            *data = bin->progs[i].data;
            *len = bin->progs[i].len;
            return ACC_OK;
        }
    return acc_error_set(ACC_ERR_INTERNAL, "no program for lane %d class %u", lane, cls);
}

acc_status_t acc_cplan_view_of(const acc_cplan_t *cp, int rank, acc_plan_t **out)
{
    acc_cplan_bin_t bin;
    acc_chead_t *h = NULL;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_cplan_encode(cp, NULL, &bin)) != ACC_OK)
        return st;
    if ((st = acc_chead_load(bin.head.data, bin.head.len, cp->algo, &h)) == ACC_OK)
        st = acc_cplan_rank_view(h, rank, bin_prog, &bin, out);
    acc_chead_destroy(h);
    acc_cplan_bin_free(&bin);
    return st;
}

acc_status_t acc_cplan_load(const acc_chead_t *h, acc_cprog_read_fn read, void *ctx,
                            acc_cplan_t **out)
{
    const acc_cplan_t *src = h->cp;
    acc_cplan_t *cp = NULL;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_cplan_create(src->coll, src->ndims, src->dims, src->nlanes, src->in_chunks,
                               src->out_chunks, src->scratch_chunks, &cp)) != ACC_OK)
        return st;
    cp->root = src->root;
    memcpy(cp->algo, src->algo, sizeof(cp->algo));
    memcpy(cp->params, src->params, sizeof(cp->params));
    cp->slots = src->slots;
    cp->proto = src->proto;
    cp->inplace = src->inplace;
    memcpy(cp->sym_step, src->sym_step, sizeof(cp->sym_step));
    if (src->npeer_pool) {
        if (!(cp->peer_pool = acc_mem_alloc((size_t)src->npeer_pool * sizeof(uint32_t))))
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory reading a class plan");
        else
            memcpy(cp->peer_pool, src->peer_pool, (size_t)src->npeer_pool * sizeof(uint32_t));
        cp->npeer_pool = cp->peer_pool_cap = src->npeer_pool;
    }
    for (int l = 0; l < src->nlanes && st == ACC_OK; l++) {
        const acc_clane_t *ln = &src->lanes[l];
        if (ln->rank_of)
            st = acc_cplan_set_ranks(cp, l, ln->rank_of);
        for (uint32_t c = 0; c < ln->nclasses && st == ACC_OK; c++) {
            uint32_t n = h->nops[h->lane_first[l] + c], k;
            acc_cclass_t *dst;
            int has_flags;
            cplan_rd_t r;
            if ((st = acc_cplan_add_class(cp, l, ln->classes[c].lo, ln->classes[c].hi, &k)) !=
                    ACC_OK ||
                (st = read_checked(h, read, ctx, l, c, &r)) != ACC_OK)
                break;
            dst = &cp->lanes[l].classes[k];
            if (!(dst->ops = acc_mem_calloc((size_t)n + 1, sizeof(acc_cop_t)))) {
                st = acc_error_set(ACC_ERR_NOMEM, "out of memory reading a class plan");
                break;
            }
            dst->cap = n + 1;
            if (!get_prog(&r, h->fields, NULL, src, l, NULL, n, NULL, dst->ops, NULL, &has_flags))
                st = acc_error_set(ACC_ERR_PARSE,
                                   "%s: the program of lane %d class %u is damaged (%s): rebuild "
                                   "the database with acc-compile --db",
                                   h->name, l, c, r.what);
            else
                dst->nops = n;
        }
    }
    if (st != ACC_OK) {
        acc_cplan_destroy(cp);
        return st;
    }
    *out = cp;
    return ACC_OK;
}
