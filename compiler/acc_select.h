/*
 * acc_select.h - the selection table: for one topology and one collective, which schedule to use
 * for which message size.  The same structure serves the compiler's defaults, user overrides,
 * the database and the NCCL tuner plugin.
 *
 * A table is a sorted list of non-overlapping byte ranges [min_bytes, max_bytes], each naming
 * either an acc plan (algorithm, parameters, and the hash of its verified IR text) or "NCCL" with
 * the algorithm and protocol NCCL would use.  Ranges need not cover every size: a size outside
 * every range means "no advice" (plain NCCL).  Conventions as in acc_common.h.
 */
#ifndef ACC_SELECT_H
#define ACC_SELECT_H

#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    ACC_SELECT_MODEL = 0, /* predicted by the cost model */
    ACC_SELECT_MEASURED,  /* measured with acc-bench or online */
    ACC_SELECT_USER,      /* a user override */
    ACC_SELECT_SOURCE_COUNT
} acc_select_source_t;

typedef struct {
    uint64_t min_bytes, max_bytes;   /* inclusive */
    int use_nccl;                    /* 1: leave this range to NCCL */
    char algo[ACC_PLAN_NAME_MAX];    /* acc: generator name; NCCL: "Ring", "Tree", "NVLS", ... */
    char params[ACC_PLAN_PARAMS_MAX]; /* acc: the plan's params; NCCL: "proto=LL128 channels=24" */
    char plan_hash[ACC_SHA256_HEX_LEN + 1]; /* acc: SHA-256 of the plan's YAML text; "" for NCCL */
    double predicted_us;             /* at the range's lower end; < 0 unknown */
    double measured_us;              /* < 0 unknown */
    acc_select_source_t source;
} acc_select_entry_t;

typedef struct {
    acc_coll_t coll;
    char topo_fingerprint[ACC_SHA256_HEX_LEN + 1];
    acc_select_entry_t *entries; /* sorted by min_bytes, non-overlapping */
    size_t n, cap;
} acc_select_table_t;

const char *acc_select_source_name(acc_select_source_t s); /* "model", "measured", "user" */
acc_status_t acc_select_source_parse(const char *s, acc_select_source_t *out);

acc_status_t acc_select_create(acc_coll_t coll, const char *topo_fingerprint,
                               acc_select_table_t **out);
void acc_select_destroy(acc_select_table_t *t);
/* Add an entry; it must not overlap an existing one (ACC_ERR_INVALID naming both ranges). */
acc_status_t acc_select_add(acc_select_table_t *t, const acc_select_entry_t *e);
/* Join neighbouring entries that name the same choice (same use_nccl, algo, params and plan hash)
 * and whose ranges touch (max + 1 == next min), keeping the first predicted time. */
void acc_select_merge(acc_select_table_t *t);
/* The entry whose range holds nbytes, or NULL.  O(log n). */
const acc_select_entry_t *acc_select_lookup(const acc_select_table_t *t, uint64_t nbytes);
/* Same choice? (ignores range and times) */
int acc_select_same_choice(const acc_select_entry_t *a, const acc_select_entry_t *b);

#ifdef __cplusplus
}
#endif
#endif /* ACC_SELECT_H */
