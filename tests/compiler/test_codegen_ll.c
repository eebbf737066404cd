/*
 * LL kernels: which plans have one (acc_kernel_supports), what their source says, and - without
 * a GPU - LL modules compiled as host C++ and run thread by thread (kernel_emu.h) against the
 * host executor: every message-passing algorithm of a platform in fp32, fp16 and bf16, in place
 * and out, at odd sizes, on one block per lane and on three, with thread counts that do not
 * divide the lines; hand-written plans with multi-chunk messages, scratch and one slot per
 * connection; and calls in a row, whose flags must never match a stale line.
 */
#include "acc_compiler.h"
#include "host_plans.h"
#include "kernel_emu.h"

#include <string.h>

static acc_plan_t *gen(const char *topo, acc_coll_t coll, const char *name, acc_proto_t proto)
{
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    acc_algo_args_t args;
    const acc_algo_t *a = acc_algo_find(coll, name);
    CHECK_MSG(a != NULL, "%s", acc_error_message());
    memset(&args, 0, sizeof(args));
    args.proto = proto;
    CHECK_OK(acc_topo_load(topo, &t));
    CHECK_OK(acc_algo_generate(a, t, &args, &p));
    acc_topo_destroy(t);
    return p;
}

ACC_TEST(protocols_with_kernels)
{
    acc_plan_t *ring = gen("dgx-h100", ACC_COLL_ALLREDUCE, "ring", ACC_PROTO_SIMPLE);
    acc_plan_t *oneshot = gen("dgx-h100", ACC_COLL_ALLREDUCE, "oneshot", ACC_PROTO_SIMPLE);
    acc_kernel_t *k = NULL;

    CHECK_OK(acc_kernel_supports(ring, ACC_PROTO_SIMPLE));
    CHECK_OK(acc_kernel_supports(ring, ACC_PROTO_LL));
    CHECK_ERR(acc_kernel_supports(ring, ACC_PROTO_LL128), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("LL128");
    CHECK_MSG_HAS("use Simple or LL");
    CHECK_OK(acc_kernel_supports(oneshot, ACC_PROTO_SIMPLE));
    /* Peer memory only: no message to carry the flags. */
    CHECK_ERR(acc_kernel_supports(oneshot, ACC_PROTO_LL), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("passes no messages");
    /* Generation refuses what has no kernel, with the same reason. */
    ring->proto = ACC_PROTO_LL128;
    CHECK_ERR(acc_kernel_generate(ring, ACC_DT_F32, ACC_RED_SUM, &k), ACC_ERR_UNSUPPORTED);
    CHECK(k == NULL);
    oneshot->proto = ACC_PROTO_LL;
    CHECK_ERR(acc_kernel_generate(oneshot, ACC_DT_F32, ACC_RED_SUM, &k), ACC_ERR_UNSUPPORTED);
    acc_plan_destroy(ring);
    acc_plan_destroy(oneshot);
}

ACC_TEST(ll_source_reads_well)
{
    acc_plan_t *ll = gen("dgx-h100", ACC_COLL_ALLREDUCE, "ring", ACC_PROTO_LL);
    acc_plan_t *simple = gen("dgx-h100", ACC_COLL_ALLREDUCE, "ring", ACC_PROTO_SIMPLE);
    acc_kernel_t *a = NULL, *b = NULL;
    const char *src;

    CHECK_OK(acc_kernel_generate(ll, ACC_DT_BF16, ACC_RED_SUM, &a));
    CHECK_OK(acc_kernel_generate(simple, ACC_DT_BF16, ACC_RED_SUM, &b));
    src = acc_kernel_source(a, NULL);
    /* Another module of the same plan: another name, the same device library. */
    CHECK_STR(acc_kernel_name(a), "allreduce_ring_ll_n8_bfloat16_sum");
    CHECK_STR(acc_kernel_name(b), "allreduce_ring_n8_bfloat16_sum");
    CHECK_STR(acc_kernel_library_source(a), acc_kernel_library_source(b));
    CHECK(strstr(src, "protocol LL.") != NULL);
    CHECK(strstr(src, "#define ACC_STEP acc_step_ll") != NULL);
    CHECK(strstr(acc_kernel_source(b, NULL), "#define ACC_STEP acc_step\n") != NULL ||
          strstr(acc_kernel_source(b, NULL), "#define ACC_STEP acc_step ") != NULL);
    /* The lines are 16-byte volatile stores carrying the flag twice; both scopes are there,
     * chosen per connection at run time. */
    CHECK(strstr(src, "st.volatile.global.v4.u32") != NULL);
    CHECK(strstr(src, "ld.acquire.gpu.u32") != NULL && strstr(src, "ld.acquire.sys.u32") != NULL);
    CHECK(strstr(src, "ki->flags & ACC_F_SYS") != NULL);
    /* Threads come from the launch: no loop strides by the compile-time maximum. */
    CHECK(strstr(src, "+= ACC_THREADS") == NULL);
    acc_kernel_destroy(a);
    acc_kernel_destroy(b);
    acc_plan_destroy(ll);
    acc_plan_destroy(simple);
}

/* The threads a launch gives a block follow the slice: one per 16-byte vector (Simple) or
 * 8-byte line (LL), whole warps, between the bounds. */
ACC_TEST(threads_follow_the_slice)
{
    CHECK_INT(acc_kthreads(ACC_PROTO_SIMPLE, 16), ACC_KTHREADS_MIN);
    CHECK_INT(acc_kthreads(ACC_PROTO_SIMPLE, 512), 32);
    CHECK_INT(acc_kthreads(ACC_PROTO_SIMPLE, 528), 64);
    CHECK_INT(acc_kthreads(ACC_PROTO_LL, 512), 64);
    CHECK_INT(acc_kthreads(ACC_PROTO_SIMPLE, 1u << 20), ACC_KTHREADS);
    CHECK_INT(acc_kthreads(ACC_PROTO_LL, 4096), ACC_KTHREADS);
    /* An LL slot holds a header line per chunk and two bytes of line per byte of data. */
    CHECK_INT(acc_kslot_bytes(ACC_PROTO_LL, 3, 256), 3 * (16 + 512));
    CHECK_INT(acc_kslot_bytes(ACC_PROTO_SIMPLE, 3, 256), 16 + 3 * 256);
}

/* fp32, fp16 and bf16 sums (and a bf16 max) on one block per lane of three threads (lines
 * that do not divide among them), the first three on three blocks of two. */
static void emu_ll(const acc_plan_t *p, const char *label)
{
    static const struct {
        acc_dtype_t dt;
        acc_redop_t op;
    } combos[] = {{ACC_DT_F32, ACC_RED_SUM},
                  {ACC_DT_F16, ACC_RED_SUM},
                  {ACC_DT_BF16, ACC_RED_SUM},
                  {ACC_DT_BF16, ACC_RED_MAX}};
    size_t i;
    int copies;
    CHECK_INT(p->proto, ACC_PROTO_LL);
    for (copies = 1; copies <= 3; copies += 2)
        for (i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
            if (!acc_coll_reduces(p->coll) && (i == 2 || i == 3))
                continue; /* moving: fp16 and bf16 are the same 16-bit module */
            if (copies > 1 && i == 3)
                break;
            emu_compare(p, combos[i].dt, combos[i].op, copies, copies == 1 ? 3 : 2, label);
        }
}

/* Every algorithm of coll on a topology that passes messages, with LL; how many ran. */
static int emu_topology_ll(const char *topo, acc_coll_t coll)
{
    return emu_each_algorithm(topo, coll, ACC_PROTO_LL, emu_ll);
}

/* ring, rhd, tree and hier pass messages; oneshot and twoshot use peer memory only. */
ACC_TEST(emulated_ll_allreduce_8)
{
    CHECK_INT(emu_topology_ll("dgx-h100", ACC_COLL_ALLREDUCE), 4);
}

ACC_TEST(emulated_ll_allgather_reduce_scatter_8)
{
    CHECK_INT(emu_topology_ll("dgx-h100", ACC_COLL_ALLGATHER), 2);
    CHECK_INT(emu_topology_ll("dgx-h100", ACC_COLL_REDUCE_SCATTER), 2);
}

ACC_TEST(emulated_ll_rooted_8)
{
    CHECK_INT(emu_topology_ll("dgx-h100", ACC_COLL_BROADCAST), 2);
    CHECK_INT(emu_topology_ll("dgx-h100", ACC_COLL_REDUCE), 2);
}

/* Two cases, so that each stays within its time limit: hier_pipe alone. */
ACC_TEST(emulated_ll_two_nodes)
{
    CHECK_INT(emu_algorithms("nodes=2 gpus=2 nvlink=18 nic=2x400", ACC_COLL_ALLREDUCE, ACC_PROTO_LL,
                             emu_ll, "hier_pipe", 0),
              5);
}

ACC_TEST(emulated_ll_two_nodes_hier_pipe)
{
    CHECK_INT(emu_algorithms("nodes=2 gpus=2 nvlink=18 nic=2x400", ACC_COLL_ALLREDUCE, ACC_PROTO_LL,
                             emu_ll, "hier_pipe", 1),
              1);
}

/* Multi-chunk messages and the long way through scratch (chain reduce), one message per
 * connection (alltoall), and a ring on two lanes with two slots per connection for its six
 * messages, so that senders wait for acknowledgements and slots are reused in a launch. */
ACC_TEST(emulated_ll_hand_plans)
{
    acc_plan_t *plans[4];
    size_t i;
    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    plans[0] = ring_allreduce(4, 2);
    plans[1] = ring_allgather(3, 3);
    plans[2] = chain_reduce(4, 2, 5);
    plans[3] = direct_alltoall(4, 2, 2);
    plans[0]->slots = 2;
    for (i = 0; i < 4; i++) {
        plans[i]->proto = ACC_PROTO_LL;
        CHECK_MSG(acc_plan_verify(plans[i]) == ACC_OK, "%s", acc_error_message());
        emu_ll(plans[i], plans[i]->algo);
        acc_plan_destroy(plans[i]);
    }
}

/* Calls one after the other on one executor, the blocks per lane chosen by each size: every
 * slot is reused with a new flag, and a line a shorter message left alone must not pass for
 * a longer one's. */
ACC_TEST(emulated_ll_calls_in_a_row)
{
    static const uint64_t counts[] = {1000, 300000, 13, 600001, 100, 300000, 7, 1000000, 999};
    static const char *const algos[] = {"ring", "tree", "rhd"};
    size_t a, c;
    if (!emu_available())
        ACC_SKIP("no host C++ compiler (c++) to build emulated kernels with");
    for (a = 0; a < 3; a++) {
        acc_plan_t *p = gen("gpus=4 nvlink=18", ACC_COLL_ALLREDUCE, algos[a], ACC_PROTO_LL);
        acc_kernel_t *k = NULL;
        acc_gpu_exec_t *x = NULL;
        emu_t e = {0};
        bufs_t h, g;
        int r;

        CHECK_OK(acc_kernel_generate(p, ACC_DT_F32, ACC_RED_SUM, &k));
        emu_build(&e, k, acc_kernel_name(k), 2);
        CHECK_OK(gx_create_host(p, ACC_DT_F32, ACC_RED_SUM, 1000000, NULL, &x));
        bufs_alloc(&h, p, 4000000);
        bufs_alloc(&g, p, 4000000);
        for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, (uint32_t)c, counts[c],
                             h.in, h.out, 0);
            acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, (uint32_t)c, counts[c],
                             g.in, g.out, 0);
            CHECK_OK(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, counts[c], h.in, h.out, 0));
            emu_call(&e, x, counts[c], g.in, g.out, 0);
            for (r = 0; r < p->nranks; r++)
                CHECK_MSG(memcmp(h.out[r], g.out[r], (size_t)counts[c] * 4) == 0,
                          "LL %s, call %zu (count %llu): rank %d differs", algos[a], c,
                          (unsigned long long)counts[c], r);
        }
        bufs_free(&h, p);
        bufs_free(&g, p);
        acc_gpu_exec_destroy(x);
        emu_free(&e);
        acc_kernel_destroy(k);
        acc_plan_destroy(p);
    }
}
