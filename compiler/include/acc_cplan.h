/*
 * acc_cplan.h - plans by rank class: the plan IR of acc_plan.h written once per class of ranks
 * that the schedule's symmetry maps onto each other, instead of once per rank.  The semantics
 * are those of acc_plan.h (schedules/FORMAT.md, "Plans by rank class"); a class plan means
 * exactly the explicit plan acc_cplan_expand() gives.
 *
 * Grid.  The ranks are the points of a grid of ndims dimensions dims[0] x dims[1] x ... (a ring
 * position [n]; nodes x GPUs [nodes, gpn]).  Each lane has a table from point to rank (the
 * lane's ring order, say); without one, point (x0, x1, ...) is rank x0*dims[1]*... + ... (row
 * major).  A table is a permutation of the ranks, so each lane's grid covers every rank once.
 *
 * Classes.  Each lane's points are partitioned into classes, boxes lo[d] <= x_d < hi[d]; the
 * points of a class run one program.  An operation of it names
 *   - peers relative to the point running it (REL: the point x + v mod dims, component-wise) or
 *     absolutely (ABS: rank v[0]; where the symmetry breaks, and in converted explicit plans);
 *   - peers by XOR (XOR: the point whose coordinate along each dimension is x_d ^ v[d], on a
 *     dimension of a power-of-two size; halving and doubling's partners);
 *   - chunk ranges whose first chunk is an affine function of the point x:
 *       base + sum over terms of coef * value, value = (x_dim + add) mod dims[dim]    (COORD)
 *                                            or rank of the point x + add along dim   (RANK)
 *                                            or (x_dim ^ add) & mask                  (XOR)
 *     RANK terms say "the block of the rank that position holds" (an allgather's output block
 *     of a ring neighbour), which in ring order is not an affine function of the position.
 *     XOR terms are the halves halving and doubling keep and send: the block of the point with
 *     some bits flipped (add) and the bits below a step cleared (mask).
 * An explicit plan is the degenerate case, one class per rank with constant chunks and
 * absolute peers (acc_cplan_from_plan), so every plan has a class form.
 *
 * Proof by class (acc_cplan_verify).  When every lane is one class over the whole grid, with
 * relative peers only, no dependencies between lanes and no peer-memory operations, and every
 * chunk range is equivariant (translating the point by t maps the range onto its image under
 * one permutation of the buffer's chunks per translation), the plan is invariant under every
 * translation of the grid: all points are in one orbit, and symbolic execution of one point per
 * lane - a message received from offset +d being the point's own matching send translated by
 * +d - proves the postcondition and freedom from deadlock for all.  The topology must have the
 * symmetry the plan assumes (sym_step: translating by it maps every link a lane uses onto a
 * link of the same class and bandwidth).  A plan whose peers are all XOR and whose ranges are
 * XOR terms or constants (halving and doubling) is proven on one rank instead: each rank's
 * operations, made at its point one at a time, are checked to be rank 0's moved by XOR, and
 * rank 0 runs alone (plan_verify_xor's argument, schedules/FORMAT.md section 6), in time
 * linear in the rank count and memory of one rank's program.  Anything else is expanded and
 * verified by acc_plan_verify, and the proof says so.
 *
 * Errors, ownership and threads as in acc_common.h.  A class plan is built by one thread and
 * read-only afterwards.
 */
#ifndef ACC_CPLAN_H
#define ACC_CPLAN_H

#include "acc_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

struct acc_topo;

#define ACC_CPLAN_MAX_DIMS 4
#define ACC_CREF_MAX_TERMS 2

typedef enum { ACC_CTERM_COORD = 0, ACC_CTERM_RANK, ACC_CTERM_XOR } acc_cterm_kind_t;

typedef struct {
    uint8_t kind; /* acc_cterm_kind_t */
    uint8_t dim;
    int32_t add; /* XOR: the bits flipped, 0 <= add < dims[dim] */
    uint32_t coef;
    uint32_t mask; /* XOR: the bits kept; 0 for the other kinds */
} acc_cterm_t;

/* Chunks [first(x), first(x) + cnt) of a buffer; cnt 0 is "unused" (acc_op_init's zero ref). */
typedef struct {
    uint8_t buf; /* acc_bufid_t */
    uint8_t nterms;
    uint32_t base;
    uint32_t cnt;
    acc_cterm_t term[ACC_CREF_MAX_TERMS];
} acc_cref_t;

/* ROW names a list, the peers of a REDUCE_PEERS (its npeers 0): every point that has the
 * point's coordinates but along dimension v[0], the point itself included, in increasing
 * coordinate along it (a node's GPUs, on a grid [nodes, gpn] and v[0] = 1).  It moves with the
 * point, where a list in the peer pool names ranks absolutely. */
typedef enum {
    ACC_CPEER_NONE = 0,
    ACC_CPEER_REL,
    ACC_CPEER_ABS,
    ACC_CPEER_ROW,
    ACC_CPEER_XOR
} acc_cpeer_kind_t;

typedef struct {
    uint8_t kind;                  /* acc_cpeer_kind_t */
    int32_t v[ACC_CPLAN_MAX_DIMS]; /* REL: offset per dimension; ABS: v[0] is the rank; ROW:
                                      v[0] is the dimension; XOR: the bits flipped per
                                      dimension */
} acc_cpeer_t;

/* One operation of a class program: acc_op_t with peers and chunks relative to the point. */
typedef struct {
    uint8_t code; /* acc_opcode_t */
    uint16_t slot;
    acc_cpeer_t peer, peer2;
    acc_cref_t src, dst;
    uint32_t value;
    uint32_t peers_off, npeers; /* REDUCE_PEERS: absolute ranks in the plan's peer_pool, or
                                   npeers 0 and peer a ROW */
    int32_t dep_lane, dep_op;
} acc_cop_t;

typedef struct {
    int32_t lo[ACC_CPLAN_MAX_DIMS], hi[ACC_CPLAN_MAX_DIMS];
    acc_cop_t *ops;
    uint32_t nops, cap;
} acc_cclass_t;

typedef struct {
    int32_t *rank_of;  /* point (row major) -> rank; NULL: row major itself */
    int32_t *point_of; /* its inverse */
    acc_cclass_t *classes;
    uint32_t nclasses, cap;
} acc_clane_t;

typedef struct acc_cplan {
    /* The header of the explicit plan it expands to (acc_plan_t). */
    acc_coll_t coll;
    int nranks;
    int root;
    char algo[ACC_PLAN_NAME_MAX];
    char params[ACC_PLAN_PARAMS_MAX];
    uint32_t in_chunks, out_chunks, scratch_chunks;
    int nlanes;
    int slots;
    acc_proto_t proto;
    int inplace;
    /* The grid. */
    int ndims;
    int32_t dims[ACC_CPLAN_MAX_DIMS];
    /* The translation (per dimension, 0: none claimed) under which the topology must be
     * symmetric on the links the plan uses; the proof checks it. */
    int32_t sym_step[ACC_CPLAN_MAX_DIMS];
    acc_clane_t *lanes;
    uint32_t *peer_pool;
    uint32_t npeer_pool, peer_pool_cap;
} acc_cplan_t;

/* ---- building ------------------------------------------------------------------------- */
/* A class plan of nlanes lanes over a grid of ndims dims, with no classes yet; root -1, slots
 * 8, as acc_plan_create.  The product of dims is the rank count. */
acc_status_t acc_cplan_create(acc_coll_t coll, int ndims, const int32_t *dims, int nlanes,
                              uint32_t in_chunks, uint32_t out_chunks, uint32_t scratch_chunks,
                              acc_cplan_t **out);
void acc_cplan_destroy(acc_cplan_t *cp);
/* Give lane its table point -> rank (nranks entries, borrowed and copied); ACC_ERR_INVALID
 * unless it is a permutation of the ranks. */
acc_status_t acc_cplan_set_ranks(acc_cplan_t *cp, int lane, const int *rank_of);
/* Add the class of the points lo <= x < hi to lane; *index (optional) receives its number. */
acc_status_t acc_cplan_add_class(acc_cplan_t *cp, int lane, const int32_t *lo, const int32_t *hi,
                                 uint32_t *index);
/* Append an operation to class cls of lane. */
acc_status_t acc_cplan_add(acc_cplan_t *cp, int lane, uint32_t cls, const acc_cop_t *op);
acc_status_t acc_cplan_set_params(acc_cplan_t *cp, const char *params);
/* A deep copy. */
acc_status_t acc_cplan_clone(const acc_cplan_t *cp, acc_cplan_t **out);
/* An acc_cop_t with every field "unused". */
acc_cop_t acc_cop_init(acc_opcode_t code);
/* A constant range, and one with a term added (ACC_ERR_INTERNAL past ACC_CREF_MAX_TERMS). */
acc_cref_t acc_cref_const(acc_bufid_t buf, uint32_t base, uint32_t cnt);
acc_status_t acc_cref_add_term(acc_cref_t *r, acc_cterm_kind_t kind, int dim, int32_t add,
                               uint32_t coef);
/* A term (x_dim ^ flip) & mask times coef (ACC_ERR_INTERNAL past ACC_CREF_MAX_TERMS). */
acc_status_t acc_cref_add_xor(acc_cref_t *r, int dim, uint32_t flip, uint32_t mask, uint32_t coef);
/* A relative peer: offset off along dimension dim. */
acc_cpeer_t acc_cpeer_rel(int dim, int32_t off);
/* A peer by XOR: the point with coordinate x_dim ^ flip along dim. */
acc_cpeer_t acc_cpeer_xor(int dim, uint32_t flip);
/* A REDUCE_PEERS list: the row through the point along dimension dim. */
acc_cpeer_t acc_cpeer_row(int dim);

/* ---- reading --------------------------------------------------------------------------- */
/* The rank at a point of lane's grid, and the point (row major index) of a rank. */
int acc_cplan_rank(const acc_cplan_t *cp, int lane, uint32_t point);
uint32_t acc_cplan_point(const acc_cplan_t *cp, int lane, int rank);
/* Concrete forms at a point (row major index) of lane: a peer's rank (-1 for NONE), a range. */
int acc_cplan_peer_at(const acc_cplan_t *cp, int lane, uint32_t point, const acc_cpeer_t *peer);
acc_ref_t acc_cplan_ref_at(const acc_cplan_t *cp, int lane, uint32_t point, const acc_cref_t *r);
/* Operations of the explicit plan, counted without expanding it. */
uint64_t acc_cplan_op_count(const acc_cplan_t *cp);

/* ---- the explicit form ------------------------------------------------------------------ */
/* The explicit plan (acc_plan.h) the class plan means: each rank's lane program is its class's
 * program at its point.  ACC_ERR_RANGE through acc_mem_check when it cannot fit in memory. */
acc_status_t acc_cplan_expand(const acc_cplan_t *cp, acc_plan_t **out);
/* The degenerate class form of an explicit plan: a grid [nranks], one class per rank. */
acc_status_t acc_cplan_from_plan(const acc_plan_t *p, acc_cplan_t **out);
/* The quotient by a translation of the ranks (acc_plan_t's period): the programs of ranks 0 ..
 * period - 1, the others empty, where period is the smallest multiple of unit (dividing nranks,
 * at most half of them) such that moving every rank r to r + period (mod nranks) maps every
 * lane's classes onto themselves and every peer along.  The simulator plays it on one period
 * (acc_sim_plan), so that a plan of 65,536 ranks is priced by playing a node or two (unit: the
 * GPUs of a node; a ring that snakes through the nodes repeats every two).  unit = nranks gives
 * the whole plan as its own quotient.  A plan whose peers are by XOR (one class a lane, ranks
 * in grid order) is the same moved by XOR: its period is the smallest power of two of units,
 * and the quotient's period_xor says so.  ACC_ERR_UNSUPPORTED, saying where, when no such
 * period exists (a root, absolute peers, an order that differs from node to node). */
acc_status_t acc_cplan_quotient(const acc_cplan_t *cp, int period, acc_plan_t **out);

/* ---- proof ---------------------------------------------------------------------------- */
typedef struct {
    int by_class;    /* 1: proven on the quotient; 0: expanded and verified explicitly */
    uint32_t orbits; /* points executed symbolically (one per lane when by_class) */
    char why[256];   /* by_class 0: why the quotient did not apply */
} acc_cplan_proof_t;

/* Prove the class plan as acc_plan_verify proves its expansion (both buffer modes when
 * cp->inplace), on the quotient where the header's conditions hold; topo (optional) is checked
 * for the symmetry sym_step claims.  Otherwise the plan is expanded and acc_plan_verify
 * decides.  proof (optional) says which. */
acc_status_t acc_cplan_verify(const acc_cplan_t *cp, const struct acc_topo *topo,
                              acc_cplan_proof_t *proof);

/* ---- binary form (schedules/FORMAT.md, "The binary form") ------------------------------ */
/* What the database stores of a plan so that a rank can read its own part alone: a head (the
 * header, the grid, each lane's rank table as runs, each class's box, its program's length and
 * digest, and its edges: the peers it sends messages or signals to, with the largest message
 * and the count per call) and one program per class, each operation stored as its difference
 * from the one before, runs of equal differences as a count.  A ring's program is then a few
 * records at any rank count.  Where expl (the explicit plan cp expands to) is given, each
 * class's program carries the flags of its operations that complete a reduction, when every
 * point of the class has the same ones. */
typedef struct {
    acc_buf_t head;
    acc_buf_t *progs; /* one per class, lane by lane */
    int *lane;
    uint32_t *cls;
    uint32_t nprogs;
} acc_cplan_bin_t;

acc_status_t acc_cplan_encode(const acc_cplan_t *cp, const acc_plan_t *expl, acc_cplan_bin_t *out);
void acc_cplan_bin_free(acc_cplan_bin_t *bin);
/* The name of a binary form: the SHA-256 of its head and programs in order, in hex.  A class
 * plan stored without its explicit form (acc_db_put_cplan) goes by it; acc_cplan_hash encodes
 * cp without an explicit plan and names the result. */
acc_status_t acc_cplan_bin_hash(const acc_cplan_bin_t *bin, char hash[ACC_SHA256_HEX_LEN + 1]);
acc_status_t acc_cplan_hash(const acc_cplan_t *cp, char hash[ACC_SHA256_HEX_LEN + 1]);

/* A head read back, checked (every field in range, the lanes' tables permutations, the classes
 * a partition), with no program.  name is for errors ("acc.db: plan 1a2b..."). */
typedef struct acc_chead acc_chead_t;
acc_status_t acc_chead_load(const void *data, size_t len, const char *name, acc_chead_t **out);
void acc_chead_destroy(acc_chead_t *h);

/* Rank `rank`'s view (acc_plan_view_t) from the head and the programs of its own classes, one
 * per lane, which read() gives (the bytes stay valid until the next call): nothing of any other
 * class is read.  Each program is checked against the head's digest and every operation at the
 * rank's point against the plan's bounds.  The same view as acc_plan_view_of on the expansion,
 * except for flags a class did not store. */
typedef acc_status_t (*acc_cprog_read_fn)(void *ctx, int lane, uint32_t cls, const void **data,
                                          size_t *len);
acc_status_t acc_cplan_rank_view(const acc_chead_t *h, int rank, acc_cprog_read_fn read, void *ctx,
                                 acc_plan_t **out);

/* The whole class plan from the head and every class's program (read() as above, each
 * checked against the head's digest), for a reader that needs every rank's programs (a kernel
 * holds them all); expand it (acc_cplan_expand) and prove it before running it. */
acc_status_t acc_cplan_load(const acc_chead_t *h, acc_cprog_read_fn read, void *ctx,
                            acc_cplan_t **out);

/* Rank `rank`'s view of a class plan in memory: its binary form made and read back, so that
 * the view is the one a rank reads from a database (without the reductions' flags). */
acc_status_t acc_cplan_view_of(const acc_cplan_t *cp, int rank, acc_plan_t **out);

#ifdef __cplusplus
}
#endif
#endif /* ACC_CPLAN_H */
