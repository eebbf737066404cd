/* The mutation test of the verifier: valid plans of several kinds, mutated at random with a fixed
 * seed (drop, duplicate or reorder an operation, change a peer, an offset or a count), over 1000
 * mutants in all.  Each mutant must be rejected by acc_plan_verify or, if accepted, compute the
 * right result on the host executor (int32 sums of inputs that differ per rank and element, so
 * that a missing or doubled contribution changes the numbers), in both buffer modes where the
 * plan claims in place.  An accepted mutant with a wrong result would be a verifier bug. */
#include "plan_fixtures.h"

#include "acc_compiler.h"
#include "acc_runtime.h"

#include <inttypes.h>

static int32_t input_value(int rank, uint64_t e)
{
    uint64_t z = ((uint64_t)rank << 40) ^ (e * 0x9e3779b97f4a7c15ull) ^ 0x5bd1e995u;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    return (int32_t)(uint32_t)(z ^ (z >> 29));
}

/* Wrapping int32 sum, as the host executor computes it. */
static int32_t wsum(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* Run p with `count` elements per rank in one mode and compare every output element with the
 * postcondition; 0 if all match, else a description in why. */
static int run_and_check(const acc_plan_t *p, uint64_t count, int inplace, char *why, size_t len)
{
    int n = p->nranks, r, s, bad = 0;
    uint64_t in_n = acc_plan_buf_elems(p, ACC_BUF_IN, count),
             out_n = acc_plan_buf_elems(p, ACC_BUF_OUT, count), e;
    uint64_t big = in_n > out_n ? in_n : out_n;
    int32_t **in = calloc((size_t)n, sizeof(int32_t *)), **out = calloc((size_t)n, sizeof(*out));
    acc_status_t st;

    for (r = 0; r < n; r++) {
        uint64_t at = 0;
        in[r] = calloc(in_n + 1, sizeof(int32_t));
        out[r] = calloc(big + 1, sizeof(int32_t));
        for (e = 0; e < big; e++)
            out[r][e] = (int32_t)0x7eadbeef;
        if (inplace && p->coll == ACC_COLL_ALLGATHER)
            at = (uint64_t)r * count;
        for (e = 0; e < in_n; e++) {
            in[r][e] = input_value(r, e);
            if (inplace)
                out[r][at + e] = in[r][e];
        }
    }
    st = acc_host_exec(p, ACC_DT_I32, ACC_RED_SUM, count, (void *const *)in, (void *const *)out,
                       inplace);
    if (st != ACC_OK) {
        snprintf(why, len, "host executor failed: %s", acc_error_message());
        bad = 1;
    }
    for (r = 0; r < n && !bad; r++) {
        const int32_t *res = out[r];
        if (inplace && p->coll == ACC_COLL_REDUCE_SCATTER)
            res += (uint64_t)r * count;
        if (p->coll == ACC_COLL_REDUCE && r != p->root)
            continue;
        for (e = 0; e < out_n && !bad; e++) {
            int32_t want = 0;
            uint64_t blk = count ? e / count : 0, off = count ? e % count : 0;
            switch (p->coll) {
            case ACC_COLL_ALLREDUCE:
            case ACC_COLL_REDUCE:
                for (s = 0; s < n; s++)
                    want = wsum(want, input_value(s, e));
                break;
            case ACC_COLL_REDUCE_SCATTER:
                for (s = 0; s < n; s++)
                    want = wsum(want, input_value(s, (uint64_t)r * count + e));
                break;
            case ACC_COLL_ALLGATHER:
                want = input_value((int)blk, off);
                break;
            case ACC_COLL_BROADCAST:
                want = input_value(p->root, e);
                break;
            default: /* alltoall */
                want = input_value((int)blk, (uint64_t)r * count + off);
                break;
            }
            if (res[e] != want) {
                snprintf(why, len, "%s: rank %d element %" PRIu64 " is %d, expected %d",
                         inplace ? "in place" : "out of place", r, e, res[e], want);
                bad = 1;
            }
        }
    }
    for (r = 0; r < n; r++) {
        free(in[r]);
        free(out[r]);
    }
    free(in);
    free(out);
    return bad;
}

/* ---- mutations ------------------------------------------------------------------------------ */

static acc_lane_prog_t *pick_lane(acc_plan_t *p, fx_rng_t *g, int *rank, int *lane)
{
    int tries;
    for (tries = 0; tries < 64; tries++) {
        acc_lane_prog_t *prog;
        *rank = (int)fx_rnd(g, (uint32_t)p->nranks);
        *lane = (int)fx_rnd(g, (uint32_t)p->nlanes);
        prog = acc_plan_prog(p, *rank, *lane);
        if (prog->nops)
            return prog;
    }
    return NULL;
}

static acc_ref_t *pick_ref(acc_op_t *o, fx_rng_t *g)
{
    int has_src = o->src.cnt != 0, has_dst = o->dst.cnt != 0;
    if (has_src && has_dst)
        return fx_rnd(g, 2) ? &o->src : &o->dst;
    return has_src ? &o->src : has_dst ? &o->dst : NULL;
}

/* Apply one random mutation; returns its kind (a name) or NULL if none applied. */
static const char *mutate(acc_plan_t *p, fx_rng_t *g)
{
    int r, l;
    acc_lane_prog_t *prog = pick_lane(p, g, &r, &l);
    acc_op_t *o;
    acc_ref_t *ref;
    uint32_t i, j;

    if (!prog)
        return NULL;
    i = fx_rnd(g, prog->nops);
    o = &prog->ops[i];
    switch (fx_rnd(g, 6)) {
    case 0:
        memmove(prog->ops + i, prog->ops + i + 1, (prog->nops - i - 1) * sizeof(acc_op_t));
        prog->nops--;
        return "drop";
    case 1: {
        acc_op_t copy = *o;
        FX(acc_plan_add(p, r, l, &copy, NULL));
        prog = acc_plan_prog(p, r, l);
        memmove(prog->ops + i + 1, prog->ops + i, (prog->nops - i - 1) * sizeof(acc_op_t));
        prog->ops[i] = copy;
        return "duplicate";
    }
    case 2: {
        acc_op_t t;
        if (prog->nops < 2)
            return NULL;
        j = fx_rnd(g, 3) ? (i + 1) % prog->nops : fx_rnd(g, prog->nops);
        if (j == i)
            return NULL;
        t = prog->ops[i];
        prog->ops[i] = prog->ops[j];
        prog->ops[j] = t;
        return "reorder";
    }
    case 3:
        if (o->peer < 0)
            return NULL;
        if (o->peer2 >= 0 && fx_rnd(g, 2))
            o->peer2 = (int32_t)fx_rnd(g, (uint32_t)p->nranks);
        else
            o->peer = (int32_t)fx_rnd(g, (uint32_t)p->nranks);
        return "peer";
    case 4:
        if (!(ref = pick_ref(o, g)))
            return NULL;
        if (fx_rnd(g, 2))
            ref->off = ref->off + 1 + fx_rnd(g, 2);
        else if (ref->off)
            ref->off -= 1 + fx_rnd(g, ref->off);
        else
            ref->off = fx_rnd(g, 4);
        return "offset";
    default:
        if (!(ref = pick_ref(o, g)))
            return NULL;
        if (fx_rnd(g, 2) || ref->cnt == 1)
            ref->cnt++;
        else
            ref->cnt--;
        return "count";
    }
}

typedef struct {
    int mutants, rejected, accepted, same;
    int reasons[8];
} tally_t;

static const char *const reason_names[8] = {"wrong result",   "deadlock",       "unordered access",
                                            "bounds",         "count mismatch", "unmatched",
                                            "bad field/peer", "other"};

static int reason_of(const char *msg)
{
    if (strstr(msg, "expects") || strstr(msg, "twice") || strstr(msg, "combines") ||
        strstr(msg, "holds nothing"))
        return 0;
    if (strstr(msg, "deadlock"))
        return 1;
    if (strstr(msg, "nothing orders") || strstr(msg, "known to have started") ||
        strstr(msg, "may finish"))
        return 2;
    if (strstr(msg, "out of bounds") || strstr(msg, "empty chunk range") ||
        strstr(msg, "may not exist") || strstr(msg, "input buffer") || strstr(msg, "overlap"))
        return 3;
    if ((strstr(msg, "receives") && strstr(msg, "sends")) || strstr(msg, "chunks but dst"))
        return 4;
    if (strstr(msg, "never received"))
        return 5;
    if (strstr(msg, "peer") || strstr(msg, "is set but") || strstr(msg, "depends"))
        return 6;
    return 7;
}

static void mutate_many(const acc_plan_t *base, int count, uint64_t seed, tally_t *t)
{
    fx_rng_t g = {seed};
    uint32_t chunks = base->in_chunks > base->out_chunks ? base->in_chunks : base->out_chunks;
    int k;

    CHECK_OK(acc_plan_verify(base));
    CHECK(!run_and_check(base, 3 * chunks + 1, 0, (char[256]){0}, 256));
    for (k = 0; k < count; k++) {
        acc_plan_t *m = NULL;
        const char *kind;
        char why[512] = "";
        FX(acc_plan_clone(base, &m));
        while (!(kind = mutate(m, &g)))
            ;
        t->mutants++;
        if (acc_plan_verify(m) != ACC_OK) {
            t->rejected++;
            t->reasons[reason_of(acc_error_message())]++;
            CHECK_MSG(strstr(acc_error_message(), "rank ") != NULL,
                      "%s mutant %d of %s: rejection names no rank: %s", kind, k, base->algo,
                      acc_error_message());
            acc_plan_destroy(m);
            continue;
        }
        t->accepted++;
        if (acc_plan_equal(m, base))
            t->same++;
        /* Chunks of 3 and 4 elements: every chunk is non-empty and sizes do not divide. */
        CHECK_MSG(!run_and_check(m, 3 * (uint64_t)chunks + 1, 0, why, sizeof(why)),
                  "%s mutant %d of %s %s passed the verifier but is wrong: %s", kind, k,
                  acc_coll_name(base->coll), base->algo, why);
        if (m->inplace)
            CHECK_MSG(!run_and_check(m, 3 * (uint64_t)chunks + 1, 1, why, sizeof(why)),
                      "%s mutant %d of %s %s passed the verifier but is wrong: %s", kind, k,
                      acc_coll_name(base->coll), base->algo, why);
        acc_plan_destroy(m);
    }
}

static void report(const char *what, const tally_t *t)
{
    int i;
    printf("%s: %d mutants, %d rejected, %d accepted and correct (%d identical to the original)\n",
           what, t->mutants, t->rejected, t->accepted, t->same);
    for (i = 0; i < 8; i++)
        if (t->reasons[i])
            printf("    rejected for %-18s %d\n", reason_names[i], t->reasons[i]);
}

ACC_TEST(message_passing_mutants)
{
    acc_plan_t *base[8];
    tally_t t;
    int i;
    memset(&t, 0, sizeof(t));
    base[0] = fx_ring_allreduce(4, 2);
    base[1] = fx_ring_allreduce(5, 2);
    base[2] = fx_ring_allgather(4, 2);
    base[3] = fx_rd_allgather(8);
    base[4] = fx_tree_reduce(6, 2);
    base[5] = fx_chain_broadcast(5, 1, 3);
    base[6] = fx_ring_reduce_scatter(4);
    base[7] = fx_alltoall(4);
    for (i = 0; i < 8; i++) {
        mutate_many(base[i], 150, 0x9e3779b97f4a7c15ull + (uint64_t)i, &t);
        acc_plan_destroy(base[i]);
    }
    report("message passing", &t);
    CHECK(t.mutants >= 1000);
    CHECK(t.rejected > t.mutants / 2);
}

ACC_TEST(peer_memory_and_hierarchical_mutants)
{
    acc_plan_t *base[2];
    tally_t t;
    int i;
    memset(&t, 0, sizeof(t));
    base[0] = fx_oneshot_allreduce(4, 2);
    base[1] = fx_hier_allreduce(2, 3);
    for (i = 0; i < 2; i++) {
        mutate_many(base[i], 300, 0xc2b2ae3d27d4eb4full + (uint64_t)i, &t);
        acc_plan_destroy(base[i]);
    }
    report("peer memory and hierarchical", &t);
    CHECK(t.mutants >= 600);
}

/* Plans from the generators in compiler/algos (every one that applies), on a few synthetic
 * machines: the generators are written apart from the verifier, so their plans exercise it with
 * shapes the fixtures above do not have (several lanes, dependencies, peer-memory steps). */
ACC_TEST(generated_plan_mutants)
{
    static const char *const machines[] = {"nodes=1 gpus=4 nvlink=18",
                                           "nodes=2 gpus=2 nvlink=18 nic=2x400",
                                           "nodes=1 gpus=3 nvlink=18"};
    const acc_algo_t *const *list;
    size_t nalgos, i, m;
    tally_t t;
    int nplans = 0;

    memset(&t, 0, sizeof(t));
    list = acc_algo_list(&nalgos);
    for (m = 0; m < sizeof(machines) / sizeof(machines[0]); m++) {
        acc_topo_t *topo = NULL;
        CHECK_OK(acc_topo_load_synthetic(machines[m], &topo));
        for (i = 0; i < nalgos; i++) {
            acc_algo_args_t args;
            acc_plan_t *p = NULL;
            memset(&args, 0, sizeof(args));
            if (acc_algo_generate(list[i], topo, &args, &p) != ACC_OK)
                continue;
            nplans++;
            mutate_many(p, 40, 0x2545f4914f6cdd1dull + i * 131 + m, &t);
            acc_plan_destroy(p);
        }
        acc_topo_destroy(topo);
    }
    report("generated plans", &t);
    printf("    from %d generated plans\n", nplans);
    CHECK(nplans > 10);
    CHECK(t.mutants >= 400);
}
