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
    acc_dtype_t types[ACC_DT_COUNT]; /* --types, in the order given; fp32, fp16, bf16 by default */
    int ntypes;
    acc_redop_t ops[ACC_RED_COUNT]; /* --ops; sum by default */
    int nops;
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

/* --topo SRC, with the NVLinks of --nvlink-from PLATFORM; EXIT_INPUT with the message set. */
int compile_topo_load(const compile_opts_t *o, acc_topo_t **out);
int compile_topo_actions(const compile_opts_t *o, const acc_topo_t *topo);
int compile_list_algos(const acc_topo_t *topo);
/* --emit-cuda DIR, --arch LIST: generate (and compile) the kernels of the run's plans. */
int compile_cuda_actions(const compile_opts_t *o, const acc_topo_t *topo);

/* What the kernel actions share with --db (compile_cuda.c). */
#define COMPILE_MAX_ARCHS    16
#define COMPILE_MAX_VARIANTS (ACC_DT_COUNT * ACC_RED_COUNT)
/* --types LIST / --ops LIST into o, each value once, in the order given; EXIT_USAGE with the
 * message set (naming the option and the value, listing the valid ones). */
int compile_parse_types(const char *list, compile_opts_t *o);
int compile_parse_ops(const char *list, compile_opts_t *o);
/* --arch LIST, each an architecture NVRTC builds for: EXIT_USAGE for a bad list or one it does
 * not know, EXIT_INPUT when acc has no NVRTC; the message set. */
int compile_parse_archs(const char *list, char archs[COMPILE_MAX_ARCHS][16], int *n);
/* The (type, reduction) of each module a plan of coll gets: every --types entry with every
 * --ops entry when coll reduces, with sum alone when it does not (its modules ignore the
 * reduction).  Returns how many. */
int compile_variants(const compile_opts_t *o, acc_coll_t coll, acc_dtype_t dts[],
                     acc_redop_t ops[]);
/* "float, half, bfloat16; sum" for summary lines. */
void compile_variants_text(const compile_opts_t *o, char *out, size_t cap);
/* DIR/<kernel name>.cu; EXIT_OUTPUT with the message set. */
int compile_write_source(const char *dir, const acc_kernel_t *k);
/* --emit-cuda DIR: create it when missing; EXIT_OUTPUT with the message set. */
int compile_make_dir(const char *dir);
/* Of cubins modules asked for: "80 built (85 NVRTC compilations, 6.1 s, 72 ms each), 10 from
 * the cache in DIR" (a module is built from a compiled plan's part and its type's device
 * library, which is compiled once). */
void compile_cache_text(acc_kcache_t *cache, int cubins, char *out, size_t cap);
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
