/*
 * The host executor against a sequential reference: hand-built plans of every collective (ring
 * allreduce on two lanes, ring allgather and reduce-scatter, chain broadcast and reduce, direct
 * alltoall, peer-memory allreduce / allgather / broadcast with signal and wait), every type and
 * reduction, out of place and in place, counts 0, 1, 7, 1000 and 4099.  Plus the half-type
 * conversions, the reference's own ability to see a wrong element, and plans that deadlock or
 * do not fit their buffers, which must be reported rather than hang or crash.
 *
 * The plans (host_plans.h) are written by hand, step by step, independently of compiler/algos.
 */
#include "acc_compiler.h"
#include "acc_test.h"
#include "host_plans.h"
#include "host_reduce.h"

#include <math.h>
#include <stdlib.h>

static const uint64_t counts[] = {0, 1, 7, 1000, 4099};

/* ---- the driver --------------------------------------------------------------------------- */

static void run_case(const acc_plan_t *p, acc_dtype_t dt, acc_redop_t op, acc_fill_t mode,
                     uint64_t count, int inplace)
{
    size_t es = acc_dtype_size(dt);
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, count);
    uint64_t big = ein > eout ? ein : eout, wrong;
    void *in[64], *out[64];
    double worst = 0;
    int r;

    for (r = 0; r < p->nranks; r++) {
        in[r] = inplace ? NULL : malloc(ein * es + 1);
        out[r] = malloc((inplace ? big : eout) * es + 1);
    }
    acc_host_prepare(p, dt, op, mode, 7, count, in, out, inplace);
    CHECK_OK(acc_host_exec(p, dt, op, count, in, out, inplace));
    wrong = acc_host_check(p, dt, op, mode, 7, count, out, inplace, &worst);
    CHECK_MSG(wrong == 0,
              "%s %s %d ranks: %llu of %llu elements wrong for %s %s %s count %llu "
              "%s (worst %g x the bound)",
              p->algo, acc_coll_name(p->coll), p->nranks, (unsigned long long)wrong,
              (unsigned long long)eout, acc_dtype_name(dt), acc_redop_name(op),
              mode == ACC_FILL_EXACT ? "exact" : "random", (unsigned long long)count,
              inplace ? "in place" : "out of place", worst);
    /* exact inputs must come out exactly */
    CHECK(mode != ACC_FILL_EXACT || worst == 0);
    for (r = 0; r < p->nranks; r++) {
        free(in[r]);
        free(out[r]);
    }
}

/* Every type, reduction (only sum where the collective moves data), count and buffer mode. */
static void run_all(acc_plan_t *p)
{
    int dt, op, ip, mode;
    size_t i;
    for (dt = 0; dt < ACC_DT_COUNT; dt++)
        for (op = 0; op < ACC_RED_COUNT; op++) {
            if (op != ACC_RED_SUM && !acc_coll_reduces(p->coll))
                continue;
            for (mode = 0; mode < 2; mode++) {
                if (mode == ACC_FILL_RANDOM && (dt == ACC_DT_I32 || !acc_coll_reduces(p->coll)))
                    continue;
                for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
                    for (ip = 0; ip <= p->inplace; ip++)
                        run_case(p, (acc_dtype_t)dt, (acc_redop_t)op, (acc_fill_t)mode, counts[i],
                                 ip);
            }
        }
    acc_plan_destroy(p);
}

ACC_TEST(ring_allreduce_two_lanes_3_ranks)
{
    run_all(ring_allreduce(3, 2));
}

ACC_TEST(ring_allreduce_two_lanes_4_ranks)
{
    run_all(ring_allreduce(4, 2));
}

ACC_TEST(ring_allreduce_2_ranks)
{
    run_all(ring_allreduce(2, 1));
}

ACC_TEST(ring_allgather)
{
    run_all(ring_allgather(4, 2));
    run_all(ring_allgather(3, 1));
}

ACC_TEST(ring_reduce_scatter)
{
    run_all(ring_reduce_scatter(4, 2));
    run_all(ring_reduce_scatter(3, 1));
}

ACC_TEST(chain_broadcast_root_1)
{
    run_all(chain_broadcast(4, 1, 5, 2));
}

ACC_TEST(chain_reduce_root_last)
{
    run_all(chain_reduce(3, 2, 3));
    run_all(chain_reduce(4, 0, 4));
    run_all(chain_reduce(1, 0, 2));
}

ACC_TEST(direct_alltoall)
{
    run_all(direct_alltoall(4, 2, 2));
    run_all(direct_alltoall(3, 1, 1));
}

ACC_TEST(oneshot_allreduce_signal_wait)
{
    run_all(oneshot_allreduce(3));
    run_all(oneshot_allreduce(4));
}

ACC_TEST(put_allgather_and_get_broadcast)
{
    run_all(put_allgather(4));
    run_all(get_broadcast(3, 2));
}

/* 64 ranks x 8 lanes: 512 threads. */
ACC_TEST(ring_allreduce_64_ranks_8_lanes)
{
    acc_plan_t *p = ring_allreduce(64, 8);
    run_case(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT, 4099, 0);
    run_case(p, ACC_DT_BF16, ACC_RED_SUM, ACC_FILL_RANDOM, 4099, 1);
    run_case(p, ACC_DT_I32, ACC_RED_AVG, ACC_FILL_EXACT, 513, 0);
    run_case(p, ACC_DT_F16, ACC_RED_MAX, ACC_FILL_EXACT, 7, 1);
    acc_plan_destroy(p);
}

/* ---- every registered algorithm ------------------------------------------------------------ */

/* Every type and reduction on counts 0, 7 (chunks of unequal size) and 1000, exact inputs, and
 * random ones where rounding shows; both buffer modes. */
static void run_types(const acc_plan_t *p)
{
    static const uint64_t few[] = {0, 7, 1000};
    int dt, op, ip;
    size_t i;
    for (dt = 0; dt < ACC_DT_COUNT; dt++)
        for (op = 0; op < ACC_RED_COUNT; op++) {
            if (op != ACC_RED_SUM && !acc_coll_reduces(p->coll))
                continue;
            for (ip = 0; ip <= p->inplace; ip++) {
                for (i = 0; i < sizeof(few) / sizeof(few[0]); i++)
                    run_case(p, (acc_dtype_t)dt, (acc_redop_t)op, ACC_FILL_EXACT, few[i], ip);
                if (dt != ACC_DT_I32 && acc_coll_reduces(p->coll))
                    run_case(p, (acc_dtype_t)dt, (acc_redop_t)op, ACC_FILL_RANDOM, 1000, ip);
            }
        }
}

/* acc_algo_generate (which verifies) then the host executor, for every algorithm that applies
 * to the synthetic machine, rooted ones with root 0 and the last rank. */
static void every_algorithm(const char *desc, int min_applied)
{
    acc_topo_t *t = NULL;
    size_t n, i;
    const acc_algo_t *const *list = acc_algo_list(&n);
    int applied = 0, root;

    CHECK_OK(acc_topo_load_synthetic(desc, &t));
    for (i = 0; i < n; i++) {
        int rooted = list[i]->coll == ACC_COLL_BROADCAST || list[i]->coll == ACC_COLL_REDUCE;
        for (root = 0; root <= (rooted ? 1 : 0); root++) {
            acc_algo_args_t args;
            acc_plan_t *p = NULL;
            memset(&args, 0, sizeof(args));
            args.root = root ? acc_topo_ranks(t) - 1 : 0;
            if (list[i]->supports(t, &args) != ACC_OK)
                continue;
            CHECK_MSG(acc_algo_generate(list[i], t, &args, &p) == ACC_OK, "%s %s on %s: %s",
                      acc_coll_name(list[i]->coll), list[i]->name, desc, acc_error_message());
            run_types(p);
            acc_plan_destroy(p);
            applied += !root;
        }
    }
    CHECK_MSG(applied >= min_applied, "%s: %d algorithms applied, expected at least %d", desc,
              applied, min_applied);
    acc_topo_destroy(t);
}

ACC_TEST(every_algorithm_2_gpus_pcie)
{
    every_algorithm("gpus=2", 11);
}

ACC_TEST(every_algorithm_3_gpus_nvswitch)
{
    every_algorithm("gpus=3 nvlink=18", 15);
}

ACC_TEST(every_algorithm_4_gpus_nvlink_mesh)
{
    every_algorithm("gpus=4 nvlink=6 nvswitch=no", 15);
}

ACC_TEST(every_algorithm_5_gpus_pcie)
{
    every_algorithm("gpus=5", 11);
}

ACC_TEST(every_algorithm_6_gpus_nvswitch)
{
    every_algorithm("gpus=6 nvlink=18", 15);
}

ACC_TEST(every_algorithm_2_nodes_of_4)
{
    every_algorithm("nodes=2 gpus=4 nvlink=18 nic=4x400", 14);
}

ACC_TEST(every_algorithm_3_nodes_of_3)
{
    every_algorithm("nodes=3 gpus=3 nvlink=12 nic=1x200", 14);
}

ACC_TEST(every_algorithm_2_nodes_of_8)
{
    every_algorithm("nodes=2 gpus=8 nvlink=18 nic=8x400", 14);
}

ACC_TEST(every_algorithm_16_nodes_of_1)
{
    every_algorithm("nodes=16 gpus=1 nic=1x100", 14);
}

/* ---- arithmetic ------------------------------------------------------------------------- */

ACC_TEST(half_conversions_round_to_nearest_even)
{
    uint32_t h;
    CHECK_INT(hx_float_to_half(1.0f), 0x3c00);
    CHECK_INT(hx_float_to_half(65504.0f), 0x7bff);
    CHECK_INT(hx_float_to_half(65520.0f), 0x7c00);       /* tie above the largest: to infinity */
    CHECK_INT(hx_float_to_half(ldexpf(1, -24)), 0x0001); /* smallest subnormal */
    CHECK_INT(hx_float_to_half(ldexpf(1, -25)), 0x0000); /* tie: to even (zero) */
    CHECK_INT(hx_float_to_half(ldexpf(3, -25)), 0x0002); /* tie: to even (two) */
    CHECK_INT(hx_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00);
    CHECK_INT(hx_float_to_half(1.0f + ldexpf(3, -11)), 0x3c02);
    CHECK_INT(hx_float_to_half(-2.0f), 0xc000);
    CHECK(hx_half_to_float(hx_float_to_half(NAN)) != hx_half_to_float(hx_float_to_half(NAN)));
    CHECK_INT(hx_float_to_bf16(1.0f), 0x3f80);
    CHECK_INT(hx_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
    CHECK_INT(hx_float_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82);
    CHECK(isnan(hx_bf16_to_float(hx_float_to_bf16(NAN))));
    /* every finite half survives the trip through float */
    for (h = 0; h < 0x10000; h++)
        if ((h & 0x7c00) != 0x7c00)
            CHECK_INT(hx_float_to_half(hx_half_to_float((uint16_t)h)), h);
}

ACC_TEST(half_sums_accumulate_in_fp32)
{
    /* 2048 + 1 + 1 in fp16: pairwise in fp16 each +1 is lost (2049 rounds to 2048); one reduce
     * step over three sources accumulates in fp32 and gives 2050, exactly representable. */
    uint16_t a = hx_float_to_half(2048), b = hx_float_to_half(1), d;
    const void *srcs[3] = {&a, &b, &b};
    hx_reduce_many(ACC_DT_F16, ACC_RED_SUM, &d, srcs, 3, 1);
    CHECK_NEAR(hx_half_to_float(d), 2050, 0);
    hx_reduce2(ACC_DT_F16, ACC_RED_SUM, &d, &a, &b, 1);
    CHECK_NEAR(hx_half_to_float(d), 2048, 0);
}

ACC_TEST(int_average_truncates_toward_zero)
{
    /* two ranks, one element: (-3 + 0) / 2 is -1 (toward zero), not -2 */
    acc_plan_t *p = ring_allreduce(2, 1);
    int32_t in0 = -3, in1 = 0, out0 = 0, out1 = 0;
    void *in[2] = {&in0, &in1}, *out[2] = {&out0, &out1};
    CHECK_OK(acc_host_exec(p, ACC_DT_I32, ACC_RED_AVG, 1, in, out, 0));
    CHECK_INT(out0, -1);
    CHECK_INT(out1, -1);
    in0 = INT32_MAX;
    in1 = 1; /* the sum wraps, as on the GPU */
    CHECK_OK(acc_host_exec(p, ACC_DT_I32, ACC_RED_SUM, 1, in, out, 0));
    CHECK_INT(out0, INT32_MIN);
    acc_plan_destroy(p);
}

ACC_TEST(reference_sees_a_wrong_element)
{
    acc_plan_t *p = ring_allreduce(3, 1);
    float *in[3], *out[3];
    double worst = 0;
    int r;
    for (r = 0; r < 3; r++) {
        in[r] = malloc(100 * sizeof(float));
        out[r] = malloc(100 * sizeof(float));
    }
    acc_host_prepare(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, 1, 100, (void **)in, (void **)out,
                     0);
    CHECK_OK(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, 100, (void **)in, (void **)out, 0));
    CHECK_INT(acc_host_check(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, 1, 100, (void **)out, 0,
                             &worst),
              0);
    CHECK(worst <= 1);
    out[1][42] = nextafterf(out[1][42], 1e9f) + 1e-3f; /* far beyond 2 eps of a sum of 3 */
    CHECK_INT(acc_host_check(p, ACC_DT_F32, ACC_RED_SUM, ACC_FILL_RANDOM, 1, 100, (void **)out, 0,
                             &worst),
              1);
    CHECK(worst > 1);
    for (r = 0; r < 3; r++) {
        free(in[r]);
        free(out[r]);
    }
    acc_plan_destroy(p);
}

/* ---- plans that cannot run ----------------------------------------------------------------- */

static void run_float(const acc_plan_t *p, uint64_t count, acc_status_t want)
{
    float buf[8][64];
    void *in[8], *out[8];
    int r;
    for (r = 0; r < p->nranks; r++) {
        in[r] = buf[r];
        out[r] = buf[r] + 32;
    }
    memset(buf, 0, sizeof(buf));
    if (want == ACC_OK)
        CHECK_OK(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, count, in, out, 0));
    else
        CHECK_ERR(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, count, in, out, 0), want);
}

ACC_TEST(deadlock_is_reported_not_hung)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, 2, 1, 1, 1, 0, "bad");
    add(p, 0, 0, ACC_OP_RECV, 1, -1, NONE, OUT(0, 1));
    add(p, 0, 0, ACC_OP_SEND, 1, -1, IN(0, 1), NONE);
    add(p, 1, 0, ACC_OP_RECV, 0, -1, NONE, OUT(0, 1));
    add(p, 1, 0, ACC_OP_SEND, 0, -1, IN(0, 1), NONE);
    run_float(p, 4, ACC_ERR_INTERNAL);
    CHECK_MSG_HAS("deadlock");
    CHECK_MSG_HAS("rank 0 lane 0 op 0 (receive from rank 1: nothing sent)");
    CHECK_MSG_HAS("rank 1 lane 0 op 0");
    acc_plan_destroy(p);
}

ACC_TEST(full_connection_blocks_the_sender)
{
    /* both ranks send two messages before receiving: fine with two slots, a deadlock with one,
     * because a send only completes once its data is in the connection */
    acc_plan_t *p = create(ACC_COLL_ALLGATHER, 2, 1, 2, 4, 0, "swap");
    int r;
    for (r = 0; r < 2; r++) {
        add(p, r, 0, ACC_OP_COPY, -1, -1, IN(0, 2), OUT(2 * r, 2));
        add(p, r, 0, ACC_OP_SEND, 1 - r, -1, IN(0, 1), NONE);
        add(p, r, 0, ACC_OP_SEND, 1 - r, -1, IN(1, 1), NONE);
        add(p, r, 0, ACC_OP_RECV, 1 - r, -1, NONE, OUT(2 * (1 - r), 1));
        add(p, r, 0, ACC_OP_RECV, 1 - r, -1, NONE, OUT(2 * (1 - r) + 1, 1));
    }
    p->slots = 2;
    run_float(p, 7, ACC_OK);
    p->slots = 1;
    run_float(p, 7, ACC_ERR_INTERNAL);
    CHECK_MSG_HAS("connection full");
    acc_plan_destroy(p);
}

ACC_TEST(wait_without_signal_is_reported)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, 2, 2, 1, 1, 0, "bad");
    add(p, 0, 0, ACC_OP_COPY, -1, -1, IN(0, 1), OUT(0, 1));
    add_sync(p, 0, 1, ACC_OP_WAIT, 1, 3, 2);
    add_sync(p, 1, 0, ACC_OP_SIGNAL, 0, 3, 0);
    run_float(p, 4, ACC_ERR_INTERNAL);
    CHECK_MSG_HAS("rank 0 lane 1 op 0 (waits for signal 3 from rank 1 to reach 2 (it is 1))");
    acc_plan_destroy(p);
}

ACC_TEST(chunks_of_different_sizes_are_refused)
{
    /* out has 3 chunks for 2 ranks' worth of allgather data: with 7 elements per rank, rank 1's
     * 7-element input cannot land in a 4- or 5-element output chunk */
    acc_plan_t *p = create(ACC_COLL_ALLGATHER, 2, 1, 1, 3, 0, "bad");
    int r;
    for (r = 0; r < 2; r++) {
        add(p, r, 0, ACC_OP_SEND, 1 - r, -1, IN(0, 1), NONE);
        add(p, r, 0, ACC_OP_RECV, 1 - r, -1, NONE, OUT(1 + r, 1));
    }
    run_float(p, 7, ACC_ERR_INVALID);
    CHECK_MSG_HAS("writes 7 elements into out chunk");
    acc_plan_destroy(p);
}

ACC_TEST(out_of_range_operations_are_refused)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, 2, 1, 1, 1, 0, "bad");
    add(p, 0, 0, ACC_OP_SEND, 2, -1, IN(0, 1), NONE);
    run_float(p, 4, ACC_ERR_INVALID);
    CHECK_MSG_HAS("rank 0 lane 0 operation 0 (send): peer outside the ranks");
    acc_plan_destroy(p);
    p = create(ACC_COLL_ALLREDUCE, 2, 1, 1, 1, 0, "bad");
    add(p, 1, 0, ACC_OP_COPY, -1, -1, IN(0, 1), OUT(1, 1));
    run_float(p, 4, ACC_ERR_INVALID);
    CHECK_MSG_HAS("destination chunks outside the buffer");
    CHECK_ERR(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, 4, NULL, NULL, 1), ACC_ERR_UNSUPPORTED);
    acc_plan_destroy(p);
}

ACC_TEST(scratch_read_before_write_is_refused)
{
    acc_plan_t *p = create(ACC_COLL_ALLREDUCE, 1, 1, 1, 1, 1, "bad");
    add(p, 0, 0, ACC_OP_COPY, -1, -1, SCR(0, 1), OUT(0, 1));
    run_float(p, 4, ACC_ERR_INVALID);
    CHECK_MSG_HAS("reads scratch chunk 0 of rank 0 before anything was written to it");
    acc_plan_destroy(p);
}

ACC_TEST(names_parse_and_print)
{
    acc_dtype_t t;
    acc_redop_t o;
    int i;
    for (i = 0; i < ACC_DT_COUNT; i++) {
        CHECK_OK(acc_dtype_parse(acc_dtype_name((acc_dtype_t)i), &t));
        CHECK_INT(t, i);
    }
    for (i = 0; i < ACC_RED_COUNT; i++) {
        CHECK_OK(acc_redop_parse(acc_redop_name((acc_redop_t)i), &o));
        CHECK_INT(o, i);
    }
    CHECK_OK(acc_dtype_parse("bf16", &t));
    CHECK_INT(t, ACC_DT_BF16);
    CHECK_OK(acc_dtype_parse("FP16", &t));
    CHECK_INT(t, ACC_DT_F16);
    CHECK_INT(acc_dtype_size(ACC_DT_F64), 8);
    CHECK_ERR(acc_dtype_parse("int8", &t), ACC_ERR_INVALID);
    CHECK_MSG_HAS("float, half, bfloat16, double, int32");
    CHECK_ERR(acc_redop_parse("mean", &o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("sum, prod, min, max, avg");
}
