/*
 * Code generation, the analysis half: a verified plan, a data type and a reduction become one
 * CUDA C++ module (acc_kernels.h says what it does at run time).  Here, once the plan has been
 * checked (codegen_check.c), its connections and signal counters are numbered, every message gets
 * its number on its connection, operations other lanes depend on are marked, and ranks are sorted
 * into classes: ranks whose lanes run the same sequence of operation shapes (opcode, buffers,
 * chunk counts, dependencies) share code, whatever their peers, connections and offsets.
 * codegen_emit.c writes each class; this file writes the module around them.
 */
#include "codegen_internal.h"

#include <string.h>

/* ---- connections and counters --------------------------------------------------------- */

/* Open addressing from a 64-bit key (never 0) to an index. */
typedef struct {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap;
} map_t;

static acc_status_t map_init(map_t *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16)
        m->cap *= 2;
    m->keys = acc_mem_calloc(m->cap, sizeof(uint64_t));
    m->vals = acc_mem_calloc(m->cap, sizeof(uint32_t));
    return m->keys && m->vals ? ACC_OK : ACC_ERR_NOMEM;
}

static void map_free(map_t *m)
{
    acc_mem_free(m->keys);
    acc_mem_free(m->vals);
}

/* The index of key, or UINT32_MAX with *slot where it would go. */
static uint32_t map_find(const map_t *m, uint64_t key, size_t *slot)
{
    size_t i = (size_t)(acc_fnv1a64(&key, sizeof(key)) & (m->cap - 1));
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    *slot = i;
    return m->keys[i] ? m->vals[i] : UINT32_MAX;
}

static uint32_t conn_of(cg_t *g, map_t *m, int from, int to, int lane)
{
    const acc_plan_t *p = g->p;
    uint64_t key = ((uint64_t)from * (uint64_t)p->nranks + (uint64_t)to) * (uint64_t)p->nlanes +
                   (uint64_t)lane + 1;
    size_t slot;
    uint32_t i = map_find(m, key, &slot);
    if (i == UINT32_MAX) {
        acc_kconn_t *c = &g->k->conns[g->k->nconns];
        c->from = from;
        c->to = to;
        c->lane = lane;
        c->proto = p->proto;
        m->keys[slot] = key;
        i = m->vals[slot] = g->k->nconns++;
    }
    return i;
}

static uint32_t ctr_of(cg_t *g, map_t *m, int from, int to, uint16_t slot_no)
{
    const acc_plan_t *p = g->p;
    uint64_t key = (((uint64_t)from * (uint64_t)p->nranks + (uint64_t)to) << 16 | slot_no) + 1;
    size_t slot;
    uint32_t i = map_find(m, key, &slot);
    if (i == UINT32_MAX) {
        acc_kctr_t *c = &g->k->ctrs[g->k->nctrs];
        c->from = from;
        c->to = to;
        c->slot = slot_no;
        m->keys[slot] = key;
        i = m->vals[slot] = g->k->nctrs++;
    }
    return i;
}

/* Number connections and counters; give every message its number on its connection, in the
 * order of the sending and of the receiving lane (FIFO: the same order). */
static acc_status_t map_traffic(cg_t *g, size_t nops)
{
    const acc_plan_t *p = g->p;
    map_t conns = {0}, ctrs = {0};
    uint32_t *recvd = NULL, k;
    acc_status_t st = ACC_OK;
    int r, l;

    g->k->conns = acc_mem_calloc(2 * nops + 1, sizeof(acc_kconn_t));
    g->k->ctrs = acc_mem_calloc(nops + 1, sizeof(acc_kctr_t));
    if (!g->k->conns || !g->k->ctrs || map_init(&conns, 2 * nops) != ACC_OK ||
        map_init(&ctrs, nops) != ACC_OK) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory numbering connections");
        goto out;
    }
    for (r = 0; r < p->nranks; r++)
        for (l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(p, r, l);
            size_t base = g->first[r * p->nlanes + l];
            for (k = 0; k < prog->nops; k++) {
                const acc_op_t *op = &prog->ops[k];
                size_t i = base + k;
                if (cg_sends(op->code)) {
                    int to = op->code == ACC_OP_SEND ? op->peer : op->peer2;
                    acc_kconn_t *c = &g->k->conns[g->cout[i] = conn_of(g, &conns, r, to, l)];
                    uint32_t cnt = op->code == ACC_OP_RECV_COPY_SEND ? op->dst.cnt : op->src.cnt;
                    g->jout[i] = c->msgs++;
                    if (cnt > c->maxcnt)
                        c->maxcnt = cnt;
                }
                if (cg_receives(op->code))
                    g->cin[i] = conn_of(g, &conns, op->peer, r, l);
                if (op->code == ACC_OP_SIGNAL)
                    g->k->ctrs[g->ctr[i] = ctr_of(g, &ctrs, r, op->peer, op->slot)].per_launch++;
                if (op->code == ACC_OP_WAIT)
                    g->ctr[i] = ctr_of(g, &ctrs, op->peer, r, op->slot);
                if (op->dep_lane >= 0)
                    g->publish[g->first[r * p->nlanes + op->dep_lane] + (uint32_t)op->dep_op] = 1;
            }
        }
    /* Receives are numbered once every connection exists. */
    if (!(recvd = acc_mem_calloc(g->k->nconns + 1, sizeof(uint32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory numbering messages");
        goto out;
    }
    for (r = 0; r < p->nranks; r++)
        for (l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *prog = acc_plan_prog(p, r, l);
            size_t base = g->first[r * p->nlanes + l];
            for (k = 0; k < prog->nops; k++)
                if (cg_receives(prog->ops[k].code))
                    g->jin[base + k] = recvd[g->cin[base + k]]++;
        }
    for (k = 0; k < g->k->nconns; k++) {
        const acc_kconn_t *c = &g->k->conns[k];
        if (recvd[k] != c->msgs) {
            st = acc_error_set(ACC_ERR_INVALID,
                               "codegen: rank %d sends %u messages to rank %d on lane %d, which "
                               "receives %u; the plan has not been verified",
                               c->from, c->msgs, c->to, c->lane, recvd[k]);
            goto out;
        }
    }
out:
    acc_mem_free(recvd);
    map_free(&conns);
    map_free(&ctrs);
    return st;
}

/* ---- classes ----------------------------------------------------------------------------- */

/* Lane programs pi and pj (rank * nlanes + lane) run the same code: the same shapes, and the
 * lanes they depend on have the same lengths (the dependency marks count in them). */
static int same_prog(const cg_t *g, int pi, int pj)
{
    const acc_plan_t *p = g->p;
    const acc_lane_prog_t *a = &p->progs[pi], *b = &p->progs[pj];
    int ra = pi / p->nlanes, rb = pj / p->nlanes;
    uint32_t k;
    if (a->nops != b->nops)
        return 0;
    for (k = 0; k < a->nops; k++) {
        const acc_op_t *x = &a->ops[k], *y = &b->ops[k];
        if (!cg_same_shape(g, g->first[pi] + k, x, g->first[pj] + k, y))
            return 0;
        if (x->dep_lane >= 0 &&
            acc_plan_prog(p, ra, x->dep_lane)->nops != acc_plan_prog(p, rb, y->dep_lane)->nops)
            return 0;
    }
    return 1;
}

static uint64_t prog_hash(const cg_t *g, int pi)
{
    const acc_lane_prog_t *prog = &g->p->progs[pi];
    uint64_t h = 1469598103934665603ull ^ prog->nops;
    uint32_t k, w[8];
    for (k = 0; k < prog->nops; k++) {
        const acc_op_t *op = &prog->ops[k];
        w[0] = op->code;
        w[1] = op->src.buf;
        w[2] = op->src.cnt;
        w[3] = op->dst.buf;
        w[4] = op->dst.cnt;
        w[5] = op->npeers;
        w[6] = (uint32_t)op->dep_lane;
        w[7] = g->publish[g->first[pi] + k];
        h = (h ^ acc_fnv1a64(w, sizeof(w))) * 1099511628211ull;
    }
    return h;
}

/* Sort items 0..n-1 into classes by hash and equality; *rep receives each class's first
 * item.  Returns the class count, or -1 out of memory. */
static int sort_classes(int n, const uint64_t *hash, int (*eq)(const cg_t *, int, int),
                        const cg_t *g, const int *skip, int *class_of, int *rep)
{
    /* Classes are few (a handful even for 1024 ranks); a table by hash finds them. */
    size_t cap = 64, i;
    int *slot, nc = 0, x;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    if (!(slot = acc_mem_alloc(cap * sizeof(int))))
        return -1;
    for (i = 0; i < cap; i++)
        slot[i] = -1;
    for (x = 0; x < n; x++) {
        if (skip && skip[x]) {
            class_of[x] = -1;
            continue;
        }
        for (i = (size_t)(hash[x] & (cap - 1)); slot[i] >= 0; i = (i + 1) & (cap - 1))
            if (hash[rep[slot[i]]] == hash[x] && eq(g, rep[slot[i]], x))
                break;
        if (slot[i] < 0) {
            slot[i] = nc;
            rep[nc++] = x;
        }
        class_of[x] = slot[i];
    }
    acc_mem_free(slot);
    return nc;
}

static int same_rank(const cg_t *g, int a, int b)
{
    int l, L = g->p->nlanes;
    for (l = 0; l < L; l++)
        if (g->prog_class[a * L + l] != g->prog_class[b * L + l])
            return 0;
    return 1;
}

static acc_status_t find_classes(cg_t *g)
{
    const acc_plan_t *p = g->p;
    int np = p->nranks * p->nlanes, n = p->nranks, x, c, l;
    uint64_t *hash = acc_mem_calloc((size_t)np, sizeof(uint64_t));
    int *rep = acc_mem_calloc((size_t)np, sizeof(int)), *skip = acc_mem_calloc((size_t)np, sizeof(int));
    int *fill = acc_mem_calloc((size_t)np + 1, sizeof(int));
    acc_status_t st = ACC_OK;

    g->prog_class = acc_mem_calloc((size_t)np, sizeof(int));
    g->members = acc_mem_calloc((size_t)np, sizeof(int));
    g->member_first = acc_mem_calloc((size_t)np + 1, sizeof(int));
    g->k->rank_class = acc_mem_calloc((size_t)n, sizeof(int));
    if (!hash || !rep || !skip || !fill || !g->prog_class || !g->members || !g->member_first ||
        !g->k->rank_class) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory sorting %d programs", np);
        goto out;
    }
    for (x = 0; x < np; x++) {
        hash[x] = prog_hash(g, x);
        skip[x] = p->progs[x].nops == 0;
    }
    if ((g->nclasses = sort_classes(np, hash, same_prog, g, skip, g->prog_class, rep)) < 0)
        goto nomem;
    for (x = 0; x < np; x++)
        if (g->prog_class[x] >= 0)
            g->member_first[g->prog_class[x] + 1]++;
    for (c = 0; c < g->nclasses; c++)
        g->member_first[c + 1] += g->member_first[c];
    for (x = 0; x < np; x++)
        if ((c = g->prog_class[x]) >= 0)
            g->members[g->member_first[c] + fill[c]++] = x;
    g->k->nprogs = g->nclasses;
    /* Rank classes: ranks whose lanes are all in the same program classes. */
    for (x = 0; x < n; x++) {
        uint64_t h = 1469598103934665603ull;
        for (l = 0; l < p->nlanes; l++)
            h = (h ^ (uint64_t)(g->prog_class[x * p->nlanes + l] + 1)) * 1099511628211ull;
        hash[x] = h;
    }
    if ((g->k->nclasses = sort_classes(n, hash, same_rank, g, NULL, g->k->rank_class, rep)) < 0)
        goto nomem;
    goto out;
nomem:
    st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory sorting %d programs", np);
out:
    acc_mem_free(hash);
    acc_mem_free(rep);
    acc_mem_free(skip);
    acc_mem_free(fill);
    return st;
}

/* ---- the module ------------------------------------------------------------------------- */

/* "0-7" or "0,8,16-23"; a long list is cut after its first ranges. */
static void rank_list(acc_buf_t *b, const int *ranks, int m)
{
    int i = 0, shown = 0;
    while (i < m) {
        int j = i;
        while (j + 1 < m && ranks[j + 1] == ranks[j] + 1)
            j++;
        if (shown == 12) {
            acc_buf_printf(b, ", ... (%d in all)", m);
            return;
        }
        acc_buf_printf(b, "%s%d", shown ? "," : "", ranks[i]);
        if (j > i)
            acc_buf_printf(b, "-%d", ranks[j]);
        shown++;
        i = j + 1;
    }
}

/* The ranks (or lanes, when every rank has the same) of program class c, as text. */
static void members_text(const cg_t *g, int c, acc_buf_t *b)
{
    int L = g->p->nlanes, i, m = g->member_first[c + 1] - g->member_first[c], *list;
    const int *mem = g->members + g->member_first[c];
    if (!(list = acc_mem_calloc((size_t)m + 1, sizeof(int))))
        return;
    for (i = 0; i < m; i++)
        list[i] = mem[i] / L;
    acc_buf_puts(b, "ranks ");
    rank_list(b, list, m);
    if (L > 1) {
        for (i = 0; i < m; i++)
            list[i] = mem[i] % L;
        acc_buf_puts(b, " on lanes ");
        rank_list(b, list, m > L ? L : m);
        if (m > L)
            acc_buf_puts(b, ",...");
    }
    acc_mem_free(list);
}

static void module_head(const cg_t *g, acc_buf_t *b)
{
    const acc_plan_t *p = g->p;
    const acc_kernel_t *k = g->k;
    int c;

    acc_buf_printf(b, "/* acc codegen %d: %s */\n", ACC_CODEGEN_VERSION, k->name);
    acc_buf_printf(b, "/*\n * Plan: %s %s of %d ranks (%s).\n", acc_coll_name(p->coll), p->algo,
                   p->nranks, p->params[0] ? p->params : "-");
    acc_buf_printf(b,
                   " * %d lane%s, chunks in %u / out %u / scratch %u, %d message slots per "
                   "connection, protocol %s.\n",
                   p->nlanes, p->nlanes == 1 ? "" : "s", p->in_chunks, p->out_chunks,
                   p->scratch_chunks, p->slots, acc_proto_name(p->proto));
    if (k->reduces)
        acc_buf_printf(b, " * Data type %s, reduction %s.\n", acc_dtype_name(k->dt),
                       acc_redop_name(k->op));
    else
        acc_buf_printf(b, " * Elements of %zu bytes (the collective only moves data).\n",
                       acc_dtype_size(k->dt));
    acc_buf_printf(b,
                   " * %u connections, %u signal counters; %d rank class%s, %d lane "
                   "program%s:\n",
                   k->nconns, k->nctrs, k->nclasses, k->nclasses == 1 ? "" : "es", k->nprogs,
                   k->nprogs == 1 ? "" : "s");
    for (c = 0; c < g->nclasses; c++) {
        acc_buf_printf(b, " *   acc_p%d: ", c);
        members_text(g, c, b);
        acc_buf_puts(b, "\n");
    }
    acc_buf_printf(b,
                   " * Built in two parts, linked: the device library (%s: the header and\n"
                   " * the library below, the same for every plan of this type) and the plan's\n"
                   " * part (the header, then everything after the library).\n",
                   k->lib_name);
    acc_buf_puts(
        b, " * Every lane runs on `copies` thread blocks (blockIdx.x = lane * copies + "
           "copy),\n * each moving its slice of every chunk; blockIdx.y + rank0 is the rank.  "
           "prm[] is the row\n * of the parameter table for the block's rank and "
           "lane: what differs between\n * the members of a program's class.\n */\n");
}

/* What the plan's part fixes (the library takes the rest from the arguments). */
static void plan_constants(const cg_t *g, acc_buf_t *b)
{
    const acc_plan_t *p = g->p;
    acc_buf_printf(b,
                   "\n/* ==== the plan: %s %s of %d ranks ==== */\n"
                   "#define ACC_NRANKS %d\n#define ACC_NLANES %d\n#define ACC_ROOT %d\n"
                   "#define ACC_STEP %s /* messages travel %s */\n",
                   acc_coll_name(p->coll), p->algo, p->nranks, p->nranks, p->nlanes,
                   p->coll == ACC_COLL_REDUCE ? p->root : -1,
                   p->proto == ACC_PROTO_LL ? "acc_step_ll" : "acc_step",
                   p->proto == ACC_PROTO_LL ? "as LL lines" : "staged whole (Simple)");
    cg_average(b, g->k->op, g->k->reduces, p->nranks);
}

/* The dispatch from a block's program class (prm[0]) to its function. */
static void module_run(const cg_t *g, acc_buf_t *b)
{
    int c;
    acc_buf_puts(b, "\n__device__ void acc_run(acc_ctx_t &c, const u32 *prm)\n{\n"
                    "    switch (prm[0]) {\n");
    for (c = 0; c < g->nclasses; c++)
        acc_buf_printf(b, "    case %d:\n        acc_p%d(c, prm);\n        break;\n", c, c);
    acc_buf_puts(b, "    }\n}\n");
}

enum { PART_LIBRARY = 1, PART_PLAN = 2 };

/* The source of the module's parts: the library alone (nothing of the plan in it: every plan
 * of the type has this very text), the plan's part alone, or both, the whole module.  NULL
 * when out of memory. */
static char *assemble(const cg_t *g, const acc_buf_t *body, int parts, size_t *len)
{
    const acc_kernel_t *k = g->k;
    acc_buf_t b;

    acc_buf_init(&b);
    if (parts & PART_PLAN)
        module_head(g, &b);
    else
        acc_buf_printf(&b, "/* acc codegen %d: %s, the device library */\n", ACC_CODEGEN_VERSION,
                       k->lib_name);
    cg_types(&b, k->dt, k->op, k->reduces);
    cg_header(&b);
    if (parts & PART_LIBRARY)
        cg_library(&b);
    if (parts & PART_PLAN) {
        plan_constants(g, &b);
        cg_entry(&b);
        acc_buf_append(&b, body->data ? body->data : "", body->len);
        module_run(g, &b);
    }
    if (acc_buf_status(&b) != ACC_OK) {
        acc_buf_free(&b);
        return NULL;
    }
    if (len)
        *len = b.len;
    return acc_buf_take(&b);
}

static void make_name(acc_kernel_t *k, const acc_plan_t *p)
{
    char algo[ACC_PLAN_NAME_MAX + 8];
    size_t i;
    for (i = 0; p->algo[i] && i + 1 < ACC_PLAN_NAME_MAX; i++) {
        char ch = p->algo[i];
        algo[i] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
                      ? ch
                      : '_';
    }
    algo[i] = '\0';
    if (!algo[0])
        snprintf(algo, sizeof(algo), "plan");
    /* The protocol makes another module of the same plan. */
    if (p->proto == ACC_PROTO_LL)
        snprintf(algo + strlen(algo), sizeof(algo) - strlen(algo), "_ll");
    if (k->reduces) {
        snprintf(k->name, sizeof(k->name), "%s_%s_n%d_%s_%s", acc_coll_name(p->coll), algo,
                 p->nranks, acc_dtype_name(k->dt), acc_redop_name(k->op));
        /* AVG's library is SUM's (cg_types). */
        snprintf(k->lib_name, sizeof(k->lib_name), "library_%s_%s", acc_dtype_name(k->dt),
                 acc_redop_name(k->op == ACC_RED_AVG ? ACC_RED_SUM : k->op));
    } else {
        snprintf(k->name, sizeof(k->name), "%s_%s_n%d_%zubit", acc_coll_name(p->coll), algo,
                 p->nranks, 8 * acc_dtype_size(k->dt));
        snprintf(k->lib_name, sizeof(k->lib_name), "library_%zubit", 8 * acc_dtype_size(k->dt));
    }
}

static void cg_free(cg_t *g)
{
    acc_mem_free(g->first);
    acc_mem_free(g->cin);
    acc_mem_free(g->jin);
    acc_mem_free(g->cout);
    acc_mem_free(g->jout);
    acc_mem_free(g->ctr);
    acc_mem_free(g->publish);
    acc_mem_free(g->prog_class);
    acc_mem_free(g->members);
    acc_mem_free(g->member_first);
}

acc_status_t acc_kernel_generate(const acc_plan_t *plan, acc_dtype_t dt, acc_redop_t op,
                                 acc_kernel_t **out)
{
    cg_t g;
    acc_kernel_t *k = NULL;
    acc_buf_t body;
    uint32_t **cols = NULL, *nparams = NULL, stride = 1;
    size_t nops = 0, nprog, i;
    int c;
    acc_status_t st;

    *out = NULL;
    memset(&g, 0, sizeof(g));
    acc_buf_init(&body);
    if (!plan)
        return acc_error_set(ACC_ERR_INVALID, "codegen: no plan");
    if (dt < 0 || dt >= ACC_DT_COUNT || op < 0 || op >= ACC_RED_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "codegen: data type %d or reduction %d is not one of acc_dtype_t "
                             "/ acc_redop_t",
                             (int)dt, (int)op);
    if ((st = cg_check_plan(plan)) != ACC_OK ||
        (st = acc_kernel_supports(plan, plan->proto)) != ACC_OK)
        return st;
    if (!(k = acc_mem_calloc(1, sizeof(*k))))
        return acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory");
    g.p = plan;
    g.k = k;
    k->coll = plan->coll;
    k->nranks = plan->nranks;
    k->nlanes = plan->nlanes;
    k->root = plan->root;
    k->slots = plan->slots;
    k->reduces = acc_coll_reduces(plan->coll);
    k->dt = dt;
    k->op = k->reduces ? op : ACC_RED_SUM;
    k->proto = plan->proto;
    k->chunks[ACC_BUF_IN] = plan->in_chunks;
    k->chunks[ACC_BUF_OUT] = plan->out_chunks;
    k->chunks[ACC_BUF_SCRATCH] = plan->scratch_chunks;
    make_name(k, plan);

    g.first = acc_mem_calloc((size_t)plan->nranks * plan->nlanes + 1, sizeof(size_t));
    k->lane_ops = acc_mem_calloc((size_t)plan->nranks * plan->nlanes, sizeof(uint32_t));
    if (!g.first || !k->lane_ops) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory");
        goto out;
    }
    for (i = 0; i < (size_t)plan->nranks * plan->nlanes; i++) {
        k->lane_ops[i] = plan->progs[i].nops;
        g.first[i] = nops;
        nops += plan->progs[i].nops;
    }
    g.first[i] = nops;
    g.cin = acc_mem_calloc(nops + 1, sizeof(uint32_t));
    g.jin = acc_mem_calloc(nops + 1, sizeof(uint32_t));
    g.cout = acc_mem_calloc(nops + 1, sizeof(uint32_t));
    g.jout = acc_mem_calloc(nops + 1, sizeof(uint32_t));
    g.ctr = acc_mem_calloc(nops + 1, sizeof(uint32_t));
    g.publish = acc_mem_calloc(nops + 1, 1);
    if (!g.cin || !g.jin || !g.cout || !g.jout || !g.ctr || !g.publish) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory for %zu operations", nops);
        goto out;
    }
    if ((st = map_traffic(&g, nops)) != ACC_OK || (st = find_classes(&g)) != ACC_OK)
        goto out;

    cols = acc_mem_calloc((size_t)g.nclasses + 1, sizeof(uint32_t *));
    nparams = acc_mem_calloc((size_t)g.nclasses + 1, sizeof(uint32_t));
    if (!cols || !nparams) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory");
        goto out;
    }
    for (c = 0; c < g.nclasses; c++) {
        if ((st = cg_emit_class(&g, c, &body, &cols[c], &nparams[c])) != ACC_OK)
            goto out;
        if (nparams[c] + 1 > stride)
            stride = nparams[c] + 1;
    }
    k->param_stride = stride;
    nprog = (size_t)plan->nranks * plan->nlanes;
    if (!(k->params = acc_mem_calloc(nprog * stride, sizeof(uint32_t)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory for the parameter table");
        goto out;
    }
    /* Row per (rank, lane): [0] the program class (none: UINT32_MAX), then its parameters. */
    for (i = 0; i < nprog; i++)
        k->params[i * stride] = g.prog_class[i] < 0 ? UINT32_MAX : (uint32_t)g.prog_class[i];
    for (c = 0; c < g.nclasses; c++) {
        int m = g.member_first[c + 1] - g.member_first[c], q;
        uint32_t j;
        for (q = 0; q < m; q++) {
            uint32_t *row = k->params + (size_t)g.members[g.member_first[c] + q] * stride;
            for (j = 0; j < nparams[c]; j++)
                row[1 + j] = cols[c][(size_t)j * m + q];
        }
    }

    /* The whole module, then its two parts (codegen_prelude.c). */
    if (!(k->text = assemble(&g, &body, PART_LIBRARY | PART_PLAN, &k->len)) ||
        !(k->lib_text = assemble(&g, &body, PART_LIBRARY, NULL)) ||
        !(k->plan_text = assemble(&g, &body, PART_PLAN, NULL)))
        goto nomem;
    goto out;
nomem:
    st = acc_error_set(ACC_ERR_NOMEM, "codegen: out of memory for the source");
out:
    for (c = 0; cols && c < g.nclasses; c++)
        acc_mem_free(cols[c]);
    acc_mem_free(cols);
    acc_mem_free(nparams);
    acc_buf_free(&body);
    cg_free(&g);
    if (st != ACC_OK) {
        acc_kernel_destroy(k);
        return st;
    }
    *out = k;
    return ACC_OK;
}

void acc_kernel_destroy(acc_kernel_t *k)
{
    if (!k)
        return;
    acc_mem_free(k->text);
    acc_mem_free(k->lib_text);
    acc_mem_free(k->plan_text);
    acc_mem_free(k->params);
    acc_mem_free(k->conns);
    acc_mem_free(k->ctrs);
    acc_mem_free(k->lane_ops);
    acc_mem_free(k->rank_class);
    acc_mem_free(k);
}

const char *acc_kernel_source(const acc_kernel_t *k, size_t *len)
{
    if (len)
        *len = k ? k->len : 0;
    return k && k->text ? k->text : "";
}

const char *acc_kernel_name(const acc_kernel_t *k)
{
    return k ? k->name : "";
}

const char *acc_kernel_library_source(const acc_kernel_t *k)
{
    return k && k->lib_text ? k->lib_text : "";
}

const char *acc_kernel_library_name(const acc_kernel_t *k)
{
    return k ? k->lib_name : "";
}

const char *acc_kernel_plan_source(const acc_kernel_t *k)
{
    return k && k->plan_text ? k->plan_text : "";
}

int acc_kernel_classes(const acc_kernel_t *k)
{
    return k ? k->nclasses : 0;
}

int acc_kernel_class_of(const acc_kernel_t *k, int rank)
{
    if (!k || rank < 0 || rank >= k->nranks)
        return -1;
    return k->rank_class[rank];
}

int acc_kernel_programs(const acc_kernel_t *k)
{
    return k ? k->nprogs : 0;
}
