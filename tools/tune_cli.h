/* acc-tune's options and its commands, one file per group. */
#ifndef ACC_TUNE_CLI_H
#define ACC_TUNE_CLI_H

#include "acc_db.h"
#include "acc_tune.h"

#include "cli.h"

typedef enum { CMD_TUNE = 0, CMD_SHOW, CMD_PLOT, CMD_EXPORT, CMD_PROFILE_EXPORT } tune_cmd_t;

typedef struct {
    tune_cmd_t cmd;
    const char *model;   /* a shipped profile's name or a profile file */
    const char *topo;    /* as acc_topo_load takes it */
    const char *network; /* a stored network's name or "nic=400 latency=2.7 ..."; NULL: the
                            topology's own */
    const char *db;
    const char *plot;   /* plot: the SVG file */
    const char *format; /* export: env, ddp or horovod */
    const char *profile; /* profile export: the model */
    const char *output;  /* profile export: the file; NULL: standard output */
    const char *precision;
    acc_search_strategy_t strategy;
    size_t budget;
    uint64_t seed;
    acc_tune_space_t space;
    int algos_given;
    int cycle_given;
    int nccl_only;
    int csv;
    int quiet;
} tune_opts_t;

/* Print "acc-tune: <message>" for the current error and return code. */
int tune_fail(int code);
/* The target of --model, --topo, --network and --precision; on failure the message printed and
 * an exit code returned. */
int tune_target_open(const tune_opts_t *o, acc_db_t *db, acc_tune_target_t **t);

int tune_run(const tune_opts_t *o);
int tune_show(const tune_opts_t *o);
int tune_plot(const tune_opts_t *o);
int tune_export(const tune_opts_t *o);
/* tune_profile.c: show's tables of stored profiles and recordings of model (NULL: all) into b,
 * and `profile export`. */
int tune_show_profiles(const char *model, acc_db_t *db, acc_buf_t *b);
int tune_profile_export(const tune_opts_t *o);

#endif
