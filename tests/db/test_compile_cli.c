/* acc-compile --db as an image build runs it, the CLI's own promises: it says what it stored
 * (the library's part, acc_db_build, is tested in test_build.c), a second run says it compiled
 * nothing and leaves the file as it was, acc-info counts the kernels per architecture; --types
 * and --ops choose the modules of --emit-cuda; bad lists, collectives without tables and builds
 * without NVRTC fail before the database is touched.  Each case has its own files and kernel
 * cache (ctest -j runs them together). */
#include "acc_kernels.h"
#include "db_test_util.h"

#include <fcntl.h>
#include <sys/wait.h>

static char out_text[1 << 16], err_text[1 << 16];

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* A scratch path of the case, copied out of acc_test_tmp's rotating slots. */
#define PATH_CAP 1024
static void mine(const char *name, char path[PATH_CAP])
{
    snprintf(path, PATH_CAP, "%s", acc_test_tmp(name));
}

static void rm_rf(const char *path)
{
    char cmd[PATH_CAP + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    CHECK(system(cmd) == 0);
}

/* Run a tool of this build with args and this case's kernel cache;
 * standard output and error in out_text and err_text; the exit status. */
static int run_tool(const char *tool, const char *cache, const char *args)
{
    char exe[PATH_CAP], cmd[16384], o[PATH_CAP], e[PATH_CAP];
    int rc;

    snprintf(exe, sizeof(exe), "%s/%s", ACC_TOOLS_DIR, tool);
    CHECK_MSG(access(exe, X_OK) == 0, "%s is not built", exe);
    mine("out", o);
    mine("err", e);
    snprintf(cmd, sizeof(cmd), "ACC_CACHE_DIR='%s' '%s' %s >'%s' 2>'%s'", cache, exe, args, o, e);
    rc = system(cmd);
    CHECK_MSG(rc != -1 && WIFEXITED(rc), "could not run %s", cmd);
    slurp(o, out_text, sizeof(out_text));
    slurp(e, err_text, sizeof(err_text));
    unlink(o);
    unlink(e);
    return WEXITSTATUS(rc);
}

static void need_nvrtc(void)
{
    if (!acc_nvrtc_available())
        ACC_SKIP("acc was built without NVRTC");
}

static void fingerprint(const char *src, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load(src, &t));
    CHECK_OK(acc_topo_fingerprint(t, fp));
    acc_topo_destroy(t);
}

ACC_TEST(db_arch_stores_the_selected_plans_kernels)
{
    char cache[PATH_CAP], path[PATH_CAP];
    char args[8192], fp[ACC_SHA256_HEX_LEN + 1], hashes[16][ACC_SHA256_HEX_LEN + 1], want[128];
    char *first, *second;
    acc_db_t *db;
    uint64_t n = 0;
    int nplans;

    need_nvrtc();
    mine("cache", cache);
    mine("sel.db", path);
    rm_rf(cache);
    tu_remove(path);
    snprintf(args, sizeof(args), "--topo dgx-h100 --db '%s' --coll allreduce --arch sm_90", path);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    printf("%s", out_text);

    /* It stores what it says: a row per plan the table names and per default type (fp32,
     * fp16, bf16; sum). */
    fingerprint("dgx-h100", fp);
    db = tu_open(path, ACC_DB_READONLY);
    nplans = (int)tu_named_plans(db, fp, ACC_COLL_ALLREDUCE, hashes, 16);
    CHECK_OK(acc_db_count_kernels(db, NULL, "sm_90", &n));
    CHECK_INT(n, nplans * 3);
    acc_db_close(db);
    snprintf(want, sizeof(want), "fingerprint %.16s\n  allreduce ", fp);
    CHECK_MSG(strstr(out_text, want) != NULL, "no '%s' in:\n%s", want, out_text);
    snprintf(want, sizeof(want),
             "  kernels         %d plans, %d modules (float, half, bfloat16; sum)\n", nplans,
             nplans * 3);
    CHECK_MSG(strstr(out_text, want) != NULL, "no '%s' in:\n%s", want, out_text);
    snprintf(want, sizeof(want), "%d stored for sm_90 (nvrtc ", nplans * 3);
    CHECK_MSG(strstr(out_text, want) != NULL, "no '%s' in:\n%s", want, out_text);
    CHECK_STR(err_text, "");

    /* Again: nothing compiled or written (the build's inputs are the same), and not one byte
     * of data changes. */
    first = tu_dump(path);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    second = tu_dump(path);
    CHECK_STR(second, first);
    CHECK_MSG(strstr(out_text, "unchanged, built from the same topology and options by this acc; "
                               "nothing written") != NULL &&
                  strstr(out_text, "NVRTC compilations") == NULL,
              "compiled again:\n%s", out_text);
    acc_mem_free(first);
    acc_mem_free(second);

    /* acc-info counts them per architecture. */
    snprintf(args, sizeof(args), "--db '%s'", path);
    CHECK_INT(run_tool("acc-info", cache, args), 0);
    snprintf(want, sizeof(want), "kernels: %d (sm_90 %d)\n", nplans * 3, nplans * 3);
    CHECK_MSG(strstr(out_text, want) != NULL, "no '%s' in:\n%s", want, out_text);
    /* The ranges cover every size acc selects for, up to and with 4 GiB. */
    CHECK_MSG(strstr(out_text, " ranges over [1 KiB, 4 GiB]: acc ") != NULL, "%s", out_text);
    /* And NCCL's choice from the smallest size on, which the tuner plugin serves. */
    CHECK_MSG(strstr(out_text, "    allreduce       NCCL runs from 1 KiB ") != NULL, "%s",
              out_text);
    tu_remove(path);
    rm_rf(cache);
}

ACC_TEST(emit_cuda_takes_types_and_ops)
{
    char cache[PATH_CAP], dir[PATH_CAP], path[PATH_CAP];
    char args[8192], file[PATH_CAP + 64];
    static const char *const want[] = {"allreduce_ring_n8_double_max.cu",
                                       "allreduce_ring_n8_int32_max.cu",
                                       "allreduce_ring_n8_int32_min.cu"};
    size_t i;

    mine("cache", cache);
    mine("cuda", dir);
    mine("emit.db", path);
    rm_rf(dir);
    snprintf(args, sizeof(args),
             "--topo dgx-h100 --coll allreduce --algo ring --emit-cuda '%s' --types fp64,int32 "
             "--ops max,min",
             dir);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    CHECK_MSG(strstr(out_text, "1 plans, 4 kernel modules (double, int32; max, min)") != NULL, "%s",
              out_text);
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(file, sizeof(file), "%s/%s", dir, want[i]);
        CHECK_MSG(access(file, R_OK) == 0, "%s was not written", file);
    }
    snprintf(file, sizeof(file), "%s/allreduce_ring_n8_float_sum.cu", dir);
    CHECK(access(file, F_OK) != 0);

    /* A collective that only moves data: one module per element size. */
    snprintf(args, sizeof(args),
             "--topo dgx-h100 --coll allgather --algo ring --emit-cuda '%s' --types fp16,bf16 "
             "--ops sum,max,avg",
             dir);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    CHECK_MSG(strstr(out_text, "1 plans, 1 kernel modules") != NULL, "%s", out_text);

    /* With --db, the sources of the selected plans; without --arch nothing is compiled. */
    rm_rf(dir);
    tu_remove(path);
    snprintf(args, sizeof(args),
             "--topo dgx-h100 --db '%s' --coll allreduce --emit-cuda '%s' "
             "--types fp32",
             path, dir);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    CHECK_MSG(strstr(out_text, "sources in ") != NULL, "%s", out_text);
    CHECK_INT(tu_sql_int(path, "SELECT count(*) FROM kernels"), 0);
    snprintf(args, sizeof(args), "ls '%s'/allreduce_*_float_sum.cu >/dev/null", dir);
    CHECK(system(args) == 0);
    tu_remove(path);
    rm_rf(dir);
}

ACC_TEST(bad_lists_fail_before_the_database_is_touched)
{
    static const struct {
        const char *args, *says[3];
    } cases[] = {
        {"--arch sm_90 --types fp32,fp8", {"--types", "'fp8'", "bf16 (bfloat16)"}},
        {"--arch sm_90 --types fp32,", {"--types", "comma-separated", "int32"}},
        {"--arch sm_90 --ops sum,mean", {"--ops", "'mean'", "sum, prod, min, max, avg"}},
        {"--types fp16", {"--types and --ops", "--arch", NULL}},
        {"--arch sm_90 --print-selection", {"--print-selection", NULL, NULL}},
        {"--arch sm_90,,sm_80", {"--arch", "sm_80,sm_90", NULL}},
        {"--arch sm_90,", {"--arch", "ends with a comma", NULL}},
        {"--coll alltoall", {"no selection table for alltoall", NULL, NULL}},
        {"--coll gather", {"gather", NULL, NULL}},
    };
    char cache[PATH_CAP], path[PATH_CAP];
    char args[8192];
    size_t i, j;

    mine("cache", cache);
    mine("bad.db", path);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tu_remove(path);
        snprintf(args, sizeof(args), "--topo dgx-h100 --db '%s' %s", path, cases[i].args);
        CHECK_MSG(run_tool("acc-compile", cache, args) == 2, "%s: stderr %s", cases[i].args,
                  err_text);
        for (j = 0; j < 3 && cases[i].says[j]; j++)
            CHECK_MSG(strstr(err_text, cases[i].says[j]) != NULL, "%s: no '%s' in %s",
                      cases[i].args, cases[i].says[j], err_text);
        CHECK_MSG(access(path, F_OK) != 0, "%s: the database was created", cases[i].args);
    }
    /* An architecture NVRTC does not know, or no NVRTC at all: nothing is stored either. */
    snprintf(args, sizeof(args), "--topo dgx-h100 --db '%s' --arch %s", path,
             acc_nvrtc_available() ? "sm_12" : "sm_90");
    if (acc_nvrtc_available()) {
        CHECK_INT(run_tool("acc-compile", cache, args), 2);
        CHECK_MSG(strstr(err_text, "NVRTC cannot build for sm_12") != NULL, "%s", err_text);
    } else {
        CHECK_INT(run_tool("acc-compile", cache, args), 1);
        CHECK_MSG(strstr(err_text, "without NVRTC") != NULL, "%s", err_text);
    }
    CHECK(access(path, F_OK) != 0);
    rm_rf(cache);
}

/* What the child of acc_info_as_user runs: acc-info --db PATH with its output in the case's
 * files (made writable for it by the parent). */
static char user_out[PATH_CAP], user_err[PATH_CAP];

static int acc_info_child(const char *path)
{
    char exe[PATH_CAP];
    int o = open(user_out, O_WRONLY | O_TRUNC), e = open(user_err, O_WRONLY | O_TRUNC);

    snprintf(exe, sizeof(exe), "%s/acc-info", ACC_TOOLS_DIR);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
        return 126;
    execl(exe, exe, "--db", path, (char *)NULL);
    return 127;
}

ACC_TEST(image_database_is_read_by_another_user)
{
    char cache[PATH_CAP], dir[PATH_CAP], path[PATH_CAP + 16], args[8192];
    int rc;

    /* The image build, as root, into a directory only root may write ... */
    mine("cache", cache);
    mine("etc-acc", dir);
    rm_rf(dir);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof(path), "%s/acc.db", dir);
    snprintf(args, sizeof(args), "--topo 'gpus=4 nvlink=18' --db '%s'", path);
    CHECK_MSG(run_tool("acc-compile", cache, args) == 0, "stderr: %s", err_text);
    CHECK(chmod(path, 0644) == 0);
    if (geteuid() != 0)
        CHECK(chmod(dir, 0555) == 0);
    /* ... leaves one file, which needs nothing written beside it to be read. */
    CHECK_STR(tu_dir_files(dir), "acc.db");

    /* acc-info, as the job's user, reads it. */
    mine("user.out", user_out);
    mine("user.err", user_err);
    for (int i = 0; i < 2; i++) {
        const char *f = i ? user_err : user_out;
        FILE *h = fopen(f, "w");
        CHECK(h && fclose(h) == 0 && chmod(f, 0666) == 0);
    }
    rc = tu_as_user(acc_info_child, path);
    if (rc == 77)
        ACC_SKIP("cannot switch to an unprivileged user");
    slurp(user_out, out_text, sizeof(out_text));
    slurp(user_err, err_text, sizeof(err_text));
    CHECK_MSG(rc == 0, "acc-info as another user: status %d: %s", rc, err_text);
    CHECK_MSG(strstr(out_text, "acc schema version") && strstr(out_text, "topologies: 1"),
              "acc-info printed:\n%s", out_text);
    CHECK_STR(err_text, "");
    CHECK_STR(tu_dir_files(dir), "acc.db");
    chmod(dir, 0755);
    rm_rf(dir);
    rm_rf(cache);
}
