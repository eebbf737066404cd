/*
 * plan_internal.h - what the plan's files (plan.c, plan_view.c, cplan*.c) share beyond
 * acc_plan.h.  Not installed.
 */
#ifndef PLAN_INTERNAL_H
#define PLAN_INTERNAL_H

#include "acc_plan.h"

/* The header fields a plan's copy keeps besides its shape (acc_plan_create's arguments): the
 * root, algorithm, parameters, slots, protocol and whether it runs in place. */
void plan_copy_header(acc_plan_t *dst, const acc_plan_t *src);
/* Make acc_plan_add on this thread fail (ACC_ERR_RANGE) once it has added `limit` operations
 * from now on, so that a generator whose plan would be too large stops early; 0: no limit. */
void plan_op_limit(uint64_t limit);
/* ACC_ERR_RANGE, saying so, where a proof rank by rank of nranks ranks with these buffers would
 * track more than max chunk locations (ranks x their chunks); 0: no limit. */
acc_status_t plan_locations_within(int nranks, uint32_t in_chunks, uint32_t out_chunks,
                                   uint32_t scratch_chunks, uint64_t max);

/* Chunks of the message an operation sends (for explicit and class operations alike): its
 * source's for send and recv_reduce_send, else its destination's. */
static inline uint32_t plan_msg_chunks(uint8_t code, uint32_t src_cnt, uint32_t dst_cnt)
{
    return code == ACC_OP_SEND || code == ACC_OP_RECV_REDUCE_SEND ? src_cnt : dst_cnt;
}

/* Does an operation touch a peer's memory (a plan with one runs on staged segments)? */
static inline int plan_peer_memory_op(uint8_t code)
{
    return code == ACC_OP_PUT || code == ACC_OP_GET || code == ACC_OP_REDUCE_PEERS;
}

/* ---- proving a quotient (plan_verify.c; cplan_verify_period.c builds the map) ---------- */
/* How moving every rank by a quotient's period (acc_plan_t.period) moves chunks: chunk c of
 * logical buffer b at rank r is, in what rank r + period holds, chunk perm[b][c]; inv[b] is the
 * inverse.  Input chunks moved so are what the verifier's values carry. */
typedef struct {
    const uint32_t *perm[ACC_BUF_COUNT], *inv[ACC_BUF_COUNT];
    /* Or ranks move by XOR (xor_mode; rank 0 runs alone, every rank its image): chunk c of
     * buffer b at rank r is chunk c ^ m at rank r ^ t, m the XOR of xmask[b][k] over the bits
     * k of t (plan_verify_xor.c). */
    int xor_mode;
    uint32_t xmask[ACC_BUF_COUNT][32];
} plan_quot_map_t;
/* acc_plan_verify_mode on a quotient: its period's ranks run, and every other rank is their
 * translate, so a message from rank a outside the period is the message its translate a - s
 * sent (s a multiple of the period), its values moved by s and its chunks by map.  The caller
 * has checked that the plan is the same moved by its period (cplan_verify_period.c), and that
 * peer memory and signals stay inside the period; the verifier refuses a peer-memory or signal
 * peer outside it. */
acc_status_t plan_verify_quotient(const acc_plan_t *q, int inplace, const plan_quot_map_t *map);
/* Halving and doubling prove on one rank (plan_verify_xor.c): a plan of a power-of-two rank
 * count that is the same under XOR by any rank - rank r ^ t runs rank r's program with its
 * peers ^ t and its chunks moved by an XOR mask per bit of t, checked for every rank and
 * operation in O(1) each - is proven by running rank 0 alone, a message from rank a being rank
 * 0's to a moved by XOR a.  *applies 0 with why when it is not such a plan (then nothing is
 * decided); otherwise the verdict, both buffer modes where the plan runs in place. */
acc_status_t plan_verify_xor(const acc_plan_t *p, int *applies, char *why, size_t cap);
/* The same where p holds the programs of rank 0 and of ranks 2^k only, and prog(ctx, r, lane)
 * gives every rank's (a class plan's, made at its point: cplan_verify_xor.c); each is read once
 * and may be overwritten by the next call.  NULL (with an error set) fails the proof. */
typedef const acc_lane_prog_t *(*plan_xor_prog_fn)(void *ctx, uint32_t r, int lane);
acc_status_t plan_verify_xor_by(const acc_plan_t *p, plan_xor_prog_fn prog, void *ctx, int *applies,
                                char *why, size_t cap);

/* ---- building a rank's view (plan_view.c; cplan_view.c builds one from the class form) --- */
/* A view of rank `rank` with hdr's header and peer pool and nothing else yet: no programs, no
 * edges. */
acc_status_t plan_view_shell(const acc_plan_t *hdr, int rank, acc_plan_t **out);
/* The view's near ranks from its own programs: itself and every rank they name. */
acc_status_t plan_view_near(acc_plan_t *v);
/* The edges sorted and merged (messages: largest maxcnt, counts summed); near ranks sorted. */
void plan_view_finish(acc_plan_view_t *view);

#endif /* PLAN_INTERNAL_H */
