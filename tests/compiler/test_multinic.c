/*
 * Nodes with several NICs per GPU, in the tables: acc's plans use every NIC (the simulator sends
 * lane l through NIC l mod n), so that on two AWS p5 nodes (four 100 Gb/s EFA per GPU) acc's best
 * allreduce at >= 256 MiB is at least as fast as NCCL's model, and a node with a quarter of the
 * NICs is as much slower as its bandwidth says.
 */
#include "acc_test.h"
#include "acc_select.h"
#include "acc_topo.h"

#define MIB (1024ull * 1024ull)

/* The allreduce table of `src` on `params` (acc_topo_with_network), from 256 MiB to 1 GiB. */
static acc_select_result_t *allreduce(const char *src, const char *params)
{
    acc_topo_t *base = NULL, *t = NULL;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    acc_select_build_opts_t o;

    acc_select_build_opts_init(&o);
    o.min_bytes = 256 * MIB;
    o.max_bytes = 1024 * MIB;
    CHECK_OK(acc_topo_load(src, &base));
    CHECK_OK(acc_topo_with_network(base, params, &t));
    CHECK_OK(acc_select_builder_create(t, &o, &b));
    CHECK_OK(acc_select_build(b, ACC_COLL_ALLREDUCE, &r));
    acc_select_builder_destroy(b);
    acc_topo_destroy(t);
    acc_topo_destroy(base);
    return r;
}

/* The case: the shipped aws-p5 on two nodes of EFA.  Before every NIC counted acc's best
 * plan took 2.8x NCCL's time at 256 MiB (4.18 ms against 1.50). */
ACC_TEST(two_p5_nodes_allreduce_reaches_nccl_model_from_256m)
{
    acc_select_result_t *r = allreduce("aws-p5", "nodes=2 fabric=efa");
    size_t i;

    CHECK(r->nrows >= 3);
    for (i = 0; i < r->nrows; i++) {
        const acc_select_row_t *row = &r->rows[i];
        CHECK(row->nccl_ok && row->plan >= 0);
        CHECK_MSG(row->speedup >= 1.0,
                  "at %llu bytes acc's best %s %s takes %g us, NCCL's model %g",
                  (unsigned long long)row->nbytes, r->plans[row->plan].plan->algo,
                  r->plans[row->plan].params, row->acc_us, row->nccl.time_us);
        CHECK(!row->use_nccl);
        /* acc's plan sends through all 32 NICs: faster than one NIC per GPU could, whose 8 x
         * 12.5 GB/s per node carry the node's share of a 2-node allreduce (the whole message)
         * in nbytes / 100 GB/s. */
        CHECK(row->acc_us < (double)row->nbytes / (8 * 12.5e3));
    }
    acc_select_result_destroy(r);
}

/* Two nodes of eight H100 on NVSwitch with the NICs nic_a and nic_b ("COUNTxGBPS") on `fabric`. */
static void two_tables(const char *nic_a, const char *nic_b, const char *fabric,
                       acc_select_result_t **a, acc_select_result_t **b)
{
    char desc[96];
    snprintf(desc, sizeof(desc), "nodes=2 gpus=8 arch=h100 nvlink=18 nic=%s", nic_a);
    *a = allreduce(desc, fabric);
    snprintf(desc, sizeof(desc), "nodes=2 gpus=8 arch=h100 nvlink=18 nic=%s", nic_b);
    *b = allreduce(desc, fabric);
}

/* The same node type with one 100 Gb/s NIC per GPU (a quarter of the NICs): acc's best is at
 * least 2x slower at every size, since the NICs are the bottleneck there. */
ACC_TEST(a_quarter_of_the_nics_is_at_least_twice_as_slow)
{
    acc_select_result_t *four, *one;
    size_t i;

    two_tables("32x100", "8x100", "fabric=efa", &four, &one);
    CHECK_INT((int)four->nrows, (int)one->nrows);
    for (i = 0; i < four->nrows; i++)
        CHECK_MSG(one->rows[i].acc_us > 2.0 * four->rows[i].acc_us,
                  "at %llu bytes: %g us with 8 NICs, %g us with 32",
                  (unsigned long long)four->rows[i].nbytes, one->rows[i].acc_us,
                  four->rows[i].acc_us);
    acc_select_result_destroy(four);
    acc_select_result_destroy(one);
}

/* Two 200 Gb/s NICs per GPU (OCI BM.GPU.H100.8, AWS p5en) carry what one 400 Gb/s NIC does:
 * acc's best times agree within 2 %, and both reach NCCL's model. */
ACC_TEST(two_nics_of_200g_match_one_of_400g)
{
    acc_select_result_t *two, *one;
    size_t i;

    two_tables("16x200", "8x400", "fabric=roce", &two, &one);
    for (i = 0; i < two->nrows; i++) {
        CHECK_NEAR(two->rows[i].acc_us / one->rows[i].acc_us, 1.0, 0.02);
        CHECK(two->rows[i].speedup >= 1.0);
    }
    acc_select_result_destroy(two);
    acc_select_result_destroy(one);
}

/* p4d: four NICs for eight GPUs, two GPUs on each.  The NICs are the bottleneck and shared:
 * acc's best still reaches NCCL's model. */
ACC_TEST(p4d_shared_nics_reach_nccl_model)
{
    acc_select_result_t *r = allreduce("aws-p4d", "nodes=2 fabric=efa");
    size_t i;
    for (i = 0; i < r->nrows; i++)
        CHECK_MSG(r->rows[i].speedup >= 1.0, "at %llu bytes: acc %g us, NCCL %g us",
                  (unsigned long long)r->rows[i].nbytes, r->rows[i].acc_us,
                  r->rows[i].nccl.time_us);
    acc_select_result_destroy(r);
}

/* The other case: a 1 KiB allreduce on two p5 nodes was predicted at 6.4 us, below what
 * one message across EFA takes.  Every size up to 64 KiB now takes at least the fabric's one-way
 * latency, in acc's plans and in NCCL's model (whose plugin, aws-ofi-nccl, reports 75 us), and
 * no plan is faster than the bound. */
ACC_TEST(two_p5_nodes_small_allreduce_takes_efas_latency)
{
    acc_topo_t *base = NULL, *t = NULL;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;
    acc_select_build_opts_t o;
    double efa = acc_topo_fabric_latency_us("efa");
    size_t i;

    acc_select_build_opts_init(&o);
    o.min_bytes = 1024;
    o.max_bytes = 64 * 1024;
    CHECK_OK(acc_topo_load("aws-p5", &base));
    CHECK_OK(acc_topo_with_network(base, "nodes=2 fabric=efa", &t));
    CHECK_NEAR(efa, 77.7, 1e-9);
    CHECK_NEAR(acc_topo_network(t)->latency_us, efa, 1e-9);
    CHECK_OK(acc_select_builder_create(t, &o, &b));
    CHECK_OK(acc_select_build(b, ACC_COLL_ALLREDUCE, &r));
    CHECK(r->nrows >= 7);
    for (i = 0; i < r->nrows; i++) {
        const acc_select_row_t *row = &r->rows[i];
        CHECK_MSG(row->acc_us >= efa, "at %llu bytes acc's plan takes %g us, below EFA's %g",
                  (unsigned long long)row->nbytes, row->acc_us, efa);
        CHECK_MSG(row->nccl_ok && row->nccl.time_us >= efa,
                  "at %llu bytes NCCL's model gives %g us, below EFA's %g",
                  (unsigned long long)row->nbytes, row->nccl.time_us, efa);
        CHECK(row->bound.us >= efa && row->bound.us <= row->acc_us * (1 + 1e-9));
    }
    acc_select_result_destroy(r);
    acc_select_builder_destroy(b);
    acc_topo_destroy(t);
    acc_topo_destroy(base);
}

/* Four network planes, every GPU with a NIC on each (NIC k of 32 on plane k mod 4): the simulator
 * pairs NICs of one plane, and acc's plans take the same time as on one plane. */
ACC_TEST(four_planes_carry_what_one_does)
{
    acc_select_result_t *one = allreduce("nodes=2 gpus=8 nvlink=18 nic=32x100", "fabric=efa");
    acc_select_result_t *four =
        allreduce("nodes=2 gpus=8 nvlink=18 nic=32x100 planes=4", "fabric=efa");
    size_t i;
    CHECK_INT((int)four->nrows, (int)one->nrows);
    for (i = 0; i < four->nrows; i++)
        CHECK_NEAR(four->rows[i].acc_us / one->rows[i].acc_us, 1.0, 1e-9);
    acc_select_result_destroy(four);
    acc_select_result_destroy(one);
}
