/*
 * The stand-in NCCL's functions beyond nccl.h 2.28.9 (dropin_api.h's list, by the version that
 * added each): recorded and refused, as an NCCL whose host backend cannot do them, so that a
 * test sees each reach NCCL.  Each is weak, so that nccl_stand_in.c's own definitions (suspend,
 * resume) win; the build of an older NCCL (STAND_IN_VERSION=22809) leaves this file out.
 */
#include "dropin/dropin_api.h"
#include "nccl_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default"), weak))

static void record(const char *name)
{
    const char *path = getenv("FAKE_NCCL_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", name);
        fclose(f);
    }
}

#define REFUSE(ret, name, params)                                                                  \
    EXPORT ret pnccl##name params;                                                                 \
    EXPORT ret nccl##name params;                                                                  \
    ret pnccl##name params                                                                         \
    {                                                                                              \
        record("nccl" #name);                                                                      \
        return ncclInvalidUsage;                                                                   \
    }                                                                                              \
    ret nccl##name params                                                                          \
    {                                                                                              \
        record("nccl" #name);                                                                      \
        return ncclInvalidUsage;                                                                   \
    }
/* Functions of other return types give back all ones: no team, rank -1. */
#define REFUSE_VALUE(ret, name, params)                                                            \
    EXPORT ret pnccl##name params;                                                                 \
    EXPORT ret nccl##name params;                                                                  \
    ret pnccl##name params                                                                         \
    {                                                                                              \
        ret none;                                                                                  \
        record("nccl" #name);                                                                      \
        memset(&none, 0xff, sizeof(none));                                                         \
        return none;                                                                               \
    }                                                                                              \
    ret nccl##name params                                                                          \
    {                                                                                              \
        ret none;                                                                                  \
        record("nccl" #name);                                                                      \
        memset(&none, 0xff, sizeof(none));                                                         \
        return none;                                                                               \
    }

#define NEW(since, ret, name, params, args) NEW_##since(ret, name, params)
#define NEW_V22809(ret, name, params)
#define NEW_LINUX(ret, name, params)
#define NEW_V22902     REFUSE
#define NEW_V22907     REFUSE
#define NEW_V23004     REFUSE
#define NEW_COLLCONFIG REFUSE
#define NEW_ENCRYPTION REFUSE
#define NEW_DEVICE     REFUSE
#define NEW_WINDOWS    REFUSE
DROPIN_FORWARDED(NEW)
DROPIN_OWN(NEW)
DROPIN_DEVICE(NEW)
DROPIN_DEVICE_WINDOWS(NEW)
#undef NEW_DEVICE
#define NEW_DEVICE REFUSE_VALUE
DROPIN_DEVICE_PLAIN(NEW)

/* The one function of another return type among them. */
EXPORT void pncclParamDumpAll(void);
EXPORT void ncclParamDumpAll(void);
void pncclParamDumpAll(void)
{
    record("ncclParamDumpAll");
}
void ncclParamDumpAll(void)
{
    record("ncclParamDumpAll");
}
