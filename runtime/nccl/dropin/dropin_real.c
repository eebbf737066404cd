/*
 * The real NCCL behind the drop-in: the NCCL the process would use anyway (nccl_lib.c says how
 * it is found), each entry point looked up at its own first call, and the calls acc never
 * serves handed over unchanged - a load of the resolved entry point and a jump, no lock.
 */
#include "dropin_internal.h"

#include <string.h>

const char *const dropin_names[DROPIN_IDX_COUNT] = {
#define DROPIN_NAME(since, ret, name, params, args) "nccl" #name,
    DROPIN_API(DROPIN_NAME)
#undef DROPIN_NAME
};

void *dropin_slots[DROPIN_IDX_COUNT];
__thread int dropin_nccl_depth;
static unsigned char absent[DROPIN_IDX_COUNT]; /* __atomic: looked up, and not there */
static unsigned char said[DROPIN_IDX_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const nccl_lib_t *lib;

static void open_real(void)
{
    if (nccl_lib_open(&lib) != ACC_OK)
        ACC_ERROR(RUNTIME, "acc drop-in NCCL: %s", acc_error_message());
}

const nccl_lib_t *dropin_nccl(void)
{
    pthread_once(&once, open_real);
    return lib;
}

void *dropin_resolve(int index)
{
    const nccl_lib_t *l = dropin_nccl();
    void *f;

    if (!l || __atomic_load_n(&absent[index], __ATOMIC_ACQUIRE))
        return NULL;
    if (!(f = nccl_lib_sym(l, dropin_names[index]))) {
        __atomic_store_n(&absent[index], 1, __ATOMIC_RELEASE);
        return NULL;
    }
    __atomic_store_n(&dropin_slots[index], f, __ATOMIC_RELEASE);
    return f;
}

ncclResult_t dropin_unavailable(int index)
{
    int first = !__atomic_exchange_n(&said[index], 1, __ATOMIC_ACQ_REL);
    if (!dropin_nccl()) {
        if (first)
            ACC_ERROR(RUNTIME, "acc drop-in NCCL: %s: no NCCL to run it (see above)",
                      dropin_names[index]);
        return ncclSystemError;
    }
    if (first)
        ACC_ERROR(RUNTIME,
                  "acc drop-in NCCL: %s: %s (NCCL %d) has no such function; it needs a newer "
                  "NCCL",
                  dropin_names[index], lib->path, lib->version);
    return ncclInvalidUsage;
}

/* The calls acc never serves: to NCCL as they are. */
#define DROPIN_FORWARD(since, ret, name, params, args)                                             \
    ret pnccl##name params                                                                         \
    {                                                                                              \
        DROPIN_PASS(name, args);                                                                   \
    }                                                                                              \
    DROPIN_ALIAS(name);
DROPIN_PASSED(DROPIN_FORWARD)
#undef DROPIN_FORWARD

/* Those that return something else than ncclResult_t say so their own way when NCCL lacks
 * them: no text, no team, -1. */
const char *pncclGetErrorString(ncclResult_t result)
{
    __typeof__(&pncclGetErrorString) f = DROPIN_FN(GetErrorString);
    if (f)
        return DROPIN_INTO(f(result));
    return result == ncclSuccess ? "no error"
                                 : "NCCL error (the drop-in could not open NCCL: see its log)";
}
DROPIN_ALIAS(GetErrorString);

void pncclResetDebugInit(void)
{
    __typeof__(&pncclResetDebugInit) f = DROPIN_FN(ResetDebugInit);
    if (f)
        DROPIN_INTO_VOID(f());
    else
        dropin_unavailable(DROPIN_IDX_ResetDebugInit);
}
DROPIN_ALIAS(ResetDebugInit);

void pncclParamDumpAll(void)
{
    __typeof__(&pncclParamDumpAll) f = DROPIN_FN(ParamDumpAll);
    if (f)
        DROPIN_INTO_VOID(f());
    else
        dropin_unavailable(DROPIN_IDX_ParamDumpAll);
}
DROPIN_ALIAS(ParamDumpAll);

#define DROPIN_FORWARD_VALUE(since, ret, name, params, args)                                       \
    ret pnccl##name params                                                                         \
    {                                                                                              \
        __typeof__(&pnccl##name) f = DROPIN_FN(name);                                              \
        ret none;                                                                                  \
        if (f)                                                                                     \
            return DROPIN_INTO(f args);                                                            \
        dropin_unavailable(DROPIN_IDX_##name);                                                     \
        memset(&none, 0xff, sizeof(none)); /* no team, rank -1 */                                  \
        return none;                                                                               \
    }                                                                                              \
    DROPIN_ALIAS(name);
DROPIN_DEVICE_PLAIN(DROPIN_FORWARD_VALUE)
#undef DROPIN_FORWARD_VALUE
