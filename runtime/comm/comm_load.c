/*
 * Loading a communicator's tuned schedules: the machine it runs on, the database and the
 * selection tables of that machine's fingerprint; then the ranks agree, so that every rank
 * makes the same choice for every call.  The plans the tables name are read and verified at
 * their first call (comm_table_plan), so that joining costs what the job uses.  Nothing here fails
 * a communicator: what cannot be used becomes the reason every call goes to the fallback, said
 * once, by rank 0.
 */
#include "rt_internal.h"

#include "acc_compiler.h"
#include "acc_kernels.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* How rank 0 says why the tables are off: a choice (ACC_DISABLE=1, the caller's options) at
 * info level, a problem with what was found at warn, a setting acc cannot use at error. */
enum { SAY_WARN = 0, SAY_INFO, SAY_ERROR };

static int set_reason(acc_comm_t *c, const char *fmt, ...) ACC_PRINTF(2, 3);

static int set_reason(acc_comm_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fallback_reason, sizeof(c->fallback_reason), fmt, ap);
    va_end(ap);
    return -1;
}

static int load_topology(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    const char *spec = rt_topo_source(opts ? opts->topo : NULL);
    if (acc_topo_load(spec, &c->topo) != ACC_OK)
        return set_reason(c, "topology '%s' (ACC_TOPO): %s", spec, acc_error_message());
    if (acc_topo_ranks(c->topo) != c->nranks)
        return set_reason(c, "topology '%s' has %d GPUs, the communicator %d ranks", spec,
                          acc_topo_ranks(c->topo), c->nranks);
    if (acc_topo_fingerprint(c->topo, c->fingerprint) != ACC_OK)
        return set_reason(c, "topology '%s': %s", spec, acc_error_message());
    return 0;
}

/* A topology that failed hides what the job finds next: that it has no database either is worth
 * saying in the same line, so that fixing ACC_TOPO is not followed by a second surprise. */
static void add_db_reason(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    const char *path;
    size_t n = strlen(c->fallback_reason);

    if (n + 8 >= sizeof(c->fallback_reason))
        return;
    if (rt_db_locate(opts ? opts->db : NULL, &path) != ACC_OK)
        snprintf(c->fallback_reason + n, sizeof(c->fallback_reason) - n, "; and %s",
                 acc_error_message());
    else if (access(path, R_OK) != 0)
        snprintf(c->fallback_reason + n, sizeof(c->fallback_reason) - n,
                 "; and the database %s cannot be read (%s): acc-compile --topo ... --db %s "
                 "builds it",
                 path, strerror(errno), path);
}

/* One collective's table.  Its plans are read at their first use (comm_table_plan): a rank
 * that joins reads no plan it does not run, and the ranks compare the tables by the plans'
 * hashes, which name the plans' text. */
static int load_table(acc_comm_t *c, acc_db_t *db, acc_coll_t coll, acc_sha256_t *h)
{
    rt_table_t *t = &c->tables[coll];
    acc_status_t st = acc_db_get_selection(db, c->fingerprint, coll, &t->table);
    size_t i;

    if (st == ACC_ERR_NOT_FOUND)
        return 0; /* no table: every size of this collective goes to the fallback */
    if (st != ACC_OK)
        return set_reason(c, "%s table in %s: %s", acc_coll_name(coll), acc_db_path(db),
                          acc_error_message());
    t->plans = acc_mem_calloc(t->table->n + 1, sizeof(acc_plan_t *));
    t->read = acc_mem_calloc(t->table->n + 1, 1);
    t->unfit = acc_mem_calloc(t->table->n + 1, 1);
    t->unfit_why = acc_mem_calloc(t->table->n + 1, sizeof(char *));
    t->calls = acc_mem_calloc(t->table->n + 1, sizeof(uint64_t));
    t->bytes = acc_mem_calloc(t->table->n + 1, sizeof(uint64_t));
    if (!t->plans || !t->read || !t->unfit || !t->unfit_why || !t->calls || !t->bytes)
        return set_reason(c, "out of memory for the %s table", acc_coll_name(coll));
    for (i = 0; i < t->table->n; i++) {
        const acc_select_entry_t *e = &t->table->entries[i];
        char line[ACC_PLAN_NAME_MAX + ACC_PLAN_PARAMS_MAX + ACC_SHA256_HEX_LEN + 96];
        int n = snprintf(line, sizeof(line), "%d %llu %llu %d %s %s %s\n", (int)coll,
                         (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes,
                         e->use_nccl, e->algo, e->params, e->plan_hash);
        acc_sha256_update(h, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        t->read[i] = (unsigned char)e->use_nccl;
    }
    return 0;
}

/* What a rank reads of a plan: its view (the head and its own programs) where the backend runs
 * views or cannot run a plan of this size at all, else the whole plan from its class form (no
 * YAML), proven again. */
static acc_status_t read_plan(acc_comm_t *c, const char *hash, acc_plan_t **out)
{
    if (c->be && !c->be->rank_views && c->nranks <= ACC_KARG_RANKS)
        return acc_db_get_whole_plan(c->db, hash, out);
    return acc_db_get_rank_plan(c->db, hash, c->rank, out);
}

acc_plan_t *comm_table_plan(acc_comm_t *c, acc_coll_t coll, size_t entry)
{
    rt_table_t *t = &c->tables[coll];
    const acc_select_entry_t *e = &t->table->entries[entry];
    acc_plan_t *plan = NULL;
    boot_vote_t v[2]; /* this rank's, and the verdict */
    int mine = 1;

    if (t->read[entry])
        return t->plans[entry];
    t->read[entry] = 1;
    boot_vote_init(&v[0], ACC_OK);
    if (!c->db || read_plan(c, e->plan_hash, &plan) != ACC_OK)
        snprintf(v[0].text, sizeof(v[0].text), "%s",
                 c->db ? acc_error_message() : "the database is closed");
    else if (plan->nranks != c->nranks)
        snprintf(v[0].text, sizeof(v[0].text), "it has %d ranks, the communicator %d", plan->nranks,
                 c->nranks);
    /* Every rank reads it at this call; all use it only if all could (a rank out of memory,
     * or reading a file changed meanwhile, must not run the fallback alone). */
    v[0].status = v[0].text[0] ? ACC_ERR_INVALID : ACC_OK;
    if (boot_vote(c->boot, &v[0], &v[1]) != ACC_OK) {
        if (!v[0].text[0])
            snprintf(v[0].text, sizeof(v[0].text), "the ranks could not agree on it: %s",
                     acc_error_message());
    } else if (v[0].status == ACC_OK && v[1].status != ACC_OK) {
        snprintf(v[0].text, sizeof(v[0].text), "rank %d could not read it", v[1].rank);
    } else {
        mine = v[1].status != ACC_OK;
    }
    if (mine) {
        if (c->rank == 0)
            ACC_WARN(RUNTIME,
                     "%s plan %s (%.12s) for [%llu, %llu] bytes: %s; the fallback serves "
                     "those sizes",
                     acc_coll_name(coll), e->algo, e->plan_hash, (unsigned long long)e->min_bytes,
                     (unsigned long long)e->max_bytes, v[0].text);
        acc_plan_destroy(plan);
        return NULL;
    }
    t->plans[entry] = plan;
    /* Whether the backend can run it here: a property of the plan and of where the ranks are.
     * Every rank answers it alike from the whole plan; from a view each answers for its own
     * operations, and they agree by a vote. */
    if (!plan->view) {
        t->unfit[entry] = c->be && c->be->supports(c, plan) != ACC_OK;
        return plan;
    }
    boot_vote_init(&v[0], c->be ? c->be->supports(c, plan) : ACC_OK);
    if (v[0].status != ACC_OK)
        snprintf(v[0].text, sizeof(v[0].text), "%s", acc_error_message());
    if (boot_vote(c->boot, &v[0], &v[1]) != ACC_OK)
        snprintf(v[1].text, sizeof(v[1].text), "the ranks could not agree whether it runs here: %s",
                 acc_error_message());
    else if (v[1].status == ACC_OK)
        return plan;
    t->unfit[entry] = 1;
    if ((t->unfit_why[entry] = acc_mem_alloc(strlen(v[1].text) + 1)))
        memcpy(t->unfit_why[entry], v[1].text, strlen(v[1].text) + 1);
    return plan;
}

static int load_tables(acc_comm_t *c, const acc_comm_opts_t *opts, uint8_t digest[])
{
    const char *path;
    acc_db_t *db = NULL;
    acc_sha256_t *h = NULL;
    int rc = 0, found = 0;

    if (rt_db_locate(opts ? opts->db : NULL, &path) != ACC_OK)
        return set_reason(c, "%s", acc_error_message());
    if (acc_db_open(path, ACC_DB_READONLY, &db) != ACC_OK)
        return set_reason(c, "%s", acc_error_message()); /* it names the file */
    if (acc_sha256_create(&h) != ACC_OK) {
        rc = set_reason(c, "%s", acc_error_message());
        goto out;
    }
    acc_sha256_update(h, c->fingerprint, strlen(c->fingerprint));
    for (int coll = 0; coll < ACC_COLL_COUNT && rc == 0; coll++) {
        rc = load_table(c, db, (acc_coll_t)coll, h);
        found += c->tables[coll].table != NULL;
    }
    if (rc == 0 && !found)
        rc = set_reason(c,
                        "database %s has no tables for this machine (fingerprint %.16s...; "
                        "acc-info --db %s lists what it holds)",
                        path, c->fingerprint, path);
    if (rc == 0 && acc_sha256_final(h, digest) != ACC_OK)
        rc = set_reason(c, "%s", acc_error_message());
    if (rc == 0) {
        snprintf(c->db_path, sizeof(c->db_path), "%s", path);
        c->db = db; /* the plans are read from it at their first use */
        db = NULL;
    }
out:
    acc_sha256_destroy(h);
    acc_db_close(db);
    return rc;
}

/* The settings: an invalid ACC_* value (any of the table's, or one the communicator could not
 * use: comm.c) turns acc's schedules off, with an error naming the variable, and the job runs
 * on the fallback; ACC_DISABLE=1 and the options turn them off quietly. */
static int settings_check(acc_comm_t *c, const acc_comm_opts_t *opts, int *say)
{
    int64_t v;
    *say = SAY_ERROR;
    if (c->settings_error[0])
        return set_reason(c, "%s", c->settings_error);
    if (acc_settings_validate() != ACC_OK)
        return set_reason(c, "%s", acc_error_message());
    if (acc_setting_int(ACC_SETTING_DISABLE, &v) != ACC_OK || (v != 0 && v != 1))
        return set_reason(c, "ACC_DISABLE='%s' is neither 0 nor 1",
                          acc_setting_str(ACC_SETTING_DISABLE));
    *say = SAY_INFO;
    if (v || (opts && opts->disable))
        return set_reason(c, "%s", v ? "ACC_DISABLE=1" : "disabled by the caller's options");
    *say = SAY_WARN;
    return 0;
}

/* Ranks share memory when they are on one host and, where the topology has several nodes, in
 * one of its nodes: so a single machine can stand in for a cluster (TCP between its "nodes"). */
typedef struct {
    char host[64];
} host_info_t;

/* Rank 0's numbering of the nodes, in O(N): a node is a host and a block of per_node ranks,
 * numbered in the order of their first rank; a hash of (host, block) finds a rank's node. */
static acc_status_t number_nodes(acc_comm_t *c, const host_info_t *all, int per_node)
{
    size_t cap = 1;
    int *first; /* per slot: the first rank of a node, or -1 */

    while (cap < 2 * (size_t)c->nranks)
        cap *= 2;
    if (!(first = acc_mem_alloc(cap * sizeof(int))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cap; i++)
        first[i] = -1;
    c->nnodes = 0;
    for (int r = 0; r < c->nranks; r++) {
        uint64_t h = acc_fnv1a64(all[r].host, strlen(all[r].host)) ^
                     (uint64_t)(r / per_node) * 0x9e3779b97f4a7c15ull;
        size_t i = (size_t)h & (cap - 1);
        for (; first[i] >= 0; i = (i + 1) & (cap - 1)) {
            int q = first[i];
            if (strcmp(all[q].host, all[r].host) == 0 && q / per_node == r / per_node)
                break;
        }
        if (first[i] < 0) {
            first[i] = r;
            c->node_of[r] = c->nnodes++;
        } else {
            c->node_of[r] = c->node_of[first[i]];
        }
    }
    acc_mem_free(first);
    return ACC_OK;
}

/* Rank 0 gathers the host names, numbers the nodes and says how: as a node size k when node n
 * is ranks [n k, (n + 1) k) - every launcher's block placement, O(1) bytes per rank - else as
 * the whole table (O(N) bytes per rank; docs/scale.md). */
static acc_status_t place_ranks(acc_comm_t *c)
{
    host_info_t mine, *all = NULL;
    int per_node = c->topo && acc_topo_ranks(c->topo) == c->nranks ? acc_topo_gpus_per_node(c->topo)
                                                                   : c->nranks;
    int32_t shape[2] = {0, 0}; /* nodes, ranks per node (0: irregular, the table follows) */
    acc_status_t st;

    if (!(c->node_of = acc_mem_calloc((size_t)c->nranks, sizeof(int))) ||
        (c->rank == 0 && !(all = acc_mem_calloc((size_t)c->nranks, sizeof(host_info_t)))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    memset(&mine, 0, sizeof(mine));
    gethostname(mine.host, sizeof(mine.host) - 1);
    if ((st = boot_gather(c->boot, &mine, sizeof(mine), all)) == ACC_OK && c->rank == 0 &&
        (st = number_nodes(c, all, per_node)) == ACC_OK) {
        int k = 0;
        while (k < c->nranks && c->node_of[k] == 0)
            k++;
        shape[0] = c->nnodes;
        shape[1] = k;
        for (int r = 0; r < c->nranks && shape[1]; r++)
            if (c->node_of[r] != r / k)
                shape[1] = 0;
    }
    acc_mem_free(all);
    if (st == ACC_OK)
        st = boot_bcast(c->boot, shape, sizeof(shape), 0);
    if (st == ACC_OK && shape[1] == 0)
        st = boot_bcast(c->boot, c->node_of, (size_t)c->nranks * sizeof(int), 0);
    if (st != ACC_OK)
        return acc_error_prefix(st, "placing the ranks: ");
    c->nnodes = shape[0];
    for (int r = 0; shape[1] && r < c->nranks; r++)
        c->node_of[r] = r / shape[1];
    return ACC_OK;
}

/* Rank 0 draws the tag that names this communicator's shared memory. */
static acc_status_t draw_tag(acc_comm_t *c)
{
    uint8_t bytes[8] = {0};
    acc_status_t st;
    if (c->rank == 0 && getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
        return acc_error_set(ACC_ERR_SYSTEM, "getrandom failed");
    if ((st = boot_bcast(c->boot, bytes, sizeof(bytes), 0)) != ACC_OK)
        return acc_error_prefix(st, "sharing rank 0's shared-memory tag: ");
    for (int i = 0; i < 8; i++)
        snprintf(c->shm_tag + 2 * i, 3, "%02x", bytes[i]);
    return ACC_OK;
}

/* Compare what the ranks loaded: tables only when every rank loaded the same ones.  Rank 0's
 * digest goes to every rank, which votes: its own problem first (order 0), then a digest other
 * than rank 0's (order 1), so that the first rank with a problem is named as before, and no
 * rank is sent the others' digests.  Only the exchange itself can fail (a peer gone): then the
 * set-up fails. */
static acc_status_t agree(acc_comm_t *c, int say, const uint8_t digest[ACC_SHA256_LEN])
{
    uint8_t root[ACC_SHA256_LEN];
    boot_vote_t *v = acc_mem_alloc(2 * sizeof(boot_vote_t));
    acc_status_t st;

    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory comparing the tables");
    memcpy(root, digest, sizeof(root));
    boot_vote_init(&v[0], ACC_OK);
    if ((st = boot_bcast(c->boot, root, sizeof(root), 0)) != ACC_OK)
        goto out;
    if (c->fallback_reason[0]) {
        v[0].status = ACC_NO_DATA;
        v[0].tag = say;
        snprintf(v[0].text, sizeof(v[0].text), "%s", c->fallback_reason);
    } else if (memcmp(root, digest, sizeof(root)) != 0) {
        v[0].status = ACC_NO_DATA;
        v[0].order = 1;
        snprintf(v[0].text, sizeof(v[0].text),
                 "rank %d loaded other tables than rank 0 (another database or topology?)",
                 c->rank);
    }
    if ((st = boot_vote(c->boot, &v[0], &v[1])) != ACC_OK)
        goto out;
    c->use_tables = v[1].status == ACC_OK;
    if (!c->use_tables && v[1].order == 0 && v[1].rank != c->rank)
        set_reason(c, "rank %d: %s", v[1].rank, v[1].text);
    else if (!c->use_tables && v[1].order == 1)
        set_reason(c, "%s", v[1].text);
    /* One line per communicator: rank 0's, with the reason of the first rank that had one; a
     * duplicate's parent has said it already. */
    if (!c->use_tables && c->rank == 0) {
        int said = v[1].order == 0 ? v[1].tag : SAY_WARN;
        if (c->duplicate || said == SAY_INFO)
            ACC_INFO(RUNTIME, "communicator of %d ranks: acc's schedules are off (%s)", c->nranks,
                     c->fallback_reason);
        else
            acc_log(said == SAY_ERROR ? ACC_LOG_ERROR : ACC_LOG_WARN, ACC_SUBSYS_RUNTIME,
                    "communicator of %d ranks runs every call through %s: %s", c->nranks,
                    c->be == &rt_host_backend ? "the ring fallback" : "NCCL", c->fallback_reason);
    }
out:
    acc_mem_free(v);
    return st != ACC_OK ? acc_error_prefix(st, "comparing the ranks' tables: ") : ACC_OK;
}

acc_status_t comm_load(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    uint8_t digest[ACC_SHA256_LEN] = {0}; /* of the tables and plans loaded */
    int say = SAY_WARN;
    acc_status_t st;

    if (settings_check(c, opts, &say) == 0) {
        if (load_topology(c, opts) == 0)
            load_tables(c, opts, digest);
        else
            add_db_reason(c, opts);
    }
    if ((st = agree(c, say, digest)) != ACC_OK)
        return st;
    if (!c->use_tables)
        comm_unload(c);
    else if (c->rank == 0)
        ACC_INFO(RUNTIME, "communicator of %d ranks uses the tables of %s (fingerprint %.16s...)",
                 c->nranks, acc_topo_name(c->topo)[0] ? acc_topo_name(c->topo) : "its topology",
                 c->fingerprint);
    return ACC_OK;
}

void comm_unload(acc_comm_t *c)
{
    for (int coll = 0; coll < ACC_COLL_COUNT; coll++) {
        rt_table_t *t = &c->tables[coll];
        for (size_t i = 0; t->plans && t->table && i < t->table->n; i++)
            acc_plan_destroy(t->plans[i]);
        for (size_t i = 0; t->unfit_why && t->table && i < t->table->n; i++)
            acc_mem_free(t->unfit_why[i]);
        acc_mem_free(t->plans);
        acc_mem_free(t->read);
        acc_mem_free(t->unfit);
        acc_mem_free(t->unfit_why);
        acc_mem_free(t->calls);
        acc_mem_free(t->bytes);
        acc_select_destroy(t->table);
        memset(t, 0, sizeof(*t));
    }
    acc_db_close(c->db);
    c->db = NULL;
}

/* A synthetic machine of n GPUs for the fallback's plans when no topology fits: one node of
 * them, or as few nodes as the synthetic grammar's 64 GPUs per node allow. */
static void synthetic_spec(int n, char *buf, size_t len)
{
    int g = n <= 64 ? n : 64;
    while (n % g)
        g--;
    snprintf(buf, len, "nodes=%d gpus=%d", n / g, g);
}

rt_fallback_t *comm_fallback_slot(acc_comm_t *c, acc_coll_t coll, int root, const char *name)
{
    rt_fallback_t *f;
    /* Asked once per route (comm_coll.c remembers the answer), so a search suffices. */
    for (size_t i = 0; i < c->nfallbacks; i++)
        if (c->fallbacks[i].coll == coll && c->fallbacks[i].root == root &&
            !strcmp(c->fallbacks[i].name, name))
            return &c->fallbacks[i];
    if (acc_array_reserve((void **)&c->fallbacks, &c->fallbacks_cap, c->nfallbacks + 1,
                          sizeof(rt_fallback_t)) != ACC_OK) {
        acc_error_set(ACC_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f = &c->fallbacks[c->nfallbacks++];
    memset(f, 0, sizeof(*f));
    f->coll = coll;
    f->root = root;
    f->name = name;
    return f;
}

acc_plan_t *comm_fallback_plan(acc_comm_t *c, acc_coll_t coll, int root, rt_fallback_t **fb)
{
    const acc_algo_t *ring;
    acc_algo_args_t args;
    acc_topo_t *synth = NULL;
    rt_fallback_t *f = comm_fallback_slot(c, coll, root, "ring");
    acc_status_t st;

    if (!f)
        return NULL;
    *fb = f;
    if (f->plan)
        return f->plan;
    if (!(ring = acc_algo_find(coll, "ring")))
        return NULL;
    if (!c->topo || acc_topo_ranks(c->topo) != c->nranks) {
        char spec[64];
        synthetic_spec(c->nranks, spec, sizeof(spec));
        if (acc_topo_load(spec, &synth) != ACC_OK)
            return NULL;
    }
    memset(&args, 0, sizeof(args));
    args.root = root;
    /* The rings with a class form are made and proven in it, and a backend that runs views
     * takes this rank's: nothing grows with the other ranks' programs (an explicit ring holds
     * N programs of 2N steps, on every rank). */
    if (c->be && c->be->rank_views && acc_algo_has_class(ring, synth ? synth : c->topo, &args)) {
        acc_cplan_t *cp = NULL;
        if ((st = acc_algo_generate_class(ring, synth ? synth : c->topo, &args, &cp, NULL)) ==
            ACC_OK)
            st = acc_cplan_view_of(cp, c->rank, &f->plan);
        acc_cplan_destroy(cp);
    } else {
        st = acc_algo_generate(ring, synth ? synth : c->topo, &args, &f->plan);
    }
    acc_topo_destroy(synth);
    if (st != ACC_OK) {
        acc_error_prefix(ACC_ERR_INTERNAL, "the %s fallback of %d ranks: ", acc_coll_name(coll),
                         c->nranks);
        return NULL;
    }
    return f->plan;
}

acc_status_t comm_prepare(acc_comm_t *c, const acc_comm_opts_t *opts)
{
    acc_status_t st = draw_tag(c);
    if (st != ACC_OK || (st = comm_load(c, opts)) != ACC_OK)
        return st;
    return place_ranks(c);
}
