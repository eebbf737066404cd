/*
 * Whether an image build is current: a digest of everything acc_db_build's result depends on
 * (the code that builds, the topology, the options, the times measured on the topology) is kept
 * per topology in the builds table, so that building again from the same inputs is answered by
 * one read (acc_db_build_current) instead of a sweep, and leaves the file's bytes as they were.
 */
#include "db_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The code of this acc: a digest of the file that holds it (libacc.so, or the program that
 * links acc statically), so that a changed cost model or generator, even at the same version,
 * never passes for the one that built the tables.  Computed once. */
static char code_digest[ACC_SHA256_HEX_LEN + 1];
static pthread_once_t code_once = PTHREAD_ONCE_INIT;

static void digest_code(void)
{
    Dl_info info;
    const char *file = "/proc/self/exe";
    acc_sha256_t *h = NULL;
    uint8_t d[ACC_SHA256_LEN], buf[1 << 16];
    size_t n;
    FILE *f;

    if (dladdr((void *)digest_code, &info) && info.dli_fname && strstr(info.dli_fname, ".so"))
        file = info.dli_fname;
    if (!(f = fopen(file, "rb")))
        return; /* no digest: no build is ever current */
    if (acc_sha256_create(&h) == ACC_OK) {
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
            acc_sha256_update(h, buf, n);
        if (!ferror(f) && acc_sha256_final(h, d) == ACC_OK)
            acc_hex_encode(d, sizeof(d), code_digest);
    }
    acc_sha256_destroy(h);
    fclose(f);
}

acc_status_t db_build_key(acc_db_t *db, const acc_topo_t *topo, const acc_db_build_opts_t *opts,
                          const char *fp, char key[ACC_SHA256_HEX_LEN + 1])
{
    const acc_select_build_opts_t *s = &opts->select;
    const acc_nccl_options_t *nc = &s->nccl;
    const acc_kbuild_opts_t *k = &opts->kernels;
    acc_select_measured_t *stored = NULL;
    const acc_select_measured_t *m = s->measured;
    size_t nm = s->nmeasured, i;
    acc_buf_t b;
    acc_status_t st;

    pthread_once(&code_once, digest_code);
    if (!code_digest[0])
        return acc_error_set(ACC_ERR_IO, "cannot read acc's own code to identify the build");
    if (!m && (st = acc_db_get_measurements(db, fp, s->dtype, &stored, &nm)) != ACC_OK)
        return st;
    if (!m)
        m = stored;
    acc_buf_init(&b);
    acc_buf_printf(&b, "acc_db_build inputs 1\nacc %s\ncode %s\ntopology\n", ACC_VERSION_STRING,
                   code_digest);
    if ((st = acc_topo_export_yaml(topo, &b)) != ACC_OK)
        goto out;
    acc_buf_puts(&b, "colls");
    for (i = 0; i < opts->ncolls; i++)
        acc_buf_printf(&b, " %s", acc_coll_name(opts->colls[i]));
    acc_buf_printf(&b, "\nselect %llu %llu %d %d %d nccl %d %d %d %d %d %.17g\nkernels",
                   (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes,
                   (int)s->dtype, s->max_lanes, s->exhaustive, nc->version, nc->collnet, nc->nvls,
                   nc->min_channels, nc->max_channels, nc->net_latency_us);
    for (i = 0; i < k->ntypes; i++)
        acc_buf_printf(&b, " %s", acc_dtype_name(k->types[i]));
    for (i = 0; i < k->nops; i++)
        acc_buf_printf(&b, " %s", acc_redop_name(k->ops[i]));
    for (i = 0; i < k->narchs; i++)
        acc_buf_printf(&b, " %s", k->archs[i]);
    acc_buf_puts(&b, "\nmeasured\n");
    for (i = 0; i < nm; i++)
        acc_buf_printf(&b, "%d %s %llu %.17g\n", (int)m[i].coll, m[i].plan_hash,
                       (unsigned long long)m[i].nbytes, m[i].us);
    if ((st = acc_buf_status(&b)) == ACC_OK)
        st = acc_sha256_hex(b.data, b.len, key);
out:
    acc_buf_free(&b);
    acc_mem_free(stored);
    return st;
}

typedef struct {
    const char *fp, *key;
    int same;
} key_t_;

static acc_status_t get_key(acc_db_t *db, void *ctx)
{
    key_t_ *k = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s =
        db_prepare(db, "SELECT inputs_hash FROM builds WHERE topo_fingerprint = ?1", &st);
    int r;

    if (s != ACC_OK)
        return s;
    db_bind_text(st, 1, k->fp);
    if ((r = db_step_row(db, st, "reading the build's inputs")) == 1)
        k->same = strcmp((const char *)sqlite3_column_text(st, 0), k->key) == 0;
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

static acc_status_t put_key(acc_db_t *db, void *ctx)
{
    const key_t_ *k = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s =
        db_prepare(db,
                   "INSERT INTO builds (topo_fingerprint, inputs_hash, acc_version) "
                   "VALUES (?1, ?2, ?3) ON CONFLICT (topo_fingerprint) DO UPDATE SET "
                   "inputs_hash = excluded.inputs_hash, acc_version = "
                   "excluded.acc_version WHERE inputs_hash IS NOT excluded.inputs_hash",
                   &st);
    if (s != ACC_OK)
        return s;
    db_bind_text(st, 1, k->fp);
    db_bind_text(st, 2, k->key);
    db_bind_text(st, 3, ACC_VERSION_STRING);
    s = db_step_done(db, st, "recording the build's inputs");
    sqlite3_finalize(st);
    return s;
}

acc_status_t db_build_key_put(acc_db_t *db, const char *fp, const char *key)
{
    key_t_ k = {fp, key, 0};
    return db_txn(db, 1, "recording the build's inputs", put_key, &k);
}

acc_status_t acc_db_build_current(acc_db_t *db, const acc_topo_t *topo,
                                  const acc_db_build_opts_t *opts, int *current)
{
    acc_db_build_opts_t defaults;
    char fp[ACC_SHA256_HEX_LEN + 1], key[ACC_SHA256_HEX_LEN + 1];
    key_t_ k = {fp, key, 0};
    acc_status_t st;

    *current = 0;
    if (!opts) {
        acc_db_build_opts_init(&defaults);
        opts = &defaults;
    }
    /* Sources written into a directory are an output of their own: never skipped. */
    if (opts->kernels.source_dir)
        return ACC_OK;
    if ((st = acc_topo_fingerprint(topo, fp)) != ACC_OK ||
        (st = db_build_key(db, topo, opts, fp, key)) != ACC_OK ||
        (st = db_txn(db, 0, "reading the build's inputs", get_key, &k)) != ACC_OK)
        return st;
    *current = k.same;
    return ACC_OK;
}
