/* acc-compile's options and its actions, one file per group of actions. */
#ifndef ACC_COMPILE_CLI_H
#define ACC_COMPILE_CLI_H

#include "acc_compiler.h"
#include "acc_kernels.h"

#include "cli.h"

typedef struct {
    const char *topo;
    const char *nvlink_from; /* --nvlink-from PLATFORM */
    const char *export_fmt;
    const char *output;
    int print_topo;
    int json;
    int list_platforms;
    /* kernels */
    const char *emit_cuda; /* --emit-cuda DIR */
    const char *arch;      /* --arch sm_80,sm_90 */
    int cuda_only;         /* --emit-cuda/--arch without another action: no topology summary */
    /* --types and --ops, in the order given, over acc_kbuild_opts_init's defaults; the action
     * that builds kernels adds --arch and --emit-cuda (compile_kernel_opts). */
    acc_kbuild_opts_t kernels;
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
    int full; /* --full: every size of every collective, not only the ranges */
    const char *plot;
    /* the database */
    const char *db;
    int print_selection;
    /* pictures */
    const char *draw; /* --draw FILE.svg: the plan when there is one, else the topology */
} compile_opts_t;

/* Print "acc-compile: <message>" for the current error and return code. */
int compile_fail(int code);
/* Write a buffer to a path ("-" or NULL: standard output). */
int compile_write(const char *path, const acc_buf_t *b);

/* --topo SRC, with the NVLinks of --nvlink-from PLATFORM; EXIT_INPUT with the message set. */
int compile_topo_load(const compile_opts_t *o, acc_topo_t **out);
int compile_topo_actions(const compile_opts_t *o, const acc_topo_t *topo);
int compile_list_algos(const acc_topo_t *topo);
/* --emit-cuda DIR, --arch LIST: generate (and compile) the kernels of the run's plans. */
int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo);

/* What the kernel actions share with --db (compile_cuda.c). */
/* --types LIST / --ops LIST into o->kernels, each value once, in the order given; EXIT_USAGE
 * with the message set (naming the option and the value, listing the valid ones). */
int compile_parse_types(const char *list, compile_opts_t *o);
int compile_parse_ops(const char *list, compile_opts_t *o);
/* o->kernels with --arch LIST (each an architecture NVRTC builds for) and --emit-cuda DIR, and
 * with architectures a kernel cache of the user's (*cache, taken) whose directory the summary
 * names.  EXIT_USAGE for a bad list or an architecture NVRTC does not know, EXIT_INPUT when acc
 * has no NVRTC; the message set. */
int compile_kernel_opts(const compile_opts_t *o, acc_kbuild_opts_t *ko, acc_kcache_t **cache);
/* The exit status of a failed kernel build: EXIT_OUTPUT when a file could not be written
 * (ACC_ERR_IO), else EXIT_INPUT. */
int compile_exit_for(acc_status_t st);
/* "float, half, bfloat16; sum" for summary lines. */
void compile_variants_text(const acc_kbuild_opts_t *ko, char *out, size_t cap);
/* "80 built (85 NVRTC compilations, 6.1 s, 72 ms each), 10 from the cache in DIR" (a module is
 * built from a compiled plan's part and its type's device library, which is compiled once). */
void compile_cache_text(const acc_kbuild_stats_t *s, size_t from_cache, const acc_kcache_t *cache,
                        char *out, size_t cap);
/* The plan of --verify FILE, --import-msccl FILE or --coll C --algo NAME, verified; the exit
 * status, with the message printed. */
int compile_obtain_plan(const compile_opts_t *o, const acc_topo_t *topo, acc_plan_t **plan);
/* --algo, --verify FILE, --import-msccl: produce, verify and write plans. */
int compile_plan_actions(const compile_opts_t *o, const acc_topo_t *topo);
/* --report [--coll C] [--json] [--plot FILE.svg]: the selection sweep, table and plot. */
int compile_report_actions(const compile_opts_t *o, const acc_topo_t *topo);
/* --db FILE: store the topology, every selected plan and every collective's selection table,
 * with --arch LIST the CUBINs of the tables' plans (--emit-cuda DIR: their sources);
 * --print-selection: read the tables of this topology back from FILE. */
int compile_db_store(const compile_opts_t *o, const acc_topo_t *topo);
int compile_db_print_selection(const compile_opts_t *o, const acc_topo_t *topo);

#endif
