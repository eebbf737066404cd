/*
 * The real NCCL behind the drop-in: opened at the first call through acc's NCCL loader
 * (nccl_lib.c: ACC_NCCL_LIBRARY, else libnccl.so.2, pnccl* entry points first), every entry
 * point of nccl.h looked up once, and the calls acc never serves handed over unchanged.
 */
#include "dropin_internal.h"

#include "nccl_lib.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static dropin_real_t real;
static int usable;
static const char *lib_path = "";
static int said[DROPIN_IDX_COUNT];

static void open_real(void)
{
    const nccl_lib_t *lib;

    if (nccl_lib_open(&lib) != ACC_OK) {
        ACC_ERROR(RUNTIME, "acc drop-in NCCL: %s", acc_error_message());
        return;
    }
    lib_path = lib->path;
#define DROPIN_TAKE(ret, name, params, args) *(void **)&real.name = nccl_lib_sym(lib, "nccl" #name);
    DROPIN_API(DROPIN_TAKE)
#undef DROPIN_TAKE
    usable = 1;
}

const dropin_real_t *dropin_real(void)
{
    pthread_once(&once, open_real);
    return usable ? &real : NULL;
}

ncclResult_t dropin_unavailable(int index, const char *name)
{
    int first = !__atomic_exchange_n(&said[index], 1, __ATOMIC_ACQ_REL);
    if (!usable) {
        if (first)
            ACC_ERROR(RUNTIME, "acc drop-in NCCL: nccl%s: no NCCL to run it (see above)", name);
        return ncclSystemError;
    }
    if (first)
        ACC_ERROR(RUNTIME, "acc drop-in NCCL: nccl%s: %s has no such function (an older NCCL)",
                  name, lib_path);
    return ncclInvalidUsage;
}

/* The calls acc never serves: to NCCL as they are. */
#define DROPIN_FORWARD(ret, name, params, args)                                                    \
    ret pnccl##name params                                                                         \
    {                                                                                              \
        const dropin_real_t *r = dropin_real();                                                    \
        return r && r->name ? r->name args : dropin_unavailable(DROPIN_IDX_##name, #name);         \
    }                                                                                              \
    DROPIN_ALIAS(name);
DROPIN_FORWARDED(DROPIN_FORWARD)
#undef DROPIN_FORWARD

const char *pncclGetErrorString(ncclResult_t result)
{
    const dropin_real_t *r = dropin_real();
    if (r && r->GetErrorString)
        return r->GetErrorString(result);
    return result == ncclSuccess ? "no error"
                                 : "NCCL error (the drop-in could not open NCCL: see its log)";
}
DROPIN_ALIAS(GetErrorString);

void pncclResetDebugInit(void)
{
    const dropin_real_t *r = dropin_real();
    if (r && r->ResetDebugInit)
        r->ResetDebugInit();
}
DROPIN_ALIAS(ResetDebugInit);
