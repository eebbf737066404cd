/*
 * NCCL's graph search (ncclTopoCompute, src/graph/search.cc): how many channels NCCL finds
 * for a pattern and at what per-channel bandwidth.
 *
 * The search is a depth-first walk with time budgets: which order it tries GPUs and NICs in,
 * when it gives up, and exact float comparisons all shape the answer, so this is a port of
 * NCCL 2.28's procedure step for step rather than a model of its outcome.  The sheet
 * (reference/02-nccl.md §2 "Search graphs") gives the speed ladders, the start and lowering
 * rules, the channel limits and the duplication; the traversal itself (the orders, the
 * budgets, what a channel takes from each link) is not on the sheet and follows NCCL 2.28
 * src/graph/search.cc.
 */
#include "nccl_internal.h"

#include <stdlib.h>
#include <string.h>

#define ORDER_PCI    1 /* FORCED_ORDER_PCI: try GPUs in index order */
#define ORDER_REPLAY 2 /* FORCED_ORDER_REPLAY: the previous channel's order */

typedef struct {
    int g, start, intra_hops, intra_bw, inter_hops, inter_pci_bw, inter_bw;
} score_t;

/* The search recurses once per GPU of every channel: 72 GPUs x 32 channels on a GB200 NVL72
 * rack.  What a level keeps across its recursion (the GPUs to try next) lives in `next`, a row
 * of n per level, and the scores next_gpus sorts in `scores`, so that a level's stack frame
 * does not grow with the GPU count. */
typedef struct {
    nn_system_t *s;
    nn_graph_t *save; /* the best graph so far */
    score_t *scores;  /* n entries, next_gpus' scratch (it does not recurse) */
    int *next;        /* (max_channels + 1) x n rows of n: the row of level channel x n + step */
} ctx_t;

static void rec_gpu(ctx_t *c, nn_graph_t *g, int gpu, int step, int back_net, int back_first,
                    int order, int *time);
static void rec(ctx_t *c, nn_graph_t *g, int *time);

/* SUB_ROUND: NCCL rounds every subtraction to 1/1000 (roundf, half away from zero) to keep
 * floats from drifting. */
static float sub_round(float a, float b)
{
    float x = (a - b) * 1000;
    double r =
        x >= 0 ? (double)(long long)((double)x + 0.5) : -(double)(long long)(0.5 - (double)x);
    return (float)r / 1000;
}

static int rev_link(const nn_system_t *s, int from, const nn_link_t *link)
{
    const nn_node_t *n = &s->node[link->to];
    int l;
    for (l = 0; l < n->nlinks; l++)
        if (s->link[n->link0 + l].to == from && s->link[n->link0 + l].type == link->type)
            return n->link0 + l;
    return -1;
}

/* followPath: take bw from the first max_steps links of a path; returns the steps taken. */
static int take(nn_system_t *s, const nn_path_t *p, int start, int max_steps, float bw)
{
    float pci = bw;
    int step, node = start;
    for (step = 0; step < p->count; step++) {
        const nn_node_t *n = &s->node[s->link[p->hop[step]].to];
        /* INTEL_P2P_OVERHEAD(bw) = bw*6/5 (sheet §1) on P2P through an Intel root complex. */
        if (n->type == NN_CPU && p->type == ACC_NCCL_PATH_PHB && s->node[start].type == NN_GPU &&
            n->arch == NN_ARCH_X86 && n->vendor == NN_VENDOR_INTEL)
            pci = bw * 6 / 5;
    }
    for (step = 0; step < max_steps; step++) {
        nn_link_t *link = &s->link[p->hop[step]];
        const nn_node_t *rem = &s->node[link->to];
        float fw = link->type == NN_LINK_PCI ? pci : bw, rbw = 0;
        int rev = -1;
        /* Pre-Ampere GPUs pay 1/8 of what they receive from a NIC on the way back; POWER9
         * NVLink to the CPU is shared by both directions. */
        if (rem->type == NN_GPU && rem->sm < 80 && s->node[start].type != NN_GPU &&
            (rev = rev_link(s, node, link)) >= 0)
            rbw += fw / 8;
        if (rem->type == NN_CPU && rem->arch == NN_ARCH_POWER && link->type == NN_LINK_NVL &&
            (rev = rev_link(s, node, link)) >= 0)
            rbw += fw;
        if (link->bw < fw || (rbw != 0 && s->link[rev].bw < rbw))
            return step;
        link->bw = sub_round(link->bw, fw);
        if (rbw != 0)
            s->link[rev].bw = sub_round(s->link[rev].bw, rbw);
        node = link->to;
    }
    return max_steps;
}

static int is_tree(int pattern)
{
    return pattern == ACC_NCCL_PATTERN_BALANCED_TREE || pattern == ACC_NCCL_PATTERN_TREE ||
           pattern == ACC_NCCL_PATTERN_SPLIT_TREE;
}

/* ncclTopoFollowPath: 1 when the path from (t1, i1) to (t2, i2) fits; mult 1 takes bandwidth,
 * -1 gives it back; t1 < 0 is the start of a search, which always fits. */
static int follow(ctx_t *c, nn_graph_t *g, int t1, int i1, int t2, int i2, float mult)
{
    nn_system_t *s = c->s;
    const nn_path_t *p, *rp;
    int intra, type, n1, step;
    float bw;
    if (t1 < 0)
        return 1;
    n1 = s->of_type[t1][i1];
    p = nn_path(s, t1, i1, t2, i2);
    rp = nn_path(s, t2, i2, t1, i1);
    if (p->count == 0)
        return 1;
    intra = (t1 == NN_GPU || t1 == NN_NVS) && (t2 == NN_GPU || t2 == NN_NVS);
    bw = intra ? g->bw_intra : g->bw_inter;
    type = intra ? g->type_intra : g->type_inter;
    if (p->type >= ACC_NCCL_PATH_DIS)
        return 0;
    if (mult == 1 && (p->type > type || (is_tree(g->pattern) && rp->type > type)))
        return 0;
    bw *= mult;
    step = take(s, p, n1, p->count, bw);
    if (step < p->count) {
        take(s, p, n1, step, -bw);
        return 0;
    }
    g->nhops = (int)((float)g->nhops + mult * (float)p->count);
    return 1;
}

static void try_gpu(ctx_t *c, nn_graph_t *g, int step, int back_net, int back_first, int order,
                    int *time, int type, int index, int gpu)
{
    uint64_t flag = 1ull << g->nchannels;
    if (!follow(c, g, type, index, NN_GPU, gpu, 1))
        return;
    nn_node(c->s, NN_GPU, gpu)->used ^= flag;
    rec_gpu(c, g, gpu, step, back_net, back_first, order, time);
    nn_node(c->s, NN_GPU, gpu)->used ^= flag;
    follow(c, g, type, index, NN_GPU, gpu, -1);
}

/* ncclTopoCompareGraphs: more channels x bandwidth, then fewer hops. */
static int better(const nn_system_t *s, const nn_graph_t *g, const nn_graph_t *ref)
{
    if (g->nchannels < g->min_channels)
        return 0;
    if (g->pattern == ACC_NCCL_PATTERN_NVLS)
        return (g->nchannels > ref->nchannels && g->nchannels <= s->count[NN_GPU]) ||
               (float)g->nchannels * g->bw_inter > (float)ref->nchannels * ref->bw_inter;
    if ((float)g->nchannels * g->bw_intra != (float)ref->nchannels * ref->bw_intra)
        return (float)g->nchannels * g->bw_intra > (float)ref->nchannels * ref->bw_intra;
    return g->pattern == ref->pattern && g->crossnic == ref->crossnic && g->nhops < ref->nhops;
}

/* Back to the NIC at the end of a ring, or at the top of a tree. */
static void back_to_net(ctx_t *c, nn_graph_t *g, int gpu, int step, int back_first, int order,
                        int *time)
{
    int *nets = acc_mem_calloc((size_t)c->s->count[NN_NET] + 1, sizeof(int)), n, i;
    int start = g->inter[g->nchannels * 2];
    if (!nets)
        return;
    n = nn_select_nets(c->s, g->type_inter, gpu, nets);
    for (i = 0; i < n; i++) {
        int net = nets[i], next_back = -1;
        float save = g->bw_inter;
        if (g->pattern == ACC_NCCL_PATTERN_TREE && net != start)
            continue; /* trees are symmetric */
        if (g->pattern == ACC_NCCL_PATTERN_RING && g->crossnic == 2) {
            if ((g->nchannels & 1) && net != g->inter[(g->nchannels - 1) * 2])
                continue;
        } else if (g->crossnic == 0 && net != start) {
            continue;
        }
        if (g->pattern == ACC_NCCL_PATTERN_BALANCED_TREE) {
            /* Half of the bandwidth on each of the first two GPUs. */
            if (step == 0)
                next_back = 1;
            else if (net != g->inter[g->nchannels * 2 + 1])
                continue;
            g->bw_inter /= 2;
        }
        if (!follow(c, g, NN_GPU, gpu, NN_NET, net, 1)) {
            g->bw_inter = save;
            continue;
        }
        g->bw_inter = save;
        g->inter[g->nchannels * 2 + 1] = net;
        rec_gpu(c, g, gpu, step, next_back, back_first, order, time);
        if (g->pattern == ACC_NCCL_PATTERN_BALANCED_TREE)
            g->bw_inter /= 2;
        follow(c, g, NN_GPU, gpu, NN_NET, net, -1);
        g->bw_inter = save;
    }
    acc_mem_free(nets);
}

static void try_nvls(ctx_t *c, nn_graph_t *g, int head, int *time)
{
    int n = c->s->count[NN_GPU], d0 = 0, d1 = 0, ok;
    do { /* room for NVS -> GPU traffic, twice for the head */
        ok = follow(c, g, NN_NVS, 0, NN_GPU, d0, d0 == head ? 2 : 1);
        d0++;
    } while (ok && d0 < n);
    if (!ok) {
        d0--;
    } else {
        do {
            ok = follow(c, g, NN_GPU, d1, NN_NVS, 0, d1 == head ? 2 : 1);
            d1++;
        } while (ok && d1 < n);
        if (!ok)
            d1--;
        else
            rec_gpu(c, g, -1, n, -1, -1, 0, time);
        while (d1) {
            d1--;
            follow(c, g, NN_GPU, d1, NN_NVS, 0, d1 == head ? -2 : -1);
        }
    }
    while (d0) {
        d0--;
        follow(c, g, NN_NVS, 0, NN_GPU, d0, d0 == head ? -2 : -1);
    }
}

static void try_collnet_direct(ctx_t *c, nn_graph_t *g, int head, int *time)
{
    int n = c->s->count[NN_GPU], fwd = 0, bwd = 0, ok, i, step = 1;
    float mul = 1.0f / (float)(n - 1);
    do
        ok = follow(c, g, NN_GPU, head, NN_GPU, fwd, mul);
    while (ok && ++fwd < n);
    if (ok) {
        do
            ok = follow(c, g, NN_GPU, bwd, NN_GPU, head, mul);
        while (ok && ++bwd < n);
        if (ok) {
            for (i = 0; i < n; i++)
                if (i != head)
                    g->intra[g->nchannels * n + step++] = i;
            rec_gpu(c, g, -1, n, -1, -1, 0, time);
        }
        while (bwd) {
            bwd--;
            follow(c, g, NN_GPU, bwd, NN_GPU, head, -mul);
        }
    }
    while (fwd) {
        fwd--;
        follow(c, g, NN_GPU, head, NN_GPU, fwd, -mul);
    }
}

static int cmp_score(const void *pa, const void *pb)
{
    const score_t *a = pa, *b = pb;
    if (b->inter_bw != a->inter_bw)
        return b->inter_bw - a->inter_bw;
    if (b->inter_pci_bw != a->inter_pci_bw)
        return b->inter_pci_bw - a->inter_pci_bw;
    if (a->inter_hops != b->inter_hops)
        return a->inter_hops - b->inter_hops;
    if (b->intra_bw != a->intra_bw)
        return b->intra_bw - a->intra_bw;
    if (a->intra_hops != b->intra_hops)
        return a->intra_hops - b->intra_hops;
    return a->start - b->start;
}

/* gpuPciBw: what is left of a GPU's PCIe link, both directions. */
static int gpu_pci_bw(const nn_system_t *s, int gpu)
{
    const nn_node_t *n = nn_node(s, NN_GPU, gpu);
    int l;
    for (l = 0; l < n->nlinks; l++) {
        const nn_link_t *k = &s->link[n->link0 + l];
        int r;
        if (k->type != NN_LINK_PCI || (r = rev_link(s, s->of_type[NN_GPU][gpu], k)) < 0)
            continue;
        return (int)(k->bw < s->link[r].bw ? k->bw : s->link[r].bw);
    }
    return -1;
}

/* ncclTopoSearchNextGpuSort: the order to try the next GPUs in.  On NVSwitch systems only the
 * neighbours in index order are tried. */
static int next_gpus(ctx_t *c, const nn_graph_t *g, int gpu, int *next, int sort_net)
{
    const nn_system_t *s = c->s;
    int n = s->count[NN_GPU], count = 0, i, same = 1;
    uint64_t flag = 1ull << g->nchannels;
    score_t *sc = c->scores;
    for (i = 1; i < n; i++) {
        int x = (gpu + i) % n;
        const nn_path_t *p = nn_path(s, NN_GPU, gpu, NN_GPU, x);
        if (p->count == 0 || (nn_node(s, NN_GPU, x)->used & flag))
            continue;
        memset(&sc[count], 0, sizeof(sc[count]));
        sc[count].g = x;
        sc[count].start = i;
        sc[count].intra_hops = p->count;
        sc[count].intra_bw = (int)p->bw;
        if (sort_net) {
            const nn_path_t *np = nn_path(s, NN_NET, g->inter[g->nchannels * 2], NN_GPU, x);
            sc[count].inter_hops = np->count;
            sc[count].inter_pci_bw = gpu_pci_bw(s, x);
            sc[count].inter_bw = (int)np->bw;
        }
        count++;
    }
    qsort(sc, (size_t)count, sizeof(score_t), cmp_score);
    for (i = 1; i < count; i++)
        same &= sc[i].intra_bw == sc[0].intra_bw && sc[i].intra_hops == sc[0].intra_hops;
    for (i = 0; i < count; i++)
        next[i] = sort_net == -1 && same ? sc[count - 1 - i].g : sc[i].g;
    if (s->count[NN_NVS]) {
        int prev = (gpu - 1 + n) % n, nxt = (gpu + 1) % n, first[2], nfirst, real = 0, f, k;
        if (g->pattern == ACC_NCCL_PATTERN_RING) {
            first[0] = nxt, first[1] = prev, nfirst = 2;
        } else if (g->pattern == ACC_NCCL_PATTERN_SPLIT_TREE ||
                   g->pattern == ACC_NCCL_PATTERN_BALANCED_TREE) {
            first[0] = prev, first[1] = nxt, nfirst = 2;
        } else {
            first[0] = nxt, nfirst = 1;
        }
        if (nxt == prev && nfirst == 2)
            nfirst = 1;
        for (f = 0; f < nfirst; f++) {
            for (k = 0; k < count && next[k] != first[f]; k++)
                ;
            if (k < count) {
                for (; k > 0; k--)
                    next[k] = next[k - 1];
                next[0] = first[f];
                real++;
            }
        }
        count = real;
    }
    return count;
}

static void rec_gpu(ctx_t *c, nn_graph_t *g, int gpu, int step, int back_net, int back_first,
                    int order, int *time)
{
    int n = c->s->count[NN_GPU], count, i;
    int *next = c->next + ((size_t)g->nchannels * n + step) * n;
    if (*time <= 0)
        return;
    (*time)--;
    if (step == n) { /* a channel is complete */
        g->nchannels++;
        if (better(c->s, g, c->save)) {
            *c->save = *g;
            if (g->nchannels == g->max_channels)
                *time = -1;
        }
        if (g->nchannels < g->max_channels)
            rec(c, g, time);
        g->nchannels--;
        return;
    }
    g->intra[g->nchannels * n + step] = gpu;
    if (step == back_net) {
        if (c->s->count[NN_NET])
            back_to_net(c, g, gpu, step, back_first, order, time);
    } else if (g->pattern == ACC_NCCL_PATTERN_NVLS) {
        try_nvls(c, g, gpu, time);
    } else if (g->pattern == ACC_NCCL_PATTERN_COLLNET_DIRECT) {
        try_collnet_direct(c, g, gpu, time);
    } else if (step < n - 1) {
        if (order == ORDER_PCI) {
            next[0] = step + 1, count = 1;
        } else if (order == ORDER_REPLAY) {
            next[0] = g->intra[(g->nchannels - 1) * n + step + 1], count = 1;
        } else {
            count = next_gpus(c, g, gpu, next, back_net == -1 ? 0 : back_net == step + 1 ? 1 : -1);
        }
        for (i = 0; i < count; i++)
            try_gpu(c, g, step + 1, back_net, back_first, order, time, NN_GPU, gpu, next[i]);
    } else if (step == back_first) {
        int first = g->intra[g->nchannels * n];
        if (follow(c, g, NN_GPU, gpu, NN_GPU, first, 1)) {
            rec_gpu(c, g, first, step + 1, back_net, -1, order, time);
            follow(c, g, NN_GPU, gpu, NN_GPU, first, -1);
        }
    } else {
        rec_gpu(c, g, gpu, n, -1, -1, order, time);
    }
}

/* ncclTopoSearchRecNet: start a channel at each NIC in turn. */
static void rec_net(ctx_t *c, nn_graph_t *g, int back_net, int back_first, int *time)
{
    nn_system_t *s = c->s;
    int bw = (int)g->bw_inter; /* NCCL holds it in an int here */
    int *nets = acc_mem_calloc((size_t)s->count[NN_NET] + 1, sizeof(int));
    int *locals = acc_mem_calloc((size_t)s->count[NN_GPU] + 1, sizeof(int));
    int n, i, found = 0, nvls_like;
    if (!nets || !locals)
        goto out;
    nvls_like =
        g->pattern == ACC_NCCL_PATTERN_NVLS || g->pattern == ACC_NCCL_PATTERN_COLLNET_DIRECT;
    n = nn_select_nets(s, g->type_inter, -1, nets);
    for (i = 0; i < n && !(nvls_like && found); i++) {
        int net = nets[(g->nchannels + i) % n], gc, nloc, ptype, k;
        nn_node_t *nd = nn_node(s, NN_NET, net);
        if (nd->net_bw < (float)bw)
            continue;
        if (g->pattern == ACC_NCCL_PATTERN_RING && g->crossnic == 2 && (g->nchannels & 1) &&
            net != g->inter[(g->nchannels - 1) * 2 + 1])
            continue;
        g->inter[g->nchannels * 2] = net;
        nd->net_bw -= (float)bw;
        if (nvls_like) {
            int head = nd->local_gpu, dup = 0;
            if (g->nchannels < n && head != -1) {
                for (gc = 0; gc < g->nchannels; gc++)
                    dup |= g->intra[gc * s->count[NN_GPU]] == head;
                if (!dup) {
                    try_gpu(c, g, 0, back_net, back_first, 0, time, NN_NET, net, head);
                    found = 1;
                }
            }
        } else if (g->nchannels > 0 && g->same_channels == 1) {
            try_gpu(c, g, 0, back_net, back_first, ORDER_REPLAY, time, NN_NET, net,
                    g->intra[(g->nchannels - 1) * s->count[NN_GPU]]);
        } else {
            if (g->nchannels == 0 && s->count[NN_NVS] == 0) {
                /* The PCI order first, as a reference, on a budget of its own. */
                int t = 1 << 10;
                try_gpu(c, g, 0, back_net, back_first, ORDER_PCI, &t, NN_NET, net, 0);
                if (t == -1)
                    *time = -1;
            }
            if (nd->local_gpu != -1)
                try_gpu(c, g, 0, back_net, back_first, 0, time, NN_NET, net, nd->local_gpu);
            nloc = nn_get_local(s, NN_NET, net, NN_GPU, locals, &ptype);
            if (ptype == ACC_NCCL_PATH_DIS)
                continue; /* as NCCL: this skips giving the NIC its bandwidth back */
            for (k = 0; k < nloc; k++)
                if (locals[k] != nd->local_gpu)
                    try_gpu(c, g, 0, back_net, back_first, 0, time, NN_NET, net, locals[k]);
        }
        nd->net_bw += (float)bw;
    }
out:
    acc_mem_free(nets);
    acc_mem_free(locals);
}

/* ncclTopoSearchRec. */
static void rec(ctx_t *c, nn_graph_t *g, int *time)
{
    const nn_system_t *s = c->s;
    int n = s->count[NN_GPU], back_net = -1, back_first = -1, i;
    if (s->count[NN_NET]) {
        back_net = g->pattern == ACC_NCCL_PATTERN_RING         ? n - 1
                   : g->pattern == ACC_NCCL_PATTERN_SPLIT_TREE ? 1
                                                               : 0;
        rec_net(c, g, back_net, back_first, time);
        return;
    }
    if (g->pattern == ACC_NCCL_PATTERN_RING)
        back_first = n - 1;
    if (g->pattern == ACC_NCCL_PATTERN_NVLS) {
        try_gpu(c, g, 0, back_net, back_first, 0, time, -1, -1, g->nchannels);
        return;
    }
    if (g->nchannels == 0)
        try_gpu(c, g, 0, back_net, back_first, ORDER_PCI, time, -1, -1, 0);
    else
        try_gpu(c, g, 0, back_net, back_first, ORDER_REPLAY, time, -1, -1,
                g->intra[(g->nchannels - 1) * n]);
    if (g->same_channels == 0 || g->nchannels == 0)
        for (i = 0; i < n; i++)
            try_gpu(c, g, 0, back_net, back_first, 0, time, -1, -1, i);
}

acc_status_t nn_search_run(nn_system_t *s, nn_graph_t *g, nn_graph_t *save, int *time)
{
    size_t n = (size_t)s->count[NN_GPU];
    ctx_t c = {s, save, NULL, NULL};
    c.scores = acc_mem_calloc(n, sizeof(score_t));
    c.next = acc_mem_calloc(((size_t)g->max_channels + 1) * n * n, sizeof(int));
    if (!c.scores || !c.next) {
        acc_mem_free(c.scores);
        acc_mem_free(c.next);
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for the search of %zu GPUs",
                             n);
    }
    rec(&c, g, time);
    acc_mem_free(c.scores);
    acc_mem_free(c.next);
    return ACC_OK;
}
