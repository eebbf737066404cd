/*
 * The average on the host backend, divided where each plan completes its sums
 * (acc_plan_final_reductions) instead of in a pass over the output: for every allreduce
 * generator on one node (peer memory, staged) and across two (TCP), every type, in place and
 * not, the bits equal those of the sum divided afterwards (hx_divide), the way it was done
 * before.
 */
#include "acc_compiler.h"
#include "comm_util.h"
#include "exec/host_reduce.h"
#include "ranks.h"

#include <stdlib.h>
#include <string.h>

static const char *const algos[] = {"ring", "tree", "rhd", "oneshot", "twoshot", "hier"};

static int avg_rank(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const char *spec = arg;
    acc_comm_opts_t o;
    acc_comm_t *c = NULL;
    acc_topo_t *topo = NULL;
    acc_plan_t *plans[sizeof(algos) / sizeof(algos[0])] = {NULL};
    uint64_t count = 4099;
    unsigned char *in = malloc(count * 8), *sum = malloc(count * 8), *avg = malloc(count * 8);
    int ran = 0;

    acc_comm_opts_init(&o);
    o.topo = spec;
    o.db = acc_test_tmp("no-such.db"); /* the topology places the ranks; no tables */
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_OK(acc_topo_load(spec, &topo));
    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
        const acc_algo_t *al = acc_algo_find(ACC_COLL_ALLREDUCE, algos[a]);
        acc_algo_args_t args = {.lanes = 2};
        acc_plan_t *p = NULL;
        if (acc_algo_generate(al, topo, &args, &p) != ACC_OK)
            continue; /* the generator does not apply to this topology */
        plans[a] = p; /* the communicator borrows it until it is destroyed */
        for (int dt = 0; dt < ACC_DT_COUNT; dt++)
            for (int inplace = 0; inplace < 2; inplace++) {
                size_t bytes = count * acc_dtype_size((acc_dtype_t)dt);
                acc_status_t st;
                acc_host_fill_rank(ACC_COLL_ALLREDUCE, nranks, rank, (acc_dtype_t)dt, ACC_RED_AVG,
                                   ACC_FILL_RANDOM, (uint32_t)(a * 10 + (size_t)dt), count, in);
                st = acc_comm_run_plan(c, p, in, sum, count, (acc_dtype_t)dt, ACC_RED_SUM, NULL);
                if (st == ACC_ERR_UNSUPPORTED)
                    break; /* peer memory between the nodes */
                CHECK_OK(st);
                hx_divide((acc_dtype_t)dt, sum, count, nranks);
                if (inplace) {
                    memcpy(avg, in, bytes);
                    CHECK_OK(acc_comm_run_plan(c, p, avg, avg, count, (acc_dtype_t)dt, ACC_RED_AVG,
                                               NULL));
                } else {
                    CHECK_OK(acc_comm_run_plan(c, p, in, avg, count, (acc_dtype_t)dt, ACC_RED_AVG,
                                               NULL));
                }
                CHECK_MSG(memcmp(sum, avg, bytes) == 0, "%s on %s, %s%s: the average differs",
                          algos[a], spec, acc_dtype_name((acc_dtype_t)dt),
                          inplace ? " in place" : "");
                ran++;
            }
    }
    CHECK(ran >= 20);
    acc_topo_destroy(topo);
    CHECK_OK(acc_comm_destroy(c));
    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
        acc_plan_destroy(plans[a]);
    free(in);
    free(sum);
    free(avg);
    return 0;
}

ACC_TEST(average_where_the_sums_complete_one_node)
{
    setenv("ACC_LOG_LEVEL", "error", 1);
    ranks_run(4, avg_rank, (void *)"gpus=4 nvlink=18", 240);
}

ACC_TEST(average_where_the_sums_complete_two_nodes)
{
    setenv("ACC_LOG_LEVEL", "error", 1);
    ranks_run(4, avg_rank, (void *)"nodes=2 gpus=2 nvlink=18 nic=1x100", 240);
}

ACC_TEST(average_of_three_ranks)
{
    setenv("ACC_LOG_LEVEL", "error", 1);
    ranks_run(3, avg_rank, (void *)"gpus=3", 240);
}
