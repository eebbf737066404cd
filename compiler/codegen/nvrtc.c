/*
 * NVRTC: CUDA C++ source to CUBIN for a named architecture, in process, with no GPU.  Built
 * when acc is built with the CUDA toolkit (ACC_HAVE_NVRTC); without it every call says so.
 *
 * NVRTC and nvJitLink are opened at first use (dlopen), as the CUDA driver is, not linked:
 * libacc.so and the programs then load where the toolkit is elsewhere or absent (a training
 * image without it, a relocated install), and nothing a consumer links names a directory of the
 * build machine (acc.pc).  The names carry the major version of the headers built against,
 * whose ABI they are ("libnvrtc.so.13"), looked up on the loader's path (LD_LIBRARY_PATH, the
 * ldconfig cache), else in the toolkit directory the build found.  A machine without them gets
 * ACC_ERR_UNSUPPORTED saying which library is missing, from every call that compiles.
 *
 * Options (measured on the development machine, reference/05-kernels-nvrtc.md): C++17; fused
 * multiply-add off, so that every sum and product rounds exactly as the host executor's; and
 * --Ofast-compile=min, which NVRTC documents as "minimal impact on runtime" and which cut the
 * time of a generated module by about a sixth with the same CUBIN size.  Generated sources
 * include nothing, so no include path is passed.
 *
 * Modules are built in two relocatable parts (a device library shared by every plan of a
 * type, and the plan's own part) linked by nvJitLink, which also runs without a GPU: a plan
 * then costs the compile of its small part and a link of well under a millisecond, instead
 * of compiling the whole data mover again (measured: about 60 ms against 155 ms a module on
 * the 2-core development machine).  Relocatable parts carry the register limit of the entry
 * point's __launch_bounds__(512, 2), 64, which the linker checks across the call graph.
 */
#include "acc_kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef ACC_HAVE_NVRTC
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <pthread.h>
#endif

static atomic_uint_fast64_t compiles;

const char *acc_nvrtc_options(int flags)
{
    return (flags & ACC_NVRTC_RELOCATABLE)
               ? "-std=c++17 --fmad=false --Ofast-compile=min -rdc=true --maxrregcount=64 "
                 "--gpu-architecture="
               : "-std=c++17 --fmad=false --Ofast-compile=min --gpu-architecture=";
}

uint64_t acc_nvrtc_compiles(void)
{
    return atomic_load(&compiles);
}

#ifdef ACC_HAVE_NVRTC
/* The functions acc calls, opened at first use. */
#define NVRTC_FUNCS(X)                                                                             \
    X(nvrtcGetErrorString)                                                                         \
    X(nvrtcVersion)                                                                                \
    X(nvrtcGetNumSupportedArchs)                                                                   \
    X(nvrtcGetSupportedArchs)                                                                      \
    X(nvrtcCreateProgram)                                                                          \
    X(nvrtcCompileProgram)                                                                         \
    X(nvrtcGetCUBINSize)                                                                           \
    X(nvrtcGetCUBIN)                                                                               \
    X(nvrtcGetProgramLogSize)                                                                      \
    X(nvrtcGetProgramLog)                                                                          \
    X(nvrtcDestroyProgram)
#define NVJITLINK_FUNCS(X)                                                                         \
    X(nvJitLinkCreate)                                                                             \
    X(nvJitLinkDestroy)                                                                            \
    X(nvJitLinkAddData)                                                                            \
    X(nvJitLinkComplete)                                                                           \
    X(nvJitLinkGetLinkedCubinSize)                                                                 \
    X(nvJitLinkGetLinkedCubin)                                                                     \
    X(nvJitLinkGetErrorLogSize)                                                                    \
    X(nvJitLinkGetErrorLog)

static struct {
#define NVRTC_FIELD(name) __typeof__(&name) name;
    NVRTC_FUNCS(NVRTC_FIELD)
    NVJITLINK_FUNCS(NVRTC_FIELD)
#undef NVRTC_FIELD
    int ok;
    char why[768];
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void *open_library(const char *soname)
{
    char path[1024];
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h && ACC_CUDA_LIBRARY_DIR[0]) {
        snprintf(path, sizeof(path), "%s/%s", ACC_CUDA_LIBRARY_DIR, soname);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    return h;
}

static void load(void)
{
    void *nvrtc = open_library(ACC_NVRTC_SONAME), *jitlink = open_library(ACC_NVJITLINK_SONAME);

    if (!nvrtc || !jitlink) {
        snprintf(lib.why, sizeof(lib.why),
                 "kernels cannot be compiled: %s was not found (%s); install the CUDA toolkit's "
                 "NVRTC and nvJitLink %d, or put their directory on LD_LIBRARY_PATH",
                 nvrtc ? ACC_NVJITLINK_SONAME : ACC_NVRTC_SONAME, dlerror(), ACC_CUDA_MAJOR);
        return;
    }
#define NVRTC_LOAD(name)                                                                           \
    if (!(*(void **)&lib.name = dlsym(strncmp(#name, "nvJitLink", 9) ? nvrtc : jitlink, #name))) { \
        snprintf(lib.why, sizeof(lib.why), "kernels cannot be compiled: %s has no %s",             \
                 strncmp(#name, "nvJitLink", 9) ? ACC_NVRTC_SONAME : ACC_NVJITLINK_SONAME, #name); \
        return;                                                                                    \
    }
    NVRTC_FUNCS(NVRTC_LOAD)
    NVJITLINK_FUNCS(NVRTC_LOAD)
#undef NVRTC_LOAD
    lib.ok = 1;
}

/* ACC_OK once NVRTC and nvJitLink are open, else why not. */
static acc_status_t need(void)
{
    pthread_once(&lib_once, load);
    return lib.ok ? ACC_OK : acc_error_set(ACC_ERR_UNSUPPORTED, "%s", lib.why);
}
#endif

int acc_nvrtc_available(void)
{
#ifdef ACC_HAVE_NVRTC
    if (need() == ACC_OK)
        return 1;
    acc_error_clear();
#endif
    return 0;
}

acc_status_t acc_nvrtc_compile(const char *source, const char *name, const char *arch, void **cubin,
                               size_t *size, char **log)
{
    return acc_nvrtc_compile_ex(source, name, arch, 0, cubin, size, log);
}

#ifndef ACC_HAVE_NVRTC

static acc_status_t missing(void)
{
    return acc_error_set(ACC_ERR_UNSUPPORTED,
                         "acc was built without NVRTC (no CUDA toolkit found at build time): "
                         "kernels cannot be compiled; rebuild with the CUDA toolkit "
                         "(cmake -DACC_WITH_CUDA=ON)");
}

acc_status_t acc_nvrtc_version(int *major, int *minor)
{
    *major = *minor = 0;
    return missing();
}

acc_status_t acc_nvrtc_check_arch(const char *arch)
{
    (void)arch;
    return missing();
}

acc_status_t acc_nvrtc_compile_ex(const char *source, const char *name, const char *arch, int flags,
                                  void **cubin, size_t *size, char **log)
{
    (void)source;
    (void)name;
    (void)arch;
    (void)flags;
    *cubin = NULL;
    *size = 0;
    if (log)
        *log = NULL;
    return missing();
}

acc_status_t acc_nvrtc_link(const void *const *parts, const size_t *sizes, int n, const char *arch,
                            const char *name, void **cubin, size_t *size)
{
    (void)parts;
    (void)sizes;
    (void)n;
    (void)arch;
    (void)name;
    *cubin = NULL;
    *size = 0;
    return missing();
}

#else

static const char *const options[] = {"-std=c++17", "--fmad=false", "--Ofast-compile=min",
                                      "-rdc=true", "--maxrregcount=64"};
#define NWHOLE   3 /* the relocatable compile adds the rest */
#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static acc_status_t nvrtc_error(nvrtcResult r, const char *what)
{
    return acc_error_set(ACC_ERR_NVRTC, "NVRTC %s failed: %s (%d)", what,
                         lib.nvrtcGetErrorString(r), (int)r);
}

acc_status_t acc_nvrtc_version(int *major, int *minor)
{
    nvrtcResult r;
    *major = *minor = 0;
    if (need() != ACC_OK)
        return ACC_ERR_UNSUPPORTED;
    r = lib.nvrtcVersion(major, minor);
    return r == NVRTC_SUCCESS ? ACC_OK : nvrtc_error(r, "nvrtcVersion");
}

acc_status_t acc_nvrtc_check_arch(const char *arch)
{
    int n = 0, i, sm, *list = NULL;
    char *end;
    long v;
    acc_buf_t known;
    acc_status_t st = ACC_OK;

    /* Only "sm_XY" (optionally with the a/f feature suffixes NVRTC accepts): a CUBIN needs a
     * real architecture, compute_XY gives PTX only. */
    if (!arch || strncmp(arch, "sm_", 3) != 0 || (v = strtol(arch + 3, &end, 10)) <= 0 ||
        (*end && strcmp(end, "a") != 0 && strcmp(end, "f") != 0))
        return acc_error_set(ACC_ERR_INVALID,
                             "'%s' is not a GPU architecture: expected sm_XY such as sm_80 or "
                             "sm_90 (a CUBIN needs a real architecture, not compute_XY)",
                             arch ? arch : "");
    sm = (int)v;
    if ((st = need()) != ACC_OK)
        return st;
    if (lib.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 ||
        !(list = acc_mem_calloc((size_t)n, sizeof(int))) ||
        lib.nvrtcGetSupportedArchs(list) != NVRTC_SUCCESS) {
        acc_mem_free(list);
        return acc_error_set(ACC_ERR_NVRTC, "NVRTC cannot list the architectures it supports");
    }
    for (i = 0; i < n && list[i] != sm; i++)
        ;
    if (i == n) {
        acc_buf_init(&known);
        for (i = 0; i < n; i++)
            acc_buf_printf(&known, "%ssm_%d", i ? ", " : "", list[i]);
        st = acc_error_set(ACC_ERR_UNSUPPORTED, "NVRTC cannot build for %s; it knows %s", arch,
                           known.data ? known.data : "no architecture");
        acc_buf_free(&known);
    }
    acc_mem_free(list);
    return st;
}

static char *program_log(nvrtcProgram prog)
{
    size_t len = 0;
    char *log;
    if (lib.nvrtcGetProgramLogSize(prog, &len) != NVRTC_SUCCESS || len == 0)
        return NULL;
    if (!(log = acc_mem_alloc(len + 1)))
        return NULL;
    if (lib.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        acc_mem_free(log);
        return NULL;
    }
    log[len] = '\0';
    return log;
}

acc_status_t acc_nvrtc_compile_ex(const char *source, const char *name, const char *arch, int flags,
                                  void **cubin, size_t *size, char **log)
{
    nvrtcProgram prog = NULL;
    nvrtcResult r;
    const char *opts[NOPTIONS + 1];
    char archopt[48], *text = NULL;
    acc_status_t st = ACC_OK;
    size_t i, nopts = (flags & ACC_NVRTC_RELOCATABLE) ? NOPTIONS : NWHOLE;

    *cubin = NULL;
    *size = 0;
    if (log)
        *log = NULL;
    if ((st = acc_nvrtc_check_arch(arch)) != ACC_OK)
        return st;
    for (i = 0; i < nopts; i++)
        opts[i] = options[i];
    snprintf(archopt, sizeof(archopt), "--gpu-architecture=%s", arch);
    opts[nopts] = archopt;
    if ((r = lib.nvrtcCreateProgram(&prog, source, name ? name : "acc.cu", 0, NULL, NULL)) !=
        NVRTC_SUCCESS)
        return nvrtc_error(r, "nvrtcCreateProgram");
    atomic_fetch_add(&compiles, 1);
    r = lib.nvrtcCompileProgram(prog, (int)(nopts + 1), opts);
    text = program_log(prog);
    if (r != NVRTC_SUCCESS) {
        /* The log says where; the message keeps as much of it as fits. */
        st = acc_error_set(ACC_ERR_NVRTC, "NVRTC could not compile %s for %s: %s\n%s",
                           name ? name : "a kernel", arch, lib.nvrtcGetErrorString(r),
                           text ? text : "(no log)");
        goto out;
    }
    if ((r = lib.nvrtcGetCUBINSize(prog, size)) != NVRTC_SUCCESS) {
        st = nvrtc_error(r, "nvrtcGetCUBINSize");
        goto out;
    }
    if (*size == 0) {
        st = acc_error_set(ACC_ERR_NVRTC, "NVRTC produced no CUBIN for %s (%s)",
                           name ? name : "a kernel", arch);
        goto out;
    }
    if (!(*cubin = acc_mem_alloc(*size))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for a CUBIN of %zu bytes", *size);
        goto out;
    }
    if ((r = lib.nvrtcGetCUBIN(prog, *cubin)) != NVRTC_SUCCESS) {
        st = nvrtc_error(r, "nvrtcGetCUBIN");
        goto out;
    }
out:
    if (st != ACC_OK) {
        acc_mem_free(*cubin);
        *cubin = NULL;
        *size = 0;
    }
    if (log)
        *log = text;
    else
        acc_mem_free(text);
    lib.nvrtcDestroyProgram(&prog);
    return st;
}

static acc_status_t link_error(nvJitLinkHandle h, nvJitLinkResult r, const char *what,
                               const char *name, const char *arch)
{
    size_t len = 0;
    char *log = NULL;
    acc_status_t st;
    if (h && lib.nvJitLinkGetErrorLogSize(h, &len) == NVJITLINK_SUCCESS && len > 1 &&
        (log = acc_mem_alloc(len + 1)) && lib.nvJitLinkGetErrorLog(h, log) != NVJITLINK_SUCCESS)
        log[0] = '\0';
    st = acc_error_set(ACC_ERR_NVRTC, "nvJitLink could not %s %s for %s (error %d)%s%s", what,
                       name ? name : "a kernel", arch, (int)r, log && log[0] ? ":\n" : "",
                       log ? log : "");
    acc_mem_free(log);
    return st;
}

acc_status_t acc_nvrtc_link(const void *const *parts, const size_t *sizes, int n, const char *arch,
                            const char *name, void **cubin, size_t *size)
{
    nvJitLinkHandle h = NULL;
    nvJitLinkResult r;
    const char *opts[1];
    char archopt[48];
    acc_status_t st = ACC_OK;
    int i;

    *cubin = NULL;
    *size = 0;
    if ((st = acc_nvrtc_check_arch(arch)) != ACC_OK)
        return st;
    snprintf(archopt, sizeof(archopt), "-arch=%s", arch);
    opts[0] = archopt;
    if ((r = lib.nvJitLinkCreate(&h, 1, opts)) != NVJITLINK_SUCCESS)
        return link_error(NULL, r, "start linking", name, arch);
    for (i = 0; i < n; i++)
        if ((r = lib.nvJitLinkAddData(h, NVJITLINK_INPUT_CUBIN, parts[i], sizes[i], name)) !=
            NVJITLINK_SUCCESS) {
            st = link_error(h, r, "take a part of", name, arch);
            goto out;
        }
    if ((r = lib.nvJitLinkComplete(h)) != NVJITLINK_SUCCESS ||
        (r = lib.nvJitLinkGetLinkedCubinSize(h, size)) != NVJITLINK_SUCCESS) {
        st = link_error(h, r, "link", name, arch);
        goto out;
    }
    if (*size == 0 || !(*cubin = acc_mem_alloc(*size))) {
        st = *size ? acc_error_set(ACC_ERR_NOMEM, "out of memory for a CUBIN of %zu bytes", *size)
                   : link_error(h, r, "produce", name, arch);
        goto out;
    }
    if ((r = lib.nvJitLinkGetLinkedCubin(h, *cubin)) != NVJITLINK_SUCCESS)
        st = link_error(h, r, "read back", name, arch);
out:
    if (st != ACC_OK) {
        acc_mem_free(*cubin);
        *cubin = NULL;
        *size = 0;
    }
    lib.nvJitLinkDestroy(&h);
    return st;
}

#endif
