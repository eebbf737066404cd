/*
 * acc_bench.h - acc-bench's parts: the command line and plan loading (acc_bench.c) and the
 * size sweep that prints the nccl-tests table (acc_bench_run.c).
 */
#ifndef ACC_BENCH_H
#define ACC_BENCH_H

#include "acc_plan.h"
#include "cli.h" /* the exit codes every acc program shares */
#include "acc_runtime.h"

#include <stdio.h>

typedef struct {
    uint64_t min_bytes, max_bytes;
    uint64_t step_bytes; /* -i: added each step when factor <= 1 */
    int factor;          /* -f: each step multiplies the size when above 1 */
    acc_dtype_t dtypes[ACC_DT_COUNT];
    int ndtypes;
    acc_redop_t ops[ACC_RED_COUNT];
    int nops;
    int iters, warmup;
    int check; /* -c: compare with the sequential reference */
} bench_sweep_t;

/* Measured points of a sweep: size and out-of-place busbw, of the first type and reduction. */
typedef struct {
    uint64_t *bytes;
    double *busbw;
    size_t n, cap;
} bench_points_t;

/* Run the sweep over a verified plan and print the table to out; the exit status: 0, or 1 when
 * an element was wrong or the executor failed.  pts (may be NULL) collects the points. */
int bench_sweep(const acc_plan_t *plan, const bench_sweep_t *s, FILE *out, bench_points_t *pts);

/* --plot (acc_bench_plot.c): the points beside the simulator's prediction for the plan on
 * topology T, written to path; the exit status (3 when the file cannot be written). */
int bench_plot(const acc_plan_t *plan, const char *topo, acc_dtype_t dt, const bench_points_t *pts,
               const char *path);
void bench_points_free(bench_points_t *pts);

/* The runtime's sweep (acc_bench_comm.c): nranks processes, each a rank of a communicator. */
typedef struct {
    const char *runtime; /* "host" or "cuda" */
    int nranks;
    int rank;              /* >= 0: run as this one rank (an external launcher started us) */
    const char *bootstrap; /* with rank: the rendezvous HOST:PORT rank 0 serves */
    const char *topo, *db; /* NULL: ACC_TOPO, ACC_DB */
    acc_coll_t coll;
    int root;
} bench_comm_t;

/* Start the ranks (or be one), run the sweep through the communicator's own choices, and have
 * rank 0 print the table with the #wrong column and what ran; the exit status as above. */
int bench_comm(const bench_comm_t *b, const bench_sweep_t *s, FILE *out);

/* What each rank process runs; its exit status. */
typedef int (*bench_rank_fn)(const bench_comm_t *b, const acc_unique_id_t *id, int rank, FILE *out,
                             void *ctx);
/* Start b->nranks processes running fn (or, with b->rank, be that one rank of a job an external
 * launcher started) and wait for them; the first failing rank's exit status. */
int bench_launch(const bench_comm_t *b, bench_rank_fn fn, void *ctx, FILE *out);
/* The communicator options of --runtime, --topo and --db. */
int bench_comm_opts(const bench_comm_t *b, acc_comm_opts_t *opts);

/* The replay (acc_bench_replay.c): a model's training iterations on the runtime under each
 * policy, measured, beside the iteration simulator's prediction for the same setting. */
typedef struct {
    const char *model;    /* a shipped profile or a profile file */
    const char *network;  /* NULL: the topology's own */
    const char *policies; /* comma-separated: ddp, horovod, acc, negotiate, online */
    int iters;
    double grad_scale; /* gradients and every fusion size times this (0: 1) */
    int jitter;        /* ranks mark runs of this many gradients in orders of their own */
} bench_replay_t;

int bench_replay(const bench_comm_t *b, const bench_replay_t *r, FILE *out);

/* The bounds of a run (acc_bench_limits.c), checked before anything is allocated or forked;
 * each returns 0, or the exit status with the message printed. */
#define BENCH_NRANKS_MAX 1024
int bench_check_nranks(const bench_comm_t *b);
int bench_check_plan_memory(const acc_plan_t *plan, const bench_sweep_t *s);
int bench_check_runtime_memory(const bench_comm_t *b, const bench_sweep_t *s,
                               const bench_replay_t *r);

/* The host backend's own tables (acc_bench_tables.c): every candidate plan measured through the
 * runtime at every size of the sweep, the fastest per size stored in the database at path. */
typedef struct {
    const char *path;
    const bench_sweep_t *sweep;
} bench_tables_t;

int bench_tables(const bench_comm_t *b, const bench_tables_t *t, FILE *out);

/* Elements per byte of the size column, and nccl-tests' bus bandwidth factor. */
uint64_t bench_size_mult(acc_coll_t coll, int nranks);
double bench_bus_factor(acc_coll_t coll, int nranks);
/* The next size of the sweep; 0 when the sweep is over. */
int bench_advance(const bench_sweep_t *s, uint64_t *size);
/* A time in nccl-tests' precision: fewer decimals as it grows. */
void bench_time_text(double usec, char *buf, size_t n);

#endif
