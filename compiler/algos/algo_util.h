/*
 * compiler/algos/algo_util.h - what the algorithm generators share, so that each piece of logic
 * exists once: argument checks, ring orders searched on the topology, trees, and the building
 * blocks that emit operations (ring steps, tree steps, recursive halving/doubling steps,
 * peer-memory steps).  Internal to compiler/algos/ (and its tests).
 *
 * Groups.  A building block runs over a group of ranks given as an array in the order the block
 * uses (ring order, tree order, halving order); a generator calls it once per group and lane, e.g.
 * once for all ranks, or once per node and once per rail for hierarchical plans.
 *
 * Layouts.  Where a group's data lives is an algo_layout_t: block b of the group is the chunk
 * ranges base + b*stride + s*sub_stride (s < nsub) of cnt chunks each.  nsub > 1 describes the
 * strided blocks of hierarchical allgather/reduce-scatter (one piece per node); stride 0 puts
 * every block in one place (reduce-scatter's output).  Operations are emitted per contiguous run,
 * so a plain layout costs one operation per step.
 */
#ifndef ALGO_UTIL_H
#define ALGO_UTIL_H

#include "acc_compiler.h"
#include "acc_cplan.h"

/* Refuse, before it is built, a plan of algorithm `name` for coll on every rank of topo that
 * cannot fit the memory the process may use (acc_mem_check).  Plans list every rank's
 * operations, and a flat ring ("ring") of allreduce, allgather or reduce-scatter passes each
 * of its N chunks around the N ranks once per phase (two for allreduce): phases x N x (N - 1)
 * operations per lane at least.  Each takes sizeof(acc_op_t) in the plan and about as much
 * again in the verifier and the simulator (measured: 129 bytes per operation above the
 * program's own in a 512-rank sweep), so twice that times `lanes` is a floor of the need.
 * A hierarchical one whose rail step is a ring ("hier", "hier_pipe", outer ring, the default)
 * passes chunks around the nodes the same way: phases x N x (nodes - 1) operations per lane;
 * at 8,192 nodes that is a thousand million, refused at once instead of after half a minute
 * of building.  Other algorithms grow with N x log N, and pass.  `what` begins the message
 * ("the selection sweep of"); args (may be NULL) give the lanes and the outer algorithm. */
acc_status_t algo_check_memory(const acc_topo_t *topo, acc_coll_t coll, const char *name,
                               const acc_algo_args_t *args, const char *what);

/* ---- arguments and plans ------------------------------------------------------------------ */

/* The resolved arguments of a generator. */
typedef struct {
    int lanes, chunks, root;
} algo_params_t;

/* What a generator accepts: defaults for lanes and chunks, and which other arguments apply. */
typedef struct {
    const char *name; /* for messages: "ring allreduce" */
    int def_lanes, def_chunks;
    int rooted;       /* takes args->root */
    int hierarchical; /* takes args->inner / args->outer */
} algo_spec_t;

#define ALGO_MAX_LANES  64
#define ALGO_MAX_CHUNKS 1024

/* Check the arguments against the spec and the topology; an invalid value is an error naming
 * it, never a silent clamp.  args may be NULL (all defaults). */
acc_status_t algo_params(const algo_spec_t *spec, const acc_topo_t *topo,
                         const acc_algo_args_t *args, algo_params_t *out);
/* supports() of generators that apply to every topology: the arguments are checked. */
acc_status_t algo_check_args(const algo_spec_t *spec, const acc_topo_t *topo,
                             const acc_algo_args_t *args);
/* A plan with the header filled in: algorithm name and protocol (from args); rooted
 * generators set plan->root themselves. */
acc_status_t algo_plan_new(const acc_topo_t *topo, acc_coll_t coll, const char *algo,
                           const acc_algo_args_t *args, int lanes, uint32_t in_chunks,
                           uint32_t out_chunks, uint32_t scratch_chunks, acc_plan_t **out);
/* Record "lanes=L chunks=C" in plan->params, with the lane-0 ring order appended
 * (" ring=0,1,3,2") when order is given and it fits. */
acc_status_t algo_set_params(acc_plan_t *p, const algo_params_t *pr, const int *order);
/* The same text into text[cap], for n ranks (class plans). */
void algo_params_format(char *text, size_t cap, const algo_params_t *pr, const int *order, int n);
/* ACC_OK when the topology has one node whose GPUs all reach each other over NVLink (directly
 * or through NVSwitches), as peer-memory algorithms need; otherwise ACC_ERR_UNSUPPORTED with a
 * message naming the algorithm and the first pair that is not NVLink. */
acc_status_t algo_need_nvlink_node(const acc_topo_t *topo, const char *name);
/* The same for the GPUs of each node only (hierarchical plans with peer-memory inner steps). */
acc_status_t algo_need_nvlink_within(const acc_topo_t *topo, const char *name);

/* ---- orders on the topology --------------------------------------------------------------- */

/* The ring of `lane` through all ranks.  Within a node it is searched (algo_order.c) for, in
 * order: the best worst hop class (direct NVLink before a hop through another GPU or the CPU),
 * the widest narrowest hop (acc_topo_path bandwidth, or the direct NVLink's), the fewest hops of
 * the worst class, the most total bandwidth; exact for small nodes, bounded beyond.  Across
 * nodes the node paths are chained rail-aligned: a node is left and the next entered through
 * the GPU with the same local index, so every inter-node hop stays on one NIC rail, and lane
 * pairs use different rails.  Odd lanes run the ring of the even lane before them reversed, so
 * both directions of every link carry data. */
acc_status_t algo_ring_order(const acc_topo_t *topo, int lane, int *order);
/* The ring through the GPUs of one node (local ids 0..g-1), as above for one node. */
acc_status_t algo_node_cycle(const acc_topo_t *topo, int *cycle);

/* ---- layouts ------------------------------------------------------------------------------ */

typedef struct {
    uint8_t buf;         /* acc_bufid_t */
    uint32_t base;       /* first chunk of block 0 */
    uint32_t stride;     /* chunks from block b to block b + 1 */
    uint32_t cnt;        /* chunks per piece */
    uint32_t nsub;       /* pieces per block (0 is taken as 1) */
    uint32_t sub_stride; /* chunks between pieces */
    uint32_t sub_first;  /* pieces are taken from this one on, round (a rank's own node's first,
                            so that every node's program is its neighbour's moved) */
    int fold;            /* halving/doubling: virtual block w < fold is blocks 2w and 2w+1 */
} algo_layout_t;

/* A plain layout: block b is chunks [base + b*stride, + cnt). */
algo_layout_t algo_layout(acc_bufid_t buf, uint32_t base, uint32_t stride, uint32_t cnt);
/* Emit `code` at rank for blocks [lo, hi) of src and [dlo, dhi) of dst (either may be NULL),
 * one operation per contiguous run; both sides must cut into the same runs. */
acc_status_t algo_emit(acc_plan_t *p, int rank, int lane, acc_opcode_t code, int peer, int peer2,
                       const algo_layout_t *src, int lo, int hi, const algo_layout_t *dst, int dlo,
                       int dhi);

/* The same exchanged with a peer that does the mirror image: send blocks [slo, shi) of out and
 * receive blocks [rlo, rhi) with `code` (RECV into dst, or RECV_REDUCE_COPY: dst = src (+)
 * message), alternating run by run so that neither side ever runs more than one message ahead
 * (a strided layout has many runs, more than a connection's slots). */
acc_status_t algo_emit_exchange(acc_plan_t *p, int rank, int lane, int peer,
                                const algo_layout_t *out, int slo, int shi, acc_opcode_t code,
                                const algo_layout_t *src, const algo_layout_t *dst, int rlo,
                                int rhi);
/* Do two layouts name the same chunks? */
int algo_layout_eq(const algo_layout_t *a, const algo_layout_t *b);
/* Piece s of a strided layout in its order (sub_first + s, round), as a layout of one piece
 * per block. */
algo_layout_t algo_layout_piece(const algo_layout_t *l, uint32_t s);

/* ---- ring building blocks (one copy for allreduce, allgather, reduce_scatter, hier) ------- */

/* Ring reduce-scatter on one lane over g[0..m) in ring order: position q contributes every
 * block of src and ends with block id(q) (id NULL: q) reduced over the group in dst.  With
 * `forward`, the last step also sends the reduced block on: the first allgather step of a ring
 * allreduce, which algo_ring_allgather(..., after_rs = 1) then continues.  Strided layouts run
 * one ring per piece, one after the other (both ring functions). */
acc_status_t algo_ring_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                      const algo_layout_t *src, const algo_layout_t *dst,
                                      int forward);
/* Ring allgather: position q's block id(q) is in buf, or in `own` (block id(q) of own) when own
 * is not NULL, in which case it is sent from there and copied into buf last.  Ends with every
 * block in buf at every position. */
acc_status_t algo_ring_allgather(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                 const algo_layout_t *buf, const algo_layout_t *own, int after_rs);

/* Plans made of rounds: for every lane an order of the ranks (its ring, or 0..n-1 in
 * node-major order) and for every round j < chunks one call round(p, lane, i, per, order) with
 * i = lane*chunks + j and per = lanes*chunks.  A round spans `width` chunks of a buffer holding
 * every rank's block (n; P = the largest power of two <= n for halving-doubling allreduce; 1
 * for one-shot) and one chunk of a per-rank buffer (allgather input, reduce_scatter output), so
 * buffers get per * width or per chunks.  Params are set and the plan is claimed correct in
 * place.  Peer-memory plans are refused unless algo_need_nvlink_node() passes. */
typedef acc_status_t (*algo_round_fn)(acc_plan_t *p, int lane, uint32_t i, uint32_t per,
                                      const int *order);
enum { ALGO_WIDTH_N = 0, ALGO_WIDTH_P, ALGO_WIDTH_1 };
typedef struct {
    const algo_spec_t *spec;
    acc_coll_t coll;
    const char *algo; /* plan->algo */
    int ring;         /* 1: the lane's ring order; 0: ranks 0..n-1 */
    int width;        /* ALGO_WIDTH_* */
    int scratch;      /* scratch laid out like the input */
    int peer_memory;  /* needs one node of NVLink-connected GPUs */
    algo_round_fn round;
} algo_rounds_t;
/* The chunks a round spans of a buffer holding every rank's block, on n ranks: n, the largest
 * power of two <= n (halving-doubling allreduce) or 1 (recursive doubling's), by r->width. */
uint32_t algo_rounds_width(const algo_rounds_t *r, int n);
acc_status_t algo_rounds_plan(const algo_rounds_t *r, const acc_topo_t *topo,
                              const acc_algo_args_t *args, acc_plan_t **out);
/* supports() of algo_rounds_plan generators. */
acc_status_t algo_rounds_supports(const algo_rounds_t *r, const acc_topo_t *topo,
                                  const acc_algo_args_t *args);
/* j of round index i (i = lane*chunks + j): how many rounds of its lane came before. */
static inline uint32_t algo_round_of(const acc_plan_t *p, uint32_t i, uint32_t per)
{
    return i % (per / (uint32_t)p->nlanes);
}

/* ---- the same rounds in class form (algo_ring_class.c, acc_cplan.h) ----------------------
 * A round-based ring plan is one class per lane over the grid [n] of ring positions, the lane's
 * ring order its table: every position runs the same program, its peers +1 and -1 and its
 * blocks those of positions q + k (COORD terms when block ids are positions, RANK terms when
 * they are ranks, as algo_ring_allgather's id = order makes them).  The expansion is
 * algo_rounds_plan's plan, operation for operation. */
typedef acc_status_t (*algo_class_round_fn)(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t i,
                                            uint32_t per);
/* algo_rounds_plan in class form: ring generators (r->ring: each lane's ring order its table)
 * and halving/doubling ones (ranks in their own order, on a power of two of them). */
acc_status_t algo_rounds_cplan(const algo_rounds_t *r, algo_class_round_fn round,
                               const acc_topo_t *topo, const acc_algo_args_t *args,
                               acc_cplan_t **out);

/* A generator with a class form: its descriptor, whether the class form covers the arguments
 * (NULL: always), the class build, and the plan built rank by rank the old way (for the test
 * that compares the two forms, and build() where the class form does not cover the args).
 * Round-based ring generators give their rounds and class round instead of the two builds. */
typedef struct {
    const acc_algo_t *algo;
    int (*covers)(const acc_topo_t *topo, const acc_algo_args_t *args);
    acc_status_t (*build_class)(const acc_topo_t *topo, const acc_algo_args_t *args,
                                acc_cplan_t **out);
    acc_status_t (*build_explicit)(const acc_topo_t *topo, const acc_algo_args_t *args,
                                   acc_plan_t **out);
    const algo_rounds_t *rounds;
    algo_class_round_fn round;
} algo_class_form_t;
/* The two builds of a class form, whichever way it gives them. */
acc_status_t algo_class_build(const algo_class_form_t *f, const acc_topo_t *topo,
                              const acc_algo_args_t *args, acc_cplan_t **out);
acc_status_t algo_class_build_explicit(const algo_class_form_t *f, const acc_topo_t *topo,
                                       const acc_algo_args_t *args, acc_plan_t **out);
extern const algo_class_form_t algo_allreduce_ring_class, algo_allgather_ring_class,
    algo_reduce_scatter_ring_class, algo_allreduce_hier_class, algo_allgather_hier_class,
    algo_reduce_scatter_hier_class, algo_allreduce_hier_pipe_class, algo_allreduce_rhd_class,
    algo_allreduce_rd_class, algo_reduce_scatter_rh_class, algo_allgather_rd_class;
/* Halving and doubling's class forms cover a power of two of ranks (no rank folds). */
int algo_hd_class_covers(const acc_topo_t *topo, const acc_algo_args_t *args);

/* A ring in class form: along grid dimension `dim`, blocks identified by the position there
 * (COORD terms) or by the rank at it (id_rank: RANK terms, algo_ring_allgather's id = order);
 * every chunk moves by fixed_coef x the coordinate of dimension fixed_dim (-1: none), which
 * puts each rail of a hierarchical plan on its own node block. */
typedef struct {
    int dim;
    int id_rank;
    int fixed_dim;
    uint32_t fixed_coef;
} algo_cring_t;

/* algo_ring_reduce_scatter and algo_ring_allgather for every ring along the dimension at once,
 * for plain layouts (one piece per block). */
acc_status_t algo_ring_rs_class(acc_cplan_t *cp, int lane, uint32_t cls, const algo_cring_t *ring,
                                const algo_layout_t *src, const algo_layout_t *dst, int forward);
acc_status_t algo_ring_ag_class(acc_cplan_t *cp, int lane, uint32_t cls, const algo_cring_t *ring,
                                const algo_layout_t *buf, const algo_layout_t *own, int after_rs);
/* The expansion of a class form's build, or its explicit build where it does not cover args:
 * the descriptor's build(). */
acc_status_t algo_class_expanded(const algo_class_form_t *f, const acc_topo_t *topo,
                                 const acc_algo_args_t *args, acc_plan_t **out);

/* ---- recursive halving / doubling (one copy for rhd, rh, rd and hier) -------------------- */
/* Groups of any size: with P the largest power of two <= m and r = m - P, positions 2i and
 * 2i+1 (i < r) are folded into one virtual rank (2i+1 works, 2i waits), positions q >= 2r are
 * virtual rank q - r.  Halving starts with the farthest partner (distance P/2), doubling with
 * the nearest, so that the ranges a rank holds stay contiguous. */

/* Rabenseifner allreduce over g: src holds each position's contribution as P = largest power of
 * two <= m blocks (block w: chunk range w of the layout), res receives the result.  Folded
 * positions hand their data to their partner first and get the result back last. */
acc_status_t algo_rhd_allreduce(acc_plan_t *p, int lane, const int *g, int m,
                                const algo_layout_t *src, const algo_layout_t *res);
/* Recursive doubling allreduce over g: each virtual rank exchanges its whole partial sum with
 * the partner at distance 1, 2, ..., P/2 and adds it, from block 0 of src into block 0 of res:
 * log2 P steps, the fewest, each moving the whole message.  Folded positions as above. */
acc_status_t algo_rd_allreduce(acc_plan_t *p, int lane, const int *g, int m,
                               const algo_layout_t *src, const algo_layout_t *res);
/* Reduce-scatter by recursive halving: block q of src (one per position) ends reduced over the
 * group in position q's dst (block q of the dst layout; stride 0 puts all in one place).  work
 * holds partial sums with the layout of src (it may be src itself). */
acc_status_t algo_rh_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m,
                                    const algo_layout_t *src, const algo_layout_t *work,
                                    const algo_layout_t *dst);
/* Allgather by recursive doubling: position q's block q of own ends in block q of buf at every
 * position. */
acc_status_t algo_rd_allgather(acc_plan_t *p, int lane, const int *g, int m,
                               const algo_layout_t *own, const algo_layout_t *buf);
/* Largest power of two <= m. */
int algo_pow2_floor(int m);
/* The four above in class form (algo_hd_class.c), on a power of two of ranks (ACC_ERR_INTERNAL
 * otherwise): position x of the grid [n] pairs with x ^ d (XOR peers) and keeps or sends the
 * blocks of x with a bit flipped and the bits below cleared (XOR terms). */
acc_status_t algo_rhd_allreduce_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                      const algo_layout_t *src, const algo_layout_t *res);
acc_status_t algo_rd_allreduce_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                     const algo_layout_t *src, const algo_layout_t *res);
acc_status_t algo_rh_reduce_scatter_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                          const algo_layout_t *src, const algo_layout_t *work,
                                          const algo_layout_t *dst);
acc_status_t algo_rd_allgather_class(acc_cplan_t *cp, int lane, uint32_t cls,
                                     const algo_layout_t *own, const algo_layout_t *buf);

/* ---- trees --------------------------------------------------------------------------------- */

#define ALGO_TREE_MAXCH 4

/* A forest over the plan's ranks: parent -1 for roots and for ranks outside every tree. */
typedef struct {
    int n;
    int *parent;
    int *nchild;
    int *child; /* n x ALGO_TREE_MAXCH, in the order children are served */
} algo_tree_t;

acc_status_t algo_tree_init(algo_tree_t *t, int n);
void algo_tree_free(algo_tree_t *t);
/* Binary tree in in-order over g[0..m): position q gets label ((q + shift) mod m) + 1 and the
 * usual in-order shape over labels 1..m (heights from trailing zero bits).  shift 0 and 1 give
 * NCCL's pair of complementary trees: the leaves of one are the inner ranks of the other. */
acc_status_t algo_tree_btree(algo_tree_t *t, const int *g, int m, int shift);
/* Heap-shaped binary tree rooted at g[0]: position q's children are 2q+1 and 2q+2. */
acc_status_t algo_tree_heap(algo_tree_t *t, const int *g, int m);
/* A chain rooted at g[0]: g[q]'s parent is g[q-1]. */
acc_status_t algo_tree_chain(algo_tree_t *t, const int *g, int m);
/* The tree of a whole topology, NCCL style: on one node a binary tree over the node's ring
 * order; across nodes a binary tree over nodes whose edges join one GPU per node (the head,
 * the same local GPU in every node so that the tree stays on one rail) and a chain through each
 * node's GPUs from its head.  which: 0 and 1 are the complementary pair of a double binary tree
 * (different heads, different directions); 2 is a heap-shaped tree rooted at rank `root`, 3 a
 * chain along the ring from `root` (pipelines). */
acc_status_t algo_tree_topo(algo_tree_t *t, const acc_topo_t *topo, int which, int root);

/* Where tree steps append their operations: `rank`'s program on `lane` of an explicit plan
 * (cp NULL), or class cls of that lane of a class plan, each peer written relative to rank's
 * point there (algo_tree_class.c). */
typedef struct {
    acc_plan_t *p;
    acc_cplan_t *cp;
    int lane;
    int rank;
    uint32_t cls;
} algo_tree_out_t;
static inline algo_tree_out_t algo_tree_out(acc_plan_t *p, int lane, int rank)
{
    algo_tree_out_t o = {p, NULL, lane, rank, 0};
    return o;
}

/* Up (reduce) step of one chunk range for o->rank: it combines its contribution src with its
 * children's and passes the sum to its parent; a root leaves the full reduction in dst.  Inner
 * ranks keep partial sums in tmp (OUT for allreduce, SCRATCH where the rank has no output). */
acc_status_t algo_tree_up(const algo_tree_out_t *o, const algo_tree_t *t, acc_ref_t src,
                          acc_ref_t tmp, acc_ref_t dst);
/* Down (broadcast) step: a root sends root_src to its children (and copies it into buf when
 * they differ); other ranks receive buf from their parent and forward it. */
acc_status_t algo_tree_down(const algo_tree_out_t *o, const algo_tree_t *t, acc_ref_t root_src,
                            acc_ref_t buf);

/* A whole broadcast or reduce plan over the tree `which` of algo_tree_topo (2 heap, 3 chain)
 * rooted at args->root: lanes carry slices of the buffer side by side, each slice pipelined in
 * `chunks` chunks (chunk s of a lane is chunk lane*chunks + s).  Broadcast runs the down step
 * from the root's input, reduce the up step into the root's output (inner ranks with several
 * children keep partial sums in scratch).  Correct in place. */
acc_status_t algo_rooted_plan(const algo_spec_t *spec, acc_coll_t coll, const char *name, int which,
                              const acc_topo_t *topo, const acc_algo_args_t *args,
                              acc_plan_t **out);
/* One rank's (or class's) part of it on o->lane: the down or up step of each of its chunks. */
acc_status_t algo_rooted_steps(const algo_tree_out_t *o, const algo_tree_t *t, acc_coll_t coll,
                               int chunks);
/* The same in class form: a chain on the grid [n] in its order, other trees on [nodes, gpn]
 * (algo_tree_classes). */
acc_status_t algo_rooted_cplan(const algo_spec_t *spec, acc_coll_t coll, const char *name,
                               int which, const acc_topo_t *topo, const acc_algo_args_t *args,
                               acc_cplan_t **out);

/* ---- trees in class form (algo_tree_class.c) ----------------------------------------------
 * A tree plan's ranks see the tree alike where their parents and children sit at the same
 * offsets on the grid: the GPUs of one local index on the chains inside nodes, the inner
 * positions of a chain.  Along dimension 0, with the others fixed, each run of points that see
 * every tree of a lane alike becomes one class (a head of a tree between nodes, whose parent
 * and children sit at offsets of its own, a class of its own or of a few neighbours), its
 * program made at its first point with peers relative to it.  The classes of a tree between N nodes
 * of G GPUs grow with N + G, not N x G. */
/* Append an explicit operation, made for o->rank, to o's class: peers become offsets from
 * o->rank's point, chunk ranges constants. */
acc_status_t algo_tree_class_add(const algo_tree_out_t *o, const acc_op_t *op);
/* Make lane's classes over the trees trees[0..ntrees) (the lane's grid and table already set)
 * and have emit(ctx, o) append each class's program, o->rank its first point's rank. */
typedef acc_status_t (*algo_tree_emit_fn)(void *ctx, const algo_tree_out_t *o);
acc_status_t algo_tree_classes(acc_cplan_t *cp, int lane, const algo_tree_t *const *trees,
                               int ntrees, algo_tree_emit_fn emit, void *ctx);
extern const algo_class_form_t algo_allreduce_tree_class, algo_broadcast_tree_class,
    algo_broadcast_ring_class, algo_reduce_tree_class, algo_reduce_ring_class;

/* ---- peer memory (NVLink / NVSwitch nodes) ----------------------------------------------- */

/* Each rank of g signals every other on `slot`, then waits until every peer's counter reaches
 * `value` (the number of times this slot has been used so far, counting this one): before it,
 * nobody touches another's buffers; after it, everybody may. */
acc_status_t algo_pm_barrier(acc_plan_t *p, int lane, const int *g, int m, uint16_t slot,
                             uint32_t value);
/* Position q reduces block id(q) of src over the whole group (REDUCE_PEERS, read in the peers'
 * memory) into its own block id(q) of dst.  Needs a barrier before. */
acc_status_t algo_pm_reduce_scatter(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                                    const algo_layout_t *src, const algo_layout_t *dst);
/* REDUCE_PEERS of whole ranges at every rank of g: dst = (+) over g of src. */
acc_status_t algo_pm_reduce_all(acc_plan_t *p, int lane, const int *g, int m, acc_ref_t src,
                                acc_ref_t dst);
/* Allgather by writes: position q puts its block id(q) (from own, or buf) into every other
 * rank's buf (to q+1, q+2, ... in that order), copies it into its own buf when own is given, then
 * signals each peer on slot and waits for all peers' signals (to `value`, as for the barrier): when
 * it returns, all blocks have arrived.  Needs a barrier before (the peers' buffers must be live).
 */
acc_status_t algo_pm_allgather(acc_plan_t *p, int lane, const int *g, int m, const int *id,
                               const algo_layout_t *buf, const algo_layout_t *own, uint16_t slot,
                               uint32_t value);
/* Slot numbers: each lane has its own, so that counters of lanes never mix; a lane that uses a
 * slot again waits for a higher value. */
#define ALGO_SLOT(lane, k) ((uint16_t)((lane)*4 + (k)))

/* ---- hierarchical plans ------------------------------------------------------------------ */

enum { ALGO_INNER_RING = 0, ALGO_INNER_DIRECT };
enum { ALGO_OUTER_RING = 0, ALGO_OUTER_HD, ALGO_OUTER_TREE };

/* The shape shared by hierarchical generators: nodes x gpn ranks, the intra-node algorithm
 * (inner: ring or direct) and the inter-node one (outer: ring, halving/doubling, tree), the
 * node's ring (and its reverse, for odd lanes), each node's ranks in ring order, and the rails
 * (rank k*gpn + h for every node k: local GPU h everywhere, so one NIC rail). */
typedef struct {
    algo_params_t pr;
    int nodes, gpn;
    int inner, outer;
    const char *inner_name, *outer_name;
    int *cyc[2];  /* gpn local ids; [1] reversed */
    int *node[2]; /* nodes x gpn ranks, node k's at k*gpn */
    int *rail;    /* gpn x nodes: rail h at h*nodes */
} algo_hier_t;

/* Check the arguments and the topology (at least two nodes; inner=direct needs NVLink within
 * nodes) and, when `build`, fill h; outer names are "ring", `hd` ("rhd", "rh" or "rd" as the
 * collective calls it) and "tree" when the collective has a tree (allreduce).  Defaults: inner
 * direct where the node allows it, else ring; outer ring.  Free with algo_hier_free. */
acc_status_t algo_hier_setup(algo_hier_t *h, const algo_spec_t *spec, const char *hd, int has_tree,
                             const acc_topo_t *topo, const acc_algo_args_t *args, int build);
void algo_hier_free(algo_hier_t *h);
/* Record "lanes=L chunks=C inner=X outer=Y". */
acc_status_t algo_hier_params(acc_plan_t *p, const algo_hier_t *h);
/* The allreduce between nodes of one block (chunks base .. of the output) along rail r (nodes
 * ranks) on `lane`: h->outer's ring, halving-doubling, or both of `trees` (built over every
 * rail) up and then down. */
acc_status_t algo_hier_allreduce_outer(acc_plan_t *p, const algo_hier_t *h,
                                       const algo_tree_t *trees, int lane, const int *r,
                                       uint32_t base);

/* Class forms of hierarchical plans: the grid is [nodes, gpn], point (k, q) position q of node
 * k's cycle in the lane's direction (h->node), so node steps run along dimension 1 and rails
 * along dimension 0; nodes are alike (sym_step one node).  algo_hier_cplan makes the plan with
 * its header and tables; each lane then gets one class over the grid (every position runs one
 * program) or, with peer memory inside nodes, one per position q (box [0, nodes) x [q, q+1):
 * its signals and puts name the other positions in a fixed order).  algo_hier_class_build makes
 * it and gives each class its rounds: round(cp, lane, cls, h, q, j) appends round j of
 * position q (-1: the class of every position). */
/* Does a class form cover these arguments: outer=ring, and inner=direct where `direct`? */
int algo_hier_class_covers(const algo_spec_t *spec, const char *hd, int has_tree,
                           const acc_topo_t *topo, const acc_algo_args_t *args, int direct);
/* The class plan of algorithm `algo` on that grid with its header and no lanes' tables yet. */
acc_status_t algo_hier_cplan(const algo_hier_t *h, const char *algo, acc_coll_t coll,
                             const acc_algo_args_t *args, uint32_t in, uint32_t out,
                             uint32_t scratch, acc_cplan_t **cpp);
typedef acc_status_t (*algo_hier_class_round_fn)(acc_cplan_t *cp, int lane, uint32_t cls,
                                                 const algo_hier_t *h, int q, uint32_t j);
acc_status_t algo_hier_class_build(const algo_hier_t *h, acc_coll_t coll,
                                   const acc_algo_args_t *args, uint32_t in, uint32_t out,
                                   uint32_t scratch, int per_position,
                                   algo_hier_class_round_fn round, acc_cplan_t **cpp);
/* Hier allreduce's node step of a round (chunks base .., a block of nodes chunks per position)
 * at position q (q < 0: inner=ring, every position): before the rails (after 0), the
 * reduce-scatter leaving block q at position q; after them, the allgather. */
acc_status_t algo_hier_class_node_step(acc_cplan_t *cp, int lane, uint32_t cls,
                                       const algo_hier_t *h, int q, uint32_t j, uint32_t base,
                                       int after);
/* The ring allreduce along the rails of block q (chunks base + q * blk, one per node). */
acc_status_t algo_hier_class_rails(acc_cplan_t *cp, int lane, uint32_t cls, uint32_t base,
                                   uint32_t blk);
/* algo_pm_barrier's (and algo_pm_allgather's closing) signals and waits of position q of a
 * node of m GPUs. */
acc_status_t algo_hier_class_signal_wait(acc_cplan_t *cp, int lane, uint32_t cls, int q, int m,
                                         uint16_t slot, uint32_t value);

#endif /* ALGO_UTIL_H */
