/*
 * The drop-in NCCL's API against today's NCCL: it exports every function of NCCL 2.32.3 - each
 * one nccl.h or the device API's host side declares, each one libnccl.so.2 exports (the wheel's
 * list) - and nothing else; each reaches the NCCL behind it; an NCCL too old for one answers
 * ncclInvalidUsage and says so once; and the NCCL behind it is the one the job would use: the
 * program's own when it is preloaded, one NCCL per process, with a warning when there are two.
 */
#include "dropin_util.h"
#include "nm_util.h"

/* ---- the whole API -------------------------------------------------------------------------- */

#define MAX_NAMES 512

/* Every function a header declares: a line that starts (after NCCL_EXTERN_C) with its return
 * type, then its name. */
static size_t declared(const char *header, char names[][NM_NAME_MAX], size_t n, size_t cap)
{
    static const char *const types[] = {"ncclResult_t ", "const char* ", "void ", "ncclTeam_t ",
                                        "int "};
    char line[512];
    FILE *f = fopen(acc_test_data(header), "r");
    CHECK_MSG(f != NULL, "%s", header);
    while (fgets(line, sizeof(line), f)) {
        const char *p = line + strspn(line, " ");
        if (!strncmp(p, "NCCL_EXTERN_C ", 14))
            p += 14;
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            const char *id = p + strlen(types[t]);
            size_t len;
            if (strncmp(p, types[t], strlen(types[t])) != 0)
                continue;
            id += strspn(id, " ");
            len = strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
            if (id[len] == '(' && len < NM_NAME_MAX && n < cap &&
                (!strncmp(id, "nccl", 4) || !strncmp(id, "pnccl", 5)))
                snprintf(names[n++], NM_NAME_MAX, "%.*s", (int)len, id);
        }
    }
    fclose(f);
    return n;
}

static int listed(const char *name, char names[][NM_NAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return 1;
    return 0;
}

static size_t add(const char *name, char names[][NM_NAME_MAX], size_t n)
{
    if (!listed(name, names, n))
        snprintf(names[n++], NM_NAME_MAX, "%s", name);
    return n;
}

/* What NCCL 2.32.3 offers: its nccl.h, its host.h (which declares ncclName only; the library
 * has pnccl<Name> twins), and whatever its library exports besides (host.h's Windows-only
 * declarations), but ncclResetDebugInitInternal, which no header declares - NCCL's own. */
static size_t nccl_2_32(char want[][NM_NAME_MAX])
{
    static char dev[64][NM_NAME_MAX];
    char line[256];
    size_t n = declared("nccl/2.32.3/nccl.h", want, 0, MAX_NAMES);
    size_t nd = declared("nccl/2.32.3/nccl_device/host.h", dev, 0, 64);
    FILE *f = fopen(acc_test_data("nccl/2.32.3/libnccl.exports"), "r");
    CHECK(f != NULL);
    printf("nccl.h 2.32.3 declares %zu functions, nccl_device/host.h %zu\n", n, nd);
    CHECK_INT(n, 146); /* 73 functions, each as ncclName and pnccl<Name> */
    for (size_t i = 0; i < nd; i++) {
        char twin[NM_NAME_MAX];
        snprintf(twin, sizeof(twin), "p%s", dev[i]);
        n = add(dev[i], want, n);
        n = add(twin, want, n);
    }
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] && line[0] != '#' && strcmp(line, "ncclResetDebugInitInternal") != 0)
            n = add(line, want, n);
    }
    fclose(f);
    return n;
}

ACC_TEST(exports_every_function_of_nccl_2_32_and_nothing_else)
{
    static char want[MAX_NAMES][NM_NAME_MAX], got[MAX_NAMES][NM_NAME_MAX];
    size_t nwant = nccl_2_32(want), ngot = nm_exported(ACC_NCCL_DROPIN, got, MAX_NAMES);
    printf("NCCL 2.32.3 offers %zu functions; the drop-in exports %zu symbols\n", nwant, ngot);
    for (size_t i = 0; i < nwant; i++)
        CHECK_MSG(listed(want[i], got, ngot), "%s is not exported", want[i]);
    for (size_t i = 0; i < ngot; i++)
        CHECK_MSG(listed(got[i], want, nwant), "%s is exported but not NCCL's", got[i]);
    CHECK_INT(ngot, nwant);
}

/* Each function reaches NCCL: the stand-in records it (or, for ncclGetErrorString, answers with
 * its own text).  The calls a one-rank stand-in can serve succeed; those it cannot are NCCL's
 * ncclInvalidUsage, passed back unchanged. */
ACC_TEST(every_function_reaches_nccl)
{
    ncclUniqueId id;
    ncclComm_t c = NULL, c2 = NULL, c3 = NULL, none = NULL;
    ncclResult_t async;
    ncclRedOp_t op;
    ncclWindow_t win = NULL;
    ncclParamHandle_t param = NULL;
    ncclTeam_t team = {1, 0, 1};
    ncclMultimemHandle_t mm = {NULL};
    ncclWaitSignalDesc_t desc = {0, 0, 0, 0};
    void *mem = NULL, *handle = NULL, *ptr = NULL;
    const char *text = NULL, **keys = NULL;
    float x[4] = {1, 2, 3, 4}, y[4];
    uint64_t u64;
    size_t off;
    ncclCftLeId le;
    int v = 0, devs[1] = {0};

    env("whole", "/nonexistent/acc.db");
    setenv("ACC_DISABLE", "1", 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(v, 23203);
    CHECK_STR(api.GetErrorString(ncclInternalError), "stand-in NCCL error");
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRank(&c, 1, id, 0), ncclSuccess);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRankConfig(&c2, 1, id, 0, NULL), ncclSuccess);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRankScalable(&c3, 1, 0, 1, &id, NULL), ncclSuccess);
    CHECK_INT(api.CommInitAll(&none, 1, devs), ncclInvalidUsage);
    CHECK_INT(api.CommSplit(c, 0, 0, &none, NULL), ncclInvalidUsage);
    CHECK_INT(api.CommShrink(c, devs, 0, &none, NULL, 0), ncclInvalidUsage);
    CHECK_INT(api.CommGrow(c, 2, NULL, -1, &none, NULL), ncclInvalidUsage);
    CHECK_INT(api.CommGetUniqueId(c, &id), ncclInvalidUsage);
    CHECK_INT(api.CommRevoke(c2, 0), ncclSuccess);
    CHECK_INT(api.MemAlloc(&mem, 64), ncclSuccess);
    CHECK_INT(api.MemFree(mem), ncclSuccess);
    CHECK_INT(api.CommCount(c, &v), ncclSuccess);
    CHECK_INT(v, 1);
    CHECK_INT(api.CommCuDevice(c, &v), ncclSuccess);
    CHECK_INT(api.CommUserRank(c, &v), ncclSuccess);
    CHECK_INT(api.CommRegister(c, x, sizeof(x), &handle), ncclSuccess);
    CHECK_INT(api.CommDeregister(c, handle), ncclSuccess);
    CHECK_INT(api.CommWindowRegister(c, x, sizeof(x), &win, 0), ncclInvalidUsage);
    CHECK_INT(api.CommWindowDeregister(c, win), ncclInvalidUsage);
    CHECK_INT(api.WinGetUserPtr(c, win, &ptr), ncclInvalidUsage);
    CHECK_INT(api.CommSuspend(c3, NCCL_SUSPEND_MEM), ncclSuccess);
    CHECK_INT(api.CommResume(c3), ncclSuccess);
    CHECK_INT(api.CommMemStats(c, ncclStatGpuMemTotal, &u64), ncclInvalidUsage);
    CHECK_INT(api.RedOpCreatePreMulSum(&op, x, ncclFloat32, ncclScalarHostImmediate, c),
              ncclInvalidUsage);
    CHECK_INT(api.RedOpDestroy(ncclNumOps, c), ncclInvalidUsage);
    CHECK_INT(api.CommGetAsyncError(c, &async), ncclSuccess);
    CHECK_STR(api.GetLastError(c), "");
    api.ResetDebugInit();
    CHECK_INT(api.AllReduce(x, y, 4, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
    CHECK_INT(api.AllGather(x, y, 4, ncclFloat32, c, NULL), ncclSuccess);
    CHECK_INT(api.ReduceScatter(x, y, 4, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
    CHECK_INT(api.Broadcast(x, y, 4, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK_INT(api.Bcast(x, 4, ncclFloat32, 0, c, NULL), ncclSuccess);
    CHECK_INT(api.Reduce(x, y, 4, ncclFloat32, ncclMax, 0, c, NULL), ncclSuccess);
    CHECK(y[3] == 4.0f);
    CHECK_INT(api.AlltoAll(x, y, 4, ncclFloat32, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Gather(x, y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Scatter(x, y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.AllReduceConfig(x, y, 4, ncclFloat32, ncclSum, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.AllGatherConfig(x, y, 4, ncclFloat32, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.ReduceScatterConfig(x, y, 4, ncclFloat32, ncclSum, c, NULL, NULL),
              ncclInvalidUsage);
    CHECK_INT(api.BroadcastConfig(x, y, 4, ncclFloat32, 0, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.ReduceConfig(x, y, 4, ncclFloat32, ncclSum, 0, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.AlltoAllConfig(x, y, 4, ncclFloat32, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.GatherConfig(x, y, 4, ncclFloat32, 0, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.ScatterConfig(x, y, 4, ncclFloat32, 0, c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.Send(x, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Recv(y, 4, ncclFloat32, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.PutSignal(x, 4, ncclFloat32, 0, win, 0, 0, 0, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.Signal(0, 0, 0, 0, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.WaitSignal(1, &desc, c, NULL), ncclInvalidUsage);
    CHECK_INT(api.GroupStart(), ncclSuccess);
    CHECK_INT(api.GroupEnd(), ncclSuccess);
    CHECK_INT(api.GroupSimulateEnd(NULL), ncclInvalidUsage);
    CHECK_INT(api.SetEncryption(NULL), ncclInvalidUsage);
    CHECK_INT(api.ParamBind(&param, "NCCL_DEBUG"), ncclInvalidUsage);
    CHECK_INT(api.ParamGetI8(param, (int8_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetI16(param, (int16_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetI32(param, (int32_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetI64(param, (int64_t *)&u64), ncclInvalidUsage);
    CHECK_INT(api.ParamGetU8(param, (uint8_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetU16(param, (uint16_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetU32(param, (uint32_t *)&v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetU64(param, &u64), ncclInvalidUsage);
    CHECK_INT(api.ParamGetStr(param, &text), ncclInvalidUsage);
    CHECK_INT(api.ParamGet(param, x, sizeof(x), &v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetParameter("NCCL_DEBUG", &text, &v), ncclInvalidUsage);
    CHECK_INT(api.ParamGetAllParameterKeys(&keys, &v), ncclInvalidUsage);
    api.ParamDumpAll();
    CHECK_INT(api.CommQueryProperties(c, NULL), ncclInvalidUsage);
    CHECK_INT(api.DevCommCreate(c, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.DevCommDestroy(c, NULL), ncclInvalidUsage);
    CHECK_INT(api.GetLsaMultimemDevicePointer(win, 0, &ptr), ncclInvalidUsage);
    CHECK_INT(api.GetMultimemDevicePointer(win, 0, mm, &ptr), ncclInvalidUsage);
    CHECK_INT(api.GetLsaDevicePointer(win, 0, 0, &ptr), ncclInvalidUsage);
    CHECK_INT(api.GetPeerDevicePointer(win, 0, 0, &ptr), ncclInvalidUsage);
    CHECK_INT(api.GetMultimemDeviceLeInfo(win, 0, &le, &off), ncclInvalidUsage);
    CHECK_INT(api.GetCftDeviceLeInfo(win, 0, 0, team, &le, &off), ncclInvalidUsage);
    CHECK_INT(api.GetPeerDeviceLeInfo(win, 0, 0, &le, &off), ncclInvalidUsage);
    CHECK_INT(api.LsaBarrierCreateRequirement(team, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.GinBarrierCreateRequirement(c, team, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.CftBarrierCreateRequirement(team, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.LLA2ACreateRequirement(1, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.GinOutboxCreateRequirement(1, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.GinInboxA2ACreateRequirement(team, 1, 1, NULL, NULL), ncclInvalidUsage);
    CHECK_INT(api.TeamWorld(c).nRanks, -1);
    CHECK_INT(api.TeamLsa(c).nRanks, -1);
    CHECK_INT(api.TeamCft(c, NCCL_CFT_TEAM_FLAT).nRanks, -1);
    CHECK_INT(api.TeamCftMultimem(c).nRanks, -1);
    CHECK_INT(api.TeamRail(c).nRanks, -1);
    CHECK_INT(api.TeamRankToWorld(c, team, 0), -1);
    CHECK_INT(api.TeamRankToLsa(c, team, 0), -1);
    CHECK_INT(api.LLA2ACalcSlots(1, 1), -1);
    CHECK_INT(api.CommFinalize(c), ncclSuccess);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
    CHECK_INT(api.CommDestroy(c2), ncclSuccess);
    CHECK_INT(api.CommAbort(c3), ncclSuccess);
#define REACHED(since, ret, name, params, args)                                                    \
    if (strcmp(#name, "GetErrorString") != 0)                                                      \
        CHECK_MSG(lines(0, "nccl", "nccl" #name) > 0, "nccl" #name " did not reach NCCL");
    DROPIN_API(REACHED)
#undef REACHED
    CHECK_INT(lines(0, "log", "acc "), 0); /* NCCL's answers are the job's business */
}

/* An NCCL older than a function (the stand-in as 2.28.9): the call is ncclInvalidUsage, said
 * once per function with what it needs; a *Config call without a configuration is the plain
 * call, which the older NCCL has. */
ACC_TEST(an_older_nccl_answers_the_new_functions_with_invalid_usage)
{
    ncclUniqueId id;
    ncclComm_t c = NULL;
    ncclParamHandle_t param = NULL;
    float x[4] = {1, 2, 3, 4}, y[4];
    int v = 0;

    env("older", "/nonexistent/acc.db");
    setenv("ACC_DISABLE", "1", 1);
    setenv("ACC_NCCL_LIBRARY", ACC_STAND_IN_NCCL_2_28, 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(v, 22809);
    CHECK_INT(api.GetUniqueId(&id), ncclSuccess);
    CHECK_INT(api.CommInitRank(&c, 1, id, 0), ncclSuccess);
    CHECK_INT(api.ParamBind(&param, "NCCL_DEBUG"), ncclInvalidUsage);
    CHECK_INT(api.ParamBind(&param, "NCCL_DEBUG"), ncclInvalidUsage);
    CHECK_INT(api.CommSuspend(c, NCCL_SUSPEND_MEM), ncclInvalidUsage);
    CHECK_INT(api.TeamWorld(c).nRanks, -1);
    CHECK_INT(api.AllReduceConfig(x, y, 4, ncclFloat32, ncclSum, c, NULL, NULL), ncclSuccess);
    CHECK(y[2] == 3.0f);
    CHECK_INT(lines(0, "log", "ncclParamBind: "), 1);
    CHECK_INT(lines(0, "log", "(NCCL 22809) has no such function; it needs a newer NCCL"), 3);
    CHECK_INT(lines(0, "nccl", "ncclAllReduce count=4 "), 1);
    CHECK_INT(api.CommDestroy(c), ncclSuccess);
}

/* Installed under NCCL's own name ahead of NCCL, the drop-in would find itself: it must say so
 * and refuse, never call itself. */
ACC_TEST(finding_itself_as_nccl_is_refused)
{
    int v = 0;
    env("self", "/nonexistent/acc.db");
    setenv("ACC_NCCL_LIBRARY", ACC_NCCL_DROPIN, 1);
    load_api();
    rank_logs(0);
    CHECK_INT(api.GetVersion(&v), ncclSystemError);
    CHECK_INT(lines(0, "log", "is acc's drop-in NCCL, not NCCL; set ACC_NCCL_LIBRARY"), 1);
    CHECK_INT(api.GetVersion(&v), ncclSystemError);
    CHECK_INT(lines(0, "log", "nccl"), 2); /* the reason once, the call once */
}

/* ---- which NCCL ---------------------------------------------------------------------------- */

/* Loaded objects whose file name contains fragment. */
static int loaded(const char *fragment)
{
    char line[1024];
    FILE *f = fopen("/proc/self/maps", "r");
    char last[1024] = "";
    int n = 0;
    while (f && fgets(line, sizeof(line), f)) {
        const char *path = strchr(line, '/');
        if (path && strstr(path, fragment) && strcmp(path, last) != 0) {
            snprintf(last, sizeof(last), "%s", path);
            n++;
        }
    }
    if (f)
        fclose(f);
    return n;
}

/* A job that loaded its NCCL privately (as Python loads PyTorch's), without ACC_NCCL_LIBRARY:
 * the drop-in uses that one and loads no other. */
ACC_TEST(uses_the_nccl_the_job_loaded)
{
    int v = 0;
    void *job_nccl;
    env("jobs", "/nonexistent/acc.db");
    unsetenv("ACC_NCCL_LIBRARY");
    rank_logs(0);
    job_nccl = dlopen(ACC_STAND_IN_NCCL_2_28, RTLD_NOW | RTLD_LOCAL);
    CHECK(job_nccl != NULL);
    load_api();
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(v, 22809);
    CHECK_INT(loaded("libnccl.so.2"), 1);
    CHECK_INT(lines(0, "log", "two NCCLs"), 0);
}

/* ACC_NCCL_LIBRARY names another NCCL than the one the job loaded: the drop-in uses what was
 * asked for, and one warning names both. */
ACC_TEST(two_nccls_in_one_process_are_named_in_a_warning)
{
    int v = 0;
    void *job_nccl;
    env("two", "/nonexistent/acc.db");
    setenv("ACC_NCCL_LIBRARY", ACC_STAND_IN_NCCL, 1);
    rank_logs(0);
    job_nccl = dlopen(ACC_STAND_IN_NCCL_2_28, RTLD_NOW | RTLD_LOCAL);
    CHECK(job_nccl != NULL);
    load_api();
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(v, 23203);
    CHECK_INT(loaded("libnccl.so.2"), 2);
    CHECK_INT(lines(0, "log", "acc WARN runtime: two NCCLs in one process: acc uses "), 1);
    CHECK_INT(lines(0, "log", "(NCCL 23203, ACC_NCCL_LIBRARY)"), 1);
    CHECK_INT(lines(0, "log", "stand_in_nccl_2_28/libnccl.so.2 (NCCL 22809)"), 1);
    CHECK_INT(lines(0, "log", "unset ACC_NCCL_LIBRARY to use the program's own"), 1);
    CHECK_INT(api.GetVersion(&v), ncclSuccess);
    CHECK_INT(lines(0, "log", "two NCCLs"), 1);
}

/* ---- preloaded into a job ------------------------------------------------------------------- */

/* A job that loads NCCL itself (nccl_loop: libnccl.so.2 into the global scope, calls through
 * the dynamic linker) with the drop-in in LD_PRELOAD and no ACC_NCCL_LIBRARY: the drop-in
 * stands in front of the job's own NCCL and finds it as the next definition of NCCL's API. */
static int preloaded_rank(int rank, int nranks, const acc_unique_id_t *unused, void *arg)
{
    char r[16], n[16], asan[512];
    const char *argv[] = {NCCL_LOOP_EXE, r, n, arg, "3", "256", "4096", "2097152", NULL};
    const char *asan_was = getenv("ASAN_OPTIONS");
    (void)unused;
    /* In a sanitizer build the preloaded library comes before the sanitizer's runtime, which
     * AddressSanitizer refuses unless told that this is meant. */
    snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0", asan_was ? asan_was : "",
             asan_was && asan_was[0] ? ":" : "");
    setenv("ASAN_OPTIONS", asan, 1);
    snprintf(r, sizeof(r), "%d", rank);
    snprintf(n, sizeof(n), "%d", nranks);
    unlink(rank_file(rank, "nccl"));
    setenv("FAKE_NCCL_LOG", rank_file(rank, "nccl"), 1);
    setenv("LD_PRELOAD", ACC_NCCL_DROPIN, 1);
    setenv("NCCL_LOOP_LIBRARY", ACC_STAND_IN_NCCL, 1);
    setenv("NCCL_LOOP_HOST", "1", 1);
    unsetenv("ACC_NCCL_LIBRARY");
    if (!freopen(rank_file(rank, "log"), "w", stdout) || dup2(fileno(stdout), 2) < 0)
        return 3;
    execv(NCCL_LOOP_EXE, (char *const *)argv);
    return 4;
}

ACC_TEST(preloaded_in_front_of_the_jobs_own_nccl)
{
    const char *idfile = acc_test_tmp("preload.id");
    env("preload", db_path("preload"));
    unlink(idfile);
    ranks_run(DROPIN_NRANKS, preloaded_rank, (void *)idfile, 180);
    /* 256 bytes: below the table, NCCL's; the other sizes acc's. */
    CHECK(table_says_nccl(ACC_COLL_ALLREDUCE, 256));
    CHECK(!table_says_nccl(ACC_COLL_ALLREDUCE, 4096));
    CHECK(!table_says_nccl(ACC_COLL_ALLREDUCE, 2097152));
    for (int rank = 0; rank < DROPIN_NRANKS; rank++) {
        CHECK_INT(lines(rank, "log", "ncclAllReduce from "), 1);
        CHECK_INT(lines(rank, "log", "libacc-nccl.so"), 1);
        CHECK_INT(lines(rank, "log", "ok"), 1);
        CHECK_INT(lines(rank, "log", "two NCCLs"), 0);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 64), 3);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 1024), 0);
        CHECK_INT(nccl_calls(rank, ACC_COLL_ALLREDUCE, 524288), 0);
    }
}
