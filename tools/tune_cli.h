/* acc-tune's options and its commands, one file per group. */
#ifndef ACC_TUNE_CLI_H
#define ACC_TUNE_CLI_H

#include "acc_db.h"
#include "acc_tune.h"

#include "cli.h"

typedef enum { CMD_TUNE = 0, CMD_SHOW, CMD_PLOT, CMD_EXPORT } tune_cmd_t;

typedef struct {
    tune_cmd_t cmd;
    const char *model;   /* a shipped profile's name or a profile file */
    const char *topo;    /* as acc_topo_load takes it */
    const char *network; /* a stored network's name or "nic=400 latency=2.7 ..."; NULL: the
                            topology's own */
    const char *db;
    const char *plot;   /* plot: the SVG file */
    const char *format; /* export: env, ddp or horovod */
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

/* What a tuning key is made of: the model's profile, the topology (the network applied) and
 * the network's name in the database. */
typedef struct {
    acc_profile_t *profile;
    acc_topo_t *topo;
    char fingerprint[ACC_SHA256_HEX_LEN + 1];
    char network[ACC_DB_NAME_MAX];
    const acc_profile_compute_t *compute;
} tune_target_t;

/* Load --model and --topo, apply --network (looked up in db when it is a name; db may be
 * NULL), and pick the compute entry for the topology's GPU.  On failure an exit code. */
int tune_target_load(const tune_opts_t *o, acc_db_t *db, tune_target_t *t);
void tune_target_free(tune_target_t *t);
/* "resnet50 on dgx-h100-2node (16 GPUs, H100 SXM5 80GB, fp16, batch 1280), network ib-ndr" */
void tune_target_title(const tune_target_t *t, char *buf, size_t n);

/* A copy of topo with its network changed as `params` says ("nic=GBPS latency=US rail=0|1
 * oversub=X nodes=N fabric=NAME", blanks or commas between). */
acc_status_t tune_topo_with_network(const acc_topo_t *topo, const char *params, acc_topo_t **out);

/* The database's side: store the profile and topology, runs, optima; warm-start points. */
acc_status_t tune_db_prepare(acc_db_t *db, const tune_target_t *t);
acc_status_t tune_db_add_run(acc_db_t *db, const tune_target_t *t, const acc_tune_config_t *c,
                             double fidelity, double iteration_ms, const char *strategy,
                             double seconds, int64_t *id);
/* Up to max optima of similar keys, most similar first: the same key, the same model and
 * topology, the same model, the same topology. */
acc_status_t tune_db_warm(acc_db_t *db, const tune_target_t *t, acc_tune_config_t *out, size_t max,
                          size_t *n);
/* Runs of one key as report points; baselines (strategy "baseline") apart.  Taken. */
acc_status_t tune_db_points(acc_db_t *db, const char *model, const char *fingerprint,
                            const char *network, acc_tune_point_t **points, size_t *npoints,
                            acc_tune_point_t **baselines, size_t *nbaselines);

int tune_run(const tune_opts_t *o);
int tune_show(const tune_opts_t *o);
int tune_plot(const tune_opts_t *o);
int tune_export(const tune_opts_t *o);

#endif
