/*
 * The single-GPU executor.  Cases marked gpu need a CUDA device and NVRTC and report
 * themselves skipped without: every algorithm for 2, 4 and 8 ranks (one NVLink node, and two
 * nodes for the hierarchical plans) gives the host executor's results bit for bit, for every
 * data type and reduction, out of place and in place, on one block per lane and on three;
 * so does every algorithm that passes messages with LL kernels, in fp32, fp16 and bf16;
 * 1000 back-to-back calls and a replayed CUDA graph stay correct, with either protocol.  Without a
 * GPU, asking for one says why and nothing else breaks.
 */
#include "acc_compiler.h"
#include "acc_runtime.h"
#include "acc_test.h"
#include "host_reduce.h"

#include <stdlib.h>
#include <string.h>

/* ---- no GPU ---------------------------------------------------------------------------- */

ACC_TEST(without_a_gpu_it_says_why)
{
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    acc_gpu_exec_t *x = NULL;
    acc_status_t st;

    if (acc_cuda_init(0) == ACC_OK)
        ACC_SKIP("a GPU is present; this case is for machines without one");
    CHECK(acc_error_message()[0] != '\0');
    CHECK_OK(acc_topo_load("gpus=2 nvlink=18", &t));
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, "ring"), t, NULL, &p));
    st = acc_gpu_exec_create(p, ACC_DT_F32, ACC_RED_SUM, 1024, NULL, &x);
    CHECK_MSG(st == ACC_ERR_NO_DEVICE, "got %s: %s", acc_status_name(st), acc_error_message());
    CHECK(x == NULL);
    CHECK_MSG(strstr(acc_error_message(), "driver") || strstr(acc_error_message(), "GPU"),
              "'%s' does not say what is missing", acc_error_message());
    /* Everything that needs no GPU still works in the same process. */
    CHECK_OK(acc_host_exec(p, ACC_DT_F32, ACC_RED_SUM, 0, NULL, NULL, 0));
    acc_plan_destroy(p);
    acc_topo_destroy(t);
}

/* ---- helpers ----------------------------------------------------------------------------- */

static void need_gpu(void)
{
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC: no kernels to run");
    if (acc_cuda_init(0) != ACC_OK)
        ACC_SKIP(acc_error_message());
}

/* One cache for every case of a run, in the scratch directory: cases share compiles. */
static acc_kcache_t *cache(void)
{
    static acc_kcache_t *c;
    if (!c)
        CHECK_OK(acc_kcache_create(acc_test_tmp("gpu_kcache"), &c));
    return c;
}

typedef struct {
    void **in, **out;
    int n;
} hbufs_t;

static void hb_alloc(hbufs_t *b, int n, size_t bytes)
{
    int r;
    b->n = n;
    b->in = calloc((size_t)n, sizeof(void *));
    b->out = calloc((size_t)n, sizeof(void *));
    CHECK(b->in && b->out);
    for (r = 0; r < n; r++) {
        b->in[r] = calloc(1, bytes + 16);
        b->out[r] = calloc(1, bytes + 16);
        CHECK(b->in[r] && b->out[r]);
    }
}

static void hb_free(hbufs_t *b)
{
    int r;
    for (r = 0; r < b->n; r++) {
        free(b->in[r]);
        free(b->out[r]);
    }
    free(b->in);
    free(b->out);
}

static uint64_t big_elems(const acc_plan_t *p, uint64_t count)
{
    uint64_t a = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    uint64_t b = acc_plan_buf_elems(p, ACC_BUF_OUT, count);
    return a > b ? a : b;
}

/* Compare the outputs the postcondition defines; fail naming the first difference. */
static void compare(const acc_plan_t *p, acc_dtype_t dt, uint64_t count, int inplace,
                    void *const *want, void *const *got, const char *what)
{
    size_t es = acc_dtype_size(dt);
    int r;
    for (r = 0; r < p->nranks; r++) {
        uint64_t first = 0, n = acc_plan_buf_elems(p, ACC_BUF_OUT, count), i;
        const unsigned char *a, *b;
        if (p->coll == ACC_COLL_REDUCE && r != p->root)
            continue;
        if (inplace && p->coll == ACC_COLL_REDUCE_SCATTER)
            first = (uint64_t)r * count;
        a = (const unsigned char *)want[r] + first * es;
        b = (const unsigned char *)got[r] + first * es;
        if (memcmp(a, b, n * es) == 0)
            continue;
        for (i = 0; i < n && memcmp(a + i * es, b + i * es, es) == 0; i++)
            ;
        acc_test_fail(__FILE__, __LINE__,
                      "%s: rank %d element %llu is %Lg on the GPU, %Lg on the host", what, r,
                      (unsigned long long)(first + i), hx_load(dt, got[r], (size_t)(first + i)),
                      hx_load(dt, want[r], (size_t)(first + i)));
    }
}

/* One plan, type and reduction on the GPU against the host executor, for several sizes,
 * out of place and in place. */
static void gpu_vs_host(const acc_plan_t *p, acc_dtype_t dt, acc_redop_t op, int copies,
                        const char *label)
{
    static const uint64_t counts[] = {1, 13, 1000, 65537};
    const uint64_t max_count = 65537;
    size_t bytes = (size_t)big_elems(p, max_count) * acc_dtype_size(dt);
    acc_gpu_opts_t o;
    acc_gpu_exec_t *x = NULL;
    hbufs_t h, g;
    char what[256];
    size_t c;
    int mode;

    memset(&o, 0, sizeof(o));
    o.copies = copies;
    o.cache = cache();
    CHECK_MSG(acc_gpu_exec_create(p, dt, op, max_count, &o, &x) == ACC_OK, "%s %s %s: %s", label,
              acc_dtype_name(dt), acc_redop_name(op), acc_error_message());
    hb_alloc(&h, p->nranks, bytes);
    hb_alloc(&g, p->nranks, bytes);
    for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (mode = 0; mode <= p->inplace; mode++) {
            acc_fill_t fill = c % 2 ? ACC_FILL_RANDOM : ACC_FILL_EXACT;
            uint32_t seed = (uint32_t)(c * 11 + (size_t)mode);
            snprintf(what, sizeof(what), "%s %s %s, %d copies, count %llu%s", label,
                     acc_dtype_name(dt), acc_redop_name(op), acc_gpu_exec_copies(x, counts[c]),
                     (unsigned long long)counts[c], mode ? " in place" : "");
            acc_host_prepare(p, dt, op, fill, seed, counts[c], h.in, h.out, mode);
            acc_host_prepare(p, dt, op, fill, seed, counts[c], g.in, g.out, mode);
            CHECK_MSG(acc_host_exec(p, dt, op, counts[c], h.in, h.out, mode) == ACC_OK, "%s: %s",
                      what, acc_error_message());
            CHECK_MSG(acc_gpu_exec_host(x, counts[c], g.in, g.out, mode) == ACC_OK, "%s: %s", what,
                      acc_error_message());
            compare(p, dt, counts[c], mode, h.out, g.out, what);
            /* The same against the sequential reference (the host executor's own tests
             * cover the large sizes). */
            if (counts[c] <= 1000)
                CHECK_MSG(acc_host_check(p, dt, op, fill, seed, counts[c], g.out, mode, NULL) == 0,
                          "%s: outputs break the postcondition", what);
        }
    }
    hb_free(&h);
    hb_free(&g);
    acc_gpu_exec_destroy(x);
}

/* Every algorithm on n ranks in one NVLink node (nodes 1) or two nodes (for hier) whose
 * collective reduces (want_reducing) or only moves data. */
static void algorithms(int n, int nodes, int want_reducing)
{
    char topo_text[96], label[192];
    size_t count, i;
    const acc_algo_t *const *list = acc_algo_list(&count);
    acc_topo_t *topo = NULL;
    int ran = 0, combo = 0, d, o;

    need_gpu();
    if (nodes == 1)
        snprintf(topo_text, sizeof(topo_text), "gpus=%d nvlink=18", n);
    else if (n == 2)
        snprintf(topo_text, sizeof(topo_text), "nodes=2 gpus=1 nic=1x400");
    else
        snprintf(topo_text, sizeof(topo_text), "nodes=2 gpus=%d nvlink=18 nic=%dx400", n / 2,
                 n / 2);
    CHECK_OK(acc_topo_load(topo_text, &topo));
    for (i = 0; i < count; i++) {
        acc_plan_t *p = NULL;
        if (acc_coll_reduces(list[i]->coll) != want_reducing ||
            list[i]->supports(topo, NULL) != ACC_OK)
            continue;
        CHECK_OK(acc_algo_generate(list[i], topo, NULL, &p));
        snprintf(label, sizeof(label), "%s %s on %s", acc_coll_name(p->coll), p->algo, topo_text);
        for (d = 0; d < ACC_DT_COUNT; d++)
            for (o = 0; o < (want_reducing ? ACC_RED_COUNT : 1); o++) {
                /* Half of the combinations on three blocks per lane, so that slices of
                 * chunks are exercised along with whole ones. */
                gpu_vs_host(p, (acc_dtype_t)d, (acc_redop_t)o, combo++ % 2 ? 3 : 0, label);
            }
        acc_plan_destroy(p);
        ran++;
    }
    acc_topo_destroy(topo);
    /* One node: 10 reducing and 5 moving algorithms apply; two nodes: 9 and 5. */
    CHECK_INT(ran, want_reducing ? (nodes == 1 ? 10 : 9) : 5);
}

ACC_TEST_GPU(reducing_2_ranks_one_node)
{
    algorithms(2, 1, 1);
}

ACC_TEST_GPU(reducing_2_ranks_two_nodes)
{
    algorithms(2, 2, 1);
}

ACC_TEST_GPU(moving_2_ranks)
{
    algorithms(2, 1, 0);
    algorithms(2, 2, 0);
}

ACC_TEST_GPU(reducing_4_ranks_one_node)
{
    algorithms(4, 1, 1);
}

ACC_TEST_GPU(reducing_4_ranks_two_nodes)
{
    algorithms(4, 2, 1);
}

ACC_TEST_GPU(moving_4_ranks)
{
    algorithms(4, 1, 0);
    algorithms(4, 2, 0);
}

ACC_TEST_GPU(reducing_8_ranks_one_node)
{
    algorithms(8, 1, 1);
}

ACC_TEST_GPU(reducing_8_ranks_two_nodes)
{
    algorithms(8, 2, 1);
}

ACC_TEST_GPU(moving_8_ranks)
{
    algorithms(8, 1, 0);
    algorithms(8, 2, 0);
}

/* Every algorithm that passes messages, with LL (data and flag in every 8 bytes), on a
 * topology: fp32, fp16 and bf16 sums, one block per lane and three; `want` of them apply. */
static void ll_algorithms(const char *topo_text, int want)
{
    static const acc_dtype_t types[] = {ACC_DT_F32, ACC_DT_F16, ACC_DT_BF16};
    size_t count, i, d;
    const acc_algo_t *const *list = acc_algo_list(&count);
    acc_topo_t *topo = NULL;
    acc_algo_args_t args;
    char label[192];
    int ran = 0;

    need_gpu();
    CHECK_OK(acc_topo_load(topo_text, &topo));
    memset(&args, 0, sizeof(args));
    args.proto = ACC_PROTO_LL;
    for (i = 0; i < count; i++) {
        acc_plan_t *p = NULL;
        if (list[i]->supports(topo, NULL) != ACC_OK)
            continue;
        CHECK_OK(acc_algo_generate(list[i], topo, &args, &p));
        if (acc_kernel_supports(p, ACC_PROTO_LL) == ACC_OK) {
            snprintf(label, sizeof(label), "LL %s %s on %s", acc_coll_name(p->coll), p->algo,
                     topo_text);
            for (d = 0; d < 3; d++)
                gpu_vs_host(p, types[d], ACC_RED_SUM, d == 1 ? 3 : 0, label);
            ran++;
        }
        acc_plan_destroy(p);
    }
    acc_error_clear();
    acc_topo_destroy(topo);
    CHECK_INT(ran, want);
}

ACC_TEST_GPU(ll_2_and_4_ranks)
{
    /* ring, tree and rhd allreduce, two allgathers, two reduce_scatters, two broadcasts and
     * two reduces; with two nodes, the three hierarchical ones too. */
    ll_algorithms("gpus=2 nvlink=18", 11);
    ll_algorithms("gpus=4 nvlink=18", 11);
}

ACC_TEST_GPU(ll_8_ranks)
{
    ll_algorithms("gpus=8 nvlink=18", 11);
    ll_algorithms("nodes=2 gpus=4 nvlink=18 nic=4x400", 14);
}

/* ---- repeated calls -------------------------------------------------------------------- */

#define SETS 3

/* Device buffers for SETS calls of an out-of-place allreduce, their inputs from the host. */
typedef struct {
    const acc_plan_t *p;
    acc_dtype_t dt;
    uint64_t count;
    size_t bytes;
    void *din[SETS][8], *dout[SETS][8], *poison;
    hbufs_t want[SETS];
} sets_t;

static void sets_init(sets_t *s, const acc_plan_t *p, acc_dtype_t dt, uint64_t count)
{
    hbufs_t h;
    int k, r;
    memset(s, 0, sizeof(*s));
    CHECK(p->nranks <= 8);
    s->p = p;
    s->dt = dt;
    s->count = count;
    s->bytes = (size_t)count * acc_dtype_size(dt);
    CHECK_OK(acc_cuda_malloc(s->bytes, &s->poison));
    CHECK_OK(acc_cuda_memset(s->poison, 0xa5, s->bytes));
    for (k = 0; k < SETS; k++) {
        hb_alloc(&h, p->nranks, s->bytes);
        acc_host_prepare(p, dt, ACC_RED_SUM, ACC_FILL_RANDOM, 100u + (uint32_t)k, count, h.in,
                         h.out, 0);
        for (r = 0; r < p->nranks; r++) {
            CHECK_OK(acc_cuda_malloc(s->bytes, &s->din[k][r]));
            CHECK_OK(acc_cuda_malloc(s->bytes, &s->dout[k][r]));
            CHECK_OK(acc_cuda_htod(s->din[k][r], h.in[r], s->bytes));
        }
        CHECK_OK(acc_host_exec(p, dt, ACC_RED_SUM, count, h.in, h.out, 0));
        s->want[k] = h;
    }
}

/* Poison set k's outputs, then run it: a call that reads a stale counter shows as poison. */
static void sets_launch(sets_t *s, acc_gpu_exec_t *x, int k, acc_cuda_stream_t st)
{
    int r;
    for (r = 0; r < s->p->nranks; r++)
        CHECK_OK(acc_cuda_dtod_async(s->dout[k][r], s->poison, s->bytes, st));
    CHECK_OK(acc_gpu_exec_launch(x, s->count, s->din[k], s->dout[k], 0, st));
}

static void sets_check(sets_t *s, int k, const char *what)
{
    hbufs_t got;
    int r;
    hb_alloc(&got, s->p->nranks, s->bytes);
    for (r = 0; r < s->p->nranks; r++)
        CHECK_OK(acc_cuda_dtoh(got.out[r], s->dout[k][r], s->bytes));
    compare(s->p, s->dt, s->count, 0, s->want[k].out, got.out, what);
    hb_free(&got);
}

static void sets_free(sets_t *s)
{
    int k, r;
    for (k = 0; k < SETS; k++) {
        for (r = 0; r < s->p->nranks; r++) {
            acc_cuda_free(s->din[k][r]);
            acc_cuda_free(s->dout[k][r]);
        }
        hb_free(&s->want[k]);
    }
    acc_cuda_free(s->poison);
}

static acc_plan_t *plan_of(const char *algo, acc_proto_t proto)
{
    acc_topo_t *t = NULL;
    acc_plan_t *p = NULL;
    acc_algo_args_t args;
    memset(&args, 0, sizeof(args));
    args.proto = proto;
    CHECK_OK(acc_topo_load("dgx-h100", &t));
    CHECK_OK(acc_algo_generate(acc_algo_find(ACC_COLL_ALLREDUCE, algo), t, &args, &p));
    acc_topo_destroy(t);
    return p;
}

/* Message passing (ring, Simple and LL) and peer memory with signals (twoshot, oneshot). */
static const struct {
    const char *name, *algo;
    acc_proto_t proto;
} repeated[] = {{"ring", "ring", ACC_PROTO_SIMPLE},
                {"twoshot", "twoshot", ACC_PROTO_SIMPLE},
                {"oneshot", "oneshot", ACC_PROTO_SIMPLE},
                {"ring LL", "ring", ACC_PROTO_LL}};
#define NREPEATED (sizeof(repeated) / sizeof(repeated[0]))

ACC_TEST_GPU(thousand_calls_back_to_back)
{
    size_t a;
    need_gpu();
    for (a = 0; a < NREPEATED; a++) {
        acc_plan_t *p = plan_of(repeated[a].algo, repeated[a].proto);
        acc_gpu_opts_t o;
        acc_gpu_exec_t *x = NULL;
        acc_cuda_stream_t st = NULL;
        sets_t s;
        char what[128];
        int i, k;

        memset(&o, 0, sizeof(o));
        o.cache = cache();
        CHECK_OK(acc_gpu_exec_create(p, ACC_DT_F32, ACC_RED_SUM, 100003, &o, &x));
        CHECK_OK(acc_cuda_stream_create(&st));
        sets_init(&s, p, ACC_DT_F32, 100003);
        for (i = 0; i < 1000; i++) {
            sets_launch(&s, x, i % SETS, st);
            if (i % 250 == 249)
                CHECK_MSG(acc_gpu_exec_check(x, st) == ACC_OK, "%s call %d: %s", repeated[a].name,
                          i, acc_error_message());
        }
        CHECK_OK(acc_gpu_exec_check(x, st));
        for (k = 0; k < SETS; k++) {
            snprintf(what, sizeof(what), "%s after 1000 calls, input set %d", repeated[a].name, k);
            sets_check(&s, k, what);
        }
        sets_free(&s);
        acc_cuda_stream_destroy(st);
        acc_gpu_exec_destroy(x);
        acc_plan_destroy(p);
    }
}

ACC_TEST_GPU(graph_replay)
{
    size_t a;
    need_gpu();
    for (a = 0; a < NREPEATED; a++) {
        acc_plan_t *p = plan_of(repeated[a].algo, repeated[a].proto);
        acc_gpu_opts_t o;
        acc_gpu_exec_t *x = NULL;
        acc_cuda_stream_t st = NULL;
        acc_cuda_graph_t *g = NULL;
        sets_t s;
        hbufs_t h;
        char what[128];
        int i, r;

        memset(&o, 0, sizeof(o));
        o.cache = cache();
        CHECK_OK(acc_gpu_exec_create(p, ACC_DT_BF16, ACC_RED_SUM, 50001, &o, &x));
        CHECK_OK(acc_cuda_stream_create(&st));
        sets_init(&s, p, ACC_DT_BF16, 50001);
        /* The graph holds the poisoning copies and the call on set 0's buffers. */
        CHECK_OK(acc_cuda_capture_begin(st));
        sets_launch(&s, x, 0, st);
        CHECK_OK(acc_cuda_capture_end(st, &g));
        for (i = 0; i < 100; i++) {
            CHECK_OK(acc_cuda_graph_launch(g, st));
            if (i % 10 != 9)
                continue;
            CHECK_MSG(acc_gpu_exec_check(x, st) == ACC_OK, "%s replay %d: %s", repeated[a].name, i,
                      acc_error_message());
            snprintf(what, sizeof(what), "%s, replay %d", repeated[a].name, i);
            sets_check(&s, 0, what);
            /* New inputs in the same buffers: the next replays must follow them. */
            hb_alloc(&h, p->nranks, s.bytes);
            acc_host_prepare(p, ACC_DT_BF16, ACC_RED_SUM, ACC_FILL_RANDOM, 1000u + (uint32_t)i,
                             s.count, h.in, h.out, 0);
            for (r = 0; r < p->nranks; r++)
                CHECK_OK(acc_cuda_htod(s.din[0][r], h.in[r], s.bytes));
            CHECK_OK(acc_host_exec(p, ACC_DT_BF16, ACC_RED_SUM, s.count, h.in, h.out, 0));
            hb_free(&s.want[0]);
            s.want[0] = h;
        }
        acc_cuda_graph_destroy(g);
        sets_free(&s);
        acc_cuda_stream_destroy(st);
        acc_gpu_exec_destroy(x);
        acc_plan_destroy(p);
    }
}

ACC_TEST_GPU(refuses_more_blocks_than_fit)
{
    acc_plan_t *p;
    acc_gpu_opts_t o;
    acc_gpu_exec_t *x = NULL;
    need_gpu();
    p = plan_of("ring", ACC_PROTO_SIMPLE);
    memset(&o, 0, sizeof(o));
    o.copies = 100000;
    o.cache = cache();
    CHECK_ERR(acc_gpu_exec_create(p, ACC_DT_F32, ACC_RED_SUM, 1024, &o, &x), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("resident blocks");
    CHECK(x == NULL);
    o.copies = 0;
    CHECK_OK(acc_gpu_exec_create(p, ACC_DT_F32, ACC_RED_SUM, 1024, &o, &x));
    CHECK(acc_gpu_exec_capacity(x) >= p->nranks * p->nlanes);
    CHECK_ERR(acc_gpu_exec_launch(x, 4096, NULL, NULL, 0, NULL), ACC_ERR_RANGE);
    acc_gpu_exec_destroy(x);
    acc_plan_destroy(p);
}
