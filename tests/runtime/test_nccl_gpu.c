/*
 * Both doors with the real NCCL, on the GPUs of this machine (label gpu; skipped without a GPU
 * or without NCCL): one rank per GPU of the node, each a process of nccl_loop.
 *   - NCCL_TUNER_PLUGIN and NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING: NCCL's log shows the
 *     plugin loaded by the newest interface that NCCL has (v6 from 2.30, v5 before) and its one
 *     line per communicator; with two ranks or more (NCCL skips algorithm selection for one
 *     rank) each size runs the algorithm, protocol and channels the table names.
 *   - LD_PRELOAD of the drop-in under a loop of all-reduces of many sizes, odd ones among them:
 *     the calls reach the drop-in and every result is right.
 *   - ncclCommAbort during such a loop, as a watchdog calls it, returns within a second.
 *   - Where PyTorch with CUDA is (ACC_TORCH_PYTHON, else python3): a one-rank DDP step runs with
 *     the drop-in preloaded.
 * The parent never touches CUDA, so that the ranks it forks may.
 */
#include "acc_db.h"
#include "ranks.h"

#include <dirent.h>
#include <strings.h>

#define MAX_GPUS 8

/* The GPUs this process may use, without initialising CUDA: the driver's list, cut to
 * CUDA_VISIBLE_DEVICES when that is set. */
static int gpus(void)
{
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    struct dirent *e;
    int n = 0, v = 1;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    if (visible) {
        for (const char *p = visible; *p; p++)
            v += *p == ',';
        n = !visible[0] ? 0 : v < n ? v : n;
    }
    return n < MAX_GPUS ? n : MAX_GPUS;
}

static int need_gpus(void)
{
    int n = gpus();
    if (n == 0)
        ACC_SKIP("no GPU");
    if (!ACC_REAL_NCCL[0])
        ACC_SKIP("no NCCL library was found at configure time");
    return n;
}

/* ---- ranks of nccl_loop -------------------------------------------------------------------- */

typedef struct {
    const char *name; /* the case, for file names */
    const char *const *env;
    const char *const *sizes;
    int iterations;
} loop_t;

static const char *out_file(const char *name, int rank)
{
    static char file[128];
    snprintf(file, sizeof(file), "%s_rank%d.out", name, rank);
    return acc_test_tmp(file);
}

static int exec_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    const loop_t *l = arg;
    char r[16], n[16], it[16], idfile[512];
    const char *argv[32] = {NCCL_LOOP_EXE, r, n, idfile, it};
    int argc = 5;
    (void)unused;
    snprintf(r, sizeof(r), "%d", rank);
    snprintf(n, sizeof(n), "%d", nranks);
    snprintf(it, sizeof(it), "%d", l->iterations);
    snprintf(idfile, sizeof(idfile), "%s.id", acc_test_tmp(l->name));
    for (int i = 0; l->sizes[i] && argc < 31; i++)
        argv[argc++] = l->sizes[i];
    argv[argc] = NULL;
    for (int i = 0; l->env[i]; i += 2)
        setenv(l->env[i], l->env[i + 1], 1);
    if (!freopen(out_file(l->name, rank), "w", stdout) || dup2(fileno(stdout), 2) < 0)
        return 3;
    execv(NCCL_LOOP_EXE, (char *const *)argv);
    return 4;
}

static void run_loop(const loop_t *l, int nranks)
{
    char idfile[512];
    snprintf(idfile, sizeof(idfile), "%s.id", acc_test_tmp(l->name));
    unlink(idfile);
    ranks_run(nranks, exec_rank, (void *)l, 500);
}

/* Lines of a rank's output that contain a (and b, unless NULL). */
static int lines_with(const char *name, int rank, const char *a, const char *b)
{
    char line[2048];
    FILE *f = fopen(out_file(name, rank), "r");
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, a) && (!b || strstr(line, b));
    if (f)
        fclose(f);
    return n;
}

/* ---- the tuner plugin -------------------------------------------------------------------- */

/* NCCL's TUNING line of rank 0 for an all-reduce of bytes: "AllReduce: N Bytes -> Algo A proto
 * P channel{Lo..Hi}={0..H}". */
static int tuning_line(const char *name, uint64_t bytes, char *algo, char *proto, int *hi)
{
    char line[2048], want[64];
    FILE *f = fopen(out_file(name, 0), "r");
    int found = 0;
    snprintf(want, sizeof(want), "AllReduce: %llu Bytes -> Algo ", (unsigned long long)bytes);
    while (f && !found && fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, want);
        found = p && sscanf(p + strlen(want), "%15s proto %15s channel{Lo..Hi}={0..%d}", algo,
                            proto, hi) == 3;
    }
    if (f)
        fclose(f);
    return found;
}

ACC_TEST_GPU(tuner_plugin_with_the_real_nccl)
{
    static const char *const sizes[] = {"8192", "1048576", "268435456", NULL};
    int n = need_gpus();
    const char *db_path = acc_test_tmp_fresh("nccl_gpu_tuner.db");
    acc_topo_t *topo = NULL;
    acc_db_t *db = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1], want[128];
    const char *env[] = {"NCCL_TUNER_PLUGIN",
                         ACC_NCCL_TUNER_PLUGIN,
                         "NCCL_DEBUG",
                         "INFO",
                         "NCCL_DEBUG_SUBSYS",
                         "INIT,TUNING",
                         "ACC_TOPO",
                         "auto",
                         "ACC_DB",
                         db_path,
                         "NCCL_LOOP_LIBRARY",
                         ACC_REAL_NCCL,
                         NULL};
    loop_t l = {"nccl_gpu_tuner", env, sizes, 2};

    /* The image build for this machine, as live discovery sees it. */
    CHECK_OK(acc_topo_load("auto", &topo));
    if (acc_topo_ranks(topo) != n)
        ACC_SKIP("CUDA_VISIBLE_DEVICES hides GPUs of the node: no table for that shape");
    CHECK_OK(acc_topo_fingerprint(topo, fp));
    CHECK_OK(acc_db_open(db_path, 0, &db));
    CHECK_OK(acc_db_build(db, topo, NULL, NULL));
    acc_db_close(db);
    run_loop(&l, n);
    CHECK_OK(acc_db_open(db_path, ACC_DB_READONLY, &db));

    CHECK_MSG(lines_with(l.name, 0, "TUNER/Plugin: Using acc (v6)", NULL) +
                      lines_with(l.name, 0, "TUNER/Plugin: Using acc (v5)", NULL) ==
                  1,
              "NCCL did not load the plugin by its v6 or v5 interface (see %s)",
              out_file(l.name, 0));
    snprintf(want, sizeof(want), "acc tuner: %d ranks on 1 node: NCCL's choices of", n);
    CHECK_INT(lines_with(l.name, 0, want, NULL), 1);
    for (int i = 0; n >= 2 && sizes[i]; i++) {
        uint64_t bytes = strtoull(sizes[i], NULL, 10);
        acc_select_nccl_t *t = NULL;
        const acc_select_nccl_entry_t *e;
        char algo[16], proto[16];
        int hi = -1;
        CHECK_OK(acc_db_get_nccl_choices(db, fp, ACC_COLL_ALLREDUCE, &t));
        CHECK((e = acc_select_nccl_lookup(t, bytes)) != NULL);
        CHECK_MSG(tuning_line(l.name, bytes, algo, proto, &hi), "no TUNING line for %s bytes",
                  sizes[i]);
        printf("%s bytes: NCCL ran %s/%s on %d channels; the table says %s/%s on %d\n", sizes[i],
               algo, proto, hi + 1, acc_nccl_algo_name(e->algo), acc_nccl_proto_name(e->proto),
               e->channels);
        CHECK(strcasecmp(algo, acc_nccl_algo_name(e->algo)) == 0);
        CHECK(strcasecmp(proto, acc_nccl_proto_name(e->proto)) == 0);
        CHECK(e->channels == 0 || hi + 1 <= e->channels);
        acc_select_nccl_destroy(t);
    }
    acc_db_close(db);
    acc_topo_destroy(topo);
}

/* ---- the drop-in ------------------------------------------------------------------------- */

ACC_TEST_GPU(dropin_preloaded_under_an_allreduce_loop)
{
    static const char *const sizes[] = {"4",       "1024",     "4100",      "65536", "1048576",
                                        "1048580", "16777216", "268435456", NULL};
    int n = need_gpus();
    const char *env[] = {"LD_PRELOAD",        ACC_NCCL_DROPIN, "ACC_NCCL_LIBRARY",
                         ACC_REAL_NCCL,       "ACC_LOG_LEVEL", "info",
                         "NCCL_LOOP_LIBRARY", ACC_REAL_NCCL,   NULL};
    loop_t l = {"nccl_gpu_dropin", env, sizes, 10};

    run_loop(&l, n);
    for (int r = 0; r < n; r++) {
        CHECK_INT(lines_with(l.name, r, "ncclAllReduce from ", "libacc-nccl.so"), 1);
        CHECK_INT(lines_with(l.name, r, "ok", NULL), 1);
    }
    /* acc joined NCCL's communicator, and said what it runs. */
    CHECK(lines_with(l.name, 0, "acc", "communicator of") >= 1);
}

ACC_TEST_GPU(abort_during_an_allreduce_loop_returns_at_once)
{
    static const char *const sizes[] = {"1048576", "67108864", NULL};
    int n = need_gpus();
    const char *env[] = {"LD_PRELOAD",
                         ACC_NCCL_DROPIN,
                         "ACC_NCCL_LIBRARY",
                         ACC_REAL_NCCL,
                         "ACC_LOG_LEVEL",
                         "info",
                         "NCCL_LOOP_LIBRARY",
                         ACC_REAL_NCCL,
                         "NCCL_LOOP_ABORT_MS",
                         "500",
                         NULL};
    loop_t l = {"nccl_gpu_abort", env, sizes, 1};

    run_loop(&l, n);
    for (int r = 0; r < n; r++) {
        char line[512];
        double took = -1;
        FILE *f = fopen(out_file(l.name, r), "r");
        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "abort took %lf s", &took) == 1)
                printf("rank %d: %s", r, line);
        if (f)
            fclose(f);
        CHECK_MSG(took >= 0 && took < 1.0, "rank %d: ncclCommAbort took %.3f s (see %s)", r, took,
                  out_file(l.name, r));
        CHECK_INT(lines_with(l.name, r, "ok", NULL), 1);
    }
}

/* ---- PyTorch ------------------------------------------------------------------------------- */

ACC_TEST_GPU(ddp_step_with_the_dropin_preloaded)
{
    char cmd[4096];
    const char *out = acc_test_tmp("nccl_gpu_ddp.out");
    int rc;

    const char *python = ACC_TORCH_PYTHON[0] ? ACC_TORCH_PYTHON : "python3";

    need_gpus();
    snprintf(cmd, sizeof(cmd),
             "'%s' -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' "
             ">/dev/null 2>&1",
             python);
    if (system(cmd) != 0)
        ACC_SKIP("no PyTorch with CUDA");
    snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s' ACC_LOG_LEVEL=info '%s' '%s' >'%s' 2>&1",
             ACC_NCCL_DROPIN, python, acc_test_src("tests/runtime/ddp_step.py"), out);
    rc = system(cmd);
    {
        char line[2048];
        FILE *f = fopen(out, "r");
        int ok = 0, dynamic = 0, seen = 0;
        while (f && fgets(line, sizeof(line), f)) {
            fputs(line, stdout);
            ok |= strstr(line, "ddp step ok") != NULL;
            dynamic |= strstr(line, "nccl: shared library") != NULL;
            seen |= strstr(line, "acc drop-in NCCL") != NULL || strstr(line, "communicator of");
        }
        if (f)
            fclose(f);
        CHECK_MSG(rc == 0 && ok, "the DDP step failed with the drop-in preloaded (%s)", out);
        /* A PyTorch that links NCCL statically never calls a preloaded library. */
        if (dynamic)
            CHECK_MSG(seen, "PyTorch loads NCCL as a shared library, yet the drop-in saw nothing");
    }
}
