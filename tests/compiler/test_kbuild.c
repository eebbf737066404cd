/*
 * The kernel build (acc_kbuild_*), the modules of a set of plans as an image build makes them:
 * one module per type and reduction asked for (one per type for a collective that only moves
 * data), each source written into the directory asked for, each distinct source compiled once
 * per architecture through the cache, a second build from the same cache compiling nothing;
 * bad options refused with a message that names what is wrong, before anything is made.
 */
#include "acc_kernels.h"
#include "plan_fixtures.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void need_nvrtc(void)
{
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC (no CUDA toolkit)");
}

static void set_types(acc_kbuild_opts_t *o, acc_dtype_t a, acc_dtype_t b)
{
    o->types[0] = a;
    o->types[1] = b;
    o->ntypes = 2;
}

static void set_ops(acc_kbuild_opts_t *o, acc_redop_t a, acc_redop_t b)
{
    o->ops[0] = a;
    o->ops[1] = b;
    o->nops = 2;
}

ACC_TEST(variants_follow_the_collective)
{
    acc_kbuild_opts_t o;
    acc_kvariant_t v[ACC_KBUILD_MAX_VARIANTS];

    acc_kbuild_opts_init(&o);
    /* The defaults: the types of training, summed. */
    CHECK_INT(acc_kbuild_variants(&o, ACC_COLL_ALLREDUCE, v), 3);
    CHECK_INT(v[0].dtype, ACC_DT_F32);
    CHECK_INT(v[1].dtype, ACC_DT_F16);
    CHECK_INT(v[2].dtype, ACC_DT_BF16);
    CHECK(v[0].redop == ACC_RED_SUM && v[2].redop == ACC_RED_SUM);
    CHECK_INT(o.narchs, 0);
    CHECK(o.source_dir == NULL && o.cache == NULL);
    /* Every type with every reduction, in the order given... */
    set_types(&o, ACC_DT_F64, ACC_DT_I32);
    set_ops(&o, ACC_RED_MAX, ACC_RED_MIN);
    CHECK_INT(acc_kbuild_variants(&o, ACC_COLL_REDUCE_SCATTER, v), 4);
    CHECK(v[0].dtype == ACC_DT_F64 && v[0].redop == ACC_RED_MAX);
    CHECK(v[1].dtype == ACC_DT_F64 && v[1].redop == ACC_RED_MIN);
    CHECK(v[3].dtype == ACC_DT_I32 && v[3].redop == ACC_RED_MIN);
    /* ...but a collective that does not reduce has one module per type. */
    CHECK_INT(acc_kbuild_variants(&o, ACC_COLL_ALLGATHER, v), 2);
    CHECK(v[1].dtype == ACC_DT_I32 && v[1].redop == ACC_RED_SUM);
}

ACC_TEST(bad_options_are_refused_before_anything_is_made)
{
    const char *dir = acc_test_tmp_fresh("kbuild_bad");
    acc_kbuild_opts_t o;
    acc_kbuild_t *b = NULL;

    acc_kbuild_opts_init(&o);
    o.source_dir = dir;
    o.ntypes = 0;
    CHECK_ERR(acc_kbuild_create(&o, &b), ACC_ERR_INVALID);
    CHECK_MSG_HAS("data types is empty");
    CHECK(b == NULL);
    CHECK_MSG(access(dir, F_OK) != 0, "%s was created for refused options", dir);
    acc_kbuild_opts_init(&o);
    o.nops = 0;
    CHECK_ERR(acc_kbuild_opts_check(&o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("reductions is empty");
    acc_kbuild_opts_init(&o);
    set_types(&o, ACC_DT_F16, ACC_DT_F16);
    CHECK_ERR(acc_kbuild_opts_check(&o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("lists half twice");
    acc_kbuild_opts_init(&o);
    o.ops[0] = (acc_redop_t)ACC_RED_COUNT;
    CHECK_ERR(acc_kbuild_opts_check(&o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("reductions[0]");
    /* An architecture is checked by NVRTC, or refused for want of it. */
    acc_kbuild_opts_init(&o);
    snprintf(o.archs[0], sizeof(o.archs[0]), "sm_12");
    o.narchs = 1;
    CHECK(acc_kbuild_opts_check(&o) != ACC_OK);
    CHECK_MSG_HAS("architecture sm_12");
    CHECK_MSG_HAS(acc_nvrtc_available() ? "NVRTC cannot build for sm_12" : "NVRTC");
    snprintf(o.archs[0], sizeof(o.archs[0]), "compute_90");
    CHECK(acc_kbuild_opts_check(&o) != ACC_OK);
    CHECK_MSG_HAS("compute_90");
    memset(o.archs[0], 'x', sizeof(o.archs[0]));
    CHECK_ERR(acc_kbuild_opts_check(&o), ACC_ERR_INVALID);
    CHECK_MSG_HAS("archs[0]");
    o.narchs = ACC_KBUILD_MAX_ARCHS + 1;
    CHECK_ERR(acc_kbuild_opts_check(&o), ACC_ERR_INVALID);
    /* A source directory whose parent is missing. */
    acc_kbuild_opts_init(&o);
    o.source_dir = acc_test_tmp("kbuild_no_such_parent/cuda");
    CHECK_ERR(acc_kbuild_create(&o, &b), ACC_ERR_IO);
    CHECK_MSG_HAS("kbuild_no_such_parent/cuda");
}

typedef struct {
    int calls;
    acc_dtype_t dtypes[ACC_KBUILD_MAX_VARIANTS];
    acc_redop_t redops[ACC_KBUILD_MAX_VARIANTS];
    char names[ACC_KBUILD_MAX_VARIANTS][128];
    int fail_at; /* return an error at this call; -1 never */
} seen_t;

static acc_status_t record(void *ctx, const acc_kmodule_t *m)
{
    seen_t *s = ctx;
    if (s->calls == s->fail_at)
        return acc_error_set(ACC_ERR_IO, "the callback refused module %d", s->calls);
    s->dtypes[s->calls] = m->dtype;
    s->redops[s->calls] = m->redop;
    snprintf(s->names[s->calls], sizeof(s->names[0]), "%s", acc_kernel_name(m->kernel));
    s->calls++;
    return ACC_OK;
}

/* Without an architecture nothing is compiled (no NVRTC needed): the sources are written, one
 * file per distinct source, and every module is handed back. */
ACC_TEST(sources_are_written_once_and_every_module_handed_back)
{
    const char *dir = acc_test_tmp_fresh("kbuild_sources");
    acc_plan_t *ag = fx_ring_allgather(4, 2), *ar = fx_ring_allreduce(4, 2);
    acc_kbuild_opts_t o;
    acc_kbuild_t *b = NULL;
    acc_kbuild_stats_t st;
    seen_t seen;
    char path[1024], *text = NULL;
    size_t len = 0;
    acc_kernel_t *k = NULL;

    FX(acc_plan_verify(ag));
    FX(acc_plan_verify(ar));
    acc_kbuild_opts_init(&o);
    set_types(&o, ACC_DT_F16, ACC_DT_BF16);
    set_ops(&o, ACC_RED_SUM, ACC_RED_MAX);
    o.source_dir = dir;
    CHECK_OK(acc_kbuild_create(&o, &b));
    CHECK_STR(acc_kbuild_compiler(b), "");
    memset(&seen, 0, sizeof(seen));
    seen.fail_at = -1;
    /* Allgather: half and bfloat16 are one source of 16-bit elements, whatever the reduction. */
    CHECK_OK(acc_kbuild_plan(b, ag, record, &seen));
    CHECK_INT(seen.calls, 2);
    CHECK(seen.dtypes[0] == ACC_DT_F16 && seen.dtypes[1] == ACC_DT_BF16);
    CHECK_STR(seen.names[0], seen.names[1]);
    acc_kbuild_stats(b, &st);
    CHECK_INT(st.plans, 1);
    CHECK_INT(st.modules, 2);
    CHECK_INT(st.sources, 1);
    CHECK_INT(st.cubins, 0);
    /* Allreduce: four sources, one per type and reduction. */
    CHECK_OK(acc_kbuild_plan(b, ar, record, &seen));
    CHECK_INT(seen.calls, 6);
    CHECK(seen.dtypes[5] == ACC_DT_BF16 && seen.redops[5] == ACC_RED_MAX);
    acc_kbuild_stats(b, &st);
    CHECK_INT(st.modules, 6);
    CHECK_INT(st.sources, 5);
    CHECK_INT(st.built + st.compiles, 0);
    /* Each file holds what acc_kernel_generate makes. */
    CHECK_OK(acc_kernel_generate(ar, ACC_DT_BF16, ACC_RED_MAX, &k));
    snprintf(path, sizeof(path), "%s/%s.cu", dir, acc_kernel_name(k));
    CHECK_OK(acc_read_file(path, &text, &len));
    CHECK_STR(text, acc_kernel_source(k, NULL));
    acc_mem_free(text);
    acc_kernel_destroy(k);
    snprintf(path, sizeof(path), "%s/%s.cu", dir, seen.names[0]);
    CHECK(access(path, R_OK) == 0);
    /* A callback's error stops the build with that error. */
    seen.fail_at = seen.calls + 1;
    CHECK_ERR(acc_kbuild_plan(b, ar, record, &seen), ACC_ERR_IO);
    CHECK_MSG_HAS("the callback refused module 7");
    acc_kbuild_destroy(b);
    acc_plan_destroy(ag);
    acc_plan_destroy(ar);
}

/* With architectures, every distinct source is compiled once per architecture through the
 * cache, modules that share a source share its CUBIN, and a second build with the same cache
 * compiles nothing and hands back the same bytes. */
ACC_TEST(cubins_come_from_the_cache_once_per_source)
{
    acc_plan_t *ag = fx_ring_allgather(4, 2);
    acc_kbuild_opts_t o;
    acc_kcache_t *cache = NULL;
    acc_kbuild_t *b = NULL;
    acc_kbuild_stats_t st;
    const void *cubin = NULL;
    size_t size = 0;
    acc_kernel_t *k = NULL;
    int major = 0, minor = 0;
    char want[32];
    int pass;

    need_nvrtc();
    FX(acc_plan_verify(ag));
    CHECK_OK(acc_kcache_create("", &cache));
    acc_kbuild_opts_init(&o);
    set_types(&o, ACC_DT_F16, ACC_DT_BF16);
    snprintf(o.archs[0], sizeof(o.archs[0]), "sm_90");
    o.narchs = 1;
    o.cache = cache;
    CHECK_OK(acc_nvrtc_version(&major, &minor));
    snprintf(want, sizeof(want), "nvrtc %d.%d", major, minor);
    for (pass = 0; pass < 2; pass++) {
        CHECK_OK(acc_kbuild_create(&o, &b));
        CHECK_STR(acc_kbuild_compiler(b), want);
        CHECK_OK(acc_kbuild_plan(b, ag, NULL, NULL));
        acc_kbuild_stats(b, &st);
        CHECK_INT(st.modules, 2);
        CHECK_INT(st.sources, 1);
        CHECK_INT(st.cubins, 1);
        /* The cache is the caller's: only this build's work is counted. */
        CHECK_INT(st.built, pass == 0 ? 1 : 0);
        CHECK(pass == 0 ? st.compiles >= 1 : st.compiles == 0);
        acc_kbuild_destroy(b);
    }
    CHECK_OK(acc_kernel_generate(ag, ACC_DT_BF16, ACC_RED_SUM, &k));
    CHECK_OK(acc_kcache_kernel(cache, k, "sm_90", &cubin, &size));
    CHECK(size > 4 && memcmp(cubin, "\177ELF", 4) == 0);
    acc_kernel_destroy(k);
    acc_kcache_destroy(cache);
    acc_plan_destroy(ag);
}
