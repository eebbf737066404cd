/* Topologies, stored as their canonical YAML under their fingerprint. */
#include "db_internal.h"

#include <string.h>

typedef struct {
    const char *fp;
    const acc_topo_t *topo;
    const char *yaml;
} put_topo_t;

static acc_status_t put_topo(acc_db_t *db, void *ctx)
{
    const put_topo_t *p = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;

    /* Same fingerprint, same machine type: the newest description (name, source, YAML) wins,
     * and storing an identical one writes nothing. */
    if ((s = db_prepare(db,
                        "INSERT INTO topologies (fingerprint, name, source, format, nodes, "
                        "gpus_per_node, yaml) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                        "ON CONFLICT (fingerprint) DO UPDATE SET name = excluded.name, "
                        "source = excluded.source, format = excluded.format, "
                        "nodes = excluded.nodes, gpus_per_node = excluded.gpus_per_node, "
                        "yaml = excluded.yaml WHERE name IS NOT excluded.name OR "
                        "source IS NOT excluded.source OR format IS NOT excluded.format OR "
                        "yaml IS NOT excluded.yaml",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, p->fp);
    db_bind_text(st, 2, acc_topo_name(p->topo));
    db_bind_text(st, 3, acc_topo_source(p->topo) ? acc_topo_source(p->topo) : "");
    db_bind_text(st, 4, acc_topo_format_name(acc_topo_format(p->topo)));
    sqlite3_bind_int(st, 5, acc_topo_nodes(p->topo));
    sqlite3_bind_int(st, 6, acc_topo_gpus_per_node(p->topo));
    db_bind_text(st, 7, p->yaml);
    s = db_step_done(db, st, "storing the topology");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_topology(acc_db_t *db, const acc_topo_t *topo,
                                 char fp_out[ACC_SHA256_HEX_LEN + 1])
{
    char fp[ACC_SHA256_HEX_LEN + 1], what[64], sh[16];
    acc_buf_t yaml;
    put_topo_t p;
    acc_status_t s;

    acc_buf_init(&yaml);
    if ((s = acc_topo_fingerprint(topo, fp)) != ACC_OK ||
        (s = acc_topo_export_yaml(topo, &yaml)) != ACC_OK) {
        acc_error_prefix(s, "%s: storing a topology: ", db->path);
        goto out;
    }
    p.fp = fp;
    p.topo = topo;
    p.yaml = yaml.data;
    snprintf(what, sizeof(what), "storing topology %s", db_short(fp, sh));
    if ((s = db_txn(db, 1, what, put_topo, &p)) != ACC_OK)
        goto out;
    if (fp_out)
        memcpy(fp_out, fp, sizeof(fp));
out:
    acc_buf_free(&yaml);
    return s;
}

typedef struct {
    const char *fp;
    char *yaml;
    char source[4096];
    char format[32];
} get_topo_t;

static acc_status_t get_topo(acc_db_t *db, void *ctx)
{
    get_topo_t *g = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    acc_mem_free(g->yaml);
    g->yaml = NULL;
    if ((s = db_prepare(db, "SELECT yaml, source, format FROM topologies WHERE fingerprint = ?1",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->fp);
    r = db_step_row(db, st, "loading a topology");
    if (r == 0)
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: no topology with fingerprint %s; store it with "
                          "acc-compile --topo T --db %s",
                          db->path, g->fp, db->path);
    else if (r < 0)
        s = (acc_status_t)r;
    else if (!(g->yaml = acc_mem_strdup((const char *)sqlite3_column_text(st, 0)
                                        ? (const char *)sqlite3_column_text(st, 0)
                                        : "")))
        s = acc_error_set(ACC_ERR_NOMEM, "out of memory loading a topology");
    else if ((s = db_column_text(db, st, 1, g->source, sizeof(g->source), "topology source")) ==
             ACC_OK)
        s = db_column_text(db, st, 2, g->format, sizeof(g->format), "topology format");
    sqlite3_finalize(st);
    return s;
}

static acc_topo_format_t format_from_name(const char *name)
{
    int f;
    for (f = ACC_TOPO_FMT_UNKNOWN; f <= ACC_TOPO_FMT_LIVE; f++)
        if (strcmp(acc_topo_format_name((acc_topo_format_t)f), name) == 0)
            return (acc_topo_format_t)f;
    return ACC_TOPO_FMT_UNKNOWN;
}

acc_status_t acc_db_get_topology(acc_db_t *db, const char *fingerprint, acc_topo_t **out)
{
    get_topo_t g;
    char label[4200], fp[ACC_SHA256_HEX_LEN + 1];
    acc_topo_t *t = NULL;
    acc_status_t s;

    *out = NULL;
    if ((s = db_check_hash(db, fingerprint, "topology fingerprint")) != ACC_OK)
        return s;
    memset(&g, 0, sizeof(g));
    g.fp = fingerprint;
    if ((s = db_txn(db, 0, "loading a topology", get_topo, &g)) != ACC_OK)
        goto out;
    snprintf(label, sizeof(label), "%s: topology %.12s", db->path, fingerprint);
    if ((s = acc_topo_load_buffer(g.yaml, strlen(g.yaml), label, &t)) != ACC_OK) {
        acc_error_prefix(s, "stored topology unreadable (rebuild the database with acc-compile "
                            "--db): ");
        goto out;
    }
    /* The fingerprint is the key everything else hangs on: a text that no longer gives it was
     * altered, or written by an acc whose canonical form differed. */
    if ((s = acc_topo_fingerprint(t, fp)) != ACC_OK)
        goto out;
    if (strcmp(fp, fingerprint) != 0) {
        s = acc_error_set(ACC_ERR_PARSE,
                          "%s: the stored topology %s now has fingerprint %s; the file was "
                          "altered or written by another acc version: rebuild it with acc-compile "
                          "--db",
                          db->path, fingerprint, fp);
        goto out;
    }
    if ((s = acc_topo_set_source(t, g.source, format_from_name(g.format))) != ACC_OK)
        goto out;
    *out = t;
    t = NULL;
out:
    acc_topo_destroy(t);
    acc_mem_free(g.yaml);
    return s;
}

typedef struct {
    acc_db_topo_info_t *items;
    size_t n, cap;
} list_topo_t;

/* Keep the end of a long path, which says the most about where a file came from. */
static void display_source(const char *src, char *out, size_t cap)
{
    size_t n = strlen(src);
    if (n < cap)
        memcpy(out, src, n + 1);
    else
        snprintf(out, cap, "...%s", src + n - (cap - 4));
}

static acc_status_t list_topo(acc_db_t *db, void *ctx)
{
    list_topo_t *l = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    l->n = 0;
    if ((s = db_prepare(db,
                        "SELECT fingerprint, name, format, source, nodes, gpus_per_node "
                        "FROM topologies ORDER BY name, fingerprint",
                        &st)) != ACC_OK)
        return s;
    while ((r = db_step_row(db, st, "listing the topologies")) == 1) {
        acc_db_topo_info_t *i;
        void *p = l->items;
        const char *src = (const char *)sqlite3_column_text(st, 3);
        if (acc_array_reserve(&p, &l->cap, l->n + 1, sizeof(*i)) != ACC_OK) {
            s = acc_error_set(ACC_ERR_NOMEM, "out of memory listing topologies");
            break;
        }
        l->items = p;
        i = &l->items[l->n];
        memset(i, 0, sizeof(*i));
        if ((s = db_column_text(db, st, 0, i->fingerprint, sizeof(i->fingerprint),
                                "topology fingerprint")) != ACC_OK ||
            (s = db_column_text(db, st, 1, i->name, sizeof(i->name), "topology name")) != ACC_OK ||
            (s = db_column_text(db, st, 2, i->format, sizeof(i->format), "topology format")) !=
                ACC_OK)
            break;
        display_source(src ? src : "", i->source, sizeof(i->source));
        i->nodes = sqlite3_column_int(st, 4);
        i->gpus_per_node = sqlite3_column_int(st, 5);
        l->n++;
    }
    sqlite3_finalize(st);
    return s != ACC_OK ? s : r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_list_topologies(acc_db_t *db, acc_db_topo_info_t **out, size_t *count)
{
    list_topo_t l = {NULL, 0, 0};
    acc_status_t s = db_txn(db, 0, "listing the topologies", list_topo, &l);
    if (s != ACC_OK) {
        acc_mem_free(l.items);
        *out = NULL;
        *count = 0;
        return s;
    }
    *out = l.items;
    *count = l.n;
    return ACC_OK;
}
