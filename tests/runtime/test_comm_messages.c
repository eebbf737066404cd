/*
 * What a communicator says, read as a user reads it.  An invalid ACC_* value, on any rank, is
 * one error line naming the variable, and acc's schedules are off (the fallback serves every
 * call; an invalid ACC_TIMEOUT_MS is the default): the job runs, as it does with any other
 * problem acc has (on main ACC_TIMEOUT_MS=abc failed the job's set-up while ACC_DISABLE=yes
 * only warned).  The reason other ranks see is whole (main cut it at about 255 characters);
 * the cuda backend asked for without a GPU is said once, not garbled and repeated.
 */
#include "comm_util.h"
#include "ranks.h"

#define TOPO "gpus=2 nvlink=18"

typedef struct {
    char db[512];
    const char *var, *value; /* rank 1's invalid setting */
    const char *named;       /* what the line and the reason say */
} bad_setting_t;

/* Each rank logs to a file of its own; returns how many lines of the log hold `what`. */
static int log_lines(int rank, const char *what)
{
    char name[64], line[2048];
    int n = 0;
    FILE *f;
    snprintf(name, sizeof(name), "rank%d.log", rank);
    CHECK((f = fopen(acc_test_tmp(name), "r")) != NULL);
    while (fgets(line, sizeof(line), f))
        if (strstr(line, what)) {
            printf("rank %d: %s", rank, line);
            n++;
        }
    fclose(f);
    return n;
}

static int with_bad_setting(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const bad_setting_t *b = arg;
    char name[64];
    acc_comm_t *c;
    FILE *log;

    snprintf(name, sizeof(name), "rank%d.log", rank);
    CHECK((log = fopen(acc_test_tmp(name), "w")) != NULL);
    setvbuf(log, NULL, _IONBF, 0);
    acc_log_set_stream(log);
    if (rank == 1)
        setenv(b->var, b->value, 1);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    printf("rank %d: %s\n", rank, acc_comm_fallback_reason(c));
    CHECK(strstr(acc_comm_fallback_reason(c), b->named) != NULL);
    for (int s = 0; s < 4; s++) {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 1000u << (3 * s), s & 1, 0, 3};
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_destroy(c));
    acc_log_set_stream(NULL);
    fclose(log);
    return 0;
}

ACC_TEST(an_invalid_setting_turns_acc_off_with_one_error_naming_it)
{
    static const struct {
        const char *var, *value, *named;
    } cases[] = {
        {"ACC_TIMEOUT_MS", "abc", "ACC_TIMEOUT_MS='abc' is not an integer"},
        {"ACC_TIMEOUT_MS", "-5", "ACC_TIMEOUT_MS=-5 is not a timeout"},
        {"ACC_DISABLE", "yes", "ACC_DISABLE='yes'"},
        {"ACC_BACKEND", "gpu", "ACC_BACKEND='gpu' is not auto, host or cuda"},
        {"ACC_LOG_LEVEL", "loud", "ACC_LOG_LEVEL='loud' is not a log level"},
        {"ACC_STREAMS", "two", "ACC_STREAMS='two' is not an integer"},
    };
    bad_setting_t b;
    snprintf(b.db, sizeof(b.db), "%s", acc_test_tmp("tables.db"));
    build_db(b.db, TOPO);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        comm_env(TOPO, "30000");
        setenv("ACC_DB", b.db, 1);
        setenv("ACC_LOG_LEVEL", "warn", 1);
        b.var = cases[i].var;
        b.value = cases[i].value;
        b.named = cases[i].named;
        printf("-- %s=%s\n", b.var, b.value);
        ranks_run(2, with_bad_setting, &b, 60);
        /* One line among all ranks: rank 0's, an error, with rank 1's reason. */
        CHECK_INT(log_lines(0, "acc ERROR") + log_lines(1, "acc ERROR"), 1);
        CHECK_INT(log_lines(0, b.named), 1);
    }
}

/* ---- the reason, whole ---------------------------------------------------------------------- */

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static int long_reason(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const char *path = arg;
    acc_comm_t *c;
    call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 999, 0, 0, 1};
    if (rank == 2)
        setenv("ACC_DB", path, 1);
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    printf("rank %d: %s\n", rank, acc_comm_fallback_reason(c));
    /* The path, twice: where the database is not, and the command that builds one there. */
    CHECK_MSG(count_of(acc_comm_fallback_reason(c), path) == 2,
              "rank %d's reason lacks the database's %zu-character path", rank, strlen(path));
    call_ok(c, &k);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(the_reason_every_rank_sees_is_whole)
{
    char path[640], db[512];
    int n;
    snprintf(db, sizeof(db), "%s", acc_test_tmp("tables.db"));
    build_db(db, "gpus=4 nvlink=18");
    /* Rank 2 alone is given a database that is not there, at a path of 500 characters. */
    n = snprintf(path, sizeof(path), "%s/", acc_test_tmp("gone"));
    while (n < 480)
        n += snprintf(path + n, sizeof(path) - (size_t)n, "a-directory-that-is-not-there/");
    snprintf(path + n, sizeof(path) - (size_t)n, "acc.db");
    comm_env("gpus=4 nvlink=18", "30000");
    setenv("ACC_DB", db, 1);
    ranks_run(4, long_reason, path, 60);
}

/* ---- the cuda backend without a GPU ----------------------------------------------------- */

static int cuda_without_gpu(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = NULL;
    const char *m;
    (void)arg;
    setenv("ACC_BACKEND", "cuda", 1);
    CHECK_ERR(acc_comm_init_rank(&c, nranks, id, rank, NULL), ACC_ERR_NO_DEVICE);
    m = acc_error_message();
    printf("rank %d: %s\n", rank, m);
    CHECK_MSG_HAS("the cuda backend was asked for (ACC_BACKEND), but this rank has no usable GPU");
    CHECK_INT(count_of(m, "GPU"), count_of(m, "no usable GPU") + count_of(m, "GPU work"));
    CHECK_INT(count_of(m, "no usable GPU"), 1);
    CHECK_INT(count_of(m, "ACC_BACKEND"), 1);
    return 0;
}

ACC_TEST(the_cuda_backend_without_a_gpu_is_said_once)
{
    if (ranks_gpu_present())
        ACC_SKIP("this machine has a GPU: the cuda backend is not refused here");
    comm_env("gpus=2", "30000");
    ranks_run(2, cuda_without_gpu, NULL, 60);
}
