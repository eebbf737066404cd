/*
 * Opening NCCL at run time.  Each entry point is taken as pnccl<Name> where the library has
 * it (NCCL builds export every API twice, a weak ncclX and a strong pncclX, for profilers), so
 * that a preloaded library interposing ncclX - acc's own drop-in among them - never calls back
 * into itself through acc.
 */
#include "nccl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nccl_lib_t lib;
static acc_status_t open_status;
static char open_msg[512];

void *nccl_lib_sym(const nccl_lib_t *l, const char *name)
{
    char p[96];
    void *f;
    snprintf(p, sizeof(p), "p%s", name);
    f = dlsym(l->handle, p);
    return f ? f : dlsym(l->handle, name);
}

/* acc's drop-in NCCL, installed under NCCL's own name ahead of NCCL, would be found here as
 * "NCCL": every call would come back to it.  It is the object this very code is part of. */
static int is_acc_itself(void *entry)
{
    Dl_info self, found;
    return dladdr((void *)nccl_lib_open, &self) && dladdr(entry, &found) &&
           self.dli_fbase == found.dli_fbase;
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
    int v = 0;

    if (!path[0])
        path = "libnccl.so.2";
    snprintf(lib.path, sizeof(lib.path), "%s", path);
    /* RTLD_LOCAL: NCCL's symbols stay out of the global scope, where a drop-in's live. */
    if (!(lib.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        open_status = ACC_ERR_NOT_FOUND;
        snprintf(open_msg, sizeof(open_msg),
                 "cannot open NCCL (%s): %s; set ACC_NCCL_LIBRARY to libnccl.so.2's path", path,
                 dlerror());
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
        snprintf(open_msg, sizeof(open_msg), "%s lacks %s: not an NCCL library acc can use", path,
                 missing);
        return;
    }
    if (is_acc_itself((void *)lib.get_version)) {
        open_status = ACC_ERR_UNSUPPORTED;
        snprintf(open_msg, sizeof(open_msg),
                 "%s is acc's drop-in NCCL, not NCCL; set ACC_NCCL_LIBRARY to the path of the "
                 "real libnccl.so.2",
                 path);
        return;
    }
    lib.get_version(&v);
    lib.version = v;
    open_status = ACC_OK;
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
