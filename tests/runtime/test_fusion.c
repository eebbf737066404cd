/*
 * The fusion engine on the host backend, four processes: the gradients it reduces are those one
 * allreduce per tensor gives (bit for bit without compression, within the 16-bit type's
 * rounding with it) for fusion sizes from 1 KiB to 256 MiB, 1 to 4 streams and every policy;
 * gradients marked out of order, unmarked gradients, the caller's own buffers; bad use.
 */
#include "acc_fusion.h"
#include "fusion_util.h"
#include "ranks.h"

#include <math.h>
#include <string.h>

#define NRANKS 4

static void quiet_env(void)
{
    /* No database: the fallback serves every call, the default configuration applies. */
    setenv("ACC_DB", "/nonexistent/acc.db", 1);
    setenv("ACC_TOPO", "gpus=4", 1);
    setenv("ACC_LOG_LEVEL", "error", 1);
    setenv("ACC_TIMEOUT_MS", "60000", 1);
    fusion_env_clear();
}

/* The gradients: odd sizes, a run of small ones, sizes around the fusion sizes, and other types
 * between the fp32 ones (which end buckets, and which compression leaves alone). */
static const struct {
    uint64_t count;
    acc_dtype_t dt;
} grads[] = {
    {1000, ACC_DT_F32}, {1, ACC_DT_F32},     {7, ACC_DT_F32},      {255, ACC_DT_F32},
    {256, ACC_DT_F32},  {257, ACC_DT_F32},   {4096, ACC_DT_F32},   {100, ACC_DT_F64},
    {33, ACC_DT_F64},   {65536, ACC_DT_F32}, {3, ACC_DT_F32},      {50000, ACC_DT_F32},
    {999, ACC_DT_F16},  {1, ACC_DT_F32},     {131071, ACC_DT_F32}, {12, ACC_DT_I32},
    {2048, ACC_DT_F32}, {2048, ACC_DT_F32},  {70000, ACC_DT_F32},  {17, ACC_DT_F32},
};
#define NGRADS (sizeof(grads) / sizeof(grads[0]))

typedef struct {
    void *buf[NGRADS];
    void *ref[NGRADS];
} grads_t;

static void grads_alloc(grads_t *g)
{
    for (size_t t = 0; t < NGRADS; t++) {
        size_t bytes = (size_t)(grads[t].count * acc_dtype_size(grads[t].dt));
        g->buf[t] = malloc(bytes);
        g->ref[t] = malloc(bytes);
        CHECK(g->buf[t] && g->ref[t]);
    }
}

static void grads_free(grads_t *g)
{
    for (size_t t = 0; t < NGRADS; t++) {
        free(g->buf[t]);
        free(g->ref[t]);
    }
}

/* This rank's inputs in g->buf, and the reference in g->ref: one allreduce per tensor of the
 * same inputs, averaged, on the plain communicator. */
static void reference(acc_comm_t *c, grads_t *g, int exact, uint32_t seed)
{
    int me = acc_comm_rank(c);
    for (size_t t = 0; t < NGRADS; t++) {
        grad_fill(g->ref[t], grads[t].dt, grads[t].count, exact, seed, me, t);
        CHECK_OK(acc_allreduce(g->ref[t], g->ref[t], (size_t)grads[t].count, grads[t].dt,
                               ACC_RED_AVG, c, NULL));
        grad_fill(g->buf[t], grads[t].dt, grads[t].count, exact, seed, me, t);
    }
}

static double load(const void *buf, acc_dtype_t dt, uint64_t e)
{
    switch (dt) {
    case ACC_DT_F32:
        return ((const float *)buf)[e];
    case ACC_DT_F64:
        return ((const double *)buf)[e];
    case ACC_DT_I32:
        return ((const int32_t *)buf)[e];
    default:
        return hx_half_to_float(((const uint16_t *)buf)[e]);
    }
}

/* The unit roundoff of the type fp32 gradients travel in. */
static double roundoff(acc_compress_t c)
{
    return c == ACC_COMPRESS_FP16 ? ldexp(1, -11) : c == ACC_COMPRESS_BF16 ? ldexp(1, -8) : 0;
}

/* Compare with the reference.  Compressed fp32 gradients may differ by the rounding of each
 * rank's value to 16 bits and of each partial sum stored in 16 bits: at most (ranks + 2) unit
 * roundoffs of the sum of the magnitudes, which the ranks' values (all known here) bound. */
static void compare(const grads_t *g, acc_compress_t comp, int exact, uint32_t seed,
                    const char *what)
{
    for (size_t t = 0; t < NGRADS; t++) {
        int lossy = comp != ACC_COMPRESS_NONE && grads[t].dt == ACC_DT_F32;
        if (!lossy) {
            CHECK_MSG(memcmp(g->buf[t], g->ref[t],
                             (size_t)(grads[t].count * acc_dtype_size(grads[t].dt))) == 0,
                      "%s: gradient %zu differs from one allreduce per tensor", what, t);
            continue;
        }
        for (uint64_t e = 0; e < grads[t].count; e++) {
            double mag = 0, got = load(g->buf[t], grads[t].dt, e);
            double want = load(g->ref[t], grads[t].dt, e);
            for (int r = 0; r < NRANKS; r++)
                mag += fabs((double)(float)grad_value(exact, seed, r, t, e)) / NRANKS;
            CHECK_MSG(fabs(got - want) <= (NRANKS + 2) * roundoff(comp) * mag + 1e-30,
                      "%s: gradient %zu element %llu: %.9g, one allreduce per tensor %.9g", what, t,
                      (unsigned long long)e, got, want);
        }
    }
}

/* One iteration: mark every gradient ready (in order, or from the last to the first), end it,
 * compare. */
static void iteration(acc_comm_t *c, acc_fusion_t *f, grads_t *g, acc_compress_t comp,
                      uint32_t seed, int backwards, const char *what)
{
    int exact = comp == ACC_COMPRESS_NONE;
    reference(c, g, exact, seed);
    for (size_t k = 0; k < NGRADS; k++)
        CHECK_OK(acc_fusion_ready(f, (int)(backwards ? NGRADS - 1 - k : k)));
    CHECK_OK(acc_fusion_wait(f));
    compare(g, comp, exact, seed, what);
}

static acc_fusion_t *engine(acc_comm_t *c, grads_t *g, const acc_tune_config_t *cfg)
{
    acc_fusion_opts_t o;
    acc_fusion_t *f = NULL;
    acc_fusion_opts_init(&o);
    o.config = cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (size_t t = 0; t < NGRADS; t++) {
        int index = -1;
        CHECK_OK(acc_fusion_register(f, g->buf[t], (size_t)grads[t].count, grads[t].dt, &index));
        CHECK_INT(index, (int)t);
    }
    return f;
}

static int sizes_streams_compression(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    static const uint64_t fusions[] = {1ull << 10, 64ull << 10, 4ull << 20, 256ull << 20};
    acc_comm_t *c = NULL;
    acc_fusion_t *f;
    acc_tune_config_t cfg;
    acc_fusion_info_t info;
    grads_t g;
    uint32_t seed = 1;
    char what[160];
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    grads_alloc(&g);
    acc_tune_config_acc(&cfg, fusions[0], 1, ACC_TUNE_ALGO_AUTO);
    f = engine(c, &g, &cfg);
    for (size_t i = 0; i < sizeof(fusions) / sizeof(fusions[0]); i++)
        for (int streams = 1; streams <= 4; streams++)
            for (int comp = 0; comp < ACC_COMPRESS_COUNT; comp++) {
                acc_tune_config_acc(&cfg, fusions[i], streams, ACC_TUNE_ALGO_AUTO);
                cfg.compress = (acc_compress_t)comp;
                CHECK_OK(acc_fusion_set_config(f, &cfg));
                snprintf(what, sizeof(what), "rank %d, fusion %llu, %d streams, %s", rank,
                         (unsigned long long)fusions[i], streams,
                         acc_compress_name((acc_compress_t)comp));
                /* Twice: what the first left behind must not pass for the second. */
                iteration(c, f, &g, cfg.compress, seed++, 0, what);
                iteration(c, f, &g, cfg.compress, seed++, 0, what);
                CHECK_OK(acc_fusion_info(f, &info));
                CHECK(info.config.fusion_bytes == fusions[i]);
                CHECK_INT(info.config.streams, streams);
                CHECK_INT(info.source, ACC_FUSION_FROM_OPTIONS);
                /* 1 KiB buckets hold one gradient each but for gradients 1 and 2 (32 bytes
                 * together); 256 MiB ones a run of one type each. */
                if (i == 0)
                    CHECK_INT(info.buckets, 19);
                if (fusions[i] == 256ull << 20)
                    CHECK_INT(info.buckets, 7);
            }
    CHECK_OK(acc_fusion_destroy(f));
    grads_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(sizes_streams_compression_as_one_allreduce_per_tensor)
{
    quiet_env();
    ranks_run(NRANKS, sizes_streams_compression, NULL, 240);
}

/* Every rank marks gradient 3 only: the others come out zero, 3 the mean of the ranks'. */
static void unmarked_count_as_zero(acc_fusion_t *f, grads_t *g, uint32_t seed, int rank)
{
    for (size_t t = 0; t < NGRADS; t++)
        grad_fill(g->buf[t], grads[t].dt, grads[t].count, 1, seed, rank, t);
    CHECK_OK(acc_fusion_ready(f, 3));
    CHECK_OK(acc_fusion_wait(f));
    for (uint64_t e = 0; e < grads[5].count; e++)
        CHECK(((float *)g->buf[5])[e] == 0.0f);
    for (uint64_t e = 0; e < grads[3].count; e++) {
        double mean = 0;
        for (int r = 0; r < NRANKS; r++)
            mean += grad_value(1, seed, r, 3, e) / NRANKS;
        CHECK(((float *)g->buf[3])[e] == (float)mean);
    }
}

/* Every policy, the time-driven ones (where rank 0 decides where buckets end) with pauses
 * between the gradients so that cycles pass inside the backward pass; gradients marked from
 * the last to the first (nothing can start before the first is ready), and unmarked ones. */
static int every_policy(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = NULL;
    acc_fusion_t *f;
    acc_tune_config_t cfg[6];
    grads_t g;
    uint32_t seed = 100;
    char what[160];
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    grads_alloc(&g);
    acc_tune_config_ddp(&cfg[0]);
    cfg[0].fusion_bytes = 64ull << 10;
    cfg[0].first_bytes = 1ull << 10;
    cfg[0].streams = 2;
    acc_tune_config_horovod(&cfg[1]);
    cfg[1].fusion_bytes = 300ull << 10;
    cfg[1].cycle_ms = 0.5;
    cfg[1].streams = 3;
    acc_tune_config_acc(&cfg[2], 1ull << 20, 2, ACC_TUNE_ALGO_AUTO);
    cfg[2].cycle_ms = 0.3;
    acc_tune_config_nofusion(&cfg[3]);
    cfg[3].streams = 4;
    acc_tune_config_negotiate(&cfg[4], 100ull << 10, 0.5, 2);
    acc_tune_config_acc(&cfg[5], 16ull << 10, 1, ACC_TUNE_ALGO_AUTO);
    f = engine(c, &g, &cfg[0]);
    for (int p = 0; p < 6; p++) {
        CHECK_OK(acc_fusion_set_config(f, &cfg[p]));
        snprintf(what, sizeof(what), "rank %d, %s", rank, acc_fusion_policy_name(cfg[p].policy));
        iteration(c, f, &g, ACC_COMPRESS_NONE, seed++, 0, what);
        iteration(c, f, &g, ACC_COMPRESS_NONE, seed++, 1, what);
        /* Pauses between the gradients: cycles end inside the backward pass. */
        reference(c, &g, 1, seed);
        for (size_t t = 0; t < NGRADS; t++) {
            acc_sleep_until(acc_now_s() + 2e-4);
            CHECK_OK(acc_fusion_ready(f, (int)t));
        }
        CHECK_OK(acc_fusion_wait(f));
        compare(&g, ACC_COMPRESS_NONE, 1, seed++, what);
        /* The cycles split what the sizes alone would keep together (a bucket per run of one
         * type, 7); rank 0 decided, every rank reduced the same buckets. */
        if (cfg[p].cycle_ms > 0) {
            acc_fusion_info_t info;
            CHECK_OK(acc_fusion_info(f, &info));
            CHECK_MSG(info.buckets > 7, "%s: %llu buckets", what, (unsigned long long)info.buckets);
        }
    }
    /* Unmarked gradients count as zero: the mean of the others' zeros is zero. */
    unmarked_count_as_zero(f, &g, seed, rank);
    CHECK_OK(acc_fusion_destroy(f));
    grads_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(every_policy_marked_in_any_order)
{
    quiet_env();
    ranks_run(NRANKS, every_policy, NULL, 240);
}

/* Every rank marks the gradients in an order of its own (a different shuffle per rank and per
 * iteration, with pauses, so that rounds find different sets ready on different ranks): every
 * policy still gives what one allreduce per tensor gives, and the rounds of agreement take
 * exactly what was ready everywhere; under compression within the 16-bit rounding; unmarked
 * gradients count as zero. */
static int orders_of_their_own(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = NULL;
    acc_fusion_t *f;
    acc_tune_config_t cfg[4];
    grads_t g;
    uint32_t seed = 500;
    uint64_t rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    char what[160];
    int order[NGRADS];
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    grads_alloc(&g);
    acc_tune_config_ddp(&cfg[0]);
    cfg[0].fusion_bytes = 64ull << 10;
    acc_tune_config_horovod(&cfg[1]);
    cfg[1].fusion_bytes = 200ull << 10;
    cfg[1].cycle_ms = 0.3;
    cfg[1].streams = 2;
    acc_tune_config_acc(&cfg[2], 256ull << 10, 2, ACC_TUNE_ALGO_AUTO);
    acc_tune_config_negotiate(&cfg[3], 200ull << 10, 0.3, 3);
    f = engine(c, &g, &cfg[0]);
    for (int p = 0; p < 4; p++)
        for (int comp = 0; comp < 2; comp++) {
            cfg[p].compress = comp ? ACC_COMPRESS_FP16 : ACC_COMPRESS_NONE;
            CHECK_OK(acc_fusion_set_config(f, &cfg[p]));
            snprintf(what, sizeof(what), "rank %d, %s%s, in an order of its own", rank,
                     acc_fusion_policy_name(cfg[p].policy), comp ? ", fp16" : "");
            reference(c, &g, !comp, seed);
            for (size_t t = 0; t < NGRADS; t++)
                order[t] = (int)t;
            for (size_t t = NGRADS - 1; t > 0; t--) { /* Fisher-Yates, xorshift */
                size_t j;
                int tmp;
                rnd ^= rnd << 13;
                rnd ^= rnd >> 7;
                rnd ^= rnd << 17;
                j = (size_t)(rnd % (t + 1));
                tmp = order[t];
                order[t] = order[j];
                order[j] = tmp;
            }
            for (size_t t = 0; t < NGRADS; t++) {
                acc_sleep_until(acc_now_s() + 1e-4);
                CHECK_OK(acc_fusion_ready(f, order[t]));
            }
            CHECK_OK(acc_fusion_wait(f));
            compare(&g, cfg[p].compress, !comp, seed++, what);
        }
    /* Under negotiation, unmarked gradients count as zero too. */
    cfg[3].compress = ACC_COMPRESS_NONE;
    CHECK_OK(acc_fusion_set_config(f, &cfg[3]));
    unmarked_count_as_zero(f, &g, seed, rank);
    CHECK_OK(acc_fusion_destroy(f));
    grads_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(ranks_marking_in_orders_of_their_own)
{
    quiet_env();
    ranks_run(NRANKS, orders_of_their_own, NULL, 240);
}

/* Buffers the caller fused itself (DDP's buckets through a communication hook). */
static int callers_buffers(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_tune_config_t cfg;
    grads_t g;
    char what[96];
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    grads_alloc(&g);
    acc_fusion_opts_init(&o);
    acc_tune_config_acc(&cfg, 25ull << 20, 3, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_OK(acc_fusion_create(c, &o, &f));
    for (int comp = 0; comp < ACC_COMPRESS_COUNT; comp++) {
        cfg.compress = (acc_compress_t)comp;
        CHECK_OK(acc_fusion_set_config(f, &cfg));
        reference(c, &g, comp == ACC_COMPRESS_NONE, 7u + (uint32_t)comp);
        /* An empty buffer (a count of 0, no address) is a call that does nothing. */
        CHECK_OK(acc_fusion_reduce(f, NULL, 0, ACC_DT_F32));
        for (size_t t = 0; t < NGRADS; t++)
            CHECK_OK(acc_fusion_reduce(f, g.buf[t], (size_t)grads[t].count, grads[t].dt));
        CHECK_OK(acc_fusion_wait(f));
        snprintf(what, sizeof(what), "rank %d, the caller's buffers, %s", rank,
                 acc_compress_name(cfg.compress));
        compare(&g, cfg.compress, comp == ACC_COMPRESS_NONE, 7u + (uint32_t)comp, what);
    }
    /* Each rank ending its iterations after other buffers (acc.torch's backend waits whenever
     * its queue is empty, which differs between ranks): every buffer still goes to the stream
     * it goes to on the other ranks, and every result is right. */
    cfg.compress = ACC_COMPRESS_NONE;
    CHECK_OK(acc_fusion_set_config(f, &cfg));
    for (int round = 0; round < 2; round++) {
        reference(c, &g, 1, 11u + (uint32_t)round);
        for (size_t t = 0; t < NGRADS; t++) {
            CHECK_OK(acc_fusion_reduce(f, g.buf[t], (size_t)grads[t].count, grads[t].dt));
            if ((t + 1) % (size_t)(rank + 1) == 0)
                CHECK_OK(acc_fusion_wait(f));
        }
        CHECK_OK(acc_fusion_wait(f));
        snprintf(what, sizeof(what), "rank %d, waiting after every %d buffers, round %d", rank,
                 rank + 1, round);
        compare(&g, ACC_COMPRESS_NONE, 1, 11u + (uint32_t)round, what);
    }
    /* One engine, one kind of use. */
    CHECK_ERR(acc_fusion_register(f, g.buf[0], 4, ACC_DT_F32, NULL), ACC_ERR_INVALID);
    CHECK_OK(acc_fusion_destroy(f));
    grads_free(&g);
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(buffers_of_the_callers)
{
    quiet_env();
    ranks_run(NRANKS, callers_buffers, NULL, 120);
}

/* What a user can get wrong, refused before anything runs; one rank is enough. */
static int bad_use(int rank, int nranks, const acc_unique_id_t *id, void *arg)
{
    acc_comm_t *c = NULL;
    acc_fusion_t *f = NULL;
    acc_fusion_opts_t o;
    acc_fusion_info_t info;
    acc_tune_config_t cfg;
    float x[4] = {1, 2, 3, 4};
    (void)arg;

    CHECK_OK(acc_comm_init_rank(&c, nranks, id, rank, NULL));
    acc_fusion_opts_init(&o);
    o.strategy = ACC_SEARCH_HALVING;
    CHECK_ERR(acc_fusion_create(c, &o, &f), ACC_ERR_INVALID);
    CHECK_MSG_HAS("bayes or grid");
    acc_fusion_opts_init(&o);
    acc_tune_config_acc(&cfg, 1ull << 20, 17, ACC_TUNE_ALGO_AUTO);
    o.config = &cfg;
    CHECK_ERR(acc_fusion_create(c, &o, &f), ACC_ERR_RANGE);
    CHECK_OK(acc_fusion_create(c, NULL, &f));
    CHECK_ERR(acc_fusion_info(f, &info), ACC_NO_DATA);
    CHECK_ERR(acc_fusion_register(f, x, 4, (acc_dtype_t)99, NULL), ACC_ERR_INVALID);
    CHECK_ERR(acc_fusion_register(f, NULL, 4, ACC_DT_F32, NULL), ACC_ERR_INVALID);
    CHECK_OK(acc_fusion_register(f, x, 4, ACC_DT_F32, NULL));
    CHECK_ERR(acc_fusion_ready(f, 1), ACC_ERR_INVALID);
    CHECK_MSG_HAS("not registered");
    CHECK_ERR(acc_fusion_reduce(f, x, 4, ACC_DT_F32), ACC_ERR_INVALID);
    CHECK_OK(acc_fusion_ready(f, 0));
    CHECK_ERR(acc_fusion_ready(f, 0), ACC_ERR_INVALID);
    CHECK_MSG_HAS("already ready");
    CHECK_ERR(acc_fusion_set_config(f, &cfg), ACC_ERR_INVALID);
    CHECK_MSG_HAS("in flight");
    CHECK_ERR(acc_fusion_register(f, x, 4, ACC_DT_F32, NULL), ACC_ERR_INVALID);
    CHECK_OK(acc_fusion_wait(f));
    /* One rank: the mean is the value. */
    CHECK(x[0] == 1 && x[3] == 4);
    /* Nothing stored, nothing set: acc's default. */
    CHECK_OK(acc_fusion_info(f, &info));
    CHECK_INT(info.source, ACC_FUSION_FROM_DEFAULT);
    CHECK(info.config.fusion_bytes == 25ull << 20);
    CHECK_INT(info.config.streams, 1);
    CHECK_INT(info.config.compress, ACC_COMPRESS_NONE);
    CHECK(strncmp(info.key.model, "grads-", 6) == 0);
    CHECK_OK(acc_fusion_destroy(f));
    CHECK_OK(acc_fusion_destroy(NULL));
    CHECK_OK(acc_comm_destroy(c));
    return 0;
}

ACC_TEST(bad_use)
{
    quiet_env();
    setenv("ACC_TOPO", "gpus=1", 1);
    ranks_run(1, bad_use, NULL, 60);
}
