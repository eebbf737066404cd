/* acc-compile's options and its actions, one file per group of actions. */
#ifndef ACC_COMPILE_TOOL_H
#define ACC_COMPILE_TOOL_H

#include "acc_compiler.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_OUTPUT = 3 };

typedef struct {
    const char *topo;
    const char *export_fmt;
    const char *output;
    int print_topo;
    int json;
    int list_platforms;
    /* kernels */
    const char *emit_cuda; /* --emit-cuda DIR */
    const char *arch;      /* --arch sm_80,sm_90 */
    int cuda_only;         /* --emit-cuda/--arch without another action: no topology summary */
    /* plans */
    const char *coll;
    const char *algo;
    acc_algo_args_t args;
    int list_algos;
    const char *emit_plan;
    const char *verify_file;
    const char *import_msccl;
    const char *export_msccl;
    int verify;
    /* the report */
    int report;
    const char *plot;
    /* the database */
    const char *db;
    int print_selection;
} compile_opts_t;

/* Print "acc-compile: <message>" for the current error and return code. */
int compile_fail(int code);
/* Write a buffer to a path ("-" or NULL: standard output). */
int compile_write(const char *path, const acc_buf_t *b);

int compile_topo_actions(const compile_opts_t *o, const acc_topo_t *topo);
int compile_list_algos(const acc_topo_t *topo);
/* --emit-cuda DIR, --arch LIST: generate (and compile) the kernels of the run's plans. */
int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo);
/* --algo, --verify FILE, --import-msccl: produce, verify and write plans. */
int compile_plan_actions(const compile_opts_t *o, const acc_topo_t *topo);
/* --report [--coll C] [--json] [--plot FILE.svg]: the selection sweep, table and plot. */
int compile_report_actions(const compile_opts_t *o, const acc_topo_t *topo);
/* --db FILE: store the topology, every selected plan and every collective's selection table;
 * --print-selection: read the tables of this topology back from FILE. */
int compile_db_store(const compile_opts_t *o, const acc_topo_t *topo);
int compile_db_print_selection(const compile_opts_t *o, const acc_topo_t *topo);

#endif
