/*
 * The NCCL replica's object (acc_cost.h): communicator set-up as ncclCommInitRank does it
 * (graph searches, channel alignment, runtime channels), and the per-call selection of
 * topoGetAlgoInfo (src/enqueue.cc).  Formulas cite reference/02-nccl.md §2, the "sheet".
 */
#include "nccl_internal.h"

#include <string.h>

const char *acc_nccl_algo_name(acc_nccl_algo_t a)
{
    static const char *const n[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                    "NVLSTree", "PAT"};
    return (unsigned)a < ACC_NCCL_ALGO_COUNT ? n[a] : "?";
}

const char *acc_nccl_proto_name(acc_nccl_proto_t p)
{
    static const char *const n[] = {"LL", "LL128", "Simple"};
    return (unsigned)p < ACC_NCCL_PROTO_COUNT ? n[p] : "?";
}

const char *acc_nccl_path_name(acc_nccl_path_t t)
{
    static const char *const n[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                    "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
    return (unsigned)t < ACC_NCCL_PATH_COUNT ? n[t] : "?";
}

void acc_nccl_options_init(acc_nccl_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->version = ACC_NCCL_VERSION_DEFAULT;
    o->nvls = -1;
    o->net_latency_us = ACC_NCCL_NET_LATENCY_OF_FABRIC;
}

double acc_nccl_net_latency_us(const acc_nccl_options_t *o, const acc_topo_t *topo)
{
    const acc_topo_fabric_t *f;
    if (o->net_latency_us != ACC_NCCL_NET_LATENCY_OF_FABRIC)
        return o->net_latency_us;
    f = acc_topo_fabric(acc_topo_network(topo)->name);
    return f ? f->plugin_latency_us : 0.0;
}

static acc_status_t check_options(const acc_nccl_options_t *o)
{
    int v = o->version ? o->version : ACC_NCCL_VERSION_DEFAULT;
    if (v < 22800 || v > 22899)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "NCCL model: version code %d is not modelled; only NCCL 2.28 "
                             "(22800 to 22899) is, from reference/02-nccl.md",
                             o->version);
    if (o->collnet != 0 && o->collnet != 1)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: collnet=%d: expected 0 or 1",
                             o->collnet);
    if (o->nvls < -1 || o->nvls > 1)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: nvls=%d: expected -1 (auto), 0 or 1",
                             o->nvls);
    if (o->min_channels < 0 || o->min_channels > NN_MAXCHANNELS || o->max_channels < 0 ||
        o->max_channels > NN_MAXCHANNELS ||
        (o->min_channels && o->max_channels && o->min_channels > o->max_channels))
        return acc_error_set(ACC_ERR_INVALID,
                             "NCCL model: channels %d..%d: expected 0 (default) or 1 to 64, "
                             "minimum not above maximum",
                             o->min_channels, o->max_channels);
    if (!(o->net_latency_us >= 0 && o->net_latency_us < 1e6) &&
        o->net_latency_us != ACC_NCCL_NET_LATENCY_OF_FABRIC)
        return acc_error_set(ACC_ERR_INVALID,
                             "NCCL model: net_latency_us=%g: expected a latency >= 0 us, or "
                             "ACC_NCCL_NET_LATENCY_OF_FABRIC (%g) for the fabric's",
                             o->net_latency_us, ACC_NCCL_NET_LATENCY_OF_FABRIC);
    return ACC_OK;
}

static void export_graph(const nn_graph_t *g, acc_nccl_graph_t *out)
{
    out->pattern = (acc_nccl_pattern_t)g->pattern;
    out->nchannels = g->nchannels;
    out->bw_intra = g->bw_intra;
    out->bw_inter = g->bw_inter;
    out->type_intra = (acc_nccl_path_t)g->type_intra;
    out->type_inter = (acc_nccl_path_t)g->type_inter;
    out->same_channels = g->same_channels;
    out->crossnic = g->crossnic;
    out->latency_inter = g->latency_inter;
}

/* The graphs init.cc searches, in its order; graphs[] maps algorithms to them. */
static acc_status_t search_all(nn_system_t *s, const acc_nccl_options_t *o, acc_nccl_model_t *m)
{
    enum { GR, GT, GCC, GCD, GNV, NGRAPHS };
    nn_graph_t *g = acc_mem_calloc(NGRAPHS, sizeof(nn_graph_t));
    acc_status_t st = ACC_OK;
    int i;
    if (!g)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for the graphs");
    g[GR].id = 0, g[GR].pattern = ACC_NCCL_PATTERN_RING; /* sheet §2: maxChannels 32 */
    g[GR].min_channels = 1, g[GR].max_channels = NN_MAXCHANNELS / 2;
    if ((st = nn_compute(s, &g[GR])) != ACC_OK)
        goto out;
    g[GT].id = 1, g[GT].pattern = ACC_NCCL_PATTERN_BALANCED_TREE;
    g[GT].min_channels = g[GT].max_channels = g[GR].nchannels;
    if ((st = nn_compute(s, &g[GT])) != ACC_OK)
        goto out;
    g[GCC].id = 2, g[GCC].pattern = ACC_NCCL_PATTERN_TREE, g[GCC].collnet = 1;
    g[GCC].min_channels = g[GCC].max_channels = g[GR].nchannels;
    g[GCD].id = 4, g[GCD].pattern = ACC_NCCL_PATTERN_COLLNET_DIRECT, g[GCD].collnet = 1;
    g[GCD].min_channels = 1, g[GCD].max_channels = NN_MAXCHANNELS;
    if (o->collnet &&
        ((st = nn_compute(s, &g[GCC])) != ACC_OK || (st = nn_compute(s, &g[GCD])) != ACC_OK))
        goto out;
    g[GNV].id = 3, g[GNV].pattern = ACC_NCCL_PATTERN_NVLS;
    g[GNV].min_channels = 1, g[GNV].max_channels = NN_MAXCHANNELS;
    if (m->nvls && (st = nn_compute(s, &g[GNV])) != ACC_OK)
        goto out;
    if (!o->collnet || g[GCC].nchannels == 0)
        g[GCC].pattern = g[GCD].pattern = ACC_NCCL_PATTERN_NONE;
    if (!m->nvls)
        g[GNV].pattern = ACC_NCCL_PATTERN_NONE;
    /* "If the NVLS graph has no channels, NVLS is off" (init.cc); a CollNet chain graph with
     * no channels turns CollNet off; below 2 nodes CollNet is off (NCCL_COLLNET_NODE_THRESHOLD,
     * not on the sheet). */
    m->nvls = m->nvls && g[GNV].nchannels > 0;
    m->collnet = o->collnet && g[GCC].nchannels > 0 && m->nnodes >= 2;
    /* Ring and tree share one channel count (init.cc, after the all-gather). */
    m->nchannels = g[GT].nchannels < g[GR].nchannels ? g[GT].nchannels : g[GR].nchannels;
    g[GR].nchannels = g[GT].nchannels = m->nchannels;
    export_graph(&g[GT], &m->graph[NN_T]);
    export_graph(&g[GR], &m->graph[NN_R]);
    export_graph(&g[GCD], &m->graph[NN_CD]);
    export_graph(&g[GCC], &m->graph[NN_CC]);
    export_graph(&g[GNV], &m->graph[NN_NV]);
    export_graph(&g[GNV], &m->graph[NN_NT]);
    export_graph(&g[GT], &m->graph[NN_PAT]);
    for (i = 0; i < ACC_NCCL_ALGO_COUNT; i++)
        m->graph[i].latency_inter = s->count[NN_NET] ? o->net_latency_us : 0;
out:
    acc_mem_free(g);
    return st;
}

/* ncclTopoPostset (connect.cc) and the channel limits: sheet §2 "comm->nChannels = min(64, 2 x
 * graph channels).  On sm90 multi-node with ring bwIntra > 45 and fewer than 16 channels, it
 * doubles again.  Finally it clamps with NCCL_MIN/MAX_NCHANNELS".  Not on the sheet: with
 * CollNet, 50% more channels when the chain graph is faster inside the node than out of it. */
static void runtime_channels(acc_nccl_model_t *m, const acc_nccl_options_t *o)
{
    int nc = 2 * m->nchannels;
    const acc_nccl_graph_t *chain = &m->graph[NN_CC];
    nc = nc < NN_MAXCHANNELS ? nc : NN_MAXCHANNELS;
    if (m->collnet && chain->bw_intra > chain->bw_inter && m->nranks > m->nnodes)
        nc = nc + nc / 2 < NN_MAXCHANNELS ? nc + nc / 2 : NN_MAXCHANNELS;
    if (m->min_sm >= 90 && m->nnodes > 1 && m->graph[NN_R].bw_intra > 45.0 && nc < 16)
        nc = 2 * nc < NN_MAXCHANNELS ? 2 * nc : NN_MAXCHANNELS;
    if (o->max_channels && nc > o->max_channels)
        nc = o->max_channels;
    if (o->min_channels && nc < o->min_channels)
        nc = o->min_channels;
    m->nchannels = nc;
    /* sheet §2: "NVLS runtime channels: 16 on SM90; 32 on SM100 multi-node; 24 on SM100
     * single-node". */
    m->nvls_channels = !m->nvls ? 0 : m->min_sm >= 100 ? (m->nnodes > 1 ? 32 : 24) : 16;
}

acc_status_t acc_nccl_model_create(const acc_topo_t *topo, const acc_nccl_options_t *opts,
                                   acc_nccl_model_t **out)
{
    acc_nccl_options_t o;
    acc_nccl_model_t *m = NULL;
    nn_system_t s;
    acc_status_t st;
    int ngpus;

    memset(&s, 0, sizeof(s));
    if (!topo || !out)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: no topology or no output");
    *out = NULL;
    if (opts)
        o = *opts;
    else
        acc_nccl_options_init(&o);
    if ((st = check_options(&o)) != ACC_OK)
        return st;
    o.net_latency_us = acc_nccl_net_latency_us(&o, topo);
    ngpus = acc_topo_gpus_per_node(topo);
    if (ngpus < 1 || ngpus > NN_MAX_GPUS)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "NCCL model: topology '%s' has %d GPUs per node; the model needs "
                             "1 to %d",
                             acc_topo_name(topo), ngpus, NN_MAX_GPUS);
    if (acc_topo_nodes(topo) > 1 && acc_topo_count(topo, ACC_VTX_NIC) == 0)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "NCCL model: topology '%s' has %d nodes but no NIC; NCCL needs a "
                             "network device to leave a node",
                             acc_topo_name(topo), acc_topo_nodes(topo));
    m = acc_mem_calloc(1, sizeof(*m));
    if (!m)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory");
    m->nnodes = acc_topo_nodes(topo);
    m->ppn = ngpus;
    m->nranks = m->nnodes * ngpus;
    /* NCCL removes the NET nodes when every rank is on this node (ncclTopoTrimSystem). */
    if ((st = nn_system_build(topo, m->nnodes > 1, &s)) != ACC_OK)
        goto fail;
    m->min_sm = s.min_sm, m->max_sm = s.max_sm;
    m->cpu_arch = s.cpu_arch, m->cpu_vendor = s.cpu_vendor;
    m->nvs_count = s.count[NN_NVS];
    m->max_bw = s.max_bw, m->total_bw = s.total_bw;
    /* NVLS: multicast needs sm90+ behind an NVSwitch, and ncclNvlsInit skips nodes of <= 2
     * GPUs (not on the sheet; src/transport/nvls.cc). */
    m->nvls = o.nvls != 0 && s.min_sm >= 90 && s.count[NN_NVS] > 0 && ngpus > 2;
    if ((st = search_all(&s, &o, m)) != ACC_OK)
        goto fail;
    runtime_channels(m, &o);
    nn_tune(m);
    nn_system_free(&s);
    *out = m;
    return ACC_OK;
fail:
    nn_system_free(&s);
    acc_mem_free(m);
    return acc_error_prefix(st, "topology '%s': ", acc_topo_name(topo));
}

void acc_nccl_model_destroy(acc_nccl_model_t *m)
{
    acc_mem_free(m);
}
