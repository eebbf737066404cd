/*
 * The configuration a job starts with.  Rank 0 decides, field by field: the options' whole
 * configuration, else the settings table (ACC_FUSION_BYTES, ACC_STREAMS, ACC_COMPRESSION) over
 * the stored optimum of the job's key (measured before simulated) over acc's default; then it
 * broadcasts the decision and every rank applies the same one.  Looking the optimum up never
 * fails a job: no topology, no database or no optimum means the default, said once at info
 * level.
 */
#include "fusion_internal.h"

#include <string.h>

/* acc's fusion when nothing else is known: DDP's bucket size, which a job would get anyway
 * (reducer.hpp kDefaultBucketBytesCap), one stream, no compression. */
#define DEFAULT_FUSION (25ull << 20)

static const char *const source_names[ACC_FUSION_SOURCE_COUNT] = {
    "default", "options", "settings", "simulated optimum", "measured optimum", "online"};

const char *acc_fusion_source_name(acc_fusion_source_t s)
{
    return (unsigned)s < ACC_FUSION_SOURCE_COUNT ? source_names[s] : "?";
}

const char *fu_db_path(const acc_fusion_t *f)
{
    return f->db ? f->db : comm_db_path(&f->comm->opts);
}

/* The key's model for a name or a profile file: a file's profile name, a name as it is. */
static acc_status_t model_key(const char *model, char *out, size_t n)
{
    acc_profile_t *p = NULL;
    acc_status_t st;
    if (!strchr(model, '/') && !strstr(model, ".yaml")) {
        snprintf(out, n, "%s", model);
        return ACC_OK;
    }
    if ((st = acc_profile_load_file(model, &p)) == ACC_OK)
        snprintf(out, n, "%s", p->name);
    acc_profile_destroy(p);
    return st;
}

/* The gradient list's own name: "grads-" and 16 hex digits of the SHA-256 of its types and
 * sizes, so that the same model registered again finds its optimum without being named.  The
 * list is counts/dts, or with counts NULL the registered gradients. */
static acc_status_t list_name(const acc_fusion_t *f, const uint64_t *counts, const acc_dtype_t *dts,
                              size_t n, char *out, size_t size)
{
    char hex[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t b;
    acc_status_t st;
    size_t i;

    acc_buf_init(&b);
    if (!counts)
        n = f->ngrads;
    for (i = 0; i < n; i++)
        acc_buf_printf(&b, "%s %llu\n", acc_dtype_name(counts ? dts[i] : f->grads[i].dt),
                       (unsigned long long)(counts ? counts[i] : f->grads[i].count));
    if ((st = acc_buf_status(&b)) == ACC_OK)
        st = acc_sha256_hex(b.data ? b.data : "", b.len, hex);
    acc_buf_free(&b);
    if (st == ACC_OK)
        snprintf(out, size, "grads-%.16s", hex);
    return st;
}

acc_status_t fu_model_name(const acc_fusion_t *f, const uint64_t *counts, const acc_dtype_t *dts,
                           size_t n, char *out, size_t size)
{
    const char *model = f->model ? f->model : acc_setting_str(ACC_SETTING_MODEL);
    if (model[0])
        return model_key(model, out, size);
    return list_name(f, counts, dts, n, out, size);
}

/* The key of `model` on base (borrowed) with network applied; *topo (optional) receives the
 * topology of the key.  A named network is looked up in the database at db_path. */
static acc_status_t key_of(const char *model, const acc_topo_t *base, const char *network,
                           const char *db_path, acc_tune_key_t *key, acc_topo_t **topo)
{
    acc_db_t *db = NULL;
    acc_topo_t *t = NULL;
    char name[ACC_DB_NAME_MAX];
    acc_status_t st;

    if ((st = model_key(model, name, sizeof(name))) != ACC_OK)
        return st;
    if (network && !strchr(network, '=') && db_path)
        acc_db_open(db_path, ACC_DB_READONLY, &db); /* without it the name is not found */
    st = acc_tune_network_apply(base, network, db, &t, key);
    acc_db_close(db);
    if (st != ACC_OK)
        return st;
    snprintf(key->model, sizeof(key->model), "%s", name);
    if (topo)
        *topo = t;
    else
        acc_topo_destroy(t);
    return ACC_OK;
}

/* The stored optimum of key in the database at path; ACC_NO_DATA when there is none. */
static acc_status_t stored(const char *path, const acc_tune_key_t *key, acc_tune_optimum_t *opt)
{
    acc_db_t *db = NULL;
    acc_status_t st;
    if (!path)
        return acc_error_set(ACC_NO_DATA, "no database (ACC_DB)");
    if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK)
        return ACC_NO_DATA; /* the message names the file and what is wrong with it */
    st = acc_tune_optimum_get(db, key, opt);
    acc_db_close(db);
    return st;
}

/* Does the database or acc know `model` (a key's model name): a shipped profile, a profile the
 * database stores, or the model of one of its optima?  A name nobody knows is a misspelling,
 * not a model nothing was tuned for yet. */
static int model_known(acc_db_t *db, const char *model)
{
    acc_profile_t *p = NULL;
    acc_db_optimum_t *optima = NULL;
    char *yaml = NULL;
    size_t n = 0, i;
    int known = 0;

    if (acc_profile_load_builtin(model, &p) == ACC_OK ||
        acc_db_get_profile(db, model, &yaml, NULL) == ACC_OK)
        known = 1;
    acc_profile_destroy(p);
    acc_mem_free(yaml);
    if (!known && acc_db_list_optima(db, &optima, &n) == ACC_OK)
        for (i = 0; i < n && !known; i++)
            known = strcmp(optima[i].model, model) == 0;
    acc_mem_free(optima);
    acc_error_clear();
    return known;
}

static acc_status_t unknown_model(const char *model, const char *path)
{
    char **names = NULL;
    size_t n = 0, i;
    acc_buf_t list;
    acc_status_t st;

    acc_buf_init(&list);
    if (acc_profile_builtin_list(&names, &n) == ACC_OK)
        for (i = 0; i < n; i++)
            acc_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
    acc_strv_free(names, n);
    st = acc_error_set(ACC_ERR_NOT_FOUND,
                       "model '%s' is neither a shipped profile (%s) nor a model %s knows; "
                       "check the name, or give a profile file",
                       model, list.data ? list.data : "none found", path);
    acc_buf_free(&list);
    return st;
}

acc_status_t acc_fusion_stored(const char *model, const char *topo, const char *network,
                               const char *db_path, acc_tune_optimum_t *out)
{
    acc_topo_t *base = NULL;
    acc_db_t *db = NULL;
    acc_tune_key_t key;
    acc_status_t st;

    if (!model || !topo || !out)
        return acc_error_set(ACC_ERR_INVALID, "acc_fusion_stored: model, topo and out are needed");
    memset(out, 0, sizeof(*out));
    /* Unlike a job's warm start, which carries on without them, a question about the stored
     * settings is answered from a database that can be read, or fails saying why. */
    if ((!db_path && (st = rt_db_locate(NULL, &db_path)) != ACC_OK) ||
        (st = acc_db_open(db_path, ACC_DB_READONLY, &db)) != ACC_OK)
        return st;
    if ((st = acc_topo_load(topo, &base)) == ACC_OK &&
        (st = key_of(model, base, network, db_path, &key, NULL)) == ACC_OK) {
        st = acc_tune_optimum_get(db, &key, out);
        if (st == ACC_NO_DATA && !model_known(db, key.model))
            st = unknown_model(key.model, db_path);
    }
    acc_topo_destroy(base);
    acc_db_close(db);
    return st;
}

acc_status_t fu_engine_key(acc_fusion_t *f, acc_tune_key_t *key, acc_topo_t **topo)
{
    const char *model = f->model ? f->model : acc_setting_str(ACC_SETTING_MODEL);
    const char *net = f->network ? f->network : acc_setting_str(ACC_SETTING_NETWORK);
    char name[ACC_DB_NAME_MAX];
    acc_status_t st;

    memset(key, 0, sizeof(*key));
    if (!f->comm->topo)
        return acc_error_set(ACC_NO_DATA, "the communicator has no topology (%s)",
                             acc_comm_fallback_reason(f->comm));
    if (!model[0]) {
        if (!f->ngrads)
            return acc_error_set(ACC_NO_DATA,
                                 "no model named (ACC_MODEL) and no gradients registered");
        if ((st = list_name(f, NULL, NULL, 0, name, sizeof(name))) != ACC_OK)
            return st;
        model = name;
    }
    return key_of(model, f->comm->topo, net[0] ? net : NULL, fu_db_path(f), key, topo);
}

/* Append the current message to the errors so far ("; " between them). */
static void add_error(acc_buf_t *errors)
{
    acc_buf_printf(errors, "%s%s", errors->len ? "; " : "", acc_error_message());
}

/* ACC_FUSION_BYTES, ACC_STREAMS and ACC_COMPRESSION over c; *any when one of them is set.
 * ACC_ERR_INVALID naming every one that is not a value (then c is as it was). */
static acc_status_t settings_over(acc_tune_config_t *c, int *any)
{
    const char *comp = acc_setting_str(ACC_SETTING_COMPRESSION);
    acc_tune_config_t over = *c;
    acc_buf_t errors;
    uint64_t bytes = 0;
    int64_t streams = 0;
    acc_status_t st = ACC_OK;

    *any = 0;
    acc_buf_init(&errors);
    if (acc_setting_size(ACC_SETTING_FUSION_BYTES, &bytes) != ACC_OK)
        add_error(&errors);
    if (acc_setting_int(ACC_SETTING_STREAMS, &streams) != ACC_OK) {
        add_error(&errors);
    } else if (streams < 0 || streams > ACC_TUNE_MAX_STREAMS) {
        acc_error_set(ACC_ERR_INVALID,
                      "ACC_STREAMS=%lld is not 0 (the stored optimum) or a stream count from 1 "
                      "to 16",
                      (long long)streams);
        add_error(&errors);
    }
    if (!acc_str_ieq(comp, "auto") && acc_compress_parse(comp, &over.compress) != ACC_OK) {
        acc_error_set(ACC_ERR_INVALID, "ACC_COMPRESSION='%s' is not auto, none, fp16 or bf16",
                      comp);
        add_error(&errors);
    }
    if (errors.len) {
        st = acc_error_set(ACC_ERR_INVALID, "%s", errors.data);
    } else {
        if (bytes)
            over.fusion_bytes = bytes;
        if (streams > 0)
            over.streams = (int)streams;
        *any = bytes || streams > 0 || !acc_str_ieq(comp, "auto");
        *c = over;
    }
    acc_buf_free(&errors);
    return st;
}

/* Rank 0's decision for the first iteration. */
static acc_status_t decide(acc_fusion_t *f, acc_tune_config_t *c, acc_fusion_source_t *src)
{
    acc_tune_optimum_t opt;
    acc_status_t st;
    int any;

    if (f->opts.config) {
        *c = *f->opts.config;
        *src = ACC_FUSION_FROM_OPTIONS;
        return acc_tune_config_check(c);
    }
    acc_tune_config_acc(c, DEFAULT_FUSION, 1, ACC_TUNE_ALGO_AUTO);
    *src = ACC_FUSION_FROM_DEFAULT;
    if ((st = fu_engine_key(f, &f->key, NULL)) == ACC_OK &&
        (st = stored(fu_db_path(f), &f->key, &opt)) == ACC_OK) {
        *c = opt.config;
        *src = opt.measured ? ACC_FUSION_FROM_MEASURED : ACC_FUSION_FROM_SIMULATED;
    }
    if (st != ACC_OK)
        ACC_INFO(RUNTIME, "fusion engine: no stored optimum to start from (%s)",
                 acc_error_message());
    /* An invalid setting is an error naming it, but the job trains on: the engine starts as if
     * none of its settings were set. */
    if (settings_over(c, &any) != ACC_OK)
        ACC_ERROR(RUNTIME, "fusion engine: %s; its settings are ignored, the %s applies",
                  acc_error_message(), acc_fusion_source_name(*src));
    if (any)
        *src = ACC_FUSION_FROM_SETTINGS;
    return acc_tune_config_check(c);
}

typedef struct {
    int32_t status, source, tuning;
    acc_tune_config_t cfg;
    acc_tune_key_t key;
    char msg[256];
} decision_t;

acc_status_t fu_share_config(acc_fusion_t *f, acc_status_t st, acc_tune_config_t *cfg,
                             int32_t *extra)
{
    decision_t d;
    acc_status_t bst;

    memset(&d, 0, sizeof(d));
    if (f->rank == 0) {
        d.status = st;
        d.source = (int32_t)f->source;
        d.tuning = *extra;
        d.cfg = *cfg;
        d.key = f->key;
        if (st != ACC_OK)
            snprintf(d.msg, sizeof(d.msg), "%s", acc_error_message());
    }
    /* The same program on every rank: the struct travels as its bytes, as int32 words. */
    _Static_assert(sizeof(decision_t) % 4 == 0, "a decision is whole int32 words");
    if ((bst = acc_broadcast(&d, &d, sizeof(d) / 4, ACC_DT_I32, 0, f->ctl, NULL)) != ACC_OK)
        return acc_error_prefix(bst,
                                "fusion engine, rank %d: sharing rank 0's decision: ", f->rank);
    if (d.status != ACC_OK)
        return acc_error_set((acc_status_t)d.status, "fusion engine%s: %s",
                             f->rank ? " (rank 0's decision)" : "", d.msg);
    *cfg = d.cfg;
    *extra = d.tuning;
    f->source = (acc_fusion_source_t)d.source;
    f->key = d.key;
    return ACC_OK;
}

acc_status_t fu_apply(acc_fusion_t *f, const acc_tune_config_t *cfg, acc_fusion_source_t src)
{
    acc_tune_config_t c = *cfg;
    acc_status_t st;

    if ((st = acc_tune_config_check(&c)) != ACC_OK)
        return st;
    /* Buckets go round robin (every rank must pick the same stream without asking) and the
     * communicator picks acc's plan or the fallback per size itself. */
    c.assign = ACC_STREAMS_ROUND_ROBIN;
    c.algo = ACC_TUNE_ALGO_AUTO;
    /* Getting the conversions ready can fail on one rank alone (a GPU's): all hear of it. */
    if (c.compress != ACC_COMPRESS_NONE &&
        (st = comm_agree(f->ctl, f->mem->prepare(f), "preparing compression")) != ACC_OK)
        return st;
    if ((st = fu_streams_grow(f, c.streams)) != ACC_OK)
        return st;
    f->cfg = c;
    f->source = src;
    f->directed = !f->external && c.policy == ACC_FUSION_ACC && c.cycle_ms > 0;
    f->negotiated =
        !f->external && (c.policy == ACC_FUSION_HOROVOD || c.policy == ACC_FUSION_NEGOTIATE);
    if ((st = fu_layout(f)) != ACC_OK || (f->negotiated && (st = fu_nego_start(f)) != ACC_OK))
        return st;
    f->configured = 1;
    return ACC_OK;
}

acc_status_t fu_configure(acc_fusion_t *f)
{
    acc_tune_config_t c;
    acc_fusion_source_t src = ACC_FUSION_FROM_DEFAULT;
    acc_status_t st = ACC_OK;
    int32_t none = 0;
    char text[ACC_TUNE_CONFIG_TEXT_MAX];

    memset(&c, 0, sizeof(c));
    if ((st = fu_agree_grads(f)) != ACC_OK)
        return st;
    if (f->rank == 0) {
        st = decide(f, &c, &src);
        f->source = src;
    }
    if ((st = fu_share_config(f, st, &c, &none)) != ACC_OK)
        return st;
    if ((st = fu_apply(f, &c, f->source)) != ACC_OK)
        return st;
    f->started_from = f->source;
    if (f->rank == 0 && acc_tune_config_format(&f->cfg, text, sizeof(text)) == ACC_OK)
        ACC_INFO(RUNTIME, "fusion engine: %s (%s) for %s on %.12s", text,
                 acc_fusion_source_name(f->source), f->key.model[0] ? f->key.model : "-",
                 f->key.fingerprint);
    return ACC_OK;
}
