/* A topology with another network (acc_topo_with_network): each key's effect, what stays, the
 * fingerprint, and the messages of every kind of mistake. */
#include "acc_test.h"
#include "acc_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two nodes of eight H100s with eight 400 Gb/s NICs each, on the synthetic defaults: latency
 * 2.7 us, rail-optimised, non-blocking, no fabric name. */
#define TWO_NODES "nodes=2 gpus=8 nvlink=18 nic=8x400"

static acc_topo_t *load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_OK(acc_topo_load(src, &t));
    return t;
}

static void fingerprint(const acc_topo_t *t, char fp[ACC_SHA256_HEX_LEN + 1])
{
    CHECK_OK(acc_topo_fingerprint(t, fp));
}

/* The fingerprint of `src` with `params` applied. */
static void fingerprint_with(const char *src, const char *params, char fp[ACC_SHA256_HEX_LEN + 1])
{
    acc_topo_t *base = load(src), *t = NULL;
    CHECK_OK(acc_topo_with_network(base, params, &t));
    fingerprint(t, fp);
    acc_topo_destroy(t);
    acc_topo_destroy(base);
}

ACC_TEST(every_key_sets_its_fact)
{
    acc_topo_t *base = load(TWO_NODES), *t = NULL;
    const acc_topo_network_t *net;
    int i, nics = 0;

    CHECK_OK(
        acc_topo_with_network(base, "nic=100 latency=5 rail=0 oversub=2 nodes=4 fabric=roce", &t));
    net = acc_topo_network(t);
    CHECK_NEAR(net->latency_us, 5.0, 0);
    CHECK_INT(net->rail_optimized, 0);
    CHECK_NEAR(net->oversubscription, 2.0, 0);
    CHECK_INT(net->nodes, 4);
    CHECK_STR(net->name, "roce");
    CHECK_INT(acc_topo_ranks(t), 32);
    for (i = 0; i < acc_topo_vertex_count(t); i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(t, i);
        if (v->kind == ACC_VTX_NIC) {
            CHECK_NEAR(v->speed_gbps, 100.0, 0);
            nics++;
        }
    }
    CHECK_INT(nics, 8);
    /* The node type, its name and its source are the original's, and the original is intact. */
    CHECK_INT(acc_topo_vertex_count(t), acc_topo_vertex_count(base));
    CHECK_INT(acc_topo_link_count(t), acc_topo_link_count(base));
    CHECK_STR(acc_topo_name(t), acc_topo_name(base));
    CHECK_STR(acc_topo_source(t), acc_topo_source(base));
    CHECK_INT(acc_topo_nodes(base), 2);
    CHECK_NEAR(acc_topo_network(base)->latency_us, 2.7, 1e-9);
    CHECK_NEAR(acc_topo_vertex(base, acc_topo_find(base, ACC_VTX_NIC, 0))->speed_gbps, 400.0, 0);
    acc_topo_destroy(t);
    acc_topo_destroy(base);
}

ACC_TEST(separators_and_alias)
{
    char a[ACC_SHA256_HEX_LEN + 1], b[ACC_SHA256_HEX_LEN + 1], c[ACC_SHA256_HEX_LEN + 1];

    /* Blanks, tabs and commas separate pairs; the order of the pairs does not matter. */
    fingerprint_with(TWO_NODES, "nic=100 latency=5", a);
    fingerprint_with(TWO_NODES, " latency=5,nic=100\t", b);
    /* latency_us, as the database's stored networks write it, is latency. */
    fingerprint_with(TWO_NODES, "nic=100,latency_us=5", c);
    CHECK_STR(a, b);
    CHECK_STR(a, c);
}

ACC_TEST(fingerprint_follows_the_network)
{
    static const char *const changes[] = {"nic=100", "latency=5", "rail=0", "oversub=2", "nodes=4"};
    acc_topo_t *base = load(TWO_NODES);
    char fb[ACC_SHA256_HEX_LEN + 1], f[ACC_SHA256_HEX_LEN + 1], again[ACC_SHA256_HEX_LEN + 1];
    size_t i;

    fingerprint(base, fb);
    for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        fingerprint_with(TWO_NODES, changes[i], f);
        CHECK_MSG(strcmp(f, fb) != 0, "%s left the fingerprint as it was", changes[i]);
        /* The same network twice is the same cluster. */
        fingerprint_with(TWO_NODES, changes[i], again);
        CHECK_STR(f, again);
    }
    /* RoCE's latency is NCCL's NET hop, the default: only the name changes, and the cluster is
     * the same.  (EFA's is not: fabrics_bring_their_published_latency.) */
    fingerprint_with(TWO_NODES, "fabric=roce", f);
    CHECK_STR(f, fb);
    acc_topo_destroy(base);
}

ACC_TEST(own_network_keeps_the_fingerprint)
{
    acc_topo_t *base = load("dgx-h100-2node");
    char fb[ACC_SHA256_HEX_LEN + 1], f[ACC_SHA256_HEX_LEN + 1];

    fingerprint(base, fb);
    /* dgx-h100-2node's own values, given as parameters, partly and in full. */
    fingerprint_with("dgx-h100-2node", "fabric=ib-ndr,latency=2.7", f);
    CHECK_STR(f, fb);
    fingerprint_with("dgx-h100-2node", "nic=400 latency=2.7 rail=1 oversub=1 nodes=2 fabric=ib-ndr",
                     f);
    CHECK_STR(f, fb);
    acc_topo_destroy(base);
}

/* Every failure leaves *out NULL and its message names what was wrong and lists the keys. */
static void check_refused(const char *src, const char *params, acc_status_t want,
                          const char *fragment)
{
    acc_topo_t *base = load(src), *t = base;
    acc_status_t st = acc_topo_with_network(base, params, &t);

    CHECK_MSG(st == want, "\"%s\" gave %s (%s), expected %s", params, acc_status_name(st),
              acc_error_message(), acc_status_name(want));
    CHECK_MSG(t == NULL, "\"%s\" failed but returned a topology", params);
    CHECK_MSG(strstr(acc_error_message(), fragment) != NULL, "\"%s\": message \"%s\" lacks \"%s\"",
              params, acc_error_message(), fragment);
    acc_topo_destroy(base);
}

#define KEYS "keys: nic=GBPS, latency=US, rail=0|1, oversub=X, nodes=N, fabric=NAME"

ACC_TEST(bad_values)
{
    static const struct {
        const char *params, *fragment;
    } cases[] = {
        {"nic=0", "nic=0: expected the NICs' line rate"},
        {"nic=-4", "nic=-4: expected"},
        {"nic=fast", "nic=fast: expected"},
        {"nic=2e7", "nic=2e7: expected"},
        {"latency=-1", "latency=-1: expected the one-way network latency"},
        {"latency_us=x", "latency_us=x: expected"},
        {"rail=2", "rail=2: expected 1 (rail-optimised) or 0"},
        {"oversub=0.5", "oversub=0.5: expected an oversubscription ratio >= 1"},
        {"nodes=0", "nodes=0: expected a node count"},
        {"nodes=1.5", "nodes=1.5: expected"},
        {"nodes=131073", "nodes=131073: expected a node count, a whole number 1 to 131072"},
        {"fabric=ib/ndr", "fabric=ib/ndr: expected a fabric name"},
        {"fabric=0123456789012345678901234567890123456789012345678901234567890123",
         "expected a fabric name of 1 to 63"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_refused(TWO_NODES, cases[i].params, ACC_ERR_INVALID, cases[i].fragment);
        CHECK_MSG(strstr(acc_error_message(), KEYS) != NULL, "\"%s\": no list of keys in \"%s\"",
                  cases[i].params, acc_error_message());
        CHECK_MSG(strstr(acc_error_message(), cases[i].params) != NULL,
                  "\"%s\": the message \"%s\" does not quote the parameters", cases[i].params,
                  acc_error_message());
    }
    /* An empty value names its key and the key's form. */
    check_refused(TWO_NODES, "latency=", ACC_ERR_INVALID, "latency=: expected latency=US");
}

ACC_TEST(unknown_keys_duplicates_and_empty)
{
    check_refused(TWO_NODES, "speed=100", ACC_ERR_PARSE, "unknown key 'speed' (" KEYS ")");
    check_refused(TWO_NODES, "nic=100 bandwidth=3", ACC_ERR_PARSE, "unknown key 'bandwidth'");
    check_refused(TWO_NODES, "rail", ACC_ERR_PARSE, "'rail' has no '='");
    check_refused(TWO_NODES, "nic=100 nic=200", ACC_ERR_PARSE, "key 'nic' given twice (" KEYS);
    /* The alias is the same key. */
    check_refused(TWO_NODES, "latency=1,latency_us=2", ACC_ERR_PARSE, "key 'latency' given twice");
    check_refused(TWO_NODES, "", ACC_ERR_PARSE, "no parameters; give at least one (" KEYS);
    check_refused(TWO_NODES, " , \t", ACC_ERR_PARSE, "no parameters");
}

ACC_TEST(what_the_topology_cannot_take)
{
    acc_topo_t *base = load("nodes=1 gpus=8 nvlink=18"); /* no NICs */
    acc_topo_t *t = base;

    /* A NIC rate for a machine without NICs would set nothing. */
    check_refused("nodes=1 gpus=8 nvlink=18", "nic=100", ACC_ERR_INVALID, "no NICs");
    /* Nodes that cannot talk: the check of the result fails, and says the network caused it. */
    CHECK(acc_topo_with_network(base, "nodes=2", &t) != ACC_OK);
    CHECK(t == NULL);
    CHECK_MSG_HAS("applying network \"nodes=2\": ");
    CHECK_ERR(acc_topo_with_network(base, NULL, &t), ACC_ERR_INVALID);
    acc_topo_destroy(base);
}

/* Each fabric of the table has the latency schedules/TOPOLOGY.md documents ("Fabrics"): NCCL's
 * NET hop, 2.7 us, plus what its NCCL plugin reports: nothing for the verbs fabrics (NCCL's own
 * net_ib), 75 us for EFA on p4d and p5 and 35 us on p5en and P6 (aws-ofi-nccl). */
ACC_TEST(fabrics_bring_their_published_latency)
{
    static const struct {
        const char *name;
        double latency_us;
    } documented[] = {{"ib-hdr", 2.7},     {"ib-ndr", 2.7}, {"ib-xdr", 2.7}, {"roce", 2.7},
                      {"spectrum-x", 2.7}, {"efa", 77.7},   {"efa-v3", 37.7}};
    size_t i, n = 0;
    const acc_topo_fabric_t *all = acc_topo_fabrics(&n);
    acc_topo_t *base = load(TWO_NODES), *t = NULL;

    CHECK_INT((int)n, (int)(sizeof(documented) / sizeof(documented[0])));
    for (i = 0; i < sizeof(documented) / sizeof(documented[0]); i++) {
        const acc_topo_fabric_t *f = acc_topo_fabric(documented[i].name);
        char params[64];
        CHECK_MSG(f != NULL, "no fabric %s", documented[i].name);
        CHECK_STR(all[i].name, documented[i].name);
        CHECK_NEAR(acc_topo_fabric_latency_us(documented[i].name), documented[i].latency_us, 1e-9);
        CHECK_MSG(f->source[0] && f->what[0], "%s has no source", documented[i].name);
        /* fabric= without latency= brings the fabric's latency ... */
        snprintf(params, sizeof(params), "fabric=%s", documented[i].name);
        CHECK_OK(acc_topo_with_network(base, params, &t));
        CHECK_NEAR(acc_topo_network(t)->latency_us, documented[i].latency_us, 1e-9);
        acc_topo_destroy(t);
        /* ... and a latency given wins. */
        snprintf(params, sizeof(params), "fabric=%s latency=5", documented[i].name);
        CHECK_OK(acc_topo_with_network(base, params, &t));
        CHECK_NEAR(acc_topo_network(t)->latency_us, 5.0, 0);
        acc_topo_destroy(t);
    }
    /* A name without figures is the NET hop alone. */
    CHECK(acc_topo_fabric("vpc") == NULL);
    CHECK_NEAR(acc_topo_fabric_latency_us("vpc"), 2.7, 1e-9);
    CHECK_NEAR(acc_topo_fabric_latency_us(NULL), 2.7, 1e-9);
    acc_topo_destroy(base);

    /* The synthetic form and the YAML take the fabric's latency too, and say so. */
    t = load("nodes=2 gpus=8 nvlink=18 nic=32x100 fabric=efa");
    CHECK_NEAR(acc_topo_network(t)->latency_us, 77.7, 1e-9);
    CHECK(strstr(acc_topo_source(t), "latency=77.7") != NULL);
    acc_topo_destroy(t);
    t = load("nodes=2 gpus=8 nvlink=18 nic=32x100 fabric=efa latency=12.5");
    CHECK_NEAR(acc_topo_network(t)->latency_us, 12.5, 0);
    acc_topo_destroy(t);
    {
        static const char yaml[] =
            "version: 1\nnode: aws-p5en\nnetwork: {nodes: 2, fabric: efa-v3}\n";
        int k, said = 0;
        setenv("ACC_PLATFORM_DIR", acc_test_src("schedules/platforms"), 1);
        CHECK_OK(acc_topo_load_buffer(yaml, strlen(yaml), "p5en-pair.yaml", &t));
        CHECK_NEAR(acc_topo_network(t)->latency_us, 37.7, 1e-9);
        for (k = 0; k < acc_topo_assumption_count(t); k++)
            said |= strstr(acc_topo_assumption(t, k), "aws-ofi-nccl") != NULL;
        CHECK_MSG(said, "the assumed latency does not name its source");
        acc_topo_destroy(t);
    }
}
