/*
 * The fusion engine's ranks must have registered the same gradients.  On main, rank 0
 * registering A then B and rank 1 B then A (the same total size) returned success every
 * iteration with A and B summed across each other; with other sizes one rank failed and the
 * other waited out its timeout.  Now every rank fails at its first iteration, at once, naming
 * the first difference (order, size, type, count).  Gradients of no elements are reduced with
 * the rest.
 */
#include "acc_fusion.h"
#include "comm_util.h"
#include "fusion_util.h"
#include "ranks.h"

#define NRANKS 2

typedef struct {
    const char *name;
    const char *expect; /* in the message of every rank */
    /* what rank 1 registers differently from rank 0's {1000 f32, 4096 f32, 8 f64} */
    uint64_t count[3];
    acc_dtype_t dt[3];
    int n;
} variant_t;

static const variant_t variants[] = {
    {"order",
     "gradient 0 is 4096 elements of float on rank 1 and 1000 elements of float on rank 0",
     {4096, 1000, 8},
     {ACC_DT_F32, ACC_DT_F32, ACC_DT_F64},
     3},
    {"size",
     "gradient 1 is 4095 elements of float on rank 1 and 4096 elements of float on rank 0",
     {1000, 4095, 8},
     {ACC_DT_F32, ACC_DT_F32, ACC_DT_F64},
     3},
    {"type",
     "gradient 2 is 8 elements of float on rank 1 and 8 elements of double on rank 0",
     {1000, 4096, 8},
     {ACC_DT_F32, ACC_DT_F32, ACC_DT_F32},
     3},
    {"count",
     "rank 1 registered 2 gradients and rank 0 3",
     {1000, 4096, 0},
     {ACC_DT_F32, ACC_DT_F32},
     2},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static int mismatched(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    static const uint64_t count0[3] = {1000, 4096, 8};
    static const acc_dtype_t dt0[3] = {ACC_DT_F32, ACC_DT_F32, ACC_DT_F64};
    acc_comm_t *c;
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    for (size_t v = 0; v < NVARIANTS; v++) {
        const variant_t *x = &variants[v];
        int n = rank == 0 ? 3 : x->n;
        void *buf[3];
        acc_fusion_t *f;
        double t0;
        acc_status_t st = ACC_OK;
        CHECK_OK(acc_fusion_create(c, NULL, &f));
        for (int i = 0; i < n; i++) {
            uint64_t cnt = rank == 0 ? count0[i] : x->count[i];
            acc_dtype_t dt = rank == 0 ? dt0[i] : x->dt[i];
            CHECK((buf[i] = calloc(cnt, acc_dtype_size(dt))) != NULL);
            CHECK_OK(acc_fusion_register(f, buf[i], cnt, dt, NULL));
        }
        t0 = acc_now_s();
        for (int i = 0; i < n && st == ACC_OK; i++)
            st = acc_fusion_ready(f, i);
        if (st == ACC_OK)
            st = acc_fusion_wait(f);
        printf("rank %d, %s: %s %s\n", rank, x->name, acc_status_name(st), acc_error_message());
        CHECK_INT(st, ACC_ERR_INVALID);
        CHECK_MSG_HAS(x->expect);
        /* At once: not after the 30 s of ACC_TIMEOUT_MS. */
        CHECK_FAST(acc_now_s() - t0 < 5.0, "took %.1f s", acc_now_s() - t0);
        CHECK_OK(acc_fusion_destroy(f));
        for (int i = 0; i < n; i++)
            free(buf[i]);
    }
    /* The communicator is untouched. */
    {
        call_t k = {ACC_COLL_ALLREDUCE, ACC_DT_F32, ACC_RED_SUM, 333, 0, 0, 8};
        call_ok(c, &k);
    }
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(mismatched_registrations_fail_on_every_rank_naming_the_first_difference)
{
    comm_env("gpus=2", "30000");
    fusion_env_clear();
    ranks_run(NRANKS, mismatched, NULL, 120);
}

/* Gradients of no elements among the others (DDP accepts them): the others are the mean, as
 * ever. */
static int empty_grads(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c;
    acc_fusion_t *f;
    acc_fusion_opts_t o;
    acc_tune_config_t cfg;
    float a[100], b[7], spare[1];
    (void)arg;
    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    acc_fusion_opts_init(&o);
    /* Small buckets, so that one holds nothing but an empty gradient. */
    acc_tune_config_acc(&cfg, 16, 2, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    CHECK_OK(acc_fusion_register(f, NULL, 0, ACC_DT_F32, NULL));
    CHECK_OK(acc_fusion_register(f, a, 100, ACC_DT_F32, NULL));
    CHECK_OK(acc_fusion_register(f, spare, 0, ACC_DT_F32, NULL));
    CHECK_OK(acc_fusion_register(f, NULL, 0, ACC_DT_F16, NULL));
    CHECK_OK(acc_fusion_register(f, b, 7, ACC_DT_F32, NULL));
    for (int it = 0; it < 3; it++) {
        for (int e = 0; e < 100; e++)
            a[e] = (float)(rank * 2 + e);
        for (int e = 0; e < 7; e++)
            b[e] = (float)(rank * 4);
        for (int g = 4; g >= 0; g--)
            CHECK_OK(acc_fusion_ready(f, g));
        CHECK_OK(acc_fusion_wait(f));
        for (int e = 0; e < 100; e++)
            CHECK_MSG(a[e] == (float)(e + 1), "iteration %d: a[%d] is %g", it, e, a[e]);
        for (int e = 0; e < 7; e++)
            CHECK(b[e] == 2.0f);
    }
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(gradients_of_no_elements_are_accepted)
{
    comm_env("gpus=2", "30000");
    fusion_env_clear();
    ranks_run(NRANKS, empty_grads, NULL, 120);
}
