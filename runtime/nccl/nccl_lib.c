/*
 * Opening NCCL at run time.  Each entry point is taken as pnccl<Name> where the library has
 * it (NCCL builds export every API twice, a weak ncclX and a strong pncclX, for profilers), so
 * that a preloaded library interposing ncclX - acc's own drop-in among them - never calls back
 * into itself through acc.
 */
#include "nccl_lib.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nccl_lib_t lib;
static acc_status_t open_status;
static char open_msg[1024];
static int ready; /* __atomic: lib is usable (set once, after every field) */
static int warned_two;

void *nccl_lib_sym(const nccl_lib_t *l, const char *name)
{
    char p[96];
    void *f;
    snprintf(p, sizeof(p), "p%s", name);
    f = dlsym(l->handle, p);
    return f ? f : dlsym(l->handle, name);
}

/* The start of the loaded object that defines addr, or NULL. */
static void *object_of(const void *addr)
{
    Dl_info where;
    return addr && dladdr(addr, &where) ? where.dli_fbase : NULL;
}

/* acc's drop-in NCCL, installed under NCCL's own name ahead of NCCL, would be found here as
 * "NCCL": every call would come back to it.  It is the object this very code is part of. */
static int is_acc_itself(const void *entry)
{
    return object_of(entry) == object_of((const void *)nccl_lib_open);
}

/* NCCL's ncclGetVersion as the handle's object (or its dependencies) defines it. */
static void *version_entry(void *handle)
{
    void *f = dlsym(handle, "pncclGetVersion");
    return f ? f : dlsym(handle, "ncclGetVersion");
}

/* ---- which NCCL ------------------------------------------------------------------------ */

/* The paths of every object the process has loaded, in load order (taken: acc_mem_free each
 * and the array).  dl_iterate_phdr holds the loader's lock, so nothing is opened inside it. */
typedef struct {
    char **names;
    size_t n, cap;
} names_t;

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    names_t *ns = arg;
    char *copy;
    (void)size;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the program itself, the vDSO */
    if (acc_array_reserve((void **)&ns->names, &ns->cap, ns->n + 1, sizeof(char *)) != ACC_OK ||
        !(copy = acc_mem_strdup(info->dlpi_name)))
        return 1;
    ns->names[ns->n++] = copy;
    return 0;
}

static void names_free(names_t *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        acc_mem_free(ns->names[i]);
    acc_mem_free(ns->names);
}

/* An NCCL the process has loaded (the first in load order that is not acc itself and not
 * `except`), opened again without loading anything; NULL when there is none. */
static void *loaded_nccl(const void *except_base, char *path, size_t cap)
{
    names_t ns = {0};
    void *found = NULL;
    dl_iterate_phdr(collect, &ns);
    for (size_t i = 0; i < ns.n && !found; i++) {
        void *h = dlopen(ns.names[i], RTLD_LAZY | RTLD_NOLOAD), *f;
        Dl_info where;
        if (!h)
            continue;
        f = version_entry(h);
        if (f && !is_acc_itself(f) && dladdr(f, &where) && where.dli_fbase != except_base) {
            /* The object that defines it (a dependency of the one listed, perhaps). */
            snprintf(path, cap, "%s", where.dli_fname);
            found = dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD);
        }
        dlclose(h);
    }
    names_free(&ns);
    return found;
}

/* The NCCL the program would call without acc: the next definition after acc's own in the
 * dynamic linker's order, else one it loaded privately. */
static void *programs_nccl(char *path, size_t cap, const char **how)
{
    void *f = dlsym(RTLD_NEXT, "pncclGetVersion");
    Dl_info where;

    if (!f)
        f = dlsym(RTLD_NEXT, "ncclGetVersion");
    if (f && !is_acc_itself(f) && dladdr(f, &where)) {
        *how = "the program's own (the next definition of NCCL's API)";
        snprintf(path, cap, "%s", where.dli_fname);
        return dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    }
    *how = "the NCCL the program loaded";
    return loaded_nccl(NULL, path, cap);
}

/* The range of executable code of the object that holds addr. */
typedef struct {
    uintptr_t addr, lo, hi;
} text_t;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    text_t *t = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        lo = a < lo ? a : lo;
        hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
    if (t->addr >= lo && t->addr < hi) {
        t->lo = lo;
        t->hi = hi;
        return 1;
    }
    return 0;
}

#define TAKE(field, name)                                                                          \
    do {                                                                                           \
        *(void **)&lib.field = nccl_lib_sym(&lib, name);                                           \
        if (!lib.field)                                                                            \
            missing = name;                                                                        \
    } while (0)

static void open_once(void)
{
    const char *path = acc_setting_str(ACC_SETTING_NCCL_LIBRARY);
    const char *missing = NULL;
    text_t text = {0};
    int v = 0;

    if (path[0]) {
        lib.how = "ACC_NCCL_LIBRARY";
        snprintf(lib.path, sizeof(lib.path), "%s", path);
        /* RTLD_LOCAL: NCCL's symbols stay out of the global scope, where a drop-in's live. */
        lib.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    } else if (!(lib.handle = programs_nccl(lib.path, sizeof(lib.path), &lib.how))) {
        lib.how = "the library search path";
        snprintf(lib.path, sizeof(lib.path), "libnccl.so.2");
        lib.handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib.handle) {
        open_status = ACC_ERR_NOT_FOUND;
        snprintf(open_msg, sizeof(open_msg),
                 "cannot open NCCL (%s, from %s): %s; set ACC_NCCL_LIBRARY to libnccl.so.2's "
                 "path",
                 lib.path, lib.how, dlerror());
        return;
    }
    TAKE(get_version, "ncclGetVersion");
    TAKE(get_error_string, "ncclGetErrorString");
    TAKE(get_unique_id, "ncclGetUniqueId");
    TAKE(comm_init_rank, "ncclCommInitRank");
    TAKE(comm_destroy, "ncclCommDestroy");
    TAKE(comm_abort, "ncclCommAbort");
    TAKE(comm_count, "ncclCommCount");
    TAKE(comm_user_rank, "ncclCommUserRank");
    TAKE(comm_cu_device, "ncclCommCuDevice");
    TAKE(comm_get_async_error, "ncclCommGetAsyncError");
    TAKE(all_reduce, "ncclAllReduce");
    TAKE(all_gather, "ncclAllGather");
    TAKE(reduce_scatter, "ncclReduceScatter");
    TAKE(broadcast, "ncclBroadcast");
    TAKE(reduce, "ncclReduce");
    TAKE(group_start, "ncclGroupStart");
    TAKE(group_end, "ncclGroupEnd");
    if (missing) {
        open_status = ACC_ERR_NOT_FOUND;
        snprintf(open_msg, sizeof(open_msg),
                 "%s (from %s) lacks %s: not an NCCL library acc can use", lib.path, lib.how,
                 missing);
        return;
    }
    *(void **)&lib.mem_alloc = nccl_lib_sym(&lib, "ncclMemAlloc");
    *(void **)&lib.mem_free = nccl_lib_sym(&lib, "ncclMemFree");
    if (is_acc_itself((void *)lib.get_version)) {
        open_status = ACC_ERR_UNSUPPORTED;
        snprintf(open_msg, sizeof(open_msg),
                 "%s is acc's drop-in NCCL, not NCCL; set ACC_NCCL_LIBRARY to the path of the "
                 "real libnccl.so.2",
                 lib.path);
        return;
    }
    text.addr = (uintptr_t)lib.get_version;
    dl_iterate_phdr(find_text, &text);
    lib.text_lo = text.lo;
    lib.text_hi = text.hi;
    lib.get_version(&v);
    lib.version = v;
    open_status = ACC_OK;
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    nccl_lib_check_single();
}

const nccl_lib_t *nccl_lib_opened(void)
{
    return __atomic_load_n(&ready, __ATOMIC_ACQUIRE) ? &lib : NULL;
}

int nccl_lib_is_caller(const void *ret_addr)
{
    uintptr_t a = (uintptr_t)ret_addr;
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        return 0;
    return a - lib.text_lo < lib.text_hi - lib.text_lo;
}

/* How many objects the process has loaded so far (it only grows, unloads aside). */
static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

void nccl_lib_check_single(void)
{
    static unsigned long long seen; /* __atomic: loads when the process was last looked at */
    unsigned long long loads = 0;
    char other[512];
    void *h;
    int v = 0;
    nccl_result_t (*get_version)(int *);

    if (!nccl_lib_opened() || __atomic_load_n(&warned_two, __ATOMIC_ACQUIRE))
        return;
    /* Nothing loaded since the last look: nothing new to find. */
    dl_iterate_phdr(count_loads, &loads);
    if (__atomic_exchange_n(&seen, loads, __ATOMIC_ACQ_REL) == loads)
        return;
    if (!(h = loaded_nccl(object_of((void *)lib.get_version), other, sizeof(other))))
        return;
    if (!__atomic_exchange_n(&warned_two, 1, __ATOMIC_ACQ_REL)) {
        *(void **)&get_version = version_entry(h);
        if (get_version)
            get_version(&v);
        ACC_WARN(RUNTIME,
                 "two NCCLs in one process: acc uses %s (NCCL %d, %s) and the process has also "
                 "loaded %s (NCCL %d); a communicator of one cannot be used with the other%s",
                 lib.path, lib.version, lib.how, other, v,
                 acc_setting_str(ACC_SETTING_NCCL_LIBRARY)[0]
                     ? "; unset ACC_NCCL_LIBRARY to use the program's own"
                     : "");
    }
    dlclose(h);
}

acc_status_t nccl_lib_open(const nccl_lib_t **out)
{
    pthread_once(&once, open_once);
    *out = open_status == ACC_OK ? &lib : NULL;
    if (open_status != ACC_OK)
        return acc_error_set(open_status, "%s", open_msg);
    return ACC_OK;
}

acc_status_t nccl_fail(const nccl_lib_t *l, nccl_result_t rc, const char *what)
{
    return acc_error_set(ACC_ERR_NCCL, "%s: NCCL error %d (%s)", what, rc,
                         l && l->get_error_string ? l->get_error_string(rc) : "?");
}

int nccl_dtype(acc_dtype_t dt)
{
    static const int map[ACC_DT_COUNT] = {NCCL_FLOAT32, NCCL_FLOAT16, NCCL_BFLOAT16, NCCL_FLOAT64,
                                          NCCL_INT32};
    return map[dt];
}

int nccl_redop(acc_redop_t op)
{
    static const int map[ACC_RED_COUNT] = {NCCL_SUM, NCCL_PROD, NCCL_MIN, NCCL_MAX, NCCL_AVG};
    return map[op];
}

/* The inverses read the maps above, so that each pairing is written once. */
int nccl_dtype_to_acc(int t, acc_dtype_t *out)
{
    for (int d = 0; d < ACC_DT_COUNT; d++)
        if (nccl_dtype((acc_dtype_t)d) == t) {
            *out = (acc_dtype_t)d;
            return 1;
        }
    return 0;
}

int nccl_redop_to_acc(int op, acc_redop_t *out)
{
    for (int r = 0; r < ACC_RED_COUNT; r++)
        if (nccl_redop((acc_redop_t)r) == op) {
            *out = (acc_redop_t)r;
            return 1;
        }
    return 0;
}
