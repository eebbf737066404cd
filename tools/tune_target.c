/*
 * tune_target.c - what acc-tune tunes for: the model's profile, the topology with the network
 * asked for, and the compute entry of the topology's GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_cli.h"

int tune_fail(int code)
{
    fprintf(stderr, "acc-tune: %s\n", acc_error_message());
    return code;
}

/* ---- a network applied to a topology ---- */

typedef struct {
    double nic_gbps; /* 0: keep */
    int nodes;       /* 0: keep */
    double latency;  /* < 0: keep */
    int rail;        /* < 0: keep */
    double oversub;  /* 0: keep */
    char fabric[ACC_TOPO_NAME_MAX];
} net_params_t;

static acc_status_t net_parse(const char *params, net_params_t *np)
{
    char *copy = acc_strdup(params), *tok, *save = NULL;
    acc_status_t st = ACC_OK;

    memset(np, 0, sizeof(*np));
    np->latency = -1;
    np->rail = -1;
    if (!copy)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (tok = strtok_r(copy, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
        char *eq = strchr(tok, '=');
        const char *key = tok, *val = eq ? eq + 1 : "";
        double v = 0;
        if (eq)
            *eq = '\0';
        if (strcmp(key, "fabric") == 0) {
            if (!*val || strlen(val) >= sizeof(np->fabric)) {
                st = acc_error_set(ACC_ERR_INVALID,
                                   "network \"%s\": fabric needs a name of 1 to "
                                   "63 characters",
                                   params);
                break;
            }
            snprintf(np->fabric, sizeof(np->fabric), "%s", val);
            continue;
        }
        if (!eq || acc_parse_double(val, &v) != ACC_OK) {
            st = acc_error_set(ACC_ERR_INVALID,
                               "network \"%s\": '%s' needs a number (keys: nic, "
                               "latency, rail, oversub, nodes, fabric)",
                               params, key);
            break;
        }
        if (strcmp(key, "nic") == 0 && v > 0 && v <= 1e7)
            np->nic_gbps = v;
        else if ((strcmp(key, "latency") == 0 || strcmp(key, "latency_us") == 0) && v >= 0 &&
                 v <= 1e6)
            np->latency = v;
        else if (strcmp(key, "rail") == 0 && (v == 0 || v == 1))
            np->rail = (int)v;
        else if (strcmp(key, "oversub") == 0 && v >= 1 && v <= 1e6)
            np->oversub = v;
        else if (strcmp(key, "nodes") == 0 && v >= 1 && v <= 65536 && v == (int)v)
            np->nodes = (int)v;
        else {
            st = acc_error_set(ACC_ERR_INVALID,
                               "network \"%s\": %s=%s is not valid (nic: Gb/s > 0, latency: us "
                               ">= 0, rail: 0 or 1, oversub: >= 1, nodes: 1..65536)",
                               params, key, val);
            break;
        }
    }
    acc_free(copy);
    return st;
}

acc_status_t tune_topo_with_network(const acc_topo_t *topo, const char *params, acc_topo_t **out)
{
    acc_topo_network_t net = *acc_topo_network(topo);
    acc_topo_t *t = NULL;
    net_params_t np;
    acc_status_t st;
    int i, idx;

    *out = NULL;
    if ((st = net_parse(params, &np)) != ACC_OK)
        return st;
    if ((st = acc_topo_create(&t)) != ACC_OK)
        return st;
    /* The same vertices in the same order keep their indices, ids and names. */
    for (i = 0; i < acc_topo_vertex_count(topo) && st == ACC_OK; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(topo, i);
        if ((st = acc_topo_add_vertex(t, v->kind, &idx)) != ACC_OK)
            break;
        *acc_topo_vertex_mut(t, idx) = *v;
        if (v->kind == ACC_VTX_NIC && np.nic_gbps > 0)
            acc_topo_vertex_mut(t, idx)->speed_gbps = np.nic_gbps;
    }
    for (i = 0; i < acc_topo_link_count(topo) && st == ACC_OK; i++) {
        const acc_topo_link_t *l = acc_topo_link(topo, i);
        st = acc_topo_add_link_dir(t, l->from, l->to, l->kind, l->count, l->bw, l->lat_us);
        if (st == ACC_OK && l->kind == ACC_LINK_PCIE && l->gen)
            st = acc_topo_set_pcie(t, l->from, l->to, l->gen, l->width);
    }
    for (i = 0; i < acc_topo_assumption_count(topo) && st == ACC_OK; i++)
        st = acc_topo_assume(t, "%s", acc_topo_assumption(topo, i));
    if (st != ACC_OK)
        goto out;
    if (np.nodes)
        net.nodes = np.nodes;
    if (np.latency >= 0)
        net.latency_us = np.latency;
    if (np.rail >= 0)
        net.rail_optimized = np.rail;
    if (np.oversub > 0)
        net.oversubscription = np.oversub;
    if (np.fabric[0])
        snprintf(net.name, sizeof(net.name), "%s", np.fabric);
    if (net.nodes > 1 && net.oversubscription < 1)
        net.oversubscription = 1;
    if ((st = acc_topo_set_network(t, &net)) != ACC_OK ||
        (st = acc_topo_set_name(t, acc_topo_name(topo))) != ACC_OK ||
        (st = acc_topo_set_source(t, acc_topo_source(topo), acc_topo_format(topo))) != ACC_OK ||
        (st = acc_topo_finalize(t)) != ACC_OK)
        goto out;
    *out = t;
    t = NULL;
out:
    if (st != ACC_OK)
        acc_error_prefix(st, "applying network \"%s\": ", params);
    acc_topo_destroy(t);
    return st;
}

/* ---- the target ---- */

static int load_profile(const char *model, acc_profile_t **out)
{
    /* A path names a file; a bare name a shipped profile. */
    acc_status_t st = strchr(model, '/') || strstr(model, ".yaml")
                          ? acc_profile_load_file(model, out)
                          : acc_profile_load_builtin(model, out);
    return st == ACC_OK ? EXIT_OK : tune_fail(EXIT_INPUT);
}

/* The network's name in the database key: the stored network's name, else the fabric's, else
 * the parameters as given; "" for one node. */
static void network_key(const tune_opts_t *o, const acc_topo_t *topo, int named, char *out,
                        size_t n)
{
    const acc_topo_network_t *net = acc_topo_network(topo);
    if (net->nodes <= 1)
        snprintf(out, n, "%s", "");
    else if (o->network && named)
        snprintf(out, n, "%s", o->network);
    else if (net->name[0])
        snprintf(out, n, "%s", net->name);
    else if (o->network)
        snprintf(out, n, "%.*s", (int)n - 1, o->network);
    else
        snprintf(out, n, "%s", "net");
}

int tune_target_load(const tune_opts_t *o, acc_db_t *db, tune_target_t *t)
{
    acc_topo_t *base = NULL;
    const acc_topo_vertex_t *g;
    int rc, named = 0, v;

    memset(t, 0, sizeof(*t));
    if ((rc = load_profile(o->model, &t->profile)) != EXIT_OK)
        return rc;
    if (acc_topo_load(o->topo, &base) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    if (o->network) {
        const char *params = o->network;
        acc_db_network_t net;
        if (!strchr(o->network, '=')) {
            if (!db || acc_db_get_network(db, o->network, &net) != ACC_OK) {
                acc_error_set(ACC_ERR_NOT_FOUND,
                              "network '%s' is not in the database%s; give its parameters "
                              "instead, e.g. --network \"nic=100 latency=5 fabric=roce\"",
                              o->network, db ? "" : " (no --db)");
                acc_topo_destroy(base);
                return tune_fail(EXIT_INPUT);
            }
            params = net.params;
            named = 1;
        }
        if (tune_topo_with_network(base, params, &t->topo) != ACC_OK) {
            acc_topo_destroy(base);
            return tune_fail(EXIT_INPUT);
        }
        acc_topo_destroy(base);
    } else {
        t->topo = base;
    }
    if (acc_topo_fingerprint(t->topo, t->fingerprint) != ACC_OK)
        return tune_fail(EXIT_INPUT);
    network_key(o, t->topo, named, t->network, sizeof(t->network));
    v = acc_topo_find(t->topo, ACC_VTX_GPU, 0);
    g = v >= 0 ? acc_topo_vertex(t->topo, v) : NULL;
    t->compute = g ? acc_profile_find_compute(t->profile, g->sm, o->precision) : NULL;
    if (!t->compute) {
        acc_buf_t b;
        size_t i;
        acc_buf_init(&b);
        for (i = 0; i < t->profile->ncompute; i++)
            acc_buf_printf(&b, "%s%s %s", i ? ", " : "", t->profile->compute[i].gpu,
                           t->profile->compute[i].precision);
        acc_error_set(ACC_ERR_NOT_FOUND,
                      "profile '%s' has no compute time for sm_%d%s%s (it has: %s); add a "
                      "compute entry for this GPU to a copy of the profile and pass its path",
                      t->profile->name, g ? g->sm : 0, o->precision ? " in " : "",
                      o->precision ? o->precision : "", b.data ? b.data : "none");
        acc_buf_free(&b);
        return tune_fail(EXIT_INPUT);
    }
    return EXIT_OK;
}

void tune_target_free(tune_target_t *t)
{
    acc_profile_destroy(t->profile);
    acc_topo_destroy(t->topo);
    memset(t, 0, sizeof(*t));
}

void tune_target_title(const tune_target_t *t, char *buf, size_t n)
{
    const char *name =
        acc_topo_name(t->topo)[0] ? acc_topo_name(t->topo) : acc_topo_source(t->topo);
    snprintf(buf, n, "%s on %s (%d GPUs, %s, %s, batch %d%s), network %s", t->profile->name, name,
             acc_topo_ranks(t->topo), t->compute->gpu, t->compute->precision, t->compute->batch,
             t->compute->accumulation > 1 ? " accumulated" : "",
             t->network[0] ? t->network : "none (one node)");
}
