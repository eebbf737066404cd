/* acc_db_summary: what a database holds, for acc-info. */
#include "db_internal.h"

#include <string.h>

void db_format_bytes(uint64_t bytes, char *out, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    /* Only exact multiples get a larger unit: range bounds must read back exactly. */
    while (u < 6 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, cap, "%llu %s", (unsigned long long)bytes, units[u]);
}

/* A column's text, "" for NULL (which the schema forbids, but memory pressure can give). */
static const char *text(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? s : "";
}

typedef struct {
    acc_buf_t *out;
    size_t start; /* the buffer's length before this summary, to start again on a retry */
} summary_t;

static acc_status_t count(acc_db_t *db, const char *table, int64_t *n)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
    return db_query_int(db, sql, n);
}

/* One line per collective: how many ranges, which sizes they cover, which choices. */
/* One collective's line; where GPUs run fewer of acc's ranges than the host backend (plans the
 * cuda backend gives NCCL, schema 10's backends), it says how many they run. */
static void flush_coll(acc_buf_t *b, const char *coll, size_t n, uint64_t lo, uint64_t hi,
                       size_t nccl, size_t gpu_acc)
{
    char a[32], z[32];
    db_format_bytes(lo, a, sizeof(a));
    if (hi == UINT64_MAX)
        snprintf(z, sizeof(z), "inf");
    else
        db_format_bytes(hi, z, sizeof(z)); /* the last size covered, so the range closes with ] */
    acc_buf_printf(b, "    %-15s %zu range%s over [%s, %s%c: acc %zu, NCCL %zu", coll, n,
                   n == 1 ? "" : "s", a, z, hi == UINT64_MAX ? ')' : ']', n - nccl, nccl);
    if (gpu_acc != n - nccl)
        acc_buf_printf(b, "; on GPUs acc %zu (the cuda backend gives NCCL the rest)", gpu_acc);
    acc_buf_puts(b, "\n");
}

static acc_status_t summarize_selections(acc_db_t *db, acc_buf_t *b, const char *fp)
{
    sqlite3_stmt *st = NULL;
    char coll[32] = "";
    size_t n = 0, nccl = 0, gpu_acc = 0;
    uint64_t lo = 0, hi = 0;
    unsigned set;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT s.coll, e.min_bytes, e.max_bytes, e.use_nccl, e.backends "
                        "FROM selections s "
                        "JOIN selection_entries e ON e.selection_id = s.id "
                        "WHERE s.topo_fingerprint = ?1 ORDER BY s.coll, e.min_bytes",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, fp);
    while ((r = db_step_row(db, st, "summarizing selections")) == 1) {
        const char *c = text(st, 0);
        uint64_t mn = (uint64_t)sqlite3_column_int64(st, 1);
        uint64_t mx = (uint64_t)sqlite3_column_int64(st, 2);
        if (strcmp(c, coll) != 0) {
            if (n)
                flush_coll(b, coll, n, lo, hi, nccl, gpu_acc);
            snprintf(coll, sizeof(coll), "%s", c);
            n = nccl = gpu_acc = 0;
            lo = mn;
            hi = mx;
        }
        lo = mn < lo ? mn : lo;
        hi = mx > hi ? mx : hi;
        nccl += sqlite3_column_int(st, 3) != 0;
        gpu_acc += sqlite3_column_int(st, 3) == 0 &&
                   acc_backends_parse(text(st, 4), &set) == ACC_OK && (set & ACC_BACKENDS_CUDA);
        n++;
    }
    if (n)
        flush_coll(b, coll, n, lo, hi, nccl, gpu_acc);
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

/* One line per collective with NCCL's choice per size, what the tuner plugin serves:
 * "    allreduce       NCCL runs from 1 KiB Ring/LL/1ch, from 64 KiB Ring/LL/2ch, ...". */
static acc_status_t summarize_nccl_choices(acc_db_t *db, acc_buf_t *b, const char *fp)
{
    sqlite3_stmt *st = NULL;
    char coll[32] = "";
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT coll, min_bytes, algo, proto, channels FROM nccl_choices "
                        "WHERE topo_fingerprint = ?1 ORDER BY coll, min_bytes",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, fp);
    while ((r = db_step_row(db, st, "summarizing NCCL's choices")) == 1) {
        const char *c = text(st, 0);
        char from[32];
        int first = strcmp(c, coll) != 0;
        db_format_bytes(db_u64_from_sql(sqlite3_column_int64(st, 1)), from, sizeof(from));
        if (first)
            acc_buf_printf(b, "%s    %-15s NCCL runs", coll[0] ? "\n" : "", c);
        acc_buf_printf(b, "%s from %s %s/%s/%dch", first ? "" : ",", from, text(st, 2), text(st, 3),
                       sqlite3_column_int(st, 4));
        snprintf(coll, sizeof(coll), "%s", c);
    }
    if (coll[0])
        acc_buf_puts(b, "\n");
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

static acc_status_t summarize_topologies(acc_db_t *db, acc_buf_t *b)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int64_t n;
    int r;

    if ((s = count(db, "topologies", &n)) != ACC_OK ||
        (s = db_prepare(db,
                        "SELECT fingerprint, name, nodes, gpus_per_node, format, source "
                        "FROM topologies ORDER BY name, fingerprint",
                        &st)) != ACC_OK)
        return s;
    acc_buf_printf(b, "topologies: %lld\n", (long long)n);
    while ((r = db_step_row(db, st, "summarizing topologies")) == 1) {
        const char *fp = text(st, 0);
        const char *name = text(st, 1);
        int nodes = sqlite3_column_int(st, 2), gpus = sqlite3_column_int(st, 3);
        acc_buf_printf(b, "  %s (%.12s): %d node%s x %d GPU%s, from %s %s\n",
                       name[0] ? name : "(unnamed)", fp, nodes, nodes == 1 ? "" : "s", gpus,
                       gpus == 1 ? "" : "s", text(st, 4), text(st, 5));
        if ((s = summarize_selections(db, b, fp)) != ACC_OK ||
            (s = summarize_nccl_choices(db, b, fp)) != ACC_OK)
            break;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

static acc_status_t summarize_optima(acc_db_t *db, acc_buf_t *b)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT o.model, coalesce(t.name, ''), o.topo_fingerprint, o.network, "
                        "o.fusion_bytes, o.streams, o.algo, o.params, o.score, "
                        "coalesce(o.run_id, 0), o.method FROM optima o LEFT JOIN topologies t "
                        "ON t.fingerprint = o.topo_fingerprint ORDER BY 1, 2, 3, 4, 11",
                        &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "summarizing optima")) == 1) {
        char fusion[32];
        const char *net = text(st, 3);
        const char *params = text(st, 7);
        db_format_bytes((uint64_t)sqlite3_column_int64(st, 4), fusion, sizeof(fusion));
        acc_buf_printf(b, "  %s on %s (%.12s)%s%s, %s: fusion %s, %d stream%s, %s%s%s, score %g",
                       text(st, 0), text(st, 1), text(st, 2), net[0] ? " over " : "", net,
                       text(st, 10), fusion, sqlite3_column_int(st, 5),
                       sqlite3_column_int(st, 5) == 1 ? "" : "s", text(st, 6), params[0] ? " " : "",
                       params, sqlite3_column_double(st, 8));
        if (sqlite3_column_int64(st, 9))
            acc_buf_printf(b, " (run %lld)", (long long)sqlite3_column_int64(st, 9));
        acc_buf_puts(b, "\n");
    }
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

/* "kernels: 30 (sm_80 15, sm_90 15)": what an image built for which GPUs. */
static acc_status_t summarize_kernels(acc_db_t *db, acc_buf_t *b)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int64_t total = 0;
    acc_buf_t per;
    int r;

    /* By compute capability: sm_100 after sm_90 ("90a" casts to 90). */
    if ((s = db_prepare(db,
                        "SELECT arch, count(*) FROM kernels GROUP BY arch "
                        "ORDER BY CAST(substr(arch, 4) AS INTEGER), arch",
                        &st)) != ACC_OK)
        return s;
    acc_buf_init(&per);
    while ((r = db_step_row(db, st, "summarizing kernels")) == 1) {
        int64_t n = sqlite3_column_int64(st, 1);
        acc_buf_printf(&per, "%s%s %lld", total ? ", " : "", text(st, 0), (long long)n);
        total += n;
    }
    sqlite3_finalize(st);
    if (r < 0) {
        s = (acc_status_t)r;
    } else if (acc_buf_status(&per) != ACC_OK) {
        s = acc_error_set(ACC_ERR_NOMEM, "out of memory summarizing %s", db->path);
    } else {
        acc_buf_printf(b, "kernels: %lld", (long long)total);
        if (total)
            acc_buf_printf(b, " (%s)", per.data);
        acc_buf_puts(b, "\n");
    }
    acc_buf_free(&per);
    return s;
}

static acc_status_t summarize(acc_db_t *db, void *ctx)
{
    summary_t *sm = ctx;
    acc_buf_t *b = sm->out;
    int64_t plans, by_class = 0, profiles, recorded, networks, runs, optima, measured;
    acc_status_t s;

    b->len = sm->start;
    if (b->data)
        b->data[b->len] = '\0';
    acc_buf_printf(b, "database %s: acc schema version %d\n", db->path, db->version);
    if ((s = summarize_topologies(db, b)) != ACC_OK || (s = count(db, "plans", &plans)) != ACC_OK ||
        /* Plans stored in class form alone (tables built by class, schema 11 on) have no row
         * in plans. */
        (db->version >= 11 && (s = db_query_int(db,
                                                "SELECT count(*) FROM plan_heads WHERE hash NOT IN "
                                                "(SELECT hash FROM plans)",
                                                &by_class)) != ACC_OK) ||
        (s = count(db, "model_profiles", &profiles)) != ACC_OK ||
        (s = count(db, "recorded_profiles", &recorded)) != ACC_OK ||
        (s = count(db, "networks", &networks)) != ACC_OK ||
        (s = count(db, "tuning_runs", &runs)) != ACC_OK ||
        (s = count(db, "optima", &optima)) != ACC_OK ||
        (s = count(db, "measurements", &measured)) != ACC_OK)
        return s;
    acc_buf_printf(b, "plans: %lld, ", (long long)(plans + by_class));
    if (by_class)
        acc_buf_printf(b, "%lld of them in class form alone, ", (long long)by_class);
    if ((s = summarize_kernels(db, b)) != ACC_OK)
        return s;
    acc_buf_printf(b, "measured times: %lld\n", (long long)measured);
    acc_buf_printf(b,
                   "model profiles: %lld, recorded by jobs: %lld, networks: %lld, tuning runs: "
                   "%lld\n",
                   (long long)profiles, (long long)recorded, (long long)networks, (long long)runs);
    acc_buf_printf(b, "optima: %lld\n", (long long)optima);
    if ((s = summarize_optima(db, b)) != ACC_OK)
        return s;
    return acc_buf_status(b) == ACC_OK
               ? ACC_OK
               : acc_error_set(ACC_ERR_NOMEM, "out of memory summarizing %s", db->path);
}

acc_status_t acc_db_summary(acc_db_t *db, acc_buf_t *out)
{
    summary_t sm = {out, out->len};
    return db_txn(db, 0, "summarizing the database", summarize, &sm);
}
