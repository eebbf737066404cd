/*
 * NVRTC and the kernel cache, no GPU needed: every algorithm that applies to a shipped
 * platform compiles to CUBIN for sm_80 and sm_90 in fp32, fp16 and bf16 (one case per
 * platform, each with its own memory cache so that every case compiles what it checks), as
 * the runtime builds them: a device library per type, compiled once, linked with each plan's
 * part; the whole module, as --emit-cuda writes it, also compiles on its own; compile errors
 * come with NVRTC's log; a second build from the cache directory runs NVRTC not once;
 * damaged cache files are recompiled, shared directories refused.
 */
#include "acc_compiler.h"
#include "acc_kernels.h"
#include "acc_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void need_nvrtc(void)
{
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC (no CUDA toolkit)");
}

static int is_elf(const void *p, size_t n)
{
    return n > 4 && memcmp(p, "\177ELF", 4) == 0;
}

/* Does the CUBIN define the entry point (its name is in the ELF's string table)? */
static int has_symbol(const void *p, size_t n, const char *sym)
{
    return memmem(p, n, sym, strlen(sym) + 1) != NULL;
}

ACC_TEST(version_and_architectures)
{
    int major = 0, minor = 0;
    need_nvrtc();
    CHECK_OK(acc_nvrtc_version(&major, &minor));
    CHECK(major >= 12);
    CHECK_OK(acc_nvrtc_check_arch("sm_80"));
    CHECK_OK(acc_nvrtc_check_arch("sm_90"));
    CHECK_ERR(acc_nvrtc_check_arch("compute_90"), ACC_ERR_INVALID);
    CHECK_MSG_HAS("not a GPU architecture");
    CHECK_ERR(acc_nvrtc_check_arch("sm_12"), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("sm_90");
}

ACC_TEST(compile_errors_show_the_log)
{
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    need_nvrtc();
    CHECK_ERR(acc_nvrtc_compile("__global__ void k() { undeclared_thing(); }", "broken.cu", "sm_90",
                                &cubin, &size, &log),
              ACC_ERR_NVRTC);
    CHECK_MSG_HAS("could not compile broken.cu for sm_90");
    CHECK_MSG_HAS("undeclared_thing");
    CHECK(cubin == NULL && size == 0);
    CHECK(log && strstr(log, "undeclared_thing"));
    acc_mem_free(log);
}

/* Every algorithm of a platform (default arguments), fp32, fp16 and bf16, sm_80 and sm_90:
 * each module compiles to an ELF CUBIN. */
static void compile_platform(const char *name)
{
    static const acc_dtype_t types[] = {ACC_DT_F32, ACC_DT_F16, ACC_DT_BF16};
    static const char *const archs[] = {"sm_80", "sm_90"};
    acc_topo_t *t = NULL;
    acc_kcache_t *cache = NULL;
    acc_kcache_stats_t stats;
    size_t n, i, d, a;
    const acc_algo_t *const *list = acc_algo_list(&n);
    int plans = 0, modules = 0;

    need_nvrtc();
    CHECK_OK(acc_topo_load_platform(name, &t));
    CHECK_OK(acc_kcache_create("", &cache));
    for (i = 0; i < n; i++) {
        acc_plan_t *p = NULL;
        if (list[i]->supports(t, NULL) != ACC_OK)
            continue;
        CHECK_MSG(acc_algo_generate(list[i], t, NULL, &p) == ACC_OK, "%s %s on %s: %s",
                  acc_coll_name(list[i]->coll), list[i]->name, name, acc_error_message());
        if (acc_kernel_supports(p, p->proto) != ACC_OK) {
            /* No kernel (a two-shot allreduce over 72 GPUs reduces past ACC_MAXSRC): the
             * selection never offers it, so there is nothing to compile. */
            printf("%s: %s %s has no kernel: %s\n", name, acc_coll_name(list[i]->coll),
                   list[i]->name, acc_error_message());
            acc_error_clear();
            acc_plan_destroy(p);
            continue;
        }
        plans++;
        for (d = 0; d < 3; d++) {
            acc_kernel_t *k = NULL;
            CHECK_OK(acc_kernel_generate(p, types[d], ACC_RED_SUM, &k));
            for (a = 0; a < 2; a++) {
                const void *cubin;
                size_t size;
                CHECK_MSG(acc_kcache_kernel(cache, k, archs[a], &cubin, &size) == ACC_OK,
                          "%s on %s for %s: %s", acc_kernel_name(k), name, archs[a],
                          acc_error_message());
                CHECK_MSG(is_elf(cubin, size) && has_symbol(cubin, size, "acc_kernel"),
                          "%s for %s is not a CUBIN with acc_kernel", acc_kernel_name(k), archs[a]);
                modules++;
            }
            acc_kernel_destroy(k);
        }
        acc_plan_destroy(p);
    }
    acc_kcache_stats(cache, &stats);
    /* Modules of data-moving collectives are one per element size: fp16 and bf16 share.  The
     * libraries are compiled once per architecture and type: float, half and bfloat16 sums,
     * 32- and 16-bit moves, at most. */
    CHECK(plans >= 11);
    CHECK(stats.links > 0 && stats.links < (uint64_t)modules);
    CHECK(stats.compiles > stats.links && stats.compiles - stats.links <= 2 * 5);
    printf("%s: %d plans, %d modules, %llu linked from %llu compiles in %.1f s (%.0f ms a "
           "module)\n",
           name, plans, modules, (unsigned long long)stats.links,
           (unsigned long long)stats.compiles, stats.compile_ms / 1e3,
           stats.compile_ms / (double)stats.links);
    acc_kcache_destroy(cache);
    acc_topo_destroy(t);
}

/* The shipped platforms, one case each (a case per platform keeps each under its limit). */
static const char *const platforms[] = {
    "aws-p4d",  "aws-p5",   "aws-p5en",       "aws-p6-b200", "azure-ndv5",  "dawnbench-v100-16node",
    "dgx-a100", "dgx-b200", "dgx-h100-2node", "dgx-h100",    "gb200-nvl72", "gcp-a3-mega",
    "hgx-h200", "oci-h100", "p4d-4node",      "pcie-8gpu",
};

ACC_TEST(every_shipped_platform_has_a_case)
{
    char **names = NULL;
    size_t n, i, j;
    CHECK_OK(acc_topo_platform_list(&names, &n));
    for (i = 0; i < n; i++) {
        for (j = 0; j < sizeof(platforms) / sizeof(platforms[0]); j++)
            if (strcmp(names[i], platforms[j]) == 0)
                break;
        CHECK_MSG(j < sizeof(platforms) / sizeof(platforms[0]),
                  "platform %s has no compile case in test_nvrtc.c", names[i]);
    }
    acc_strv_free(names, n);
}

ACC_TEST(platform_aws_p4d)
{
    compile_platform("aws-p4d");
}

ACC_TEST(platform_aws_p5)
{
    compile_platform("aws-p5");
}

ACC_TEST(platform_azure_ndv5)
{
    compile_platform("azure-ndv5");
}

ACC_TEST(platform_dawnbench_v100_16node)
{
    compile_platform("dawnbench-v100-16node");
}

ACC_TEST(platform_aws_p6_b200)
{
    compile_platform("aws-p6-b200");
}

ACC_TEST(platform_dgx_b200)
{
    compile_platform("dgx-b200");
}

ACC_TEST(platform_gb200_nvl72)
{
    compile_platform("gb200-nvl72");
}

ACC_TEST(platform_gcp_a3_mega)
{
    compile_platform("gcp-a3-mega");
}

ACC_TEST(platform_oci_h100)
{
    compile_platform("oci-h100");
}

ACC_TEST(platform_dgx_a100)
{
    compile_platform("dgx-a100");
}

ACC_TEST(platform_dgx_h100_2node)
{
    compile_platform("dgx-h100-2node");
}

ACC_TEST(platform_dgx_h100)
{
    compile_platform("dgx-h100");
}

ACC_TEST(platform_aws_p5en)
{
    compile_platform("aws-p5en");
}

ACC_TEST(platform_hgx_h200)
{
    compile_platform("hgx-h200");
}

ACC_TEST(platform_p4d_4node)
{
    compile_platform("p4d-4node");
}

ACC_TEST(platform_pcie_8gpu)
{
    compile_platform("pcie-8gpu");
}

/* ---- the cache ------------------------------------------------------------------------- */

typedef struct {
    acc_kernel_t *k;
    char *source, *name;
} src_t;

/* The fp32 modules of every algorithm on dgx-h100. */
static size_t sources(src_t *out, size_t cap)
{
    acc_topo_t *t = NULL;
    size_t n, i, m = 0;
    const acc_algo_t *const *list = acc_algo_list(&n);
    CHECK_OK(acc_topo_load_platform("dgx-h100", &t));
    for (i = 0; i < n && m < cap; i++) {
        acc_plan_t *p = NULL;
        acc_kernel_t *k = NULL;
        if (list[i]->supports(t, NULL) != ACC_OK)
            continue;
        CHECK_OK(acc_algo_generate(list[i], t, NULL, &p));
        CHECK_OK(acc_kernel_generate(p, ACC_DT_F32, ACC_RED_SUM, &k));
        out[m].k = k;
        out[m].source = acc_mem_strdup(acc_kernel_source(k, NULL));
        out[m++].name = acc_mem_strdup(acc_kernel_name(k));
        acc_plan_destroy(p);
    }
    acc_topo_destroy(t);
    return m;
}

static void sources_free(src_t *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        acc_kernel_destroy(s[i].k);
        acc_mem_free(s[i].source);
        acc_mem_free(s[i].name);
    }
}

static void build_all(acc_kcache_t *c, const src_t *s, size_t n, const void **bins, size_t *sizes)
{
    size_t i;
    for (i = 0; i < n; i++)
        CHECK_MSG(acc_kcache_kernel(c, s[i].k, "sm_90", &bins[i], &sizes[i]) == ACC_OK, "%s: %s",
                  s[i].name, acc_error_message());
}

/* The distinct device libraries of the modules. */
static size_t libraries(const src_t *s, size_t n)
{
    size_t i, j, m = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < i && strcmp(acc_kernel_library_source(s[i].k),
                                    acc_kernel_library_source(s[j].k)) != 0;
             j++)
            ;
        m += j == i;
    }
    return m;
}

ACC_TEST(second_build_compiles_nothing)
{
    src_t s[32];
    const void *b1[32], *b2[32];
    size_t z1[32], z2[32], n, i, libs;
    const char *dir;
    acc_kcache_t *first = NULL, *second = NULL;
    acc_kcache_stats_t st;
    uint64_t before;

    need_nvrtc();
    n = sources(s, 32);
    CHECK(n >= 12);
    /* fp32 sums and 32-bit moves. */
    libs = libraries(s, n);
    CHECK_INT(libs, 2);
    dir = acc_test_tmp_fresh("kcache_rebuild");
    CHECK_OK(acc_kcache_create(dir, &first));
    CHECK_STR(acc_kcache_dir(first), dir);
    before = acc_nvrtc_compiles();
    build_all(first, s, n, b1, z1);
    acc_kcache_stats(first, &st);
    /* Every plan's part, and each library once. */
    CHECK_INT(st.links, n);
    CHECK_INT(st.compiles, n + libs);
    CHECK_INT(acc_nvrtc_compiles() - before, n + libs);
    /* The same cache again: memory. */
    build_all(first, s, n, b2, z2);
    acc_kcache_stats(first, &st);
    CHECK_INT(st.mem_hits, n + (n - libs)); /* the libraries were hits while building */
    CHECK_INT(acc_nvrtc_compiles() - before, n + libs);

    /* A new process's cache over the same directory: not one NVRTC invocation. */
    CHECK_OK(acc_kcache_create(dir, &second));
    before = acc_nvrtc_compiles();
    build_all(second, s, n, b2, z2);
    acc_kcache_stats(second, &st);
    CHECK_INT(acc_nvrtc_compiles(), before);
    CHECK_INT(st.compiles, 0);
    CHECK_INT(st.links, 0);
    CHECK_INT(st.disk_hits, n);
    CHECK_INT(st.disk_errors, 0);
    for (i = 0; i < n; i++)
        CHECK(z1[i] == z2[i] && memcmp(b1[i], b2[i], z1[i]) == 0);
    acc_kcache_destroy(first);
    acc_kcache_destroy(second);
    sources_free(s, n);
}

/* What --emit-cuda writes, the whole module in one file, compiles on its own as well. */
ACC_TEST(whole_modules_compile_on_their_own)
{
    src_t s[32];
    size_t n, i, done = 0;
    acc_kcache_t *c = NULL;

    need_nvrtc();
    n = sources(s, 32);
    CHECK_OK(acc_kcache_create("", &c));
    for (i = 0; i < n; i++) {
        const void *bin;
        size_t size;
        /* One reducing and one moving collective keep the case short. */
        if (strncmp(s[i].name, "allreduce_ring_", 15) != 0 &&
            strncmp(s[i].name, "allgather_ring_", 15) != 0)
            continue;
        CHECK_MSG(acc_kcache_cubin(c, s[i].source, s[i].name, "sm_90", &bin, &size) == ACC_OK,
                  "%s: %s", s[i].name, acc_error_message());
        CHECK(is_elf(bin, size) && has_symbol(bin, size, "acc_kernel"));
        done++;
    }
    CHECK_INT(done, 2);
    acc_kcache_destroy(c);
    sources_free(s, n);
}

ACC_TEST(damaged_files_are_recompiled)
{
    src_t s[32];
    const void *bin, *again;
    size_t n, size, size2;
    char key[ACC_SHA256_HEX_LEN + 1], path[700];
    const char *dir;
    acc_kcache_t *c = NULL;
    acc_kcache_stats_t st;
    FILE *f;

    need_nvrtc();
    n = sources(s, 1);
    dir = acc_test_tmp_fresh("kcache_damaged");
    CHECK_OK(acc_kcache_create(dir, &c));
    CHECK_OK(acc_kcache_cubin(c, s[0].source, s[0].name, "sm_80", &bin, &size));
    acc_kcache_destroy(c);
    /* Cut the file short, as a crash during a copy would. */
    CHECK_OK(acc_kcache_key(s[0].source, "sm_80", key));
    snprintf(path, sizeof(path), "%s/%s.cubin", dir, key);
    CHECK(truncate(path, 200) == 0);
    CHECK_OK(acc_kcache_create(dir, &c));
    CHECK_OK(acc_kcache_cubin(c, s[0].source, s[0].name, "sm_80", &again, &size2));
    acc_kcache_stats(c, &st);
    CHECK_INT(st.disk_errors, 1);
    CHECK_INT(st.compiles, 1);
    CHECK(is_elf(again, size2));
    acc_kcache_destroy(c);
    /* Rewritten: whole again. */
    CHECK_OK(acc_kcache_create(dir, &c));
    CHECK_OK(acc_kcache_cubin(c, s[0].source, s[0].name, "sm_80", &again, &size2));
    acc_kcache_stats(c, &st);
    CHECK_INT(st.disk_hits, 1);
    CHECK_INT(st.compiles, 0);
    acc_kcache_destroy(c);
    /* Foreign bytes under a valid name. */
    f = fopen(path, "wb");
    CHECK(f != NULL);
    fputs("acc-cubin 1\nkey 0000\nsize 4\nsha256 00\n\nELF!", f);
    fclose(f);
    CHECK_OK(acc_kcache_create(dir, &c));
    CHECK_OK(acc_kcache_cubin(c, s[0].source, s[0].name, "sm_80", &again, &size2));
    acc_kcache_stats(c, &st);
    CHECK_INT(st.disk_errors, 1);
    CHECK_INT(st.compiles, 1);
    acc_kcache_destroy(c);
    sources_free(s, n);
}

ACC_TEST(keys_cover_source_and_architecture)
{
    char a[ACC_SHA256_HEX_LEN + 1], b[ACC_SHA256_HEX_LEN + 1], c[ACC_SHA256_HEX_LEN + 1];
    CHECK_OK(acc_kcache_key("__global__ void k() {}", "sm_80", a));
    CHECK_OK(acc_kcache_key("__global__ void k() {}", "sm_90", b));
    CHECK_OK(acc_kcache_key("__global__ void k() { }", "sm_80", c));
    CHECK_INT(strlen(a), ACC_SHA256_HEX_LEN);
    CHECK(strcmp(a, b) != 0 && strcmp(a, c) != 0);
    CHECK_OK(acc_kcache_key("__global__ void k() {}", "sm_80", b));
    CHECK_STR(a, b);
}

ACC_TEST(directories_others_can_write_are_refused)
{
    const char *dir = acc_test_tmp_fresh("kcache_shared");
    acc_kcache_t *c = NULL;
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(chmod(dir, 0777) == 0);
    CHECK_ERR(acc_kcache_create(dir, &c), ACC_ERR_IO);
    CHECK_MSG_HAS("writable by others");
    CHECK(c == NULL);
    CHECK(chmod(dir, 0700) == 0);
    CHECK_OK(acc_kcache_create(dir, &c));
    acc_kcache_destroy(c);
    /* A file where the directory should be. */
    CHECK(rmdir(dir) == 0);
    CHECK(fclose(fopen(dir, "w")) == 0);
    CHECK_ERR(acc_kcache_create(dir, &c), ACC_ERR_IO);
    CHECK(remove(dir) == 0);
}

ACC_TEST(cache_directory_setting)
{
    char *dir = NULL;
    const char *tmp = acc_test_tmp("cache_setting");
    char want[700];

    setenv("ACC_CACHE_DIR", tmp, 1);
    CHECK_OK(acc_cache_dir(&dir));
    CHECK_STR(dir, tmp);
    acc_mem_free(dir);
    unsetenv("ACC_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/var/cache/u1", 1);
    CHECK_OK(acc_cache_dir(&dir));
    CHECK_STR(dir, "/var/cache/u1/acc");
    acc_mem_free(dir);
    /* A relative XDG_CACHE_HOME is invalid by the specification: ignored. */
    setenv("XDG_CACHE_HOME", "rel/cache", 1);
    setenv("HOME", "/home/u2", 1);
    CHECK_OK(acc_cache_dir(&dir));
    CHECK_STR(dir, "/home/u2/.cache/acc");
    acc_mem_free(dir);
    snprintf(want, sizeof(want), "%s", "ACC_CACHE_DIR");
    CHECK_STR(acc_setting_info(ACC_SETTING_CACHE_DIR)->name, want);
}
