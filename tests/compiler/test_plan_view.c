/*
 * A rank's view of a plan (acc_plan.h) and the binary class form it is read from
 * (acc_cplan.h).  For every rank of every generator's plan on small machines and the shipped
 * platforms, the view made from the binary form (the head and the rank's own programs alone)
 * equals the view worked out from the whole plan: the programs, the near ranks, every edge
 * into them (the layouts of their memory follow from those), whether peers' memory is touched
 * and the flags of the reductions' last steps.  A damaged head or program is refused with a
 * message, at every truncation and at changed bytes; at 65,536 ranks the stored form stays
 * small and one rank's view needs its own programs only.
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "acc_cplan.h"

#include <stdlib.h>
#include <string.h>

static acc_topo_t *load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_MSG(acc_topo_load(src, &t) == ACC_OK, "%s: %s", src, acc_error_message());
    return t;
}

typedef struct {
    const acc_cplan_bin_t *bin;
    int reads; /* programs handed out */
} reader_t;

static acc_status_t read_prog(void *ctx, int lane, uint32_t cls, const void **data, size_t *len)
{
    reader_t *r = ctx;
    for (uint32_t i = 0; i < r->bin->nprogs; i++)
        if (r->bin->lane[i] == lane && r->bin->cls[i] == cls) {
            *data = r->bin->progs[i].data;
            *len = r->bin->progs[i].len;
            r->reads++;
            return ACC_OK;
        }
    return acc_error_set(ACC_ERR_NOT_FOUND, "no program for lane %d class %u", lane, cls);
}

static int same_ref(const acc_ref_t *a, const acc_ref_t *b)
{
    return a->buf == b->buf && a->off == b->off && a->cnt == b->cnt;
}

/* Operations of plans pa and pb alike; a peer list by the ranks it names (where in the pool
 * it lies is each plan's own: a class form's row of peers is put there per view). */
static int same_op(const acc_plan_t *pa, const acc_op_t *a, const acc_plan_t *pb, const acc_op_t *b)
{
    if (!(a->code == b->code && a->slot == b->slot && a->peer == b->peer && a->peer2 == b->peer2 &&
          same_ref(&a->src, &b->src) && same_ref(&a->dst, &b->dst) && a->value == b->value &&
          a->npeers == b->npeers && a->dep_lane == b->dep_lane && a->dep_op == b->dep_op))
        return 0;
    for (uint32_t k = 0; k < a->npeers; k++)
        if (pa->peer_pool[a->peers_off + k] != pb->peer_pool[b->peers_off + k])
            return 0;
    return 1;
}

static void same_view(const acc_plan_t *a, const acc_plan_t *b, const char *what, int r, int flags)
{
    const acc_plan_view_t *x = a->view, *y = b->view;
    CHECK_MSG(a->nranks == b->nranks && a->nlanes == b->nlanes && a->coll == b->coll &&
                  a->in_chunks == b->in_chunks && a->out_chunks == b->out_chunks &&
                  a->scratch_chunks == b->scratch_chunks && a->slots == b->slots &&
                  a->inplace == b->inplace && a->root == b->root && !strcmp(a->algo, b->algo) &&
                  !strcmp(a->params, b->params),
              "%s rank %d: the headers differ", what, r);
    for (int l = 0; l < a->nlanes; l++) {
        const acc_lane_prog_t *p = acc_plan_prog(a, r, l), *q = acc_plan_prog(b, r, l);
        CHECK_MSG(p->nops == q->nops, "%s rank %d lane %d: %u operations, %u", what, r, l, p->nops,
                  q->nops);
        for (uint32_t i = 0; i < p->nops && i < q->nops; i++)
            CHECK_MSG(same_op(a, &p->ops[i], b, &q->ops[i]),
                      "%s rank %d lane %d: operation %u differs", what, r, l, i);
    }
    CHECK_MSG(x->rank == y->rank && x->staged == y->staged, "%s rank %d", what, r);
    CHECK_MSG(x->nnear == y->nnear && !memcmp(x->near, y->near, x->nnear * sizeof(int32_t)),
              "%s rank %d: %u near ranks, %u", what, r, x->nnear, y->nnear);
    CHECK_MSG(x->nedges == y->nedges, "%s rank %d: %u edges, %u", what, r, x->nedges, y->nedges);
    for (uint32_t i = 0; i < x->nedges; i++)
        CHECK_MSG(x->edges[i].sig == y->edges[i].sig && x->edges[i].from == y->edges[i].from &&
                      x->edges[i].to == y->edges[i].to && x->edges[i].chan == y->edges[i].chan &&
                      x->edges[i].maxcnt == y->edges[i].maxcnt &&
                      x->edges[i].count == y->edges[i].count,
                  "%s rank %d: edge %u differs: %d %d -> %d chan %u max %u count %u, and %d %d "
                  "-> %d chan %u max %u count %u",
                  what, r, i, x->edges[i].sig, x->edges[i].from, x->edges[i].to, x->edges[i].chan,
                  x->edges[i].maxcnt, x->edges[i].count, y->edges[i].sig, y->edges[i].from,
                  y->edges[i].to, y->edges[i].chan, y->edges[i].maxcnt, y->edges[i].count);
    if (flags) {
        size_t n = 0;
        for (int l = 0; l < a->nlanes; l++)
            n += acc_plan_prog(a, r, l)->nops;
        CHECK_MSG(!x->final == !y->final, "%s rank %d: flags %s and %s", what, r,
                  x->final ? "known" : "not known", y->final ? "known" : "not known");
        CHECK_MSG(!x->final || !memcmp(x->final, y->final, n), "%s rank %d: the flags differ", what,
                  r);
    }
}

/* Every rank's view from the binary form of cp equals the one from expl, cp's expansion. */
static void check_views(const acc_cplan_t *cp, const acc_plan_t *expl, const char *what, int flags)
{
    acc_cplan_bin_t bin;
    acc_chead_t *h = NULL;
    CHECK_OK(acc_cplan_encode(cp, expl, &bin));
    CHECK_OK(acc_chead_load(bin.head.data, bin.head.len, what, &h));
    for (int r = 0; r < expl->nranks; r++) {
        acc_plan_t *a = NULL, *b = NULL;
        reader_t rd = {&bin, 0};
        CHECK_OK(acc_plan_view_of(expl, r, &a));
        CHECK_OK(acc_cplan_rank_view(h, r, read_prog, &rd, &b));
        CHECK_MSG(rd.reads == expl->nlanes, "%s rank %d read %d programs for %d lanes", what, r,
                  rd.reads, expl->nlanes);
        same_view(a, b, what, r, flags);
        acc_plan_destroy(a);
        acc_plan_destroy(b);
    }
    acc_chead_destroy(h);
    acc_cplan_bin_free(&bin);
}

/* Every generator's default plan, through its degenerate class form (one class per rank). */
static void every_generator(const char *src)
{
    acc_topo_t *t = load(src);
    acc_plan_t **plans = NULL;
    size_t n = 0;
    CHECK_OK(acc_algo_generate_all(t, ACC_COLL_COUNT, &plans, &n));
    CHECK(n > 3);
    for (size_t i = 0; i < n; i++) {
        acc_cplan_t *cp = NULL;
        char what[160];
        snprintf(what, sizeof(what), "%s %s %s", src, acc_coll_name(plans[i]->coll),
                 plans[i]->algo);
        CHECK_OK(acc_cplan_from_plan(plans[i], &cp));
        check_views(cp, plans[i], what, 1);
        acc_cplan_destroy(cp);
        acc_plan_destroy(plans[i]);
    }
    acc_mem_free(plans);
    acc_topo_destroy(t);
}

ACC_TEST(every_generator_on_two_nodes)
{
    every_generator("nodes=2 gpus=4 nvlink=18 nic=4x400");
}

ACC_TEST(every_generator_on_dgx_h100)
{
    every_generator("dgx-h100");
}

ACC_TEST(every_generator_on_three_nodes_of_three)
{
    every_generator("nodes=3 gpus=3 nvlink=18 nic=3x400");
}

/* The class forms the generators build directly: the view from their few programs equals the
 * whole expansion's, flags included where every point of a class has the same. */
ACC_TEST(class_forms)
{
    static const char *const topos[] = {"nodes=1 gpus=8 nvlink=18",
                                        "nodes=4 gpus=2 nvlink=18 nic=2x400",
                                        "nodes=3 gpus=4 nvlink=18 nic=4x400", "dgx-h100"};
    /* The hierarchical ones between nodes by rings, inside them by rings or (the default on
     * NVLink nodes) peer memory: a class per position and a reduce_peers row of peers.  The
     * views of halving and doubling come from binary form version 2, edges by XOR included.
     * Trees have a root and heads that are classes of their own. */
    static const struct {
        acc_coll_t coll;
        const char *algo;
        const char *inner;
    } forms[] = {{ACC_COLL_ALLREDUCE, "ring", NULL},
                 {ACC_COLL_ALLGATHER, "ring", NULL},
                 {ACC_COLL_REDUCE_SCATTER, "ring", NULL},
                 {ACC_COLL_ALLREDUCE, "hier", "ring"},
                 {ACC_COLL_ALLREDUCE, "hier", "direct"},
                 {ACC_COLL_ALLGATHER, "hier", "direct"},
                 {ACC_COLL_REDUCE_SCATTER, "hier", "direct"},
                 {ACC_COLL_ALLREDUCE, "hier_pipe", "direct"},
                 /* Halving and doubling on a power of two of ranks: peers and chunks by XOR. */
                 {ACC_COLL_ALLREDUCE, "rhd", NULL},
                 {ACC_COLL_ALLREDUCE, "rd", NULL},
                 {ACC_COLL_REDUCE_SCATTER, "rh", NULL},
                 {ACC_COLL_ALLGATHER, "rd", NULL},
                 /* Trees: a class per head, per local index on the chains, per chain part. */
                 {ACC_COLL_ALLREDUCE, "tree", NULL},
                 {ACC_COLL_BROADCAST, "tree", NULL},
                 {ACC_COLL_BROADCAST, "ring", NULL},
                 {ACC_COLL_REDUCE, "tree", NULL},
                 {ACC_COLL_REDUCE, "ring", NULL}};
    int checked = 0;
    for (size_t t = 0; t < sizeof(topos) / sizeof(topos[0]); t++) {
        acc_topo_t *topo = load(topos[t]);
        for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
            const acc_algo_t *algo = acc_algo_find(forms[f].coll, forms[f].algo);
            acc_algo_args_t args;
            acc_cplan_t *cp = NULL;
            acc_plan_t *expl = NULL;
            char what[160];
            memset(&args, 0, sizeof(args));
            if (forms[f].inner) {
                args.inner = forms[f].inner;
                args.outer = "ring";
            }
            if (!acc_algo_has_class(algo, topo, &args))
                continue;
            snprintf(what, sizeof(what), "%s %s %s", topos[t], acc_coll_name(forms[f].coll),
                     forms[f].algo);
            CHECK_OK(acc_algo_generate_class(algo, topo, &args, &cp, NULL));
            CHECK_OK(acc_cplan_expand(cp, &expl));
            check_views(cp, expl, what, 0);
            checked++;
            acc_plan_destroy(expl);
            acc_cplan_destroy(cp);
        }
        acc_topo_destroy(topo);
    }
    printf("%d class forms checked\n", checked);
    CHECK(checked >= 54);
}

/* A damaged head or program is refused, naming the plan; never a crash or a wrong view. */
ACC_TEST(damaged_forms_are_refused)
{
    acc_topo_t *t = load("nodes=2 gpus=4 nvlink=18 nic=4x400");
    const acc_algo_t *algo = acc_algo_find(ACC_COLL_ALLREDUCE, "ring");
    acc_cplan_t *cp = NULL;
    acc_plan_t *expl = NULL, *v = NULL;
    acc_cplan_bin_t bin;
    acc_chead_t *h = NULL;
    reader_t rd;
    unsigned char *copy;

    CHECK_OK(acc_algo_generate_class(algo, t, NULL, &cp, NULL));
    CHECK_OK(acc_cplan_expand(cp, &expl));
    CHECK_OK(acc_cplan_encode(cp, expl, &bin));
    /* Every truncation of the head. */
    for (size_t n = 0; n < bin.head.len; n++) {
        CHECK_ERR(acc_chead_load(bin.head.data, n, "acc.db: plan 1234", &h), ACC_ERR_PARSE);
        CHECK_MSG_HAS("acc.db: plan 1234");
    }
    /* Each byte of the head changed: refused, or read as another valid head (then a view is
     * still made safely or refused). */
    copy = acc_mem_alloc(bin.head.len);
    for (size_t i = 0; i < bin.head.len; i++) {
        memcpy(copy, bin.head.data, bin.head.len);
        copy[i] ^= 0x5a;
        if (acc_chead_load(copy, bin.head.len, "damaged", &h) == ACC_OK) {
            rd = (reader_t){&bin, 0};
            if (acc_cplan_rank_view(h, 1, read_prog, &rd, &v) == ACC_OK)
                acc_plan_destroy(v);
            acc_chead_destroy(h);
        }
    }
    acc_mem_free(copy);
    /* A program changed: its digest no longer matches. */
    CHECK_OK(acc_chead_load(bin.head.data, bin.head.len, "acc.db: plan 1234", &h));
    bin.progs[0].data[bin.progs[0].len / 2] ^= 1;
    rd = (reader_t){&bin, 0};
    CHECK_ERR(acc_cplan_rank_view(h, acc_cplan_rank(cp, bin.lane[0], 0), read_prog, &rd, &v),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("digest");
    acc_chead_destroy(h);
    acc_cplan_bin_free(&bin);
    /* Programs whose digests match but whose operations reach outside the plan (a chunk past
     * the buffer, a term of a dimension the grid lacks, a dependency on an operation that is
     * not there): refused, never run. */
    for (int bad = 0; bad < 3; bad++) {
        acc_cplan_t *mut = NULL;
        acc_cop_t *op;
        CHECK_OK(acc_algo_generate_class(algo, t, NULL, &mut, NULL));
        op = &mut->lanes[0].classes[0].ops[1];
        if (bad == 0)
            (op->dst.cnt ? &op->dst : &op->src)->base += 100000;
        else if (bad == 1)
            op->src.term[0].dim = 3, op->src.nterms = op->src.nterms ? op->src.nterms : 1;
        else
            op->dep_lane = 0, op->dep_op = 1 << 20;
        CHECK_OK(acc_cplan_encode(mut, NULL, &bin));
        CHECK_OK(acc_chead_load(bin.head.data, bin.head.len, "acc.db: plan 5678", &h));
        rd = (reader_t){&bin, 0};
        CHECK_MSG(acc_cplan_rank_view(h, acc_cplan_rank(mut, 0, 0), read_prog, &rd, &v) ==
                      ACC_ERR_PARSE,
                  "damage %d: %s", bad, acc_error_message());
        CHECK_MSG_HAS("acc.db: plan 5678");
        CHECK(v == NULL);
        acc_chead_destroy(h);
        acc_cplan_bin_free(&bin);
        acc_cplan_destroy(mut);
    }
    /* A view is one rank's: nothing proves, prints or extends it as a whole plan. */
    CHECK_OK(acc_plan_view_of(expl, 3, &v));
    CHECK_ERR(acc_plan_verify(v), ACC_ERR_INVALID);
    CHECK_INT(acc_plan_prog(v, 2, 0)->nops, 0);
    CHECK(acc_plan_prog(v, 3, 0)->nops > 0);
    acc_plan_destroy(v);
    acc_plan_destroy(expl);
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}

/* 65,536 ranks: the stored form of hier allreduce is as small as at 8,192, and a rank's view
 * holds its own programs (two lanes of 16 + 16,383 operations) and a few near ranks. */
ACC_TEST(hier_at_65536_ranks_is_small)
{
    size_t bytes[2];
    const char *const srcs[2] = {"nodes=1024 gpus=8 nvlink=18 nic=8x400",
                                 "nodes=8192 gpus=8 nvlink=18 nic=8x400"};
    for (int i = 0; i < 2; i++) {
        acc_topo_t *t = load(srcs[i]);
        acc_algo_args_t args;
        acc_cplan_t *cp = NULL;
        acc_cplan_bin_t bin;
        acc_chead_t *h = NULL;
        acc_plan_t *v = NULL;
        reader_t rd;
        int nodes = i ? 8192 : 1024, rank = 8 * (nodes / 2) + 5;
        memset(&args, 0, sizeof(args));
        args.inner = args.outer = "ring";
        CHECK_OK(acc_algo_generate_class(acc_algo_find(ACC_COLL_ALLREDUCE, "hier"), t, &args, &cp,
                                         NULL));
        CHECK_OK(acc_cplan_encode(cp, NULL, &bin));
        bytes[i] = bin.head.len;
        for (uint32_t p = 0; p < bin.nprogs; p++)
            bytes[i] += bin.progs[p].len;
        CHECK_OK(acc_chead_load(bin.head.data, bin.head.len, srcs[i], &h));
        rd = (reader_t){&bin, 0};
        CHECK_OK(acc_cplan_rank_view(h, rank, read_prog, &rd, &v));
        CHECK_INT(rd.reads, v->nlanes);
        for (int l = 0; l < v->nlanes; l++)
            CHECK_INT(acc_plan_prog(v, rank, l)->nops, 16 + 2 * nodes - 1);
        CHECK_MSG(v->view->nnear <= 8, "%u near ranks", v->view->nnear);
        CHECK(!v->view->final);
        acc_plan_destroy(v);
        acc_chead_destroy(h);
        acc_cplan_bin_free(&bin);
        acc_cplan_destroy(cp);
        acc_topo_destroy(t);
    }
    printf("hier allreduce stored: %zu bytes at 8,192 ranks, %zu at 65,536\n", bytes[0], bytes[1]);
    CHECK_MSG(bytes[1] < 4096 && bytes[1] < bytes[0] + 256, "%zu bytes, %zu at 8,192 ranks",
              bytes[1], bytes[0]);
}
