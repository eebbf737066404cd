/*
 * The algorithm generators: every applicable algorithm x collective on the shipped platforms and
 * on synthetic machines of 2 to 1024 ranks generates a plan that verifies, the same plan twice,
 * and (up to 64 ranks) the right numbers on the host executor; refusals say why; ring search
 * keeps to NVLink and to rails.
 */
#include "acc_compiler.h"
#include "acc_runtime.h"
#include "acc_test.h"
#include "algos/algo_util.h"

#include <stdlib.h>
#include <string.h>

static acc_topo_t *load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load(src, &t));
    return t;
}

/* ---- the host-executor check ------------------------------------------------------------- */

/* Inputs whose fp32 sums are exact (small integers), and spread-out int32 values for max. */
static void fill(acc_dtype_t dt, void *buf, uint64_t n, int rank)
{
    uint64_t e;
    for (e = 0; e < n; e++) {
        uint32_t h = (uint32_t)(rank * 2654435761u) ^ (uint32_t)(e * 40503u + 17u);
        if (dt == ACC_DT_F32)
            ((float *)buf)[e] = (float)((int)((rank * 131 + e * 7) % 17) - 8);
        else
            ((int32_t *)buf)[e] = (int32_t)(h % 200001u) - 100000;
    }
}

static double get(acc_dtype_t dt, const void *buf, uint64_t i)
{
    return dt == ACC_DT_F32 ? ((const float *)buf)[i] : ((const int32_t *)buf)[i];
}

static double combine(acc_redop_t op, double a, double b)
{
    return op == ACC_RED_SUM ? a + b : (a > b ? a : b);
}

/* Run the plan once and compare every output element with the sequential answer. */
static void run_once(const acc_plan_t *p, acc_dtype_t dt, acc_redop_t op, uint64_t count,
                     int inplace, const char *what)
{
    int n = p->nranks, r, s, root = p->root < 0 ? 0 : p->root;
    uint64_t ie = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    uint64_t oe = acc_plan_buf_elems(p, ACC_BUF_OUT, count), big = ie > oe ? ie : oe, e;
    size_t sz = acc_dtype_size(dt);
    void **in = calloc((size_t)n, sizeof(void *)), **out = calloc((size_t)n, sizeof(void *));
    void **ref = calloc((size_t)n, sizeof(void *));

    CHECK(in && out && ref);
    for (r = 0; r < n; r++) {
        in[r] = calloc(big + 1, sz);
        out[r] = calloc(big + 1, sz);
        ref[r] = calloc(big + 1, sz);
        CHECK(in[r] && out[r] && ref[r]);
        fill(dt, ref[r], ie, r); /* the input, kept for the reference */
        if (!inplace) {
            memcpy(in[r], ref[r], ie * sz);
        } else if (p->coll == ACC_COLL_ALLGATHER) {
            memcpy((char *)out[r] + (size_t)r * count * sz, ref[r], ie * sz);
        } else {
            memcpy(out[r], ref[r], ie * sz); /* allreduce, reduce_scatter, broadcast, reduce */
        }
    }
    CHECK_MSG(acc_host_exec(p, dt, op, count, in, out, inplace) == ACC_OK,
              "%s: host execution failed: %s", what, acc_error_message());
    for (r = 0; r < n; r++) {
        /* Where rank r's result lies, and its element e. */
        const char *res = (const char *)out[r];
        uint64_t len = oe;
        if (p->coll == ACC_COLL_REDUCE && r != root)
            continue;
        if (inplace && p->coll == ACC_COLL_REDUCE_SCATTER)
            res += (size_t)r * count * sz;
        for (e = 0; e < len; e++) {
            double want = 0;
            switch (p->coll) {
            case ACC_COLL_ALLGATHER:
                want = get(dt, ref[e / count], e % count);
                break;
            case ACC_COLL_BROADCAST:
                want = get(dt, ref[root], e);
                break;
            default: {
                uint64_t at = p->coll == ACC_COLL_REDUCE_SCATTER ? (uint64_t)r * count + e : e;
                want = get(dt, ref[0], at);
                for (s = 1; s < n; s++)
                    want = combine(op, want, get(dt, ref[s], at));
            }
            }
            if (get(dt, res, e) != want)
                acc_test_fail(__FILE__, __LINE__, "%s: rank %d element %llu is %g, expected %g",
                              what, r, (unsigned long long)e, get(dt, res, e), want);
        }
    }
    for (r = 0; r < n; r++) {
        free(in[r]);
        free(out[r]);
        free(ref[r]);
    }
    free(in);
    free(out);
    free(ref);
}

static void run_all(const acc_plan_t *p, const char *label)
{
    static const uint64_t counts[] = {1, 13, 1000};
    char what[256];
    size_t c;
    int mode;
    for (c = 0; c < 3; c++) {
        for (mode = 0; mode <= p->inplace; mode++) {
            snprintf(what, sizeof(what), "%s float sum count %llu%s", label,
                     (unsigned long long)counts[c], mode ? " in place" : "");
            run_once(p, ACC_DT_F32, ACC_RED_SUM, counts[c], mode, what);
            if (acc_coll_reduces(p->coll) || c == 1) {
                snprintf(what, sizeof(what), "%s int32 max count %llu%s", label,
                         (unsigned long long)counts[c], mode ? " in place" : "");
                run_once(p, ACC_DT_I32, ACC_RED_MAX, counts[c], mode, what);
            }
        }
    }
}

/* ---- generation over a topology ---------------------------------------------------------- */

/* Generate (verify), generate again (same plan), and run on the host when small enough; returns
 * 1 when the algorithm applied. */
static int check_one(const acc_algo_t *a, const acc_topo_t *t, const acc_algo_args_t *args,
                     const char *topo_name, int exec)
{
    acc_plan_t *p = NULL, *q = NULL;
    char label[192];
    acc_status_t st = a->supports(t, args);

    snprintf(label, sizeof(label), "%s %s on %s (lanes=%d chunks=%d root=%d inner=%s outer=%s)",
             acc_coll_name(a->coll), a->name, topo_name, args->lanes, args->chunks, args->root,
             args->inner ? args->inner : "-", args->outer ? args->outer : "-");
    if (st != ACC_OK) {
        /* A refusal is "unsupported" and says why. */
        CHECK_MSG(st == ACC_ERR_UNSUPPORTED && acc_error_message()[0], "%s: refused with %s '%s'",
                  label, acc_status_name(st), acc_error_message());
        return 0;
    }
    CHECK_MSG(acc_algo_generate(a, t, args, &p) == ACC_OK, "%s: %s", label, acc_error_message());
    CHECK_MSG(acc_algo_generate(a, t, args, &q) == ACC_OK, "%s: %s", label, acc_error_message());
    CHECK_MSG(acc_plan_equal(p, q), "%s: two generations differ", label);
    CHECK_STR(p->algo, a->name);
    CHECK(p->params[0] != '\0');
    CHECK_INT(p->coll, a->coll);
    CHECK_INT(p->nranks, acc_topo_ranks(t));
    CHECK_INT(p->proto, args->proto);
    if (exec && p->nranks <= 64)
        run_all(p, label);
    acc_plan_destroy(p);
    acc_plan_destroy(q);
    return 1;
}

/* Every algorithm with default arguments (and a second root for rooted collectives); returns
 * how many applied. */
static int check_topo(const acc_topo_t *t, const char *name, int exec)
{
    size_t n, i;
    const acc_algo_t *const *list = acc_algo_list(&n);
    int applied = 0;
    for (i = 0; i < n; i++) {
        acc_algo_args_t args;
        memset(&args, 0, sizeof(args));
        applied += check_one(list[i], t, &args, name, exec);
        if (list[i]->coll == ACC_COLL_BROADCAST || list[i]->coll == ACC_COLL_REDUCE) {
            args.root = acc_topo_ranks(t) - 1;
            check_one(list[i], t, &args, name, exec);
        }
    }
    return applied;
}

static void check_synthetic(const char *desc, int min_applied)
{
    acc_topo_t *t = load(desc);
    int applied = check_topo(t, desc, 1);
    CHECK_MSG(applied >= min_applied, "%s: only %d algorithms applied, expected %d", desc, applied,
              min_applied);
    acc_topo_destroy(t);
}

/* 20 generators: ring/tree/rhd/rd allreduce, ring/rd allgather, ring/rh reduce_scatter and the
 * four rooted ones apply everywhere (12); peer memory (5) needs one NVLink node; hier (3) and
 * hier_pipe two nodes or more. */
ACC_TEST(one_gpu)
{
    check_synthetic("gpus=1", 16);
}

ACC_TEST(two_gpus_pcie)
{
    check_synthetic("gpus=2", 12);
}

ACC_TEST(three_gpus_nvswitch)
{
    check_synthetic("gpus=3 nvlink=18", 16);
}

ACC_TEST(four_gpus_nvlink_mesh)
{
    check_synthetic("gpus=4 nvlink=6 nvswitch=no", 16);
}

ACC_TEST(five_gpus_nvswitch)
{
    check_synthetic("gpus=5 nvlink=18", 16);
}

ACC_TEST(seven_gpus_pcie)
{
    check_synthetic("gpus=7", 12);
}

ACC_TEST(eight_gpus_nvswitch)
{
    check_synthetic("gpus=8 nvlink=18", 16);
}

ACC_TEST(four_nodes_of_two)
{
    check_synthetic("nodes=4 gpus=2 nic=2x200", 15);
}

ACC_TEST(five_nodes_of_one)
{
    check_synthetic("nodes=5 gpus=1 nic=1x100", 15);
}

ACC_TEST(three_nodes_of_four_shared_nic)
{
    check_synthetic("nodes=3 gpus=4 nvlink=12 nic=1x200", 15);
}

ACC_TEST(two_nodes_of_eight)
{
    check_synthetic("nodes=2 gpus=8 nvlink=18 nic=8x400", 15);
}

ACC_TEST(eight_nodes_of_eight)
{
    check_synthetic("nodes=8 gpus=8 nvlink=18 nic=8x400", 15);
}

ACC_TEST(shipped_platforms)
{
    char **names = NULL;
    size_t n = 0, i;
    CHECK_OK(acc_topo_platform_list(&names, &n));
    CHECK_MSG(n >= 1, "no shipped platforms in %s", acc_topo_platform_dir());
    for (i = 0; i < n; i++) {
        acc_topo_t *t = NULL;
        CHECK_MSG(acc_topo_load_platform(names[i], &t) == ACC_OK, "platform %s: %s", names[i],
                  acc_error_message());
        CHECK_MSG(check_topo(t, names[i], 1) >= 11, "platform %s: too few algorithms apply",
                  names[i]);
        acc_topo_destroy(t);
    }
    acc_strv_free(names, n);
}

/* ---- parameters ------------------------------------------------------------------------- */

/* Three lanes and two rounds (odd lane counts, several rounds per lane, signal counters used
 * twice) for every algorithm; every inner/outer pair for the hierarchical ones. */
static void check_params(const char *desc)
{
    static const char *const inner[] = {"ring", "direct"};
    static const char *const outer[] = {"ring", "rhd", "rh", "rd", "tree"};
    acc_topo_t *t = load(desc);
    size_t n, i, a, b;
    const acc_algo_t *const *list = acc_algo_list(&n);

    for (i = 0; i < n; i++) {
        acc_algo_args_t args;
        memset(&args, 0, sizeof(args));
        args.lanes = 3;
        args.chunks = 2;
        args.proto = ACC_PROTO_LL128;
        if (list[i]->coll == ACC_COLL_BROADCAST || list[i]->coll == ACC_COLL_REDUCE)
            args.root = 1 % acc_topo_ranks(t);
        if (strncmp(list[i]->name, "hier", 4) != 0) {
            check_one(list[i], t, &args, desc, 1);
            continue;
        }
        for (a = 0; a < 2; a++) {
            for (b = 0; b < 5; b++) {
                args.inner = inner[a];
                args.outer = outer[b];
                if (list[i]->supports(t, &args) == ACC_ERR_INVALID)
                    continue; /* an outer name this collective does not have */
                check_one(list[i], t, &args, desc, 1);
            }
        }
    }
    acc_topo_destroy(t);
}

ACC_TEST(params_one_node)
{
    check_params("gpus=5 nvlink=18");
}

ACC_TEST(params_odd_nodes)
{
    check_params("nodes=3 gpus=4 nvlink=12 nic=1x200");
}

ACC_TEST(params_nodes_not_power_of_two)
{
    check_params("nodes=6 gpus=2 nvlink=12 nvswitch=no nic=2x200");
}

ACC_TEST(params_are_recorded)
{
    acc_topo_t *t = load("nodes=2 gpus=4 nvlink=18 nic=4x400");
    acc_algo_args_t args;
    acc_plan_t *p = NULL;

    memset(&args, 0, sizeof(args));
    args.lanes = 4;
    args.chunks = 3;
    args.inner = "ring";
    args.outer = "rhd";
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "hier"), t, &args, &p));
    CHECK_STR(p->params, "lanes=4 chunks=3 inner=ring outer=rhd");
    CHECK_INT(p->nlanes, 4);
    CHECK_INT(p->inplace, 1);
    acc_plan_destroy(p);
    /* Defaults: direct inside NVSwitch nodes, ring between them. */
    memset(&args, 0, sizeof(args));
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "hier"), t, &args, &p));
    CHECK_STR(p->params, "lanes=2 chunks=1 inner=direct outer=ring");
    acc_plan_destroy(p);
    args.root = 5;
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_BROADCAST, "tree"), t, &args, &p));
    CHECK_INT(p->root, 5);
    CHECK_STR(p->params, "lanes=1 chunks=4 root=5");
    acc_plan_destroy(p);
    memset(&args, 0, sizeof(args));
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLGATHER, "ring"), t, &args, &p));
    CHECK(strncmp(p->params, "lanes=2 chunks=1 ring=", 22) == 0);
    CHECK_INT(p->root, -1);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(invalid_arguments_are_errors)
{
    acc_topo_t *t = load("gpus=4 nvlink=18");
    const acc_algo_t *ring = acc_algo_find(ACC_COLL_ALLREDUCE, "ring");
    const acc_algo_t *bcast = acc_algo_find(ACC_COLL_BROADCAST, "ring");
    acc_algo_args_t args;
    acc_plan_t *p = NULL;

    memset(&args, 0, sizeof(args));
    args.lanes = -1;
    CHECK_ERR(ring->supports(t, &args), ACC_ERR_RANGE);
    CHECK_MSG_HAS("lanes=-1");
    args.lanes = 65;
    CHECK_ERR(acc_algo_generate(ring, t, &args, &p), ACC_ERR_RANGE);
    CHECK(p == NULL);
    args.lanes = 0;
    args.chunks = 5000;
    CHECK_ERR(ring->build(t, &args, &p), ACC_ERR_RANGE);
    CHECK_MSG_HAS("chunks=5000");
    args.chunks = 0;
    args.root = 2;
    CHECK_ERR(ring->supports(t, &args), ACC_ERR_INVALID);
    CHECK_MSG_HAS("takes no root");
    args.root = 4;
    CHECK_ERR(bcast->supports(t, &args), ACC_ERR_RANGE);
    CHECK_MSG_HAS("root=4");
    args.root = 0;
    args.inner = "ring";
    CHECK_ERR(ring->supports(t, &args), ACC_ERR_INVALID);
    CHECK_MSG_HAS("only hier");
    acc_topo_destroy(t);
}

/* ---- refusals and the registry ------------------------------------------------------------ */

ACC_TEST(refusals_say_why)
{
    acc_topo_t *pcie = load("gpus=8"), *multi = load("nodes=2 gpus=8 nvlink=18 nic=8x400");
    acc_topo_t *one = load("gpus=8 nvlink=18"), *pcie_nodes = load("nodes=2 gpus=4 nic=4x100");
    acc_algo_args_t args;
    acc_plan_t *p = NULL;

    memset(&args, 0, sizeof(args));
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLREDUCE, "oneshot")->supports(pcie, &args),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("oneshot needs every GPU pair");
    CHECK_MSG_HAS("GPU0-GPU1 is");
    CHECK_ERR(acc_algo_generate(acc_algo_find(ACC_COLL_ALLGATHER, "direct"), multi, &args, &p),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("within one node");
    CHECK_MSG_HAS("2 nodes");
    /* build() refuses as supports() does, so that no unverifiable plan is made by mistake. */
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLREDUCE, "twoshot")->build(multi, &args, &p),
              ACC_ERR_UNSUPPORTED);
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLREDUCE, "hier")->supports(one, &args), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("hier needs at least 2 nodes");
    args.inner = "direct";
    CHECK_ERR(acc_algo_find(ACC_COLL_REDUCE_SCATTER, "hier")->supports(pcie_nodes, &args),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("hier inner=direct needs every GPU pair of a node");
    CHECK_MSG_HAS("GPU0-GPU1 is");
    args.inner = "ring";
    args.outer = "tree";
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLGATHER, "hier")->supports(multi, &args), ACC_ERR_INVALID);
    CHECK_MSG_HAS("outer='tree' is not one of ring, rd");
    args.outer = "ring";
    args.inner = "mesh";
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLREDUCE, "hier")->supports(multi, &args), ACC_ERR_INVALID);
    CHECK_MSG_HAS("inner='mesh' is not one of ring, direct");
    acc_topo_destroy(pcie);
    acc_topo_destroy(multi);
    acc_topo_destroy(one);
    acc_topo_destroy(pcie_nodes);
}

ACC_TEST(registry_names_are_unique_and_stable)
{
    size_t n, i, j;
    const acc_algo_t *const *list = acc_algo_list(&n);
    int per[ACC_COLL_COUNT] = {0};

    CHECK_INT(n, 20);
    CHECK_STR(list[0]->name, "ring");
    CHECK_INT(list[0]->coll, ACC_COLL_ALLREDUCE);
    for (i = 0; i < n; i++) {
        CHECK(list[i]->name && list[i]->summary && list[i]->summary[0]);
        CHECK(list[i]->supports && list[i]->build);
        CHECK(acc_algo_find(list[i]->coll, list[i]->name) == list[i]);
        per[list[i]->coll]++;
        for (j = 0; j < i; j++)
            CHECK_MSG(list[j]->coll != list[i]->coll || strcmp(list[j]->name, list[i]->name),
                      "%s %s registered twice", acc_coll_name(list[i]->coll), list[i]->name);
        /* Sorted by collective, so that --list-algos groups them. */
        CHECK(i == 0 || list[i - 1]->coll <= list[i]->coll);
    }
    CHECK_INT(per[ACC_COLL_ALLREDUCE], 8);
    CHECK_INT(per[ACC_COLL_ALLGATHER], 4);
    CHECK_INT(per[ACC_COLL_REDUCE_SCATTER], 4);
    CHECK_INT(per[ACC_COLL_BROADCAST], 2);
    CHECK_INT(per[ACC_COLL_REDUCE], 2);
    CHECK(acc_algo_find(ACC_COLL_ALLGATHER, "rhd") == NULL);
    CHECK_MSG_HAS("no allgather algorithm named 'rhd' (known: ring, direct, rd, hier)");
    CHECK(acc_algo_find(ACC_COLL_ALLTOALL, "ring") == NULL);
    CHECK_MSG_HAS("known: none");
}

/* Every algorithm that applies, of one collective or of all, in registry order: what
 * acc-compile --emit-cuda builds without --algo. */
ACC_TEST(generate_all_takes_every_applicable_algorithm)
{
    acc_topo_t *t = load("dgx-h100");
    size_t n, nall, i, j, k = 0, want = 0;
    const acc_algo_t *const *list = acc_algo_list(&n);
    acc_plan_t **plans = NULL;

    CHECK_OK(acc_algo_generate_all(t, ACC_COLL_COUNT, &plans, &nall));
    for (i = 0; i < n; i++) {
        if (list[i]->supports(t, NULL) != ACC_OK)
            continue;
        CHECK_MSG(k < nall, "fewer plans than applicable algorithms");
        CHECK_INT(plans[k]->coll, list[i]->coll);
        CHECK_STR(plans[k]->algo, list[i]->name);
        k++;
    }
    CHECK_INT(nall, k);
    for (j = 0; j < nall; j++)
        acc_plan_destroy(plans[j]);
    acc_mem_free(plans);
    CHECK_OK(acc_algo_generate_all(t, ACC_COLL_BROADCAST, &plans, &nall));
    for (i = 0; i < n; i++)
        want += list[i]->coll == ACC_COLL_BROADCAST && list[i]->supports(t, NULL) == ACC_OK;
    CHECK_INT(nall, want);
    for (j = 0; j < nall; j++) {
        CHECK_INT(plans[j]->coll, ACC_COLL_BROADCAST);
        acc_plan_destroy(plans[j]);
    }
    acc_mem_free(plans);
    CHECK_ERR(acc_algo_generate_all(t, ACC_COLL_ALLTOALL, &plans, &nall), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no algorithm applies to ");
    CHECK_MSG_HAS(" for alltoall");
    CHECK(plans == NULL && nall == 0);
    acc_topo_destroy(t);
}

/* ---- ring search ------------------------------------------------------------------------- */

static acc_path_class_t cls(const acc_topo_t *t, int a, int b)
{
    acc_topo_path_t p;
    CHECK_OK(acc_topo_path(t, a, b, &p));
    return p.cls;
}

/* DGX-1 V100 hybrid cube mesh: not every GPU pair has NVLink, yet the rings use nothing else;
 * across its 16 nodes every inter-node hop joins GPUs of the same local index (one rail). */
ACC_TEST(ring_keeps_to_nvlink_on_hybrid_cube_mesh)
{
    acc_topo_t *t = NULL;
    int g, n, lane, i, *order, nonvl = 0, a, b;

    CHECK_OK(acc_topo_load_platform("dawnbench-v100-16node", &t));
    g = acc_topo_gpus_per_node(t);
    n = acc_topo_ranks(t);
    CHECK_INT(g, 8);
    for (a = 0; a < g; a++)
        for (b = a + 1; b < g; b++)
            nonvl += acc_topo_nvlinks_between(t, a, b) == 0;
    CHECK_MSG(nonvl > 0, "the hybrid cube mesh should leave some GPU pairs without NVLink");
    order = calloc((size_t)n, sizeof(int));
    CHECK(order);
    for (lane = 0; lane < 4; lane++) {
        CHECK_OK(algo_ring_order(t, lane, order));
        for (i = 0; i < n; i++) {
            int x = order[i], y = order[(i + 1) % n];
            if (x / g == y / g)
                CHECK_MSG(acc_topo_nvlinks_between(t, x % g, y % g) > 0,
                          "lane %d hop %d-%d has no direct NVLink", lane, x, y);
            else
                CHECK_MSG(x % g == y % g, "lane %d hop %d-%d leaves the rail", lane, x, y);
        }
    }
    /* Six links per GPU, some doubled: the ring takes doubled links where it can, at least
     * four of its eight hops (0-3-2-1-5-6-7-4 and its like). */
    CHECK_OK(algo_node_cycle(t, order));
    for (i = 0, a = 0; i < g; i++) {
        b = acc_topo_nvlinks_between(t, order[i], order[(i + 1) % g]);
        CHECK(b > 0);
        a += b == 2;
    }
    CHECK_MSG(a >= 4, "only %d doubled links in the ring", a);
    free(order);
    acc_topo_destroy(t);
}

/* One node of the DGX-1 hybrid cube mesh: the dawnbench platform without its network. */
static acc_topo_t *dgx1_node(void)
{
    char *text = NULL, *net, *end;
    size_t len;
    acc_topo_t *t = NULL;

    CHECK_OK(
        acc_read_file(acc_test_src("schedules/platforms/dawnbench-v100-16node.yaml"), &text, &len));
    net = strstr(text, "\nnetwork:");
    CHECK(net != NULL);
    for (end = net + 1; *end && !(end[0] == '\n' && end[1] && end[1] != ' ' && end[1] != '#');
         end++)
        ;
    memmove(net, end, strlen(end) + 1);
    CHECK_OK(acc_topo_load_buffer(text, strlen(text), "dgx1-node", &t));
    CHECK_INT(acc_topo_nodes(t), 1);
    acc_mem_free(text);
    return t;
}

/* Within one DGX-1: rings on direct NVLinks, and every algorithm verified and run; peer memory
 * is refused, naming a pair with no NVLink of its own. */
ACC_TEST(dgx1_node_rings_and_refusals)
{
    acc_topo_t *t = dgx1_node();
    acc_algo_args_t args;
    int order[8], lane, i;

    for (lane = 0; lane < 2; lane++) {
        CHECK_OK(algo_ring_order(t, lane, order));
        for (i = 0; i < 8; i++)
            CHECK(acc_topo_nvlinks_between(t, order[i], order[(i + 1) % 8]) > 0);
    }
    memset(&args, 0, sizeof(args));
    CHECK_ERR(acc_algo_find(ACC_COLL_ALLREDUCE, "twoshot")->supports(t, &args),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("GPU0-GPU5 is NVB");
    CHECK(check_topo(t, "dgx1-node", 1) >= 11);
    acc_topo_destroy(t);
}

/* Eight NICs per node: lane pairs enter and leave nodes through different NICs. */
ACC_TEST(ring_lane_pairs_use_different_rails)
{
    acc_topo_t *t = load("nodes=2 gpus=8 nvlink=18 nic=8x400");
    int order[16], lane, i, used[4][2];

    for (lane = 0; lane < 8; lane += 2) {
        int k = 0;
        CHECK_OK(algo_ring_order(t, lane, order));
        for (i = 0; i < 16; i++) {
            int x = order[i], y = order[(i + 1) % 16];
            if (x / 8 != y / 8) {
                CHECK_INT(x % 8, y % 8);
                CHECK(k < 2);
                used[lane / 2][k++] = acc_topo_gpu_nic(t, x % 8);
            }
        }
        CHECK_INT(k, 2);
        CHECK(used[lane / 2][0] != used[lane / 2][1]);
    }
    for (lane = 0; lane < 4; lane++)
        for (i = 0; i < lane; i++)
            CHECK(used[lane][0] != used[i][0] && used[lane][0] != used[i][1]);
    /* Odd lanes run the ring of the lane before backwards. */
    {
        int fwd[16], back[16];
        CHECK_OK(algo_ring_order(t, 4, fwd));
        CHECK_OK(algo_ring_order(t, 5, back));
        for (i = 0; i < 16; i++)
            CHECK_INT(back[i], fwd[15 - i]);
    }
    acc_topo_destroy(t);
}

/* Two sockets of PCIe GPUs: the ring crosses between sockets only twice. */
ACC_TEST(ring_crosses_sockets_twice)
{
    acc_topo_t *t = load("gpus=8 numa=2");
    int order[8], i, sys = 0;
    CHECK_OK(algo_ring_order(t, 0, order));
    for (i = 0; i < 8; i++)
        sys += cls(t, order[i], order[(i + 1) % 8]) == ACC_PATH_SYS;
    CHECK_INT(sys, 2);
    acc_topo_destroy(t);
}

/* Recursive doubling takes the fewest steps: a rank of the largest power of two P <= n sends
 * its whole partial sum log2 P times (and once more to the rank folded into it); a folded rank
 * sends once.  Every message is the whole buffer. */
ACC_TEST(rd_allreduce_sends_log2_whole_messages)
{
    for (int n = 2; n <= 9; n++) {
        char desc[64];
        acc_topo_t *t;
        acc_plan_t *p = NULL;
        acc_algo_args_t args;
        int P = 1, steps = 0, r;
        while (P * 2 <= n) {
            P *= 2;
            steps++;
        }
        r = n - P;
        snprintf(desc, sizeof(desc), "nodes=%d gpus=1 nic=1x100", n);
        t = load(desc);
        memset(&args, 0, sizeof(args));
        CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "rd"), t, &args, &p));
        for (int q = 0; q < n; q++) {
            const acc_lane_prog_t *g = acc_plan_prog(p, q, 0);
            int sends = 0, want = q < 2 * r ? (q % 2 ? steps + 1 : 1) : steps;
            for (uint32_t k = 0; k < g->nops; k++)
                if (g->ops[k].code == ACC_OP_SEND) {
                    sends++;
                    CHECK_INT(g->ops[k].src.cnt, p->in_chunks);
                }
            CHECK_MSG(sends == want, "%d ranks: rank %d sends %d messages, expected %d", n, q,
                      sends, want);
        }
        acc_plan_destroy(p);
        acc_topo_destroy(t);
    }
}

/* ---- scale ----------------------------------------------------------------------------------- */

/* The scale target: 128 nodes x 8 GPUs, ring and hierarchical allreduce. */
ACC_TEST(thousand_ranks_generate_and_verify)
{
    acc_topo_t *t = load("nodes=128 gpus=8 nvlink=18 nic=8x400");
    acc_algo_args_t args;
    acc_plan_t *p = NULL;
    const char *names[] = {"hier", "ring"};
    int i;

    memset(&args, 0, sizeof(args));
    CHECK_INT(acc_topo_ranks(t), 1024);
    for (i = 0; i < 2; i++) {
        CHECK_MSG(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, names[i]), t, &args, &p) ==
                      ACC_OK,
                  "%s: %s", names[i], acc_error_message());
        CHECK_INT(p->nranks, 1024);
        acc_plan_destroy(p);
    }
    acc_topo_destroy(t);
}
