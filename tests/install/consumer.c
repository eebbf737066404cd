/*
 * consumer.c - a program outside the tree that uses an installed acc, as a user's would: it
 * includes only <acc/acc.h>, loads a synthetic eight-GPU NVSwitch node, generates the allreduce
 * ring plan, verifies it and prints the topology's fingerprint and the plan's operation count;
 * given a shipped platform's name, it also loads that platform and says where it found it.
 * tests/install/check.sh builds it against an installed prefix with pkg-config and with
 * find_package(acc), and compares what it prints with the installed acc-compile.
 */
#include <acc/acc.h>

#include <stdio.h>

#define TOPOLOGY "gpus=8 nvlink=18"

int main(int argc, char **argv)
{
    acc_topo_t *topo = NULL, *platform = NULL;
    acc_plan_t *plan = NULL;
    const acc_algo_t *ring = NULL;
    acc_algo_args_t args = {0};
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    acc_status_t st;

    st = acc_topo_load(TOPOLOGY, &topo);
    if (st != ACC_OK)
        goto out;
    ring = acc_algo_find(ACC_COLL_ALLREDUCE, "ring");
    if (!ring) {
        st = ACC_ERR_NOT_FOUND;
        goto out;
    }
    /* acc_algo_generate verifies the plan before returning it; verifying again is what a
     * program that received a plan from elsewhere does, and costs little. */
    st = acc_algo_generate(ring, topo, &args, &plan);
    if (st != ACC_OK)
        goto out;
    st = acc_plan_verify(plan);
    if (st != ACC_OK)
        goto out;
    st = acc_topo_fingerprint(topo, fingerprint);
    if (st != ACC_OK)
        goto out;
    printf("acc %s\n", ACC_VERSION_STRING);
    printf("topology %s: %d ranks, fingerprint %s\n", TOPOLOGY, acc_topo_ranks(topo), fingerprint);
    printf("allreduce ring: %zu operations, verified\n", acc_plan_op_count(plan));
    if (argc > 1) {
        st = acc_topo_load_platform(argv[1], &platform);
        if (st != ACC_OK)
            goto out;
        printf("platform %s: %d ranks, from %s\n", argv[1], acc_topo_ranks(platform),
               acc_topo_platform_dir());
    }
out:
    if (st != ACC_OK)
        fprintf(stderr, "consumer: %s: %s\n", acc_status_name(st), acc_error_message());
    acc_plan_destroy(plan);
    acc_topo_destroy(topo);
    acc_topo_destroy(platform);
    return st == ACC_OK ? 0 : 1;
}
