/*
 * The host backend's own tables: acc_comm_run_plan runs a given plan whatever the tables say,
 * and acc-bench --tables measures every candidate through it and stores the fastest per size,
 * which a communicator then uses; a database of predicted tables is not overwritten.
 */
#include "acc_compiler.h"
#include "acc_db.h"
#include "acc_test.h"
#include "cli_util.h"
#include "ranks.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char out[1 << 16];

/* Run a command line; its output in out, its exit status. */
static int run(const char *cmd)
{
    return cli_run(cmd, out, sizeof(out));
}

static acc_plan_t *plan_of(const char *spec, const char *algo, int lanes)
{
    acc_topo_t *topo = NULL;
    acc_plan_t *p = NULL;
    acc_algo_args_t args = {.lanes = lanes};
    CHECK_OK(acc_topo_load(spec, &topo));
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, algo), topo, &args, &p));
    acc_topo_destroy(topo);
    return p;
}

/* The plan run on c (in place or not) gives every element right. */
static void check_plan(acc_comm_t *c, const acc_plan_t *p, acc_redop_t op, uint32_t seed,
                       int inplace, float *in, float *res, uint64_t count)
{
    int n = acc_comm_size(c), me = acc_comm_rank(c);
    float *o = inplace ? in : res;
    acc_host_fill_rank(ACC_COLL_ALLREDUCE, n, me, ACC_DT_F32, op, ACC_FILL_RANDOM, seed, count, in);
    CHECK_OK(acc_comm_run_plan(c, p, in, o, count, ACC_DT_F32, op, NULL));
    CHECK_INT((int)acc_host_check_rank(ACC_COLL_ALLREDUCE, n, 0, me, ACC_DT_F32, op,
                                       ACC_FILL_RANDOM, seed, count, o, NULL),
              0);
}

static int run_plan_rank(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_opts_t o;
    acc_comm_t *c = NULL;
    acc_plan_t *rhd = plan_of("nodes=2 gpus=2 nic=1x100", "rhd", 1);
    acc_plan_t *three = plan_of("gpus=3", "ring", 1);
    /* peer memory between all four ranks, two of which are on the other node here */
    acc_plan_t *twoshot = plan_of("gpus=4 nvlink=18", "twoshot", 1);
    uint64_t count = 1001;
    float *in = malloc(count * 4), *res = malloc(count * 4);
    acc_comm_stat_t *stats = NULL;
    size_t nstats = 0;

    acc_comm_opts_init(&o);
    /* Two nodes of two ranks (TCP between them), and no tables: every allreduce would take
     * the ring. */
    o.topo = "nodes=2 gpus=2 nic=1x100";
    o.db = arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    check_plan(c, rhd, ACC_RED_SUM, 3, 0, in, res, count);
    check_plan(c, rhd, ACC_RED_AVG, 4, 1, in, res, count); /* in place, the average */
    /* not counted as the tables' or the fallback's calls */
    CHECK_OK(acc_comm_stats(c, &stats, &nstats));
    CHECK_INT((int)nstats, 0);
    acc_mem_free(stats);
    /* a plan of another rank count, and one whose peer memory spans nodes */
    CHECK_ERR(acc_comm_run_plan(c, three, in, res, count, ACC_DT_F32, ACC_RED_SUM, NULL),
              ACC_ERR_INVALID);
    CHECK_MSG_HAS("3 ranks");
    CHECK_ERR(acc_comm_run_plan(c, twoshot, in, res, count, ACC_DT_F32, ACC_RED_SUM, NULL),
              ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("another node");
    CHECK_ERR(acc_comm_run_plan(c, NULL, in, res, count, ACC_DT_F32, ACC_RED_SUM, NULL),
              ACC_ERR_INVALID);
    /* the communicator is whole after all that */
    CHECK_OK(acc_comm_run_plan(c, rhd, in, res, count, ACC_DT_F32, ACC_RED_SUM, NULL));
    CHECK_OK(acc_comm_destroy(c));
    acc_plan_destroy(rhd);
    acc_plan_destroy(three);
    acc_plan_destroy(twoshot);
    free(in);
    free(res);
    return 0;
}

ACC_TEST(run_plan_serves_one_plan_whatever_the_tables)
{
    ranks_t rs;
    setenv("ACC_LOG_LEVEL", "error", 1);
    ranks_start(&rs, 4, run_plan_rank, (void *)acc_test_tmp("no-such.db"));
    CHECK_INT(ranks_wait(&rs, 120), 0);
}

/* What a communicator of the database at path runs for an allreduce of 64 KiB. */
static int uses_rank(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_opts_t o;
    acc_comm_t *c = NULL;
    float *buf = calloc(16384, sizeof(float));
    acc_comm_stat_t *stats = NULL;
    size_t n = 0;

    acc_comm_opts_init(&o);
    o.topo = "gpus=2";
    o.db = arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &o));
    CHECK_OK(acc_allreduce(buf, buf, 16384, ACC_DT_F32, ACC_RED_SUM, c, NULL));
    CHECK_OK(acc_comm_stats(c, &stats, &n));
    CHECK_INT((int)n, 1);
    CHECK_MSG(!stats[0].fallback, "the measured table's plan ran, not the fallback: %s",
              stats[0].ran);
    acc_mem_free(stats);
    CHECK_OK(acc_comm_destroy(c));
    free(buf);
    return 0;
}

ACC_TEST(tables_measured_on_the_host_backend)
{
    const char *db_path = acc_test_tmp("host.db"), *gpu_db = acc_test_tmp("gpu.db");
    char cmd[8192], fp[ACC_SHA256_HEX_LEN + 1];
    acc_db_t *db = NULL;
    acc_topo_t *topo = NULL;
    acc_select_table_t *t = NULL;
    ranks_t rs;

    setenv("ACC_LOG_LEVEL", "error", 1);
    snprintf(cmd, sizeof(cmd),
             "%s --runtime host --nranks 2 --topo gpus=2 --tables '%s' -b 1K -e 64K -f 8 -n 1 "
             "-w 0",
             ACC_BENCH_EXE, db_path);
    CHECK_INT(run(cmd), 0);
    printf("%s", out);
    CHECK(strstr(out, "# acc-bench --tables") && strstr(out, "candidate plans, 3 sizes"));
    CHECK(strstr(out, "\n        1024 ") && strstr(out, "\n       65536 "));
    CHECK(strstr(out, "# stored: "));
    /* every range measured, from 0 to every size above the sweep */
    CHECK_OK(acc_topo_load("gpus=2", &topo));
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(db_path, ACC_DB_READONLY, &db));
    CHECK_OK(acc_db_get_selection(db, fp, ACC_COLL_ALLREDUCE, &t));
    CHECK(t->n >= 1);
    CHECK(t->entries[0].min_bytes == 0 && t->entries[t->n - 1].max_bytes == UINT64_MAX);
    for (size_t i = 0; i < t->n; i++) {
        CHECK_INT(t->entries[i].source, ACC_SELECT_MEASURED);
        CHECK(!t->entries[i].use_nccl && t->entries[i].measured_us > 0);
    }
    acc_select_destroy(t);
    acc_db_close(db);
    acc_topo_destroy(topo);
    /* a communicator of that database runs the measured plan */
    ranks_start(&rs, 2, uses_rank, (void *)db_path);
    CHECK_INT(ranks_wait(&rs, 120), 0);
    /* an image build's predicted tables are left alone */
    snprintf(cmd, sizeof(cmd), "%s --topo gpus=2 --db '%s'", ACC_COMPILE_EXE, gpu_db);
    CHECK_INT(run(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "%s --runtime host --nranks 2 --topo gpus=2 --tables '%s' -b 1K -e 1K -n 1 -w 0",
             ACC_BENCH_EXE, gpu_db);
    CHECK_INT(run(cmd), 1);
    CHECK(strstr(out, "holds tables predicted for this topology"));
    /* and --tables is the host backend's alone */
    snprintf(cmd, sizeof(cmd), "%s --runtime cuda --nranks 2 --tables '%s'", ACC_BENCH_EXE,
             db_path);
    CHECK_INT(run(cmd), 2);
}
