/*
 * fusion_util.h - what the fusion engine's tests share: an environment that decides nothing
 * for the engine, a fresh database file, and the values of their gradients (element e of tensor t
 * on rank r in iteration `seed`, and a buffer of them in the tensor's type).  Header-only, for
 * tests/runtime.
 */
#ifndef FUSION_UTIL_H
#define FUSION_UTIL_H

#include "acc_common.h"
#include "acc_test.h"
#include "exec/host_reduce.h"

#include <stdlib.h>
#include <unistd.h>

/* No setting of the engine's and the tuner's chooses for the test. */
static inline void fusion_env_clear(void)
{
    unsetenv("ACC_MODEL");
    unsetenv("ACC_NETWORK");
    unsetenv("ACC_FUSION_BYTES");
    unsetenv("ACC_STREAMS");
    unsetenv("ACC_COMPRESSION");
    unsetenv("ACC_TUNE_ONLINE");
    unsetenv("ACC_TUNE_BUDGET");
    unsetenv("ACC_TUNE_COMPRESSION");
    unsetenv("ACC_RECORD");
}

/* The path of a database file of this case's, without the file or its -wal and -shm. */
static inline const char *fusion_fresh_db(const char *name)
{
    char path[4096];
    const char *db = acc_test_tmp(name);
    unlink(db);
    snprintf(path, sizeof(path), "%s-wal", db);
    unlink(path);
    snprintf(path, sizeof(path), "%s-shm", db);
    unlink(path);
    return db;
}

/* exact: multiples of 1/8 below 32 in magnitude, whose sums over up to eight ranks and whose
 * means every type holds exactly, so that the order of the additions cannot show; otherwise
 * values in [-1, 1) that round. */
static inline double grad_value(int exact, uint32_t seed, int r, size_t t, uint64_t e)
{
    uint64_t h = acc_fnv1a64(&e, sizeof(e)) ^ (seed * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)r << 40) ^
                 ((uint64_t)t << 52);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    if (exact)
        return (double)((int64_t)(h % 512) - 256) / 8.0;
    return (double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* n elements of tensor t in type dt; exact always for types other than fp32, which no
 * compression touches. */
static inline void grad_fill(void *buf, acc_dtype_t dt, uint64_t n, int exact, uint32_t seed, int r,
                             size_t t)
{
    exact |= dt != ACC_DT_F32;
    for (uint64_t e = 0; e < n; e++) {
        double v = grad_value(exact, seed, r, t, e);
        switch (dt) {
        case ACC_DT_F32:
            ((float *)buf)[e] = (float)v;
            break;
        case ACC_DT_F64:
            ((double *)buf)[e] = v;
            break;
        case ACC_DT_F16:
            ((uint16_t *)buf)[e] = hx_float_to_half((float)v);
            break;
        case ACC_DT_BF16:
            ((uint16_t *)buf)[e] = hx_float_to_bf16((float)v);
            break;
        default:
            ((int32_t *)buf)[e] = (int32_t)(v * 8);
            break;
        }
    }
}

#endif
