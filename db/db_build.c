/*
 * The image build: a topology, the plans and selection table of every collective, and the
 * CUBINs of the plans the tables name, stored in one call.  Each step is a put of its own
 * (db_topo.c, db_plan.c, db_select.c, db_kernel.c), so that building again changes nothing; the
 * modules come from the compiler's kernel build (acc_kbuild_*), shared with acc-compile
 * --emit-cuda/--arch.
 */
#include "db_internal.h"

#include <string.h>

void acc_db_build_opts_init(acc_db_build_opts_t *opts)
{
    size_t n, i;
    const acc_coll_t *colls = acc_select_colls(&n);

    memset(opts, 0, sizeof(*opts));
    for (i = 0; i < n; i++)
        opts->colls[i] = colls[i];
    opts->ncolls = n;
    acc_select_build_opts_init(&opts->select);
    acc_kbuild_opts_init(&opts->kernels);
}

static int has_table(acc_coll_t c)
{
    size_t n, i;
    const acc_coll_t *colls = acc_select_colls(&n);
    for (i = 0; i < n && colls[i] != c; i++)
        ;
    return i < n;
}

acc_status_t acc_db_build_opts_check(const acc_db_build_opts_t *opts)
{
    size_t i, j;

    if (opts->ncolls == 0 || opts->ncolls > ACC_COLL_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "database build: %zu collectives given; name 1 to %d (colls, ncolls)",
                             opts->ncolls, ACC_COLL_COUNT);
    for (i = 0; i < opts->ncolls; i++) {
        acc_coll_t c = opts->colls[i];
        if (c < 0 || c >= ACC_COLL_COUNT)
            return acc_error_set(ACC_ERR_INVALID, "database build: colls[%zu] is %d, no collective",
                                 i, (int)c);
        if (!has_table(c))
            return acc_error_set(ACC_ERR_INVALID,
                                 "database build: acc makes no selection table for %s (neither "
                                 "a generator nor NCCL's model covers it); leave it out",
                                 acc_coll_name(c));
        for (j = 0; j < i; j++)
            if (opts->colls[j] == c)
                return acc_error_set(ACC_ERR_INVALID, "database build: %s is listed twice",
                                     acc_coll_name(c));
    }
    return acc_kbuild_opts_check(&opts->kernels);
}

/* Does acc_db_put_sweep store this plan of r?  By class only those a table names: acc's best
 * where NCCL keeps the size is reported, not stored, so that the database does not grow with
 * the job. */
static int stores(const acc_select_result_t *r, const acc_select_plan_t *sp)
{
    return !acc_select_by_class(r->nranks) || sp->hash[0];
}

static size_t stored_plans(const acc_select_result_t *r)
{
    size_t i, n = 0;
    for (i = 0; i < r->nplans; i++)
        n += stores(r, &r->plans[i]);
    return n;
}

acc_status_t acc_db_put_sweep(acc_db_t *db, const char *topo_fingerprint,
                              const acc_select_result_t *r)
{
    size_t i;
    acc_status_t st;

    /* A table filed under another machine's fingerprint would hand that machine's plans to
     * this one: refuse it rather than rename it. */
    if (strcmp(r->table->topo_fingerprint, topo_fingerprint) != 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: the %s selection table was built for topology %s, not for "
                             "%s, the one being stored; build it from that topology",
                             db->path, acc_coll_name(r->coll), r->table->topo_fingerprint,
                             topo_fingerprint);
    for (i = 0; i < r->nplans; i++) {
        const acc_select_plan_t *sp = &r->plans[i];
        char hash[ACC_SHA256_HEX_LEN + 1];
        if (!stores(r, sp))
            continue;
        /* By class, the class form alone: the explicit one is what the table was built
         * without. */
        if (!sp->cplan)
            st = acc_db_put_plan(db, sp->plan, NULL);
        else if ((st = acc_db_put_cplan(db, sp->cplan, NULL, hash)) == ACC_OK && sp->hash[0] &&
                 strcmp(hash, sp->hash) != 0)
            st = acc_error_set(ACC_ERR_INTERNAL,
                               "%s: %s class plan %s was stored as %s, not under the name its "
                               "table gives it",
                               db->path, sp->cplan->algo, sp->hash, hash);
        if (st != ACC_OK)
            return st;
    }
    if ((st = acc_db_put_selection(db, r->table)) != ACC_OK || !r->nccl)
        return st;
    return acc_db_put_nccl_choices(db, r->nccl);
}

/* The kernel rows of one module: one per architecture. */
typedef struct {
    acc_db_t *db;
    const acc_kbuild_opts_t *kopts;
    const char *plan_hash;
    const char *compiler;
    size_t stored;
} store_t;

static acc_status_t store_module(void *ctx, const acc_kmodule_t *m)
{
    store_t *s = ctx;
    acc_db_kernel_t row;
    size_t len = 0, a;
    const char *src = acc_kernel_source(m->kernel, &len);
    acc_status_t st;

    if (!s->kopts->narchs)
        return ACC_OK;
    memset(&row, 0, sizeof(row));
    snprintf(row.plan_hash, sizeof(row.plan_hash), "%s", s->plan_hash);
    snprintf(row.compiler_version, sizeof(row.compiler_version), "%s", s->compiler);
    row.dtype = m->dtype;
    row.redop = m->redop;
    if ((st = acc_sha256_hex(src, len, row.source_hash)) != ACC_OK)
        return st;
    /* Modules that share a source (a data-moving collective's half and bfloat16) get their rows
     * all the same, so that every lookup is one key. */
    for (a = 0; a < s->kopts->narchs; a++) {
        snprintf(row.arch, sizeof(row.arch), "%s", s->kopts->archs[a]);
        row.cubin = (uint8_t *)m->cubin[a]; /* borrowed from the cache; put only reads it */
        row.cubin_size = m->cubin_size[a];
        if ((st = acc_db_put_kernel(s->db, &row)) != ACC_OK)
            return st;
        s->stored++;
    }
    return ACC_OK;
}

/* Does a range of the table run plan `hash` on GPUs?  Only such plans are ever launched: the
 * cuda backend hands every other range to NCCL (a multi-node plan, one of more ranks than a
 * kernel's arguments carry), so that the CUBINs stored do not grow with the node count. */
static int runs_on_gpus(const acc_select_table_t *t, const char *hash)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->entries[i].use_nccl && (t->entries[i].backends & ACC_BACKENDS_CUDA) &&
            !strcmp(t->entries[i].plan_hash, hash))
            return 1;
    return 0;
}

/* The modules of the plans a sweep's table runs on GPUs; acc's best plans where NCCL keeps the
 * size, and those only the host backend can run, are never launched, so they get none. */
static acc_status_t store_kernels(acc_db_t *db, acc_kbuild_t *kb, const acc_kbuild_opts_t *kopts,
                                  const acc_select_result_t *r, size_t *stored)
{
    store_t s;
    size_t i;
    acc_status_t st = ACC_OK;

    memset(&s, 0, sizeof(s));
    s.db = db;
    s.kopts = kopts;
    s.compiler = acc_kbuild_compiler(kb);
    for (i = 0; i < r->nplans && st == ACC_OK; i++) {
        /* A class plan's quotient is no kernel's input; class plans are multi-node plans,
         * which GPUs leave to NCCL. */
        if (!r->plans[i].hash[0] || r->plans[i].cplan || !runs_on_gpus(r->table, r->plans[i].hash))
            continue;
        s.plan_hash = r->plans[i].hash;
        st = acc_kbuild_plan(kb, r->plans[i].plan, store_module, &s);
    }
    *stored += s.stored;
    return st;
}

/* One collective: its sweep, plans and table, then its kernels. */
static acc_status_t build_coll(acc_db_t *db, acc_select_builder_t *b, acc_kbuild_t *kb,
                               const acc_db_build_opts_t *opts, acc_coll_t coll,
                               acc_db_build_report_t *rep)
{
    acc_select_result_t *r = NULL;
    acc_db_build_table_t *t = &rep->tables[rep->ntables];
    acc_status_t st;

    if ((st = acc_select_build(b, coll, &r)) != ACC_OK ||
        (st = acc_db_put_sweep(db, rep->fingerprint, r)) != ACC_OK)
        goto out;
    t->coll = coll;
    t->ranges = r->table->n;
    t->plans = stored_plans(r);
    rep->ntables++;
    rep->plans += t->plans;
    if (kb)
        st = store_kernels(db, kb, &opts->kernels, r, &rep->cubins);
out:
    acc_select_result_destroy(r);
    return st;
}

static acc_status_t build(acc_db_t *db, const acc_topo_t *topo, const acc_db_build_opts_t *opts,
                          acc_db_build_report_t *rep)
{
    acc_select_builder_t *b = NULL;
    acc_select_build_opts_t sel;
    acc_select_measured_t *measured = NULL;
    acc_kbuild_t *kb = NULL;
    size_t i;
    acc_status_t st;

    /* Everything that can fail without the database is checked first: a build without NVRTC or
     * with an architecture it does not know must not leave a database that looks complete. */
    if ((st = acc_db_build_opts_check(opts)) != ACC_OK)
        return st;
    if ((opts->kernels.narchs || opts->kernels.source_dir) &&
        (st = acc_kbuild_create(&opts->kernels, &kb)) != ACC_OK)
        return st;
    if ((st = acc_db_put_topology(db, topo, rep->fingerprint)) != ACC_OK)
        goto out;
    /* The times measured on this machine type win over the model's, unless the caller brought
     * its own. */
    sel = opts->select;
    if (!sel.measured && (st = acc_db_get_measurements(db, rep->fingerprint, sel.dtype, &measured,
                                                       &sel.nmeasured)) != ACC_OK)
        goto out;
    if (measured)
        sel.measured = measured;
    rep->measured = sel.measured ? sel.nmeasured : 0;
    if ((st = acc_select_builder_create(topo, &sel, &b)) != ACC_OK)
        goto out;
    for (i = 0; i < opts->ncolls && st == ACC_OK; i++)
        st = build_coll(db, b, kb, opts, opts->colls[i], rep);
    if (st == ACC_OK && kb) {
        acc_kbuild_stats(kb, &rep->kernels);
        rep->cached = rep->cubins - rep->kernels.built;
        snprintf(rep->compiler, sizeof(rep->compiler), "%s", acc_kbuild_compiler(kb));
    }
out:
    acc_select_builder_destroy(b);
    acc_kbuild_destroy(kb);
    acc_mem_free(measured);
    return st;
}

acc_status_t acc_db_build(acc_db_t *db, const acc_topo_t *topo, const acc_db_build_opts_t *opts,
                          acc_db_build_report_t *report)
{
    acc_db_build_opts_t defaults;
    acc_db_build_report_t rep;
    double t0 = acc_now_s();
    acc_status_t st;

    if (!opts) {
        acc_db_build_opts_init(&defaults);
        opts = &defaults;
    }
    memset(&rep, 0, sizeof(rep));
    st = build(db, topo, opts, &rep);
    /* Recorded last, once everything is stored: a build that failed half way is never current. */
    if (st == ACC_OK) {
        char key[ACC_SHA256_HEX_LEN + 1];
        if ((st = db_build_key(db, topo, opts, rep.fingerprint, key)) == ACC_OK)
            st = db_build_key_put(db, rep.fingerprint, key);
    }
    rep.seconds = acc_now_s() - t0;
    if (report)
        *report = rep;
    return st;
}
