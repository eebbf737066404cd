/*
 * NCCL's cost model: ncclTopoTuneModel (src/graph/tuning.cc), which fills the bandwidth and
 * latency tables from the search graphs, and ncclTopoGetAlgoTime, which prices one call.
 * Every formula and constant is reference/02-nccl.md §2 (the "sheet") unless a comment says
 * the sheet is silent.
 */
#include "nccl_internal.h"

#include <float.h>
#include <string.h>

enum { HW_NVLINK = 0, HW_PCI, HW_NET };

/* sheet §2 "Latency constants in us" (LL / LL128 / Simple); "-" entries are 0. */
static const float base_lat[ACC_NCCL_ALGO_COUNT][3] = {
    {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0},         {0, 0, 0},
    {0, 0, 0},           {0, 0, 0},           {8.0f, 8.0f, 8.0f}};
static const float hw_lat_default[3][ACC_NCCL_ALGO_COUNT][3] = {{{.6f, 1.25f, 4.0f},
                                                                 {.6f, 1.9f, 3.4f},
                                                                 {0, 0, 3.7f},
                                                                 {0, 0, 2.8f},
                                                                 {0, 0, 25},
                                                                 {0, 0, 25},
                                                                 {0, 0, 4.0f}},
                                                                {{1.0f, 1.9f, 4.0f},
                                                                 {1.0f, 2.5f, 5.7f},
                                                                 {0, 0, 3.7f},
                                                                 {0, 0, 2.8f},
                                                                 {0, 0, 0},
                                                                 {0, 0, 0},
                                                                 {0, 0, 4.0f}},
                                                                {{5.0f, 8.5f, 14},
                                                                 {2.7f, 4.0f, 14.0f},
                                                                 {0, 0, 31},
                                                                 {0, 0, 30},
                                                                 {0, 0, 18},
                                                                 {0, 0, 20.9f},
                                                                 {0, 0, 14}}};

/* sheet §2 "Bandwidth caps" [compcap Volta/Ampere/Hopper/Blackwell][1 node/2 nodes/>= 4]. The
 * sheet gives llMaxBws in full and only the Hopper rows of the per-channel caps and of
 * nvlsEfficiency; the other rows follow NCCL 2.28 src/graph/tuning.cc
 * (ncclTunerConstantsDefaults, nvlsEfficiency). */
static const double ll_max_bw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
static const double ring_ll128_bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
static const double tree_ll128_bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double tree_bw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double nvls_tree_bw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
static const float nvls_efficiency[4] = {0.0f, 0.0f, 0.85f, 0.74f};

/* sheet §2 "Tree AllReduce: bw *= treeCorrectionFactor[p][log2(nBytes>>6)]", 64 B .. 256 MB. */
static const float tree_correction[3][23] = {
    {1,   1,   1,   1,   .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f,
     .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1,   1,   1,   1},
    {1,   1,   1,   1,   1,   .9f, .8f, .8f, .8f, .7f, .6f, .6f,
     .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1,   1},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
     .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f}};

/* log2i: floor(log2(n)), -1 for 0. */
static int log2i(uint64_t n)
{
    int l = -1;
    while (n) {
        n >>= 1;
        l++;
    }
    return l;
}

/* sheet §2: "The NET overhead is 1.0 us on Intel, 2.0 on AMD and 1.0 elsewhere". */
static float net_overhead(const struct acc_nccl_model *m)
{
    return m->cpu_arch == NN_ARCH_X86 && m->cpu_vendor == NN_VENDOR_AMD ? 2.0f : 1.0f;
}

/* The bus bandwidth of one entry, before the conversion to algorithm bandwidth. */
static float bus_bw(const struct acc_nccl_model *m, int c, int a, int p, int cc, int i2,
                    float ll_max)
{
    const acc_nccl_graph_t *g = &m->graph[a];
    float ppn = (float)m->nranks / (float)m->nnodes;
    int collnet = a == NN_CD || a == NN_CC, nch = g->nchannels;
    float bw = m->nnodes <= 2 || collnet ? (float)g->bw_intra : (float)g->bw_inter, bus;

    if (a == NN_NV || a == NN_NT) { /* sheet §2 "NVLS/NVLSTree (need >= 2 graph channels)" */
        float intra, inter, cap = a == NN_NT ? (float)nvls_tree_bw[cc][i2] : FLT_MAX;
        if (nch < 2)
            return 0;
        intra = (float)g->bw_intra * nvls_efficiency[cc] * (float)(nch - 1) / (float)nch;
        intra *= c == NN_AR ? 2.0f : (ppn - 1) / ppn;
        inter = (float)g->bw_inter * (m->nnodes <= 2 && a == NN_NT ? 2 : 1);
        bw = intra < inter ? intra : inter;
        bw = bw < cap ? bw : cap;
        /* Not on the sheet: multi-node NVLS allgather / reduce_scatter also need the CollNet
         * plugin's own allgather / reduce_scatter, which acc cannot know about. */
        if (a == NN_NV && c != NN_AR && m->nnodes > 1)
            return 0;
    }
    bus = (float)nch * bw;
    if (a == NN_R && p == NN_LL)
        bus = (float)(ll_max < bus * .5 ? ll_max : bus * .5);
    if (a == NN_R && p == NN_LL128) {
        double cap = nch * ring_ll128_bw[cc][i2];
        bus = (float)(bus * .92 < cap ? bus * .92 : cap);
    }
    if (a == NN_T && c == NN_AR) {
        double cap = nch * tree_bw[cc][i2];
        bus = (float)(bus * .92 < cap ? bus * .92 : cap);
    }
    if (a == NN_T && p == NN_LL)
        bus = (float)(bus * 1.0 / 3.8 < ll_max ? bus * 1.0 / 3.8 : ll_max);
    if (a == NN_T && p == NN_LL128) {
        double f = m->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0, cap = nch * tree_ll128_bw[cc][i2];
        bus = (float)(bus * f < cap ? bus * f : cap);
    }
    if (a == NN_T && m->graph[NN_T].pattern == ACC_NCCL_PATTERN_TREE)
        bus *= .85f;
    if (a == NN_PAT)
        bus *= .75f;
    if (collnet && p != NN_SIMPLE)
        bus = 0;
    if (a == NN_CD && p == NN_SIMPLE) {
        if (c != NN_AR) {
            /* Not on the sheet: CollNetDirect allgather / reduce_scatter depend on the CollNet
             * plugin offering them (and 1:1 GPU:NIC); the sheet gives no formula, so they are
             * taken as unavailable. */
            bus = 0;
        } else { /* "with f = ppn/nCh; f -= (f-1)/2, busBw /= f; a further x.85 on sm90+" */
            float f = ppn / (float)nch;
            f -= (f - 1) / 2;
            bus /= f;
            if (m->min_sm >= 90)
                bus *= .85f;
        }
    }
    return bus;
}

static float latency(const struct acc_nccl_model *m, int c, int a, int p, float hw[3][7][3])
{
    const acc_nccl_graph_t *g = &m->graph[a];
    int nranks = m->nranks, nnodes = m->nnodes, lppn = nranks / nnodes;
    int nsteps = c == NN_AR ? 2 * (nranks - 1) : nranks - 1;
    /* "intraLat uses the NVLINK table if graph.typeIntra == LINK_NVL, else PCI"; "interLat =
     * hwNET[a, or Tree if ppn==1][p] + graph.latencyInter, with +latencyInter added again for
     * Simple (the flush)". */
    float intra = hw[g->type_intra == ACC_NCCL_PATH_NVL ? HW_NVLINK : HW_PCI][a][p];
    float inter = hw[HW_NET][nranks == nnodes ? NN_T : a][p] + (float)g->latency_inter;
    float lat = base_lat[a][p];
    if (p == NN_SIMPLE)
        inter += (float)g->latency_inter;
    if (a == NN_R) {
        float over = 0;
        int ninter = nnodes == 1 ? 0 : c == NN_AR ? 2 * (nnodes - 1) : nnodes - 1;
        if (nnodes > 1) /* "x3 for Simple" */
            over = net_overhead(m) * (p == NN_SIMPLE ? 3 : 1);
        intra = intra > over ? intra : over;
        return lat + (float)(nsteps - ninter) * intra + (float)ninter * inter;
    }
    if (a == NN_T)
        return c == NN_AR
                   ? lat + 2 * ((float)(lppn - 1) * intra + (float)log2i((uint64_t)nnodes) * inter)
                   : lat;
    if (a == NN_CD) /* "+ 2*(min(1,ppn-1)*intraLat + (ppn-1)*0.4) + interLat" */
        return lat + 2 * ((float)(lppn - 1 < 1 ? lppn - 1 : 1) * intra + (float)(lppn - 1) * 0.4f) +
               inter;
    if (a == NN_CC)
        return lat + 2 * (float)(lppn - 1) * intra + inter;
    if (a == NN_NV) /* "the base is overwritten" */
        return intra + (nnodes > 1 ? inter : 0);
    if (a == NN_NT)
        return lat + intra + 2 * (float)log2i((uint64_t)nnodes) * inter;
    /* PAT: "+ log2(nNodes)*interLat/3.5 + 2.8*nRanks" */
    return lat + (float)log2i((uint64_t)nnodes) * (inter / 3.5f) + (float)nranks * 2.8f;
}

/* Which algorithms NCCL models for a collective, and whether PAT runs at all: "PAT only runs
 * with 1 GPU per node, sm >= 60 and host networking, and only for AG/RS with Simple". */
static int modelled(const struct acc_nccl_model *m, int c, int a, int p)
{
    if (c == NN_AR && a == NN_PAT)
        return 0;
    if (c != NN_AR && a != NN_PAT && a != NN_R && a != NN_NV && a != NN_CD)
        return 0;
    if ((a == NN_NV || a == NN_NT) && p != NN_SIMPLE)
        return 0;
    if (a == NN_PAT && (p != NN_SIMPLE || m->min_sm < 60 || m->nnodes != m->nranks))
        return 0;
    return 1;
}

/* sheet §2 "Enables"; returns 0 when NCCL zeroes the entry. */
static int enabled(const struct acc_nccl_model *m, int a, int p)
{
    const acc_nccl_graph_t *g = &m->graph[a];
    if (m->nnodes == 1 && a == NN_NT) /* "NVLSTree is off on 1 node" */
        return 0;
    if (!m->collnet && (a == NN_CD || a == NN_CC || (a == NN_NV && m->nnodes > 1)))
        return 0;                        /* "CollNet* and multi-node NVLS need collnet" */
    if (a == NN_CD && m->nvs_count == 0) /* "CollNetDirect needs an NVSwitch" */
        return 0;
    if (p == NN_LL128) {
        /* "every GPU has the same sm, typeIntra <= NVB, and typeInter <= PXN (sm >= 90 with
         * NCCL_LL128_C2C=1, its default) or <= PXB (otherwise)".  Not on the sheet: NCCL 2.28
         * also refuses LL128 below sm70. */
        int inter_max = m->min_sm >= 90 ? ACC_NCCL_PATH_PXN : ACC_NCCL_PATH_PXB;
        if ((int)g->type_inter > inter_max || g->type_intra > ACC_NCCL_PATH_NVB ||
            m->min_sm != m->max_sm || m->min_sm < 70)
            return 0;
    }
    return 1;
}

void nn_tune(struct acc_nccl_model *m)
{
    int cc = m->min_sm >= 100 ? 3 : m->min_sm >= 90 ? 2 : m->min_sm >= 80 ? 1 : 0;
    int i2 = m->nnodes <= 2 ? m->nnodes - 1 : 2, c, a, p;
    /* "For 1 node the row is picked by GPU arch; for multi-node it is picked by CPU (row 0
     * Intel, row 1 AMD/mixed)". */
    int i1 = m->nnodes == 1 ? cc : m->cpu_vendor == NN_VENDOR_AMD ? 1 : 0;
    float hw[3][7][3];
    const acc_nccl_graph_t *ring = &m->graph[NN_R];

    memcpy(hw, hw_lat_default, sizeof(hw));
    /* Not on the sheet: on POWER, NCCL gives Tree/Simple the ring's PCI latency. */
    if (m->cpu_arch == NN_ARCH_POWER)
        hw[HW_PCI][NN_T][NN_SIMPLE] = hw[HW_PCI][NN_R][NN_SIMPLE];
    memset(m->bw, 0, sizeof(m->bw));
    memset(m->lat, 0, sizeof(m->lat));
    for (c = 0; c < NN_COLLS && m->nranks > 1; c++) {
        int nsteps = c == NN_AR ? 2 * (m->nranks - 1) : m->nranks - 1;
        for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++) {
            for (p = 0; p < ACC_NCCL_PROTO_COUNT; p++) {
                float bus;
                if (!modelled(m, c, a, p) ||
                    ((a == NN_NV || a == NN_NT) && m->graph[a].nchannels < 2))
                    continue;
                bus = bus_bw(m, c, a, p, cc, i2, (float)ll_max_bw[i1][i2]);
                /* "busBw -> algBw: Ring, NVLS and NVLSTree use x nRanks/nsteps; Tree and
                 * CollNet use x 0.5.  AG/RS with a non-ring algorithm are not converted." */
                if (!(a != NN_R && c != NN_AR))
                    bus *= a == NN_R || a == NN_NV || a == NN_NT ? (float)m->nranks / (float)nsteps
                                                                 : .5f;
                m->bw[c][a][p] = enabled(m, a, p) ? bus : 0;
                m->lat[c][a][p] = latency(m, c, a, p, hw);
            }
        }
    }
    /* sheet §2 "Threads and channels per call": thread maximums and per-thread thresholds.  Not
     * on the sheet: NCCL 2.28 sets no maximum for PAT, which leaves it 0. */
    memset(m->max_threads, 0, sizeof(m->max_threads));
    m->max_threads[NN_R][NN_SIMPLE] = ring->bw_intra * ring->nchannels <= 12.0 ? 256 : 512;
    m->max_threads[NN_T][NN_SIMPLE] = 512;
    m->max_threads[NN_CD][NN_SIMPLE] = m->max_threads[NN_CC][NN_SIMPLE] = 640;
    m->max_threads[NN_NV][NN_SIMPLE] = m->max_threads[NN_NT][NN_SIMPLE] = 640;
    m->max_threads[NN_R][NN_LL] = m->max_threads[NN_T][NN_LL] = 512;
    m->max_threads[NN_R][NN_LL128] = m->max_threads[NN_T][NN_LL128] = 640;
    for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++) {
        m->thread_threshold[a][NN_LL] = 8;
        m->thread_threshold[a][NN_LL128] = 8;
        m->thread_threshold[a][NN_SIMPLE] = 64;
    }
    m->thread_threshold[NN_R][NN_LL] *= m->nranks;
    m->thread_threshold[NN_CD][NN_SIMPLE] = m->thread_threshold[NN_CC][NN_SIMPLE] = 512;
}

float nn_algo_time(const struct acc_nccl_model *m, int c, int a, int p, uint64_t nbytes)
{
    float bw = m->bw[c][a][p], lat = m->lat[c][a][p];
    int log_size = log2i(nbytes >> 6);
    if (bw == 0)
        return -1.0f;
    if (a == NN_T && c == NN_AR && log_size >= 0 && log_size < 23)
        bw *= tree_correction[p][log_size];
    /* The ring plateau; NCCL divides by the runtime channel count comm->nChannels. */
    if (a == NN_R && p == NN_SIMPLE && m->nnodes > 1 && c == NN_AR &&
        nbytes / ((uint64_t)m->nchannels * (uint64_t)m->nranks) >= 64)
        lat *= m->min_sm < 80 ? 1.9f : 1.4f;
    /* latCount = numPipeOps = 1 for one operation, Ring or not. */
    return lat + (float)nbytes / (1000 * bw);
}
