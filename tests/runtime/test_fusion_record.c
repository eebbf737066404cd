/*
 * The fusion engine records the job's own profile (ACC_RECORD), four processes on the host
 * backend: a replay of a shipped profile records it back (sizes exactly, ready and compute times
 * within the replay's own timing noise, which it measures); a model nobody shipped is recorded,
 * tuned, and the next job starts from its optimum, measured before simulated; DDP-style buffers
 * are recorded as buffers once they settle; recording is off unless asked and a bad setting is
 * refused on every rank.  On a GPU (label gpu; skipped without one), a cuda-backend job records
 * its device's name and compute capability.
 */
#include "acc_fusion.h"
#include "fusion_util.h"
#include "ranks.h"
#include "toy_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NRANKS 4

static void quiet_env(void)
{
    setenv("ACC_TOPO", "gpus=4", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "120000", 1);
    unsetenv("ACC_DB");
    fusion_env_clear();
}

/* ---- a replay records its profile back ------------------------------------------------- */

typedef struct {
    const char *model; /* a shipped profile or a file */
    const char *db;
    const char *late; /* rank 0 writes its replay's timing noise (ms) here */
    int warmup, iters;
} replay_job_t;

static int replay_recording(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const replay_job_t *j = arg;
    acc_comm_t *c = NULL;
    acc_tune_target_t *t = NULL;
    acc_fusion_replay_t *r = NULL;
    acc_fusion_opts_t o;
    acc_fusion_info_t info;
    acc_tune_config_t cfg;
    double late;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_OK(acc_tune_target_load(j->model, "gpus=4", NULL, NULL, NULL, &t));
    acc_tune_config_acc(&cfg, 25ull << 20, 1, ACC_TUNE_ALGO_AUTO);
    acc_fusion_opts_init(&o);
    o.config = &cfg;
    o.online = -1;
    o.model = j->model;
    o.db = j->db;
    o.record = 1;
    o.record_warmup = j->warmup;
    o.record_iters = j->iters;
    o.batch = t->compute->batch;
    o.precision = t->compute->precision;
    CHECK_OK(acc_fusion_replay_create(c, t->profile, t->compute, &o, &r));
    CHECK_OK(acc_fusion_replay_run(r, j->warmup, NULL));
    /* The timing noise of the recorded iterations alone. */
    CHECK_OK(acc_fusion_replay_run(r, j->iters, NULL));
    late = acc_fusion_replay_lateness_ms(r);
    CHECK_OK(acc_fusion_info(acc_fusion_replay_engine(r), &info));
    CHECK_INT(info.recording, rank == 0 ? 2 : 1);
    if (rank == 0) {
        char text[64];
        int n = snprintf(text, sizeof(text), "%.17g\n", late);
        CHECK_OK(acc_write_file(j->late, text, (size_t)n));
        printf("rank 0: the replay's timing noise %.3f ms; the engine spent %.3f ms recording\n",
               late, info.record_ms);
    }
    /* The engine waits for rank 0's thread storing the profile. */
    CHECK_OK(acc_fusion_replay_destroy(r));
    acc_tune_target_destroy(t);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

static double read_late(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    double v = -1;
    CHECK_OK(acc_read_file(path, &text, &len));
    CHECK_OK(acc_parse_double(text, &v));
    acc_mem_free(text);
    return v;
}

/* The recording of name for sm in the database at path, and its record. */
static acc_profile_t *recorded(const char *path, const char *name, int sm, acc_db_recorded_t *rec)
{
    acc_db_t *db = NULL;
    acc_profile_t *p = NULL;
    char *yaml = NULL;
    CHECK_OK(acc_db_open(path, ACC_DB_READONLY, &db));
    CHECK_OK(acc_db_get_recorded(db, name, sm, rec, &yaml));
    CHECK_OK(acc_profile_load_yaml(yaml, strlen(yaml), name, &p));
    acc_mem_free(yaml);
    acc_db_close(db);
    return p;
}

/* Under ThreadSanitizer every memory access is checked, and the replay's times measure that (a
 * second and more behind its timeline on two cores), not the recording: the times are not
 * compared there, the rest is. */
#ifdef __SANITIZE_THREAD__
#define TIMES_COMPARED 0
#else
#define TIMES_COMPARED 1
#endif

/* Every clock reading the tolerance rests on is the replay's own; between one and the engine's
 * reading at the start of the call it makes lies only the call itself, which takes microseconds
 * unless the thread is preempted there, and the median of five iterations leaves a rare
 * preemption out.  Half a millisecond covers the call with a wide margin. */
#define CALL_MS 0.5

ACC_TEST(replay_records_a_shipped_profile_back)
{
    replay_job_t job = {"resnet50", NULL, NULL, 2, 5};
    acc_profile_t *ship = NULL, *got;
    const acc_profile_compute_t *sc, *gc;
    acc_db_recorded_t rec;
    char host[ACC_DB_NAME_MAX] = "";
    double late, b, tol, worst = 0, fwd;
    size_t i;

    quiet_env();
    job.db = fusion_fresh_db("record_replay.db");
    job.late = acc_test_tmp("late.txt");
    ranks_run(NRANKS, replay_recording, &job, 280);
    late = read_late(job.late);

    CHECK_OK(acc_profile_load_builtin("resnet50", &ship));
    sc = acc_profile_find_compute(ship, 90, NULL);
    CHECK(sc != NULL);
    b = acc_profile_backward_ms(sc);
    /* The tolerances below grow with the noise the replay measured: a few ms on a loaded
     * machine, tens under the sanitizers or when the cores are oversubscribed many times. */
    if (late > b / 4)
        printf("the replay ran %.1f ms behind its timeline: a loose comparison\n", late);

    got = recorded(job.db, "resnet50", 90, &rec);
    /* Where and how it was recorded. */
    gethostname(host, sizeof(host) - 1);
    CHECK_STR(rec.host, host);
    CHECK_STR(rec.backend, "host");
    CHECK_STR(rec.device, "CPU (host backend)");
    CHECK_INT(rec.ranks, NRANKS);
    CHECK_INT(rec.batch, sc->batch);
    CHECK_INT(rec.iterations, 5);
    CHECK(rec.param_count == ship->params);

    /* Sizes exactly, in the same order. */
    CHECK_INT(got->ntensors, ship->ntensors);
    CHECK(got->params == ship->params);
    for (i = 0; i < got->ntensors; i++) {
        char name[32];
        snprintf(name, sizeof(name), "grad%zu", i);
        CHECK_STR(got->tensors[i].name, name);
        CHECK(got->tensors[i].elems == ship->tensors[i].elems);
        CHECK_INT(got->tensors[i].dtype, ship->tensors[i].dtype);
    }
    /* Ready times: in an iteration, a gradient's moment is off by its call's delay l (from 0
     * to that iteration's largest, L), the backward pass's start and end by theirs, so the
     * fraction by at most L / (b - L); the median of the iterations by at most the middle
     * iteration's, late / (b - late); plus the call, and the 1e-6 the profile rounds to. */
    tol = late + CALL_MS < b / 2 ? (late + CALL_MS) / (b - late - CALL_MS) + 1e-6 : 1;
    for (i = 0; i < got->ntensors; i++) {
        double d = fabs(got->tensors[i].ready - ship->tensors[i].ready);
        if (d > worst)
            worst = d;
        CHECK_MSG(d <= tol || !TIMES_COMPARED,
                  "%s: ready at %.6f, recorded at %.6f (tolerance %.6f)", ship->tensors[i].name,
                  ship->tensors[i].ready, got->tensors[i].ready, tol);
    }
    printf("ready times: largest difference %.6f of the backward pass, tolerance %.6f\n", worst,
           tol);

    /* The compute entry: the topology's GPU, the batch and precision given, the compute time
     * (forward and backward apart, where the shipped entry has two thirds backward by rule). */
    CHECK_INT(got->ncompute, 1);
    gc = &got->compute[0];
    CHECK_STR(gc->gpu, "sm_90");
    CHECK_INT(gc->sm, 90);
    CHECK_STR(gc->precision, sc->precision);
    CHECK_INT(gc->batch, sc->batch);
    CHECK_INT(gc->accumulation, 1);
    CHECK(strstr(gc->source, "standing in for sm_90") && strstr(gc->source, "acc_fusion_backward"));
    /* The forward part is off by the backward pass's late start, the backward part by the
     * difference of its end's and start's delays: the medians by the middle iteration's each,
     * their sum by twice that; plus the calls, and the 1e-3 ms the profile rounds to. */
    fwd = sc->iteration_ms - b;
    tol = late + CALL_MS + 1e-3;
    printf("compute: %.3f ms (forward %.3f) recorded, %.3f (%.3f) shipped, tolerance %.3f (%.3f) "
           "ms\n",
           gc->iteration_ms, gc->forward_ms, sc->iteration_ms, fwd, 2 * tol, tol);
    CHECK(fabs(gc->iteration_ms - sc->iteration_ms) <= 2 * tol || !TIMES_COMPARED);
    CHECK(fabs(gc->forward_ms - fwd) <= tol || !TIMES_COMPARED);
    acc_profile_destroy(got);
    acc_profile_destroy(ship);
    quiet_env();
}

/* ---- a model nobody shipped: recorded, tuned, and the next job starts from it ------------- */

/* What acc-tune does: tune the model's recording on gpus=4 and store the optimum (measured:
 * as an earlier job's online tuning would). */
static acc_tune_config_t tune_it(const char *path, const char *model, int measured)
{
    acc_db_t *db = NULL;
    acc_tune_target_t *t = NULL;
    acc_tune_comm_t *comm = NULL;
    acc_tune_comm_opts_t co;
    acc_itersim_t *sim = NULL;
    acc_tune_space_t sp;
    acc_tune_search_opts_t so;
    acc_tune_search_result_t *res = NULL;
    acc_tune_optimum_t opt;

    CHECK_OK(acc_db_open(path, 0, &db));
    CHECK_OK(acc_tune_target_load(model, "gpus=4", NULL, NULL, db, &t));
    CHECK_INT(t->origin.kind, ACC_PROFILE_RECORDED);
    CHECK_OK(acc_tune_store_prepare(db, t));
    acc_tune_comm_opts_init(&co);
    co.nccl_only = 1;
    CHECK_OK(acc_tune_comm_create(t->topo, &co, &comm));
    CHECK_OK(acc_itersim_create(t->profile, t->compute, comm, NULL, &sim));
    acc_tune_space_init(&sp);
    sp.fusion_min = 64ull << 10;
    sp.fusion_max = 4ull << 20;
    sp.streams_max = 2;
    sp.algos = 1u << ACC_TUNE_ALGO_NCCL;
    acc_tune_search_opts_init(&so);
    so.strategy = ACC_SEARCH_GRID;
    CHECK_OK(acc_tune_search(sim, &sp, &so, &res));
    memset(&opt, 0, sizeof(opt));
    opt.config = res->evals[res->best].config;
    if (measured) /* another point of the space, so that the two can be told apart */
        acc_tune_config_acc(&opt.config, 128ull << 10, 2, ACC_TUNE_ALGO_AUTO);
    opt.iteration_ms = res->evals[res->best].result.iteration_ms;
    opt.measured = measured;
    CHECK_OK(acc_tune_optimum_put(db, &t->key, &opt));
    acc_tune_search_result_destroy(res);
    acc_itersim_destroy(sim);
    acc_tune_comm_destroy(comm);
    acc_tune_target_destroy(t);
    acc_db_close(db);
    return opt.config;
}

typedef struct {
    acc_fusion_source_t source;
    acc_tune_config_t config;
} expect_t;

/* The next job: ACC_MODEL names the model; its first iteration starts from what is stored. */
static int next_job(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const expect_t *want = arg;
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_info_t info;
    static float g[24][16384];

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_OK(acc_fusion_create(c, NULL, &f));
    for (int i = 0; i < 24; i++)
        CHECK_OK(acc_fusion_register(f, g[i], 16384, ACC_DT_F32, NULL));
    CHECK_OK(acc_fusion_wait(f));
    CHECK_OK(acc_fusion_info(f, &info));
    CHECK_MSG(info.source == want->source, "rank %d: from the %s, not the %s", rank,
              acc_fusion_source_name(info.source), acc_fusion_source_name(want->source));
    CHECK(info.config.fusion_bytes == want->config.fusion_bytes);
    CHECK_INT(info.config.streams, want->config.streams);
    CHECK_STR(info.key.model, "lab-toy");
    CHECK_INT(info.recording, 0);
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(recorded_model_tuned_and_the_next_job_starts_there)
{
    replay_job_t job = {NULL, NULL, NULL, 1, 3};
    acc_profile_t *got;
    acc_db_recorded_t rec;
    expect_t want;

    quiet_env();
    /* 24 gradients of 64 KiB, 40 ms of compute. */
    job.model = toy_model_file(acc_test_tmp("lab-toy.yaml"), "lab-toy", 24, 16384, 40, 15);
    job.db = fusion_fresh_db("record_next.db");
    job.late = acc_test_tmp("late.txt");
    /* The job records itself: its model is named by a profile file nobody shipped. */
    ranks_run(NRANKS, replay_recording, &job, 120);
    got = recorded(job.db, "lab-toy", 90, &rec);
    CHECK_INT(got->ntensors, 24);
    CHECK_INT(rec.iterations, 3);
    acc_profile_destroy(got);

    /* acc-tune's optimum of the recording; the next job (ACC_MODEL=lab-toy) starts there. */
    setenv("ACC_DB", job.db, 1);
    setenv("ACC_MODEL", "lab-toy", 1);
    want.source = ACC_FUSION_FROM_SIMULATED;
    want.config = tune_it(job.db, "lab-toy", 0);
    ranks_run(NRANKS, next_job, &want, 120);
    /* A measured optimum of the same key comes first. */
    want.source = ACC_FUSION_FROM_MEASURED;
    want.config = tune_it(job.db, "lab-toy", 1);
    ranks_run(NRANKS, next_job, &want, 120);
    quiet_env();
}

/* ---- DDP's buckets --------------------------------------------------------------------- */

/* Buffers handed over as DDP hands its buckets: the list of the first iteration recorded differs
 * (as DDP rebuilds its buckets after its first), then three buffers 4 ms apart. */
static int buckets(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    static float a[4000], b[1000], c2[500];
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_fusion_info_t info;
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    acc_fusion_opts_init(&o);
    o.record_warmup = 1;
    o.record_iters = 3;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (int k = 0; k < 6; k++) {
        double t0;
        CHECK_OK(acc_fusion_backward(f));
        t0 = acc_now_s();
        acc_sleep_until(t0 + 0.004);
        if (k == 1) { /* the list changes once recording has begun: it starts again */
            CHECK_OK(acc_fusion_reduce(f, a, 4000, ACC_DT_F32));
            CHECK_OK(acc_fusion_reduce(f, c2, 500, ACC_DT_F32));
        } else {
            CHECK_OK(acc_fusion_reduce(f, a, 3000, ACC_DT_F32));
            acc_sleep_until(t0 + 0.008);
            CHECK_OK(acc_fusion_reduce(f, b, 1000, ACC_DT_F32));
            acc_sleep_until(t0 + 0.012);
            CHECK_OK(acc_fusion_reduce(f, c2, 500, ACC_DT_F32));
        }
        acc_sleep_until(t0 + 0.016);
        CHECK_OK(acc_fusion_wait(f));
    }
    CHECK_OK(acc_fusion_info(f, &info));
    CHECK_INT(info.recording, rank == 0 ? 2 : 1);
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(buckets_recorded_once_they_settle)
{
    const char *db = fusion_fresh_db("record_buckets.db");
    const char list[] = "float 3000\nfloat 1000\nfloat 500\n";
    char hex[ACC_SHA256_HEX_LEN + 1], name[ACC_DB_NAME_MAX];
    acc_db_recorded_t rec;
    acc_profile_t *p;

    quiet_env();
    setenv("ACC_DB", db, 1);
    setenv("ACC_RECORD", "1", 1);
    ranks_run(NRANKS, buckets, NULL, 120);
    /* No model named: the bucket list's own name, as a job of the same buckets would make. */
    CHECK_OK(acc_sha256_hex(list, strlen(list), hex));
    snprintf(name, sizeof(name), "grads-%.16s", hex);
    p = recorded(db, name, 90, &rec);
    CHECK_INT(p->ntensors, 3);
    CHECK_STR(p->tensors[0].name, "buffer0");
    CHECK(p->tensors[0].elems == 3000 && p->tensors[1].elems == 1000 && p->tensors[2].elems == 500);
    /* Handed over in that order, inside the backward pass. */
    CHECK(p->tensors[0].ready > 0 && p->tensors[0].ready < p->tensors[1].ready &&
          p->tensors[1].ready < p->tensors[2].ready && p->tensors[2].ready < 1);
    CHECK_STR(p->compute[0].precision, "fp32");
    CHECK_INT(p->compute[0].batch, 1);
    CHECK(strstr(p->compute[0].source, "batch not given"));
    CHECK_INT(rec.batch, 0);
    acc_profile_destroy(p);
    quiet_env();
}

/* ---- off unless asked; a bad setting ----------------------------------------------------- */

static int plain_job(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const int *expect_error = arg;
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_info_t info;
    float g[256];

    memset(g, 0, sizeof(g));
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    CHECK_OK(acc_fusion_create(c, NULL, &f));
    CHECK_OK(acc_fusion_register(f, g, 256, ACC_DT_F32, NULL));
    for (int k = 0; k < 8 && !*expect_error; k++) {
        CHECK_OK(acc_fusion_ready(f, 0));
        CHECK_OK(acc_fusion_wait(f));
    }
    if (*expect_error) {
        CHECK_ERR(acc_fusion_ready(f, 0), ACC_ERR_INVALID);
        CHECK_MSG_HAS("ACC_RECORD");
    } else {
        CHECK_OK(acc_fusion_info(f, &info));
        CHECK_INT(info.recording, 0);
    }
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(off_unless_asked_and_bad_settings_refused)
{
    const char *db = fusion_fresh_db("record_off.db");
    int error = 0;
    acc_db_t *h = NULL;
    acc_db_recorded_t *all = NULL;
    size_t n = 0;

    quiet_env();
    CHECK_OK(acc_db_open(db, 0, &h)); /* an empty database */
    acc_db_close(h);
    setenv("ACC_DB", db, 1);
    setenv("ACC_MODEL", "plain", 1);
    ranks_run(NRANKS, plain_job, &error, 60);
    CHECK_OK(acc_db_open(db, ACC_DB_READONLY, &h));
    CHECK_OK(acc_db_list_recorded(h, NULL, &all, &n));
    CHECK_INT(n, 0);
    acc_db_close(h);
    /* Asked for without a database to store in: the job runs, with a warning.  Only where the
     * search finds none: run from a build tree whose build/acc.db exists (scripts/setup.sh
     * makes it), a job without ACC_DB stores its recording there, which this test must not
     * touch. */
    {
        char built[4096];
        const char *tree = acc_build_tree_dir();
        snprintf(built, sizeof(built), "%s/acc.db", tree ? tree : "/nonexistent");
        if (access(built, F_OK) != 0) {
            unsetenv("ACC_DB");
            setenv("ACC_RECORD", "1", 1);
            ranks_run(NRANKS, plain_job, &error, 60);
        }
    }
    /* ACC_RECORD is 0 or 1; anything else is refused on every rank, naming it. */
    error = 1;
    setenv("ACC_RECORD", "yes", 1);
    ranks_run(NRANKS, plain_job, &error, 60);
    setenv("ACC_RECORD", "2", 1);
    ranks_run(NRANKS, plain_job, &error, 60);
    quiet_env();
}

/* ---- on a GPU ------------------------------------------------------------------------------ */

/* Two ranks on device 0 record their gradients in device memory; rank 0 checks that the
 * recording names the device it ran on. */
static int gpu_recording(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    const char *path = arg;
    acc_comm_opts_t co;
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_cuda_info_t dev;
    void *g[3] = {NULL, NULL, NULL};

    acc_comm_opts_init(&co);
    co.device = 0;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, &co));
    CHECK_INT(acc_comm_backend(c), ACC_BACKEND_CUDA);
    acc_fusion_opts_init(&o);
    o.model = "gpu-toy";
    o.record = 1;
    o.record_warmup = 1;
    o.record_iters = 2;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (int i = 0; i < 3; i++) {
        CHECK_OK(acc_cuda_malloc((size_t)(i + 1) << 16, &g[i]));
        CHECK_OK(acc_cuda_memset(g[i], 0, (size_t)(i + 1) << 16));
        CHECK_OK(acc_fusion_register(f, g[i], (size_t)(i + 1) << 14, ACC_DT_F32, NULL));
    }
    for (int k = 0; k < 4; k++) {
        CHECK_OK(acc_fusion_backward(f));
        for (int i = 0; i < 3; i++)
            CHECK_OK(acc_fusion_ready(f, i));
        CHECK_OK(acc_fusion_wait(f));
    }
    CHECK_OK(acc_fusion_destroy(f));
    for (int i = 0; i < 3; i++)
        acc_cuda_free(g[i]);
    if (rank == 0) {
        acc_db_recorded_t rec;
        acc_profile_t *p;
        CHECK_OK(acc_cuda_info(0, &dev));
        p = recorded(path, "gpu-toy", dev.sm, &rec);
        CHECK_STR(rec.backend, "cuda");
        CHECK_STR(rec.device, dev.name);
        CHECK_INT(p->ntensors, 3);
        CHECK_INT(p->ncompute, 1);
        CHECK_INT(p->compute[0].sm, dev.sm);
        CHECK(!strstr(p->compute[0].source, "standing in for"));
        acc_profile_destroy(p);
    }
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST_GPU(cuda_job_records_its_device)
{
    const char *db = fusion_fresh_db("record_gpu.db");
    ranks_skip_without_gpu();
    quiet_env();
    setenv("ACC_TOPO", "gpus=2 nvlink=18", 1);
    setenv("ACC_BACKEND", "cuda", 1);
    setenv("ACC_DB", db, 1);
    ranks_run(2, gpu_recording, (void *)db, 580);
    unsetenv("ACC_BACKEND");
    quiet_env();
}
