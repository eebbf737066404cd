/*
 * ncclTopoCompute (src/graph/search.cc): the outer loop of NCCL's graph search.  Pass 1 looks
 * for any solution, relaxing in turn the channel sameness, the tree shape, the intra-node and
 * NIC path types and NIC crossing, then lowering the per-channel speed; the solution is
 * duplicated; pass 2 tries higher speeds with that channel count.
 */
#include "nccl_internal.h"

#include <string.h>

/* Per-channel speed ladders (sheet §2 "Search graphs").  The sheet elides the tail of the
 * SM100 inter ladder ("{96,48,45.1,42,...}") and gives no pre-Hopper inter ladder; both follow
 * NCCL 2.28 src/graph/search.cc (sm100SpeedArrayInter, speedArrayInter). */
static const float intra_sm90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
static const float inter_sm90[] = {48, 45, 42, 40, 30,   24,   22,   20,  17.5f,
                                   15, 12, 6,  3,  2.4f, 1.2f, .24f, .12f};
static const float intra_sm100[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
static const float inter_sm100[] = {96,    48, 45.1f, 42, 40, 30,   24,   22,   20,
                                    17.5f, 15, 12,    6,  3,  2.4f, 1.2f, .24f, .12f};
static const float intra_pre90[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
static const float inter_pre90[] = {48, 30, 28, 24, 20, 18,   15,   12,   10,  9,
                                    7,  6,  5,  4,  3,  2.4f, 1.2f, .24f, .12f};

#define GLOBAL_TIMEOUT       (1LL << 19)
#define TIMEOUT              (1 << 14)
#define TIMEOUT_SAMECHANNELS (1 << 8)
#define CROSS_NIC            2 /* NCCL_CROSS_NIC's default (sheet §3 "Knobs") */

/* ncclTopoDupChannels (sheet §2): double the channels at half the bandwidth, unless
 * bwIntra < 25, or sm > 80 with bwIntra < 50 and more than 4 channels.  Not on the sheet:
 * the doubling stops at maxChannels, and NVLS graphs are never duplicated. */
static void dup_channels(nn_graph_t *g, int cc_min, int ngpus)
{
    int dup, mul;
    if (g->nchannels == 0 || g->pattern == ACC_NCCL_PATTERN_NVLS || g->bw_intra < 25.0f ||
        (cc_min > 80 && g->bw_intra < 50.0f && g->nchannels > 4))
        return;
    dup = g->nchannels * 2 < g->max_channels ? g->nchannels * 2 : g->max_channels;
    memcpy(g->intra + g->nchannels * ngpus, g->intra,
           (size_t)(dup - g->nchannels) * (size_t)ngpus * sizeof(int));
    memcpy(g->inter + g->nchannels * 2, g->inter, (size_t)(dup - g->nchannels) * 2 * sizeof(int));
    mul = (dup + g->nchannels - 1) / g->nchannels;
    g->bw_intra /= (float)mul;
    g->bw_inter /= (float)mul;
    g->nchannels = dup;
}

acc_status_t nn_compute(nn_system_t *s, nn_graph_t *graph)
{
    int ngpus = s->count[NN_GPU], has_net = s->count[NN_NET] > 0;
    int crossnic = s->count[NN_NET] > 1 && (graph->pattern == ACC_NCCL_PATTERN_RING ||
                                            graph->pattern == ACC_NCCL_PATTERN_BALANCED_TREE ||
                                            graph->pattern == ACC_NCCL_PATTERN_SPLIT_TREE)
                       ? CROSS_NIC
                       : 0;
    int min_intra = ACC_NCCL_PATH_LOC, min_inter = ACC_NCCL_PATH_PIX;
    int max_intra = ACC_NCCL_PATH_SYS, max_inter = ACC_NCCL_PATH_SYS;
    int same_try, pass = 1, si = 0, nspeeds, time;
    acc_status_t st = ACC_OK;
    long long global = GLOBAL_TIMEOUT;
    float max_bw = s->max_bw, total_bw = s->total_bw;
    const float *speed;
    nn_graph_t *tmp;

    graph->crossnic = crossnic == 1;
    graph->bw_intra = graph->bw_inter = 0;
    graph->latency_inter = 0;
    if (ngpus > 1) {
        min_intra = nn_gpu_min_path(s, NN_GPU);
        max_intra = nn_gpu_max_path(s, NN_GPU);
    }
    if (has_net) {
        min_inter = nn_gpu_min_path(s, NN_NET);
        max_inter = nn_gpu_max_path(s, NN_NET);
        max_intra = max_inter;
    }
    graph->type_intra = min_intra;
    graph->type_inter = min_inter;
    graph->nchannels = 0;
    same_try = graph->pattern == ACC_NCCL_PATTERN_NVLS ? 0 : 1;
    graph->same_channels = same_try;
    /* sheet §2: NVLS needs an NVSwitch and sm90; its graph has at most min(32, nGPUs)
     * channels. */
    if (graph->pattern == ACC_NCCL_PATTERN_NVLS && (s->count[NN_NVS] == 0 || s->min_sm < 90))
        return ACC_OK;
    if (graph->pattern == ACC_NCCL_PATTERN_NVLS)
        graph->max_channels = ngpus < 32 ? ngpus : 32;
    if (graph->pattern == ACC_NCCL_PATTERN_COLLNET_DIRECT) /* NCCL_MAX_DIRECT_ARITY + 1 */
        graph->max_channels = ngpus < 8 ? ngpus : 8;
    if (ngpus == 1 && graph->pattern != ACC_NCCL_PATTERN_RING)
        graph->pattern = ACC_NCCL_PATTERN_TREE;
    if (!has_net && graph->pattern == ACC_NCCL_PATTERN_NVLS) /* pull evenly from all GPUs */
        graph->min_channels = graph->max_channels;
    /* Two NVLink islands across the CPUs: trees do better and need two channels, which the
     * ring must then have too (not on the sheet; search.cc). */
    if (graph->pattern == ACC_NCCL_PATTERN_RING && nn_split_nvlink(s) && graph->max_channels >= 2 &&
        graph->min_channels == 1)
        graph->min_channels = 2;

    if (s->min_sm >= 100) {
        speed = has_net ? inter_sm100 : intra_sm100;
        nspeeds = has_net ? (int)(sizeof(inter_sm100) / sizeof(float))
                          : (int)(sizeof(intra_sm100) / sizeof(float));
    } else if (s->min_sm >= 90) {
        speed = has_net ? inter_sm90 : intra_sm90;
        nspeeds = has_net ? (int)(sizeof(inter_sm90) / sizeof(float))
                          : (int)(sizeof(intra_sm90) / sizeof(float));
    } else {
        speed = has_net ? inter_pre90 : intra_pre90;
        nspeeds = has_net ? (int)(sizeof(inter_pre90) / sizeof(float))
                          : (int)(sizeof(intra_pre90) / sizeof(float));
    }
    tmp = acc_mem_alloc(sizeof(*tmp));
    if (!tmp)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for the search");
    *tmp = *graph;
    /* sheet §2: start at the first speed <= maxBw with speed x minChannels <= totalBw; trees
     * need not come back, so their totalBw is scaled by nGPUs/(nGPUs-1). */
    if (ngpus > 1 && graph->pattern != ACC_NCCL_PATTERN_RING)
        total_bw *= (float)ngpus / (float)(ngpus - 1);
    while ((speed[si] > max_bw || speed[si] * (float)graph->min_channels > total_bw) &&
           si < nspeeds - 1)
        si++;
    tmp->bw_intra = tmp->bw_inter = speed[si];

    for (;;) {
        int done;
        time = tmp->same_channels ? TIMEOUT_SAMECHANNELS : TIMEOUT;
        tmp->nchannels = 0;
        global -= time;
        if ((st = nn_search_run(s, tmp, graph, &time)) != ACC_OK)
            break;
        done = time == -1 || (float)graph->nchannels * graph->bw_inter >= s->total_bw;
        if (!done && pass == 1) {
            /* Different channels (not through AMD CPUs: NCCL keeps them the same there). */
            if (tmp->same_channels == 1 &&
                !(s->cpu_arch == NN_ARCH_X86 && s->cpu_vendor == NN_VENDOR_AMD &&
                  tmp->type_intra == ACC_NCCL_PATH_SYS)) {
                tmp->same_channels = 0;
                continue;
            }
            tmp->same_channels = same_try;
            if (time != -1)
                global += time;
            else
                global = GLOBAL_TIMEOUT;
            if (global < 0 && graph->nchannels)
                done = 1;
        }
        if (!done && pass == 1) {
            int max_i = has_net ? tmp->type_inter : max_intra;
            if (s->min_sm >= 90 && tmp->pattern == ACC_NCCL_PATTERN_BALANCED_TREE) {
                tmp->pattern = ACC_NCCL_PATTERN_TREE; /* try a simpler tree */
                continue;
            }
            tmp->pattern = graph->pattern;
            if (tmp->type_intra < max_i &&
                (graph->nchannels == 0 || tmp->type_intra < graph->type_intra)) {
                if (++tmp->type_intra < ACC_NCCL_PATH_DIS)
                    continue;
            }
            tmp->type_intra = min_intra;
            if (has_net && tmp->type_inter < max_inter &&
                (graph->nchannels == 0 || tmp->type_inter < graph->type_inter ||
                 tmp->type_inter < ACC_NCCL_PATH_PXN)) {
                if (++tmp->type_inter < ACC_NCCL_PATH_DIS)
                    continue;
            }
            tmp->type_inter = min_inter;
            if (crossnic == 2 && tmp->crossnic == 0 &&
                (graph->pattern == ACC_NCCL_PATTERN_RING ||
                 graph->pattern == ACC_NCCL_PATTERN_BALANCED_TREE)) {
                tmp->crossnic = 2;
                continue;
            }
            tmp->crossnic = crossnic == 1;
            /* sheet §2: lower the speed while next/current > .49. */
            if (si < nspeeds - 1 &&
                (graph->nchannels == 0 || speed[si + 1] / graph->bw_inter > .49f)) {
                tmp->bw_inter = tmp->bw_intra = speed[++si];
                continue;
            }
            si = 0;
            while (speed[si] > max_bw && si < nspeeds - 1)
                si++;
            tmp->bw_intra = tmp->bw_inter = speed[si];
        }
        if (pass == 1) { /* a solution: duplicate it and see whether it goes faster */
            time = -1;
            dup_channels(graph, s->min_sm, ngpus);
            *tmp = *graph;
            si = 0;
            while (speed[si] > graph->bw_inter && si < nspeeds - 1)
                si++;
            tmp->bw_intra = tmp->bw_inter = speed[si];
            tmp->min_channels = graph->nchannels;
            pass = 2;
        }
        if (time != 0 && si > 0) {
            if (graph->pattern == ACC_NCCL_PATTERN_RING) {
                tmp->bw_intra = tmp->bw_inter = speed[--si];
                continue;
            }
            if (graph->pattern == ACC_NCCL_PATTERN_NVLS && tmp->bw_inter == graph->bw_inter &&
                tmp->bw_inter < tmp->bw_intra * 2) {
                tmp->min_channels = tmp->max_channels = graph->nchannels;
                tmp->bw_inter = speed[--si];
                continue;
            }
            if (tmp->bw_intra == graph->bw_intra && tmp->bw_intra < tmp->bw_inter * 2) {
                tmp->bw_intra = speed[--si]; /* trees over 2 nodes, or CollNet */
                continue;
            }
        }
        break;
    }
    acc_mem_free(tmp);
    if (st != ACC_OK)
        return st;
    if (graph->nchannels == 0 && !graph->collnet && graph->pattern != ACC_NCCL_PATTERN_NVLS) {
        /* NCCL's fallback: "Could not find a path for pattern, falling back to simple order" */
        int i;
        for (i = 0; i < ngpus; i++)
            graph->intra[i] = i;
        graph->inter[0] = graph->inter[1] = 0;
        graph->bw_intra = graph->bw_inter = 0.1f;
        graph->type_intra = graph->type_inter = ACC_NCCL_PATH_SYS;
        graph->nchannels = 1;
    }
    return ACC_OK;
}
