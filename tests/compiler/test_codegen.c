/*
 * Code generation: what the generated source says and shares (classes, programs, one source
 * for types of one size), refusals of broken plans, the traffic count, and - without a GPU -
 * the generated modules compiled as host C++ and run thread by thread (kernel_emu.h) on every
 * algorithm of a platform, giving the host executor's results bit for bit, for every data
 * type and reduction, out of place and in place, on one and on three blocks per lane.
 */
#include "acc_compiler.h"
#include "host_plans.h"
#include "host_reduce.h"
#include "kernel_emu.h"

#include <stdlib.h>
#include <string.h>

static acc_plan_t *gen(const char *topo, acc_coll_t coll, const char *name)
{
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    const acc_algo_t *a = acc_algo_find(coll, name);
    CHECK_MSG(a != NULL, "%s", acc_error_message());
    CHECK_OK(acc_topo_load(topo, &t));
    CHECK_OK(acc_algo_generate(a, t, NULL, &p));
    acc_topo_destroy(t);
    return p;
}

static acc_kernel_t *kernel(const acc_plan_t *p, acc_dtype_t dt, acc_redop_t op)
{
    acc_kernel_t *k = NULL;
    CHECK_OK(acc_kernel_generate(p, dt, op, &k));
    return k;
}

static int has(const acc_kernel_t *k, const char *text)
{
    return strstr(acc_kernel_source(k, NULL), text) != NULL;
}

ACC_TEST(source_reads_well)
{
    acc_plan_t *p = gen("dgx-h100", ACC_COLL_ALLREDUCE, "ring");
    acc_kernel_t *k = kernel(p, ACC_DT_F16, ACC_RED_SUM);
    size_t len = 0;

    CHECK_STR(acc_kernel_name(k), "allreduce_ring_n8_half_sum");
    CHECK(has(k, "acc codegen 4: allreduce_ring_n8_half_sum"));
    CHECK(has(k, "Plan: allreduce ring of 8 ranks (lanes=2 chunks=1"));
    CHECK(has(k, "Data type half, reduction sum."));
    /* Comments name the plan's operations; runs of one shape become loops. */
    CHECK(has(k, "/* op 0: rank 0 lane 0: send in[7] to 1 */"));
    CHECK(has(k, "/* ops 1-6: 6 x rrs; rank 0 lane 0's first: send in[6] (+) message from 7"));
    CHECK(has(k, "for (u32 j = 0; j < 6u; ++j)"));
    CHECK(has(k, "__global__ void __launch_bounds__(ACC_THREADS, 2)\n    acc_kernel("));
    /* fp16 is summed in fp32: the accumulator is float. */
    CHECK(has(k, "typedef float acc_acc_t;"));
    /* NVRTC has no C library: nothing is included. */
    CHECK(!has(k, "#include"));
    acc_kernel_source(k, &len);
    CHECK(len > 10000 && len < 60000);
    /* Every rank and both lanes of a ring run one program. */
    CHECK_INT(acc_kernel_programs(k), 1);
    CHECK_INT(acc_kernel_classes(k), 1);
    CHECK_INT(acc_kernel_class_of(k, 7), 0);
    CHECK_INT(acc_kernel_class_of(k, 8), -1);
    acc_kernel_destroy(k);
    acc_plan_destroy(p);
}

/* A module compiles in two parts: the device library, which holds the data mover and is the
 * same text for every plan of a type (so that it is compiled once), and the plan's part. */
ACC_TEST(library_is_shared_by_the_plans_of_a_type)
{
    acc_plan_t *ring = gen("dgx-h100", ACC_COLL_ALLREDUCE, "ring");
    acc_plan_t *tree = gen("dgx-a100", ACC_COLL_ALLREDUCE, "tree");
    acc_plan_t *rs = gen("dgx-h100", ACC_COLL_REDUCE_SCATTER, "ring");
    acc_plan_t *ag = gen("dgx-h100", ACC_COLL_ALLGATHER, "ring");
    acc_kernel_t *a = kernel(ring, ACC_DT_BF16, ACC_RED_SUM);
    acc_kernel_t *b = kernel(tree, ACC_DT_BF16, ACC_RED_SUM);
    acc_kernel_t *c = kernel(rs, ACC_DT_BF16, ACC_RED_AVG);
    acc_kernel_t *d = kernel(ring, ACC_DT_BF16, ACC_RED_MAX);
    acc_kernel_t *e = kernel(ag, ACC_DT_F16, ACC_RED_SUM);
    const char *lib = acc_kernel_library_source(a), *part = acc_kernel_plan_source(a);

    CHECK_STR(acc_kernel_library_name(a), "library_bfloat16_sum");
    CHECK_STR(lib, acc_kernel_library_source(b));
    /* AVG sums and divides in the plan's part: SUM's library. */
    CHECK_STR(acc_kernel_library_name(c), "library_bfloat16_sum");
    CHECK_STR(lib, acc_kernel_library_source(c));
    CHECK(strcmp(lib, acc_kernel_library_source(d)) != 0);
    CHECK_STR(acc_kernel_library_name(d), "library_bfloat16_max");
    CHECK_STR(acc_kernel_library_name(e), "library_16bit");
    /* The library has the data mover and nothing of any plan; the plan's part has its
     * programs and entry point and only declares what the library defines. */
    CHECK(strstr(lib, "__device__ __noinline__ void acc_xfer(") != NULL);
    CHECK(strstr(lib, "acc_p0") == NULL && strstr(lib, "ACC_NLANES") == NULL);
    CHECK(strstr(lib, "allreduce") == NULL);
    CHECK(strstr(part, "acc_xfer") == NULL);
    CHECK(strstr(part, "static __device__ __noinline__ void acc_p0(") != NULL);
    CHECK(strstr(part, "acc_kernel(const __grid_constant__ acc_args_t a)") != NULL);
    CHECK(strstr(part, "u32 shape, u32 cin, u32 jin,\n"
                       "                                     u32 soff, u32 doff, u32 cout, u32 "
                       "jout);") != NULL);
    CHECK(strlen(part) < strlen(acc_kernel_source(a, NULL)));
    acc_kernel_destroy(a);
    acc_kernel_destroy(b);
    acc_kernel_destroy(c);
    acc_kernel_destroy(d);
    acc_kernel_destroy(e);
    acc_plan_destroy(ring);
    acc_plan_destroy(tree);
    acc_plan_destroy(rs);
    acc_plan_destroy(ag);
}

/* The yardstick: a 1024-rank ring is a handful of kernels, not 1024. */
ACC_TEST(ring_of_1024_ranks_is_one_program)
{
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    acc_kernel_t *k;
    const acc_algo_t *a = acc_algo_find(ACC_COLL_ALLREDUCE, "ring");
    size_t len = 0;
    int r;

    CHECK_OK(acc_topo_load("nodes=128 gpus=8 nvlink=18 nic=8x400", &t));
    /* build() without the verifier's 4 s: generation is what is under test here. */
    CHECK_OK(a->build(t, NULL, &p));
    CHECK_INT(p->nranks, 1024);
    k = kernel(p, ACC_DT_BF16, ACC_RED_SUM);
    CHECK_INT(acc_kernel_classes(k), 1);
    CHECK_INT(acc_kernel_programs(k), 1);
    for (r = 0; r < 1024; r++)
        CHECK_INT(acc_kernel_class_of(k, r), 0);
    /* The code does not grow with the rank count: 1022-step loops, offsets as parameters. */
    CHECK(has(k, "for (u32 j = 0; j < 1022u; ++j)"));
    acc_kernel_source(k, &len);
    CHECK_MSG(len < 60000, "a 1024-rank ring's source is %zu bytes", len);
    acc_kernel_destroy(k);
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

ACC_TEST(classes_of_a_tree)
{
    acc_plan_t *p = gen("dgx-h100", ACC_COLL_REDUCE, "tree");
    acc_kernel_t *k = kernel(p, ACC_DT_F32, ACC_RED_SUM);
    int r, n = acc_kernel_classes(k);
    /* Root, inner ranks with two children, with one, leaves: a few classes, not eight. */
    CHECK_MSG(n > 1 && n < 8, "%d classes", n);
    for (r = 0; r < p->nranks; r++)
        CHECK(acc_kernel_class_of(k, r) >= 0 && acc_kernel_class_of(k, r) < n);
    acc_kernel_destroy(k);
    acc_plan_destroy(p);
}

ACC_TEST(one_source_per_element_size_when_only_moving)
{
    acc_plan_t *ag = gen("dgx-h100", ACC_COLL_ALLGATHER, "ring");
    acc_plan_t *ar = gen("dgx-h100", ACC_COLL_ALLREDUCE, "twoshot");
    acc_kernel_t *h = kernel(ag, ACC_DT_F16, ACC_RED_SUM),
                 *b = kernel(ag, ACC_DT_BF16, ACC_RED_MAX);
    acc_kernel_t *f = kernel(ag, ACC_DT_F32, ACC_RED_SUM), *i = kernel(ag, ACC_DT_I32, ACC_RED_SUM);
    acc_kernel_t *rh = kernel(ar, ACC_DT_F16, ACC_RED_SUM),
                 *rb = kernel(ar, ACC_DT_BF16, ACC_RED_SUM);

    CHECK_STR(acc_kernel_source(h, NULL), acc_kernel_source(b, NULL));
    CHECK_STR(acc_kernel_source(f, NULL), acc_kernel_source(i, NULL));
    CHECK_STR(acc_kernel_name(h), "allgather_ring_n8_16bit");
    CHECK(strcmp(acc_kernel_source(h, NULL), acc_kernel_source(f, NULL)) != 0);
    /* A reduction depends on the type. */
    CHECK(strcmp(acc_kernel_source(rh, NULL), acc_kernel_source(rb, NULL)) != 0);
    CHECK(has(rb, "b += 0x7fffu + ((b >> 16) & 1u);"));
    acc_kernel_destroy(h);
    acc_kernel_destroy(b);
    acc_kernel_destroy(f);
    acc_kernel_destroy(i);
    acc_kernel_destroy(rh);
    acc_kernel_destroy(rb);
    acc_plan_destroy(ag);
    acc_plan_destroy(ar);
}

ACC_TEST(reductions_in_the_source)
{
    acc_plan_t *p = gen("dgx-h100", ACC_COLL_ALLREDUCE, "oneshot");
    acc_kernel_t *avg = kernel(p, ACC_DT_F64, ACC_RED_AVG),
                 *prod = kernel(p, ACC_DT_I32, ACC_RED_PROD);
    acc_kernel_t *mn = kernel(p, ACC_DT_F32, ACC_RED_MIN);
    CHECK(has(avg, "#define ACC_AVG 1"));
    CHECK(has(avg, "return x / (acc_acc_t)8;"));
    CHECK(has(prod, "return (int)((unsigned)a * (unsigned)b);"));
    CHECK(has(prod, "#define ACC_AVG 0"));
    CHECK(has(mn, "return b < a ? b : a;"));
    /* One-shot reads every rank's input: the peer list is a constant of the code. */
    CHECK(has(mn, "const u32 pl[8] = {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u};"));
    acc_kernel_destroy(avg);
    acc_kernel_destroy(prod);
    acc_kernel_destroy(mn);
    acc_plan_destroy(p);
}

ACC_TEST(refuses_broken_plans)
{
    acc_plan_t *p = ring_allreduce(4, 1);
    acc_kernel_t *k = NULL;

    p->progs[1 * p->nlanes].ops[0].peer = 9;
    CHECK_ERR(acc_kernel_generate(p, ACC_DT_F32, ACC_RED_SUM, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS("rank 1 lane 0 operation 0 (send): peer outside the ranks");
    CHECK(k == NULL);
    acc_plan_destroy(p);

    /* A send nobody receives: the plan was never verified. */
    p = ring_allreduce(4, 1);
    p->progs[2 * p->nlanes].nops--;
    CHECK_ERR(acc_kernel_generate(p, ACC_DT_F32, ACC_RED_SUM, &k), ACC_ERR_INVALID);
    CHECK_MSG_HAS("has not been verified");
    acc_plan_destroy(p);

    p = ring_allreduce(4, 1);
    CHECK_ERR(acc_kernel_generate(p, ACC_DT_COUNT, ACC_RED_SUM, &k), ACC_ERR_INVALID);
    acc_plan_destroy(p);
}

ACC_TEST(traffic_of_a_ring)
{
    acc_plan_t *p = ring_allreduce(4, 1);
    uint64_t rd = 0, wr = 0;
    /* Per rank, chunks of c = 1000 elements: send (c read, c staged), 3 rrcs (2c each way),
     * 2 rcs (c read, 2c written), recv (c, c): 10c read and 12c written. */
    acc_kernel_traffic(p, ACC_DT_F32, 4000, &rd, &wr);
    CHECK_INT(rd, 4 * 10 * 1000 * 4);
    CHECK_INT(wr, 4 * 12 * 1000 * 4);
    acc_plan_destroy(p);
}

/* ---- emulated runs ---------------------------------------------------------------------- */

/* Types and reductions worth a module each: every type once, every reduction once. */
static const struct {
    acc_dtype_t dt;
    acc_redop_t op;
} combos[] = {
    {ACC_DT_F32, ACC_RED_SUM},  {ACC_DT_F16, ACC_RED_SUM}, {ACC_DT_BF16, ACC_RED_MAX},
    {ACC_DT_I32, ACC_RED_PROD}, {ACC_DT_F64, ACC_RED_AVG}, {ACC_DT_BF16, ACC_RED_MIN},
};

/* Every combination on one block per lane of four threads (barriers within a block), the
 * first three on three blocks per lane of two threads (slices of chunks across blocks). */
static void emu_plan(const acc_plan_t *p, const char *label)
{
    size_t i;
    int copies;
    for (copies = 1; copies <= 3; copies += 2)
        for (i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
            /* Data movement depends on the element size only. */
            if ((!acc_coll_reduces(p->coll) && i > 1) || (copies > 1 && i > 2))
                break;
            emu_compare(p, combos[i].dt, combos[i].op, copies, copies == 1 ? 4 : 2, label);
        }
}

/* Every algorithm of a topology with default arguments; returns how many applied. */
static int emu_topology(const char *topo, acc_coll_t only)
{
    return emu_each_algorithm(topo, only, ACC_PROTO_SIMPLE, emu_plan);
}

ACC_TEST(emulated_allreduce_8)
{
    CHECK_INT(emu_topology("dgx-h100", ACC_COLL_ALLREDUCE), 6);
}

ACC_TEST(emulated_allgather_reduce_scatter_8)
{
    CHECK_INT(emu_topology("dgx-h100", ACC_COLL_ALLGATHER), 3);
    CHECK_INT(emu_topology("dgx-h100", ACC_COLL_REDUCE_SCATTER), 3);
}

ACC_TEST(emulated_rooted_8)
{
    CHECK_INT(emu_topology("dgx-h100", ACC_COLL_BROADCAST), 2);
    CHECK_INT(emu_topology("dgx-h100", ACC_COLL_REDUCE), 2);
}

/* Hierarchical plans need two nodes; three cases, so that each stays within its time limit. */
ACC_TEST(emulated_two_nodes)
{
    /* ring, tree, rhd, rd, hier */
    CHECK_INT(emu_algorithms("nodes=2 gpus=2 nvlink=18 nic=2x400", ACC_COLL_ALLREDUCE,
                             ACC_PROTO_SIMPLE, emu_plan, "hier_pipe", 0),
              5);
}

/* Lanes tied by dependencies (a nop waiting for another lane's operation). */
ACC_TEST(emulated_two_nodes_hier_pipe)
{
    CHECK_INT(emu_algorithms("nodes=2 gpus=2 nvlink=18 nic=2x400", ACC_COLL_ALLREDUCE,
                             ACC_PROTO_SIMPLE, emu_plan, "hier_pipe", 1),
              1);
}

ACC_TEST(emulated_two_nodes_gather_scatter)
{
    const char *topo = "nodes=2 gpus=2 nvlink=18 nic=2x400";
    CHECK_INT(emu_topology(topo, ACC_COLL_ALLGATHER), 3);
    CHECK_INT(emu_topology(topo, ACC_COLL_REDUCE_SCATTER), 3);
}

ACC_TEST(emulated_two_ranks)
{
    CHECK_INT(emu_topology("gpus=2 nvlink=18", ACC_COLL_ALLREDUCE), 6);
    CHECK_INT(emu_topology("gpus=2 nvlink=18", ACC_COLL_REDUCE_SCATTER), 3);
}

/* Hand-written plans with what generators do not emit: cross-lane dependencies and scratch
 * (one-shot), multi-chunk messages, local reduce through scratch, alltoall with one slot per
 * connection, gets with signals.  (Puts with signals: the twoshot plans above.) */
ACC_TEST(emulated_hand_plans)
{
    acc_plan_t *plans[5];
    size_t i;
    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    plans[0] = oneshot_allreduce(4);
    plans[1] = ring_allgather(3, 3);
    plans[2] = chain_reduce(4, 2, 5);
    plans[3] = direct_alltoall(4, 2, 2);
    plans[4] = get_broadcast(3, 1);
    for (i = 0; i < 5; i++) {
        CHECK_MSG(acc_plan_verify(plans[i]) == ACC_OK, "%s", acc_error_message());
        emu_plan(plans[i], plans[i]->algo);
        acc_plan_destroy(plans[i]);
    }
}

/* Calls one after the other on one executor, the number of blocks per lane chosen by the size
 * of each (1 to 4): the counters of every copy must carry over from launch to launch. */
ACC_TEST(emulated_calls_in_a_row)
{
    static const uint64_t counts[] = {1000, 300000, 13, 600001, 100, 300000, 7, 1000000};
    static const char *const algos[] = {"ring", "twoshot", "oneshot", "tree"};
    size_t a, c;
    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    for (a = 0; a < 4; a++) {
        acc_plan_t *p = gen("gpus=4 nvlink=18", ACC_COLL_ALLREDUCE, algos[a]);
        acc_kernel_t *k = kernel(p, ACC_DT_F32, ACC_RED_SUM);
        acc_gpu_exec_t *x = NULL;
        emu_t e = {0};
        bufs_t h, g;
        int seen[5] = {0}, r;

        emu_build(&e, k, acc_kernel_name(k), 2);
        CHECK_OK(gx_create_host(p, ACC_DT_F32, ACC_RED_SUM, 1000000, NULL, &x));
        bufs_alloc(&h, p, 4000000);
        bufs_alloc(&g, p, 4000000);
        for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int copies = acc_gpu_exec_copies(x, counts[c]);
            CHECK(copies >= 1 && copies <= 4);
            seen[copies] = 1;
            acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, (uint32_t)c, counts[c],
                             h.in, h.out, 0);
            acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, (uint32_t)c, counts[c],
                             g.in, g.out, 0);
            CHECK_OK(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, counts[c], h.in, h.out, 0));
            emu_call(&e, x, counts[c], g.in, g.out, 0);
            for (r = 0; r < p->nranks; r++)
                CHECK_MSG(memcmp(h.out[r], g.out[r], (size_t)counts[c] * 4) == 0,
                          "%s, call %zu (count %llu, %d blocks per lane): rank %d differs",
                          algos[a], c, (unsigned long long)counts[c], copies, r);
        }
        /* The sizes above span one block per lane and more. */
        CHECK(seen[1] && (seen[2] || seen[3] || seen[4]));
        bufs_free(&h, p);
        bufs_free(&g, p);
        acc_gpu_exec_destroy(x);
        emu_free(&e);
        acc_kernel_destroy(k);
        acc_plan_destroy(p);
    }
}

/* A wait that can never end (a signal counter told to expect more than it gets) gives up
 * after the time limit, says where, and leaves the executor usable. */
ACC_TEST(emulated_wait_gives_up_and_says_where)
{
    acc_plan_t *p;
    acc_kernel_t *k;
    acc_gpu_exec_t *x = NULL;
    acc_gpu_opts_t o;
    acc_kargs_t a;
    acc_kctr_dev_t *ctrs;
    const uint32_t *status;
    unsigned gx, gy;
    emu_t e = {0};
    bufs_t g;

    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    p = gen("gpus=4 nvlink=18", ACC_COLL_ALLREDUCE, "twoshot");
    k = kernel(p, ACC_DT_F32, ACC_RED_SUM);
    emu_build(&e, k, "waits_give_up", 2);
    memset(&o, 0, sizeof(o));
    o.copies = 1;
    o.timeout_s = 0.3;
    CHECK_OK(gx_create_host(p, ACC_DT_F32, ACC_RED_SUM, 1000, &o, &x));
    bufs_alloc(&g, p, 4000);
    acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, 1, 1000, g.in, g.out, 0);
    emu_call(&e, x, 1000, g.in, g.out, 0);

    /* The second launch waits for the first's signals plus one that never comes. */
    CHECK_OK(gx_args(x, 1000, g.in, g.out, 0, &a, &gx, &gy));
    ctrs = (acc_kctr_dev_t *)(uintptr_t)a.ctrs;
    ctrs[0].per_launch++;
    emu_grid(&e, &a, gx, gy, 0);
    status = (const uint32_t *)(uintptr_t)a.status;
    CHECK_INT(status[0], ACC_KW_SIGNAL);
    CHECK_ERR(gx_failure(x, status), ACC_ERR_INTERNAL);
    CHECK_MSG_HAS("gave up waiting for signals from rank");
    CHECK_MSG_HAS("operation");
    CHECK_MSG_HAS("0.3 s");
    CHECK_INT(status[0], 0);

    /* Counters reset: the next call is the first again, and right. */
    ctrs[0].per_launch--;
    acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, 2, 1000, g.in, g.out, 0);
    emu_call(&e, x, 1000, g.in, g.out, 0);
    CHECK_INT(acc_host_check(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, 2, 1000, g.out, 0, NULL),
              0);
    bufs_free(&g, p);
    acc_gpu_exec_destroy(x);
    emu_free(&e);
    acc_kernel_destroy(k);
    acc_plan_destroy(p);
}
