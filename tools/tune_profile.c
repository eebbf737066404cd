/*
 * tune_profile.c - model profiles in acc-tune: where each stored one came from (`acc-tune show`'s
 * first table, and the recordings jobs made), and `acc-tune profile export NAME`, which writes a
 * profile (a job's recording, typically) as a file in the shipped profiles' format, for
 * `--model FILE` or the shipped set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_cli.h"

int tune_show_profiles(const char *model, acc_db_t *db, acc_buf_t *b)
{
    acc_db_profile_t *profs = NULL;
    acc_db_recorded_t *recs = NULL;
    size_t nprofs = 0, nrecs = 0, i, shown = 0;

    if (acc_db_list_profiles(db, &profs, &nprofs) != ACC_OK ||
        acc_db_list_recorded(db, model, &recs, &nrecs) != ACC_OK) {
        acc_mem_free(profs);
        return tune_fail(EXIT_INPUT);
    }
    for (i = 0; i < nprofs; i++)
        shown += !model || strcmp(profs[i].name, model) == 0;
    acc_buf_printf(b, "profiles (%zu)\n%-16s %12s  %s\n", shown, "model", "parameters", "from");
    for (i = 0; i < nprofs; i++)
        if (!model || strcmp(profs[i].name, model) == 0)
            acc_buf_printf(
                b, "%-16s %12llu  %s\n", profs[i].name, (unsigned long long)profs[i].param_count,
                profs[i].origin[0] ? profs[i].origin : "not said (stored before schema version 8)");
    acc_buf_printf(b, "\nrecorded by jobs (%zu)\n%-16s %-6s %12s  %s\n", nrecs, "model", "gpu",
                   "parameters", "recorded");
    for (i = 0; i < nrecs; i++) {
        acc_profile_origin_t origin;
        char text[512], gpu[16] = "-";
        memset(&origin, 0, sizeof(origin));
        origin.kind = ACC_PROFILE_RECORDED;
        origin.recorded = recs[i];
        acc_profile_origin_text(&origin, text, sizeof(text));
        if (recs[i].sm)
            snprintf(gpu, sizeof(gpu), "sm_%d", recs[i].sm);
        /* "recorded on ..." reads "on ..." under the column's heading. */
        acc_buf_printf(b, "%-16s %-6s %12llu  %s\n", recs[i].name, gpu,
                       (unsigned long long)recs[i].param_count,
                       strncmp(text, "recorded ", 9) == 0 ? text + 9 : text);
    }
    acc_buf_puts(b, "\n");
    acc_mem_free(profs);
    acc_mem_free(recs);
    return EXIT_OK;
}

/* The compute capability the profile is wanted for: --topo's GPU; without --topo, that of the
 * one recording of the name when there is one (several: the user must choose), else 0. */
static int wanted_sm(const tune_opts_t *o, acc_db_t *db, int *sm)
{
    acc_db_recorded_t *recs = NULL;
    acc_topo_t *topo = NULL;
    size_t n = 0, i;
    acc_buf_t b;
    int rc = EXIT_OK;

    *sm = 0;
    if (o->topo) {
        if (acc_topo_load(o->topo, &topo) != ACC_OK)
            return tune_fail(EXIT_INPUT);
        *sm = acc_profile_topo_sm(topo);
        acc_topo_destroy(topo);
        return EXIT_OK;
    }
    if (strchr(o->profile, '/') || strstr(o->profile, ".yaml"))
        return EXIT_OK;
    if (acc_db_list_recorded(db, o->profile, &recs, &n) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if (n == 1)
        *sm = recs[0].sm;
    if (n > 1) {
        acc_buf_init(&b);
        for (i = 0; i < n; i++)
            acc_buf_printf(&b, "%ssm_%d", i ? ", " : "", recs[i].sm);
        acc_error_set(ACC_ERR_INVALID,
                      "%s was recorded for %s: pass --topo T to say for which GPU's (T as "
                      "acc-tune --topo takes it)",
                      o->profile, b.data ? b.data : "");
        acc_buf_free(&b);
        rc = tune_fail(EXIT_USAGE);
    }
    acc_mem_free(recs);
    return rc;
}

int tune_profile_export(const tune_opts_t *o)
{
    acc_db_t *db = NULL;
    acc_profile_t *p = NULL;
    acc_profile_origin_t origin;
    char text[512];
    acc_buf_t b;
    int sm = 0, rc;

    acc_buf_init(&b);
    if (acc_db_open(o->db, ACC_DB_READONLY, &db) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if ((rc = wanted_sm(o, db, &sm)) != EXIT_OK)
        goto out;
    if (acc_profile_find(o->profile, sm, db, &p, &origin) != ACC_OK ||
        acc_profile_dump_yaml(p, &b) != ACC_OK) {
        rc = tune_fail(EXIT_INPUT);
        goto out;
    }
    if (acc_buf_status(&b) != ACC_OK) {
        acc_error_set(ACC_ERR_NOMEM, "out of memory writing profile %s", o->profile);
        rc = tune_fail(EXIT_OUTPUT);
        goto out;
    }
    acc_profile_origin_text(&origin, text, sizeof(text));
    if (!o->output) {
        if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
            acc_error_set(ACC_ERR_IO, "could not write profile %s to standard output", p->name);
            rc = tune_fail(EXIT_OUTPUT);
        }
    } else if (acc_write_file(o->output, b.data, b.len) != ACC_OK) {
        rc = tune_fail(EXIT_OUTPUT);
    } else if (!o->quiet) {
        fprintf(stderr, "acc-tune: wrote profile %s (%zu tensors; %s) to %s\n", p->name,
                p->ntensors, text, o->output);
    }
out:
    acc_buf_free(&b);
    acc_profile_destroy(p);
    acc_db_close(db);
    return rc;
}
