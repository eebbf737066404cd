/*
 * cplan_internal.h - a point of a class plan's grid with its coordinates worked out once, for
 * the expansion, which evaluates every operation of a class at every point (cplan.c,
 * cplan_expand.c).  Not installed.
 */
#ifndef CPLAN_INTERNAL_H
#define CPLAN_INTERNAL_H

#include "acc_cplan.h"
#include "plan_internal.h"

typedef struct {
    uint32_t point;                    /* row-major index */
    int32_t x[ACC_CPLAN_MAX_DIMS];     /* its coordinates */
    uint32_t step[ACC_CPLAN_MAX_DIMS]; /* each dimension's step in the index */
} cplan_at_t;

void cplan_at(const acc_cplan_t *cp, uint32_t point, cplan_at_t *at);
/* acc_cplan_peer_at and acc_cplan_ref_at at a prepared point. */
int cplan_peer_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cpeer_t *peer);
acc_ref_t cplan_ref_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cref_t *r);
/* A class operation as the explicit operation it is at a prepared point.  A ROW list of peers
 * is left empty (npeers 0): cplan_op_pool puts it in a plan's pool. */
acc_op_t cplan_op_at(const acc_cplan_t *cp, int lane, const cplan_at_t *at, const acc_cop_t *c);
/* The ranks of the ROW along dim through a point: dims[dim] of them. */
void cplan_row_ranks(const acc_cplan_t *cp, int lane, const cplan_at_t *at, int dim,
                     uint32_t *ranks);
/* The rows of one lane and dimension already in a plan's pool (the offset + 1 of each row's
 * list, by the row-major index of its first point), so that a row's points share one list. */
typedef struct {
    uint32_t *off;
    uint32_t *ranks;
    int lane, dim;
} cplan_rowpool_t;
void cplan_rowpool_free(cplan_rowpool_t *rows);
/* cplan_op_at, with a ROW list added to p's pool (once per row where rows is given). */
acc_status_t cplan_op_pool(const acc_cplan_t *cp, int lane, const cplan_at_t *at,
                           const acc_cop_t *c, acc_plan_t *p, cplan_rowpool_t *rows, acc_op_t *op);

/* Are op's XOR peers and terms on dimensions of a power-of-two size, flipping and keeping bits
 * within it (and other terms without a mask)? */
int cplan_xor_ok(const acc_cplan_t *cp, const acc_cop_t *op);
/* Has op no peer or term by XOR (so that it moves with a translation of the ranks)? */
int cplan_translates(const acc_cop_t *op);
/* ... and every operation of cp. */
int cplan_translates_all(const acc_cplan_t *cp);
/* Is a plan that pairs ranks by XOR in halving and doubling's shape: a power of two of ranks
 * on the grid [n] in rank order (no table), one class a lane, every peer by XOR or none, no
 * list of peers?  0, with why, when not: then neither its proof on one rank nor its quotient
 * by XOR applies. */
int cplan_xor_shaped(const acc_cplan_t *cp, char *why, size_t cap);

/* acc_cplan_verify, refusing (ACC_ERR_RANGE) before it starts a proof by expansion that would
 * list more than max_ops operations or track more than max_locations chunk locations (0: no
 * limit); a proof by class is not limited. */
acc_status_t cplan_verify_within(const acc_cplan_t *cp, const struct acc_topo *topo,
                                 uint64_t max_ops, uint64_t max_locations,
                                 acc_cplan_proof_t *proof);

/* The class of each point of lane (cls: nranks entries), or ACC_ERR_INVALID naming a point
 * in two classes or in none. */
acc_status_t cplan_class_map(const acc_cplan_t *cp, int lane, uint32_t *cls);
/* The header of the explicit plan cp means, in hdr (no programs; the peer pool borrowed). */
void cplan_header(const acc_cplan_t *cp, acc_plan_t *hdr);
/* An explicit plan with that header and no operations yet (nor peer pool). */
acc_status_t cplan_new_plan(const acc_cplan_t *cp, acc_plan_t **out);

/* A class's points: how many, and the row-major index of its i-th (0 <= i < volume). */
uint64_t cplan_box_volume(const acc_cplan_t *cp, const acc_cclass_t *k);
uint32_t cplan_box_point(const acc_cplan_t *cp, const acc_cclass_t *k, uint64_t i);

/* ---- the binary form (cplan_bin.c writes it, cplan_view.c reads it) --------------------- */
#define CPLAN_BIN_MAGIC "ACCC" /* a head */
/* Version 1: no peer or term by XOR, and operations of CPLAN_OP_FIELDS_V1 fields; version 2
 * (written only for plans that have them): XOR peers and terms, the terms' masks as the last
 * four fields.  Plans of version 1 keep their bytes and their names. */
#define CPLAN_BIN_VERSION 2
/* An operation as the binary form diffs it: every field of acc_cop_t, in a fixed order. */
#define CPLAN_OP_FIELDS    45
#define CPLAN_OP_FIELDS_V1 41
/* The fields a version's operations have. */
static inline int cplan_op_fields_of(uint64_t version)
{
    return version >= 2 ? CPLAN_OP_FIELDS : CPLAN_OP_FIELDS_V1;
}

void cplan_op_fields(const acc_cop_t *op, int64_t f[CPLAN_OP_FIELDS]);
/* The operation back; 0 when a field is out of its type's range. */
int cplan_op_from_fields(const int64_t f[CPLAN_OP_FIELDS], acc_cop_t *op);

/* Unsigned LEB128 and zigzag integers. */
void cplan_put_u(acc_buf_t *b, uint64_t v);
void cplan_put_i(acc_buf_t *b, int64_t v);

/* A reader over bytes that fails once, naming what it read and where. */
typedef struct {
    const unsigned char *p;
    size_t len, at;
    const char *name; /* for errors */
    int failed;
    char what[160];
} cplan_rd_t;

uint64_t cplan_get_u(cplan_rd_t *r, const char *what);
int64_t cplan_get_i(cplan_rd_t *r, const char *what);
/* An unsigned value no larger than max. */
uint64_t cplan_get_max(cplan_rd_t *r, uint64_t max, const char *what);

/* Rows of k integers (k <= CPLAN_OP_FIELDS), each stored as its difference from the row
 * before: a record 0, a mask of the fields that differ and those differences; or 2n + 1 for n
 * more rows each differing from its predecessor as that one did from its own.  A ring's
 * program or a table's runs are then a few records at any rank count. */
typedef struct {
    acc_buf_t *b;
    int k;
    uint64_t rows, run;
    int64_t prev[CPLAN_OP_FIELDS], diff[CPLAN_OP_FIELDS];
} cplan_rows_put_t;

void cplan_rows_begin(cplan_rows_put_t *w, acc_buf_t *b, int k);
void cplan_rows_put(cplan_rows_put_t *w, const int64_t *row);
void cplan_rows_end(cplan_rows_put_t *w);

typedef struct {
    cplan_rd_t *r;
    int k;
    uint64_t left; /* rows still to read */
    uint64_t run;  /* of them, repeating the last difference */
    int64_t cur[CPLAN_OP_FIELDS], diff[CPLAN_OP_FIELDS];
} cplan_rows_get_t;

void cplan_rows_start(cplan_rows_get_t *g, cplan_rd_t *r, int k, uint64_t rows);
/* The next row; 0 once the reader failed. */
int cplan_rows_get(cplan_rows_get_t *g, int64_t *row);

#endif /* CPLAN_INTERNAL_H */
