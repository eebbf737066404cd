/*
 * The tuning key and what it is made of: the model's profile (acc_profile_find: a file, a job's
 * recording for the topology's GPU, a shipped profile), the topology with the network asked
 * for, the network's name, and the profile's compute entry for the topology's GPU.  acc-tune
 * builds one for every command, and the runtime will build one at job start to find the optimum
 * of ACC_MODEL on the machine it runs on.
 */
#include "acc_tune.h"

#include <stdio.h>
#include <string.h>

/* The network's name in the key: the stored network's name, else the fabric's, else the
 * parameters as given, else "net"; "" for one node, where there is no network. */
static void network_name(const acc_topo_t *topo, const char *network, int stored, char *out,
                         size_t n)
{
    const acc_topo_network_t *net = acc_topo_network(topo);
    if (net->nodes <= 1)
        snprintf(out, n, "%s", "");
    else if (network && stored)
        snprintf(out, n, "%s", network);
    else if (net->name[0])
        snprintf(out, n, "%s", net->name);
    else if (network)
        snprintf(out, n, "%.*s", (int)n - 1, network); /* documented: the first 63 characters */
    else
        snprintf(out, n, "%s", "net");
}

/* The parameters of a network given by name: those stored in db under that name. */
static acc_status_t stored_params(const char *network, acc_db_t *db, acc_db_network_t *net)
{
    acc_status_t st;
    if (!db)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "network '%s' names a stored network, but no database was given; "
                             "give its parameters instead, e.g. \"nic=100 latency=5 fabric=roce\"",
                             network);
    st = acc_db_get_network(db, network, net);
    if (st == ACC_ERR_NOT_FOUND)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "network '%s' is not in the database; give its parameters instead, "
                             "e.g. \"nic=100 latency=5 fabric=roce\"",
                             network);
    return st;
}

acc_status_t acc_tune_network_apply(const acc_topo_t *base, const char *network, acc_db_t *db,
                                    acc_topo_t **topo, acc_tune_key_t *key)
{
    acc_db_network_t stored;
    const char *params = network;
    int named = network && !strchr(network, '=');
    acc_status_t st;

    *topo = NULL;
    memset(key, 0, sizeof(*key));
    if (network && !network[0])
        return acc_error_set(ACC_ERR_INVALID,
                             "the network is empty; give a stored network's name, its parameters "
                             "(\"nic=100 latency=5 fabric=roce\") or none for the topology's own");
    if (named && (st = stored_params(network, db, &stored)) != ACC_OK)
        return st;
    if (named)
        params = stored.params;
    st = params ? acc_topo_with_network(base, params, topo) : acc_topo_clone(base, topo);
    if (st == ACC_OK && (st = acc_topo_fingerprint(*topo, key->fingerprint)) != ACC_OK) {
        acc_topo_destroy(*topo);
        *topo = NULL;
    }
    if (st == ACC_OK)
        network_name(*topo, network, named, key->network, sizeof(key->network));
    return st;
}

/* The profile's compute entry for the topology's GPU, or an error listing those it has. */
static acc_status_t find_compute(acc_tune_target_t *t, const char *precision)
{
    int v = acc_topo_find(t->topo, ACC_VTX_GPU, 0);
    const acc_topo_vertex_t *g = v >= 0 ? acc_topo_vertex(t->topo, v) : NULL;
    acc_buf_t b;
    size_t i;

    t->compute = g ? acc_profile_find_compute(t->profile, g->sm, precision) : NULL;
    if (t->compute)
        return ACC_OK;
    acc_buf_init(&b);
    for (i = 0; i < t->profile->ncompute; i++)
        acc_buf_printf(&b, "%s%s %s", i ? ", " : "", t->profile->compute[i].gpu,
                       t->profile->compute[i].precision);
    acc_error_set(ACC_ERR_NOT_FOUND,
                  "profile '%s' has no compute time for sm_%d%s%s (it has: %s); add a "
                  "compute entry for this GPU to a copy of the profile and pass its path",
                  t->profile->name, g ? g->sm : 0, precision ? " in " : "",
                  precision ? precision : "", b.data ? b.data : "none");
    acc_buf_free(&b);
    return ACC_ERR_NOT_FOUND;
}

/* A target of profile (taken), found at origin, on topo (borrowed) with network applied. */
static acc_status_t target_build(acc_profile_t *profile, const acc_profile_origin_t *origin,
                                 const acc_topo_t *topo, const char *network, const char *precision,
                                 acc_db_t *db, acc_tune_target_t **out)
{
    acc_tune_target_t *t = acc_mem_calloc(1, sizeof(*t));
    acc_status_t st = ACC_OK;

    *out = NULL;
    if (!t) {
        acc_profile_destroy(profile);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a tuning target");
    }
    t->profile = profile;
    t->origin = *origin;
    if (strlen(profile->name) >= sizeof(t->key.model)) {
        st = acc_error_set(ACC_ERR_RANGE,
                           "model '%s': a tuning key holds names of at most %d characters; "
                           "rename the profile",
                           profile->name, (int)sizeof(t->key.model) - 1);
        goto out;
    }
    if ((st = acc_tune_network_apply(topo, network, db, &t->topo, &t->key)) != ACC_OK ||
        (st = find_compute(t, precision)) != ACC_OK)
        goto out;
    snprintf(t->key.model, sizeof(t->key.model), "%s", profile->name);
    *out = t;
    t = NULL;
out:
    acc_tune_target_destroy(t);
    return st;
}

acc_status_t acc_tune_target_create(const char *model, const acc_topo_t *topo, const char *network,
                                    const char *precision, acc_db_t *db, acc_tune_target_t **out)
{
    acc_profile_t *profile = NULL;
    acc_profile_origin_t origin;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_profile_find(model, acc_profile_topo_sm(topo), db, &profile, &origin)) != ACC_OK)
        return st;
    return target_build(profile, &origin, topo, network, precision, db, out);
}

acc_status_t acc_tune_target_load(const char *model, const char *topo, const char *network,
                                  const char *precision, acc_db_t *db, acc_tune_target_t **out)
{
    acc_profile_t *profile = NULL;
    acc_topo_t *base = NULL;
    char msg[1024];
    acc_status_t st, mst;

    *out = NULL;
    /* The profile depends on the topology's GPU, but of two mistakes the one in the first
     * argument, the model, is reported. */
    if ((st = acc_topo_load(topo, &base)) != ACC_OK) {
        snprintf(msg, sizeof(msg), "%s", acc_error_message());
        if ((mst = acc_profile_find(model, 0, db, &profile, NULL)) != ACC_OK)
            return mst;
        acc_profile_destroy(profile);
        return acc_error_set(st, "%s", msg);
    }
    st = acc_tune_target_create(model, base, network, precision, db, out);
    acc_topo_destroy(base);
    return st;
}

void acc_tune_target_destroy(acc_tune_target_t *t)
{
    if (!t)
        return;
    acc_profile_destroy(t->profile);
    acc_topo_destroy(t->topo);
    acc_mem_free(t);
}

void acc_tune_target_title(const acc_tune_target_t *t, char *buf, size_t n)
{
    const char *name =
        acc_topo_name(t->topo)[0] ? acc_topo_name(t->topo) : acc_topo_source(t->topo);
    snprintf(buf, n, "%s on %s (%d GPUs, %s, %s, batch %d%s), network %s", t->profile->name, name,
             acc_topo_ranks(t->topo), t->compute->gpu, t->compute->precision, t->compute->batch,
             t->compute->accumulation > 1 ? " accumulated" : "",
             t->key.network[0] ? t->key.network : "none (one node)");
}
