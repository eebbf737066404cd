/*
 * The simulator on a class plan's quotient (acc_cplan_quotient, acc_sim_plan with a period):
 * playing one node of a plan that is the same moved by a node gives the times of playing
 * every rank.  Checked against the whole expansion for the generators with a class form, on
 * clusters with one NIC per GPU, several per GPU, a shared NIC, an oversubscribed and a
 * rail-optimised fabric, each protocol and sizes from 4 KiB to 256 MiB; and that plans which
 * are not the same moved, and quotients anything else would misread, are refused with a
 * message.
 */
#include "acc_test.h"

#include "acc_compiler.h"
#include "acc_cost.h"
#include "class_forms.h"

#include <math.h>
#include <string.h>

/* Quotient and whole plan, simulated alike: equal times (to rounding), link utilisation and
 * transfer counts.  Returns how many comparisons ran. */
static int compare(const char *desc, int lanes)
{
    /* Sizes every plan's chunks divide (840 = lcm(1 .. 8) elements a rank): with uneven chunks
     * the ranks' bytes differ by an element, which the quotient, playing one node's, does not
     * see (checked apart below). */
    static const uint64_t per_rank[] = {4 * 840, 4 * 840 * 64, 4 * 840 * 4096};
    static const acc_proto_t protos[] = {ACC_PROTO_SIMPLE, ACC_PROTO_LL128, ACC_PROTO_LL};
    acc_topo_t *t = cf_load(desc);
    acc_sim_t *sim = NULL;
    int gpn = acc_topo_gpus_per_node(t), n = 0;
    size_t f, i, k;

    CHECK_OK(acc_sim_create(t, &sim));
    for (f = 0; f < CF_NFORMS; f++) {
        acc_algo_args_t args = cf_args(f, lanes, 0);
        acc_cplan_t *cp = NULL;
        acc_plan_t *whole = NULL, *quot = NULL;
        if (cf_forms[f]->algo->supports(t, &args) != ACC_OK || !cf_has_class(f, t, &args)) {
            acc_error_clear();
            continue;
        }
        CHECK_OK(acc_algo_generate_class(cf_forms[f]->algo, t, &args, &cp, NULL));
        CHECK_OK(acc_cplan_expand(cp, &whole));
        CHECK_MSG(acc_cplan_quotient(cp, gpn, &quot) == ACC_OK, "%s %s %s: %s", desc,
                  acc_coll_name(cp->coll), cp->algo, acc_error_message());
        CHECK_MSG(quot->period % gpn == 0 && quot->period <= 2 * gpn, "%s: a period of %d", desc,
                  quot->period);
        for (k = 0; k < sizeof(protos) / sizeof(protos[0]); k++)
            for (i = 0; i <= sizeof(per_rank) / sizeof(per_rank[0]); i++) {
                /* the last: 1 MiB, which 24 or 40 ranks' chunks do not divide */
                uint64_t bytes = i < 3 ? per_rank[i] * (uint64_t)acc_topo_ranks(t) : 1u << 20;
                cf_sim_agree(sim, whole, quot, protos[k], bytes, i < 3 ? 1e-9 : 1e-2, desc);
                n++;
            }
        acc_plan_destroy(whole);
        acc_plan_destroy(quot);
        acc_cplan_destroy(cp);
    }
    acc_sim_destroy(sim);
    acc_topo_destroy(t);
    return n;
}

ACC_TEST(quotient_times_equal_whole)
{
    static const struct {
        const char *desc;
        int lanes;
    } cases[] = {
        {"nodes=4 gpus=8 nvlink=18 nic=8x400", 0},
        {"nodes=6 gpus=4 nvlink=18 nic=4x400", 2},
        {"nodes=6 gpus=8 nvlink=18 nic=4x400", 4},           /* two GPUs a NIC */
        {"nodes=4 gpus=8 nvlink=18 nic=16x200", 0},          /* two NICs a GPU */
        {"nodes=8 gpus=4 nvlink=18 nic=4x400 oversub=3", 0}, /* fabric shares */
        {"nodes=8 gpus=4 nvlink=18 nic=4x400 oversub=2 rail=1", 3},
        {"nodes=16 gpus=1 nic=1x400", 1},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        n += compare(cases[i].desc, cases[i].lanes);
    /* every case ran the four generators (hier needs two GPUs a node) */
    CHECK_MSG(n >= 6 * 4 * 12 + 3 * 12, "only %d comparisons ran", n);
}

/* A plan that is not the same moved by a node has no quotient, and says where. */
ACC_TEST(quotient_refused_where_not_periodic)
{
    acc_topo_t *t = cf_load("nodes=4 gpus=4 nvlink=18 nic=4x400");
    acc_plan_t *plan = NULL, *quot = NULL;
    acc_cplan_t *cp = NULL;
    acc_sim_t *sim = NULL;
    acc_sim_result_t r;

    /* A tree has a root: its explicit plan's class form names ranks absolutely. */
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "tree"), t, NULL, &plan));
    CHECK_OK(acc_cplan_from_plan(plan, &cp));
    CHECK(acc_cplan_quotient(cp, 4, &quot) == ACC_ERR_UNSUPPORTED);
    CHECK(quot == NULL);
    CHECK_MSG(strstr(acc_error_message(), "no quotient by 4 ranks") &&
                  strstr(acc_error_message(), "absolutely") &&
                  strstr(acc_error_message(), "nor by any multiple"),
              "%s", acc_error_message());
    /* Its whole plan is its own quotient by every rank. */
    CHECK_OK(acc_cplan_quotient(cp, 16, &quot));
    acc_plan_destroy(quot);
    quot = NULL;
    /* A period that does not divide the ranks. */
    CHECK(acc_cplan_quotient(cp, 3, &quot) == ACC_ERR_INVALID);
    acc_cplan_destroy(cp);
    acc_plan_destroy(plan);
    plan = NULL;

    /* A ring whose order differs on one node alone: no period short of every rank. */
    {
        acc_algo_args_t args = cf_args(0, 1, 0);
        int order[16] = {0, 1, 2, 3, 5, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        CHECK_OK(acc_algo_generate_class(algo_allreduce_ring_class.algo, t, &args, &cp, NULL));
        CHECK_OK(acc_cplan_set_ranks(cp, 0, order));
        CHECK(acc_cplan_quotient(cp, 4, &quot) == ACC_ERR_UNSUPPORTED);
        CHECK_MSG(strstr(acc_error_message(), "not the same moved by 4 ranks"), "%s",
                  acc_error_message());
        /* A quotient of 8 ranks on nodes of 4 is fine by the plan, and by the simulator. */
        acc_cplan_destroy(cp);
        CHECK_OK(acc_algo_generate_class(algo_allreduce_ring_class.algo, t, &args, &cp, NULL));
        CHECK_OK(acc_cplan_quotient(cp, 8, &quot));
        CHECK_INT(quot->period, 8);
        CHECK_OK(acc_sim_create(t, &sim));
        CHECK_OK(acc_sim_plan(sim, quot, 1 << 20, ACC_DT_F32, &r));
        /* Nothing but the simulator reads a quotient. */
        CHECK(acc_plan_verify(quot) == ACC_ERR_INVALID);
        CHECK(strstr(acc_error_message(), "quotient"));
        {
            acc_buf_t b;
            acc_buf_init(&b);
            CHECK(acc_plan_dump_yaml(quot, &b) == ACC_ERR_INVALID);
            acc_buf_free(&b);
        }
        /* A period that is not whole nodes of this topology. */
        acc_plan_destroy(quot);
        quot = NULL;
        acc_cplan_destroy(cp);
        CHECK_OK(acc_algo_generate_class(algo_allreduce_ring_class.algo, t, &args, &cp, NULL));
        CHECK_OK(acc_cplan_quotient(cp, 4, &quot));
        quot->period = 2;
        CHECK(acc_sim_plan(sim, quot, 1 << 20, ACC_DT_F32, &r) == ACC_ERR_INVALID);
        CHECK_MSG(strstr(acc_error_message(), "whole number of this topology's nodes"), "%s",
                  acc_error_message());
    }
    acc_plan_destroy(quot);
    acc_cplan_destroy(cp);
    acc_sim_destroy(sim);
    acc_topo_destroy(t);
}

/* 65,536 ranks: the hierarchical allreduce priced by playing one node, in seconds. */
ACC_TEST(quotient_at_65536_ranks)
{
    acc_topo_t *t = cf_load("nodes=8192 gpus=8 nvlink=18 nic=8x400");
    acc_algo_args_t args = cf_args(3, 0, 0);
    acc_cplan_t *cp = NULL;
    acc_plan_t *quot = NULL;
    acc_sim_t *sim = NULL;
    acc_sim_result_t r;

    CHECK_OK(acc_algo_generate_class(algo_allreduce_hier_class.algo, t, &args, &cp, NULL));
    CHECK_OK(acc_cplan_quotient(cp, 8, &quot));
    CHECK_OK(acc_sim_create(t, &sim));
    CHECK_OK(acc_sim_plan(sim, quot, 1ull << 30, ACC_DT_F32, &r));
    /* The rings between nodes take 2 x 8191 steps, each at least the fabric's 2.7 us; the
     * bytes (2 x 1 GiB / 8 a rail at 400 Gb/s) are 5.4 ms of them. */
    CHECK_MSG(r.time_us > 2 * 8191 * 2.7 && r.time_us < 1e6, "%.1f us", r.time_us);
    CHECK(r.busbw > 0);
    acc_sim_destroy(sim);
    acc_plan_destroy(quot);
    acc_cplan_destroy(cp);
    acc_topo_destroy(t);
}
