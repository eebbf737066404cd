/*
 * A topology with another network: "nic=100 latency=5 fabric=roce" applied to a copy, for tuning
 * a model on a cluster whose node type is known but whose network is not the one described (the
 * grammar is in acc_topo.h and schedules/TOPOLOGY.md).  The copy keeps every vertex, link and
 * assumption of the original, so that the same node type with the same network has the same
 * fingerprint whichever way the network was given.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Keys in the order of the table below. */
enum { NET_NIC, NET_LATENCY, NET_RAIL, NET_OVERSUB, NET_NODES, NET_FABRIC, NET_KEY_COUNT };

static const topo_kv_key_t keys[NET_KEY_COUNT] = {
    {"nic", NULL, "nic=GBPS"},  {"latency", "latency_us", "latency=US"},
    {"rail", NULL, "rail=0|1"}, {"oversub", NULL, "oversub=X"},
    {"nodes", NULL, "nodes=N"}, {"fabric", NULL, "fabric=NAME"},
};

/* The network's node count: as many as acc_topo_network_t documents (TOPOLOGY.md). */

typedef struct {
    const topo_kv_t *kv;
    acc_topo_network_t net; /* the topology's own, changed as the parameters say */
    double nic_gbps;        /* given: every NIC's line rate */
} net_edit_t;

static acc_status_t set_key(void *ctx, int key, const char *name, const char *val)
{
    net_edit_t *e = ctx;
    const char *expected;

    switch (key) {
    case NET_NIC:
        if (topo_kv_number(val, 0, 1e7, &e->nic_gbps) && e->nic_gbps > 0)
            return ACC_OK;
        expected = "the NICs' line rate in Gb/s, > 0";
        break;
    case NET_LATENCY:
        if (topo_kv_number(val, 0, 1e6, &e->net.latency_us))
            return ACC_OK;
        expected = "the one-way network latency in microseconds, >= 0";
        break;
    case NET_RAIL:
        if (topo_kv_flag(val, &e->net.rail_optimized))
            return ACC_OK;
        expected = "1 (rail-optimised) or 0";
        break;
    case NET_OVERSUB:
        if (topo_kv_number(val, 1, 1e6, &e->net.oversubscription))
            return ACC_OK;
        expected = "an oversubscription ratio >= 1 (1 = non-blocking)";
        break;
    case NET_NODES:
        if (topo_kv_count(val, 1, TOPO_MAX_NODES, &e->net.nodes))
            return ACC_OK;
        expected = "a node count, a whole number 1 to 131072";
        break;
    default:
        if (topo_kv_fabric(val, e->net.name))
            return ACC_OK;
        expected = "a fabric name of 1 to 63 letters, digits, '-', '_' and '.' (ib-ndr, roce)";
        break;
    }
    return topo_kv_error(e->kv, ACC_ERR_INVALID, "%s=%s: expected %s", name, val, expected);
}

/* Every NIC of t at the line rate given; a topology without NICs has nothing to set. */
static acc_status_t set_nics(acc_topo_t *t, const net_edit_t *e)
{
    int i, n = 0;
    for (i = 0; i < t->nvertices; i++) {
        if (t->vertices[i].kind == ACC_VTX_NIC) {
            t->vertices[i].speed_gbps = e->nic_gbps;
            n++;
        }
    }
    if (n == 0)
        return topo_kv_error(e->kv, ACC_ERR_INVALID,
                             "nic=%g: the topology has no NICs to set; describe its NICs in the "
                             "topology instead",
                             e->nic_gbps);
    return ACC_OK;
}

acc_status_t acc_topo_with_network(const acc_topo_t *topo, const char *params, acc_topo_t **out)
{
    char what[256];
    topo_kv_t kv = {what, " \t\n\r,", keys, NET_KEY_COUNT, 0};
    acc_topo_t *t = NULL;
    net_edit_t e;
    acc_status_t st;

    *out = NULL;
    if (!params)
        return acc_error_set(ACC_ERR_INVALID, "network: no parameters (NULL)");
    snprintf(what, sizeof(what), "network \"%.200s\"", params);
    memset(&e, 0, sizeof(e));
    e.kv = &kv;
    e.net = *acc_topo_network(topo);
    if ((st = topo_kv_parse(&kv, params, set_key, &e)) != ACC_OK)
        return st;
    if (!kv.given)
        return topo_kv_error(&kv, ACC_ERR_PARSE, "no parameters; give at least one");
    if ((st = topo_copy(topo, &t)) != ACC_OK)
        return st;
    if ((kv.given & (1u << NET_NIC)) && (st = set_nics(t, &e)) != ACC_OK)
        goto out;
    /* A fabric named without a latency brings its own (topo_fabric.c). */
    if ((kv.given & (1u << NET_FABRIC)) && !(kv.given & (1u << NET_LATENCY)))
        e.net.latency_us = acc_topo_fabric_latency_us(e.net.name);
    if ((st = acc_topo_set_network(t, &e.net)) != ACC_OK || (st = acc_topo_finalize(t)) != ACC_OK) {
        acc_error_prefix(st, "applying network \"%s\": ", params);
        goto out;
    }
    *out = t;
    t = NULL;
out:
    acc_topo_destroy(t);
    return st;
}
