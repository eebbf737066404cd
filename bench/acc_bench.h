/*
 * acc_bench.h - acc-bench's parts: the command line and plan loading (acc_bench.c) and the
 * size sweep that prints the nccl-tests table (acc_bench_run.c).
 */
#ifndef ACC_BENCH_H
#define ACC_BENCH_H

#include "acc_plan.h"

#include <stdio.h>

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

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

/* Run the sweep over a verified plan and print the table to out; the exit status: 0, or 1 when
 * an element was wrong or the executor failed. */
int bench_sweep(const acc_plan_t *plan, const bench_sweep_t *s, FILE *out);

#endif
