/*
 * NCCL's paths (ncclTopoComputePaths, src/graph/paths.cc) and the queries built on them.
 *
 * The search follows these paths link by link and takes bandwidth from each link, so the
 * replica computes them exactly as NCCL does: a breadth-first search towards every GPU, CPU,
 * NET and NVS node that keeps the shortest path and, among equally short ones, the widest
 * (the first found on ties, in NCCL's link order); then P2P is diverted through the CPU beyond
 * PXB and GPUs reach a NIC through an NVLink peer (PXN) when that is better.  The sheet gives
 * the path types (§1 "Path types") and the P2P and GDR levels (§1 "GDR"); the traversal rules
 * are not on the sheet and follow NCCL 2.28 src/graph/paths.cc.
 */
#include "nccl_internal.h"

#include <string.h>

static nn_path_t *path_at(const nn_system_t *s, int from, int to)
{
    return &s->path[(size_t)from * (size_t)s->nnodes + (size_t)to];
}

static acc_status_t path_set(nn_path_t *p, int first, const nn_path_t *rest, const nn_path_t *tail)
{
    int n = (first >= 0) + rest->count + (tail ? tail->count : 0), k = 0, i;
    int *hop = acc_mem_calloc((size_t)n + 1, sizeof(int));
    if (!hop)
        return acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for paths");
    if (first >= 0)
        hop[k++] = first;
    for (i = 0; i < rest->count; i++)
        hop[k++] = rest->hop[i];
    for (i = 0; tail && i < tail->count; i++)
        hop[k++] = tail->hop[i];
    acc_mem_free(p->hop);
    p->hop = hop;
    p->count = n;
    return ACC_OK;
}

static int max_i(int a, int b)
{
    return a > b ? a : b;
}

/* ncclTopoSetPaths: every node's path to `base`. */
static acc_status_t set_paths(nn_system_t *s, int base)
{
    int *list = acc_mem_calloc((size_t)s->nnodes, sizeof(int));
    int *next = acc_mem_calloc((size_t)s->nnodes, sizeof(int));
    int nlist = 1, i, l;
    acc_status_t st = ACC_OK;

    if (!list || !next) {
        st = acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory for paths");
        goto out;
    }
    for (i = 0; i < s->nnodes; i++)
        path_at(s, i, base)->type = ACC_NCCL_PATH_DIS;
    path_at(s, base, base)->bw = NN_LOC_BW;
    path_at(s, base, base)->type = ACC_NCCL_PATH_LOC;
    list[0] = base;
    while (nlist && st == ACC_OK) {
        int nnext = 0, n;
        for (n = 0; n < nlist && st == ACC_OK; n++) {
            const nn_node_t *node = &s->node[list[n]];
            nn_path_t *path = path_at(s, list[n], base);
            for (l = 0; l < node->nlinks && st == ACC_OK; l++) {
                const nn_link_t *link = &s->link[node->link0 + l];
                const nn_node_t *rem = &s->node[link->to];
                nn_path_t *rp = path_at(s, link->to, base);
                float bw = path->bw < link->bw ? path->bw : link->bw;
                int type, rev = -1, r;
                /* Routing through a GPU only as one NVLink hop (NVB). */
                if (list[n] != base && node->type == NN_GPU &&
                    (link->type != NN_LINK_NVL || rem->type != NN_GPU || path->count > 1))
                    continue;
                if (!((rp->bw == 0 || rp->count > path->count) && rp->bw < bw))
                    continue;
                for (r = 0; r < rem->nlinks; r++) {
                    const nn_link_t *k = &s->link[rem->link0 + r];
                    if (k->to == list[n] && k->type == link->type) {
                        rev = rem->link0 + r;
                        break;
                    }
                }
                if (rev < 0) /* a one-way link: NCCL cannot route back over it */
                    continue;
                if ((st = path_set(rp, rev, path, NULL)) != ACC_OK)
                    break;
                rp->bw = bw;
                type = link->type == NN_LINK_NET ? ACC_NCCL_PATH_LOC : link->type;
                if (node->type == NN_PCI && rem->type == NN_PCI)
                    type = ACC_NCCL_PATH_PXB;
                if (link->type == NN_LINK_PCI && (node->type == NN_CPU || rem->type == NN_CPU))
                    type = ACC_NCCL_PATH_PHB;
                if (node->type == NN_GPU && path->type == ACC_NCCL_PATH_NVL &&
                    type == ACC_NCCL_PATH_NVL && rp->count > 1)
                    type = ACC_NCCL_PATH_NVB;
                rp->type = max_i(path->type, type);
                for (r = 0; r < nnext && next[r] != link->to; r++)
                    ;
                if (r == nnext)
                    next[nnext++] = link->to;
            }
        }
        memcpy(list, next, (size_t)nnext * sizeof(int));
        nlist = nnext;
    }
out:
    acc_mem_free(list);
    acc_mem_free(next);
    return st;
}

static int merge_type(int t0, int t1)
{
    int hi = max_i(t0, t1), lo = t0 < t1 ? t0 : t1;
    return hi == ACC_NCCL_PATH_PHB && lo == ACC_NCCL_PATH_C2C ? ACC_NCCL_PATH_P2C : hi;
}

/* addInterStep: src's path to dst becomes src -> via -> dst. */
static acc_status_t inter_step(nn_system_t *s, int via, int src, int dst, int pxn)
{
    nn_path_t *a = path_at(s, src, via), *b = path_at(s, via, dst), *p = path_at(s, src, dst);
    nn_path_t head = *a;
    acc_status_t st = path_set(p, -1, &head, b);
    if (st != ACC_OK)
        return st;
    p->type = pxn ? ACC_NCCL_PATH_PXN : merge_type(a->type, b->type);
    p->bw = a->bw < b->bw ? a->bw : b->bw;
    return ACC_OK;
}

/* ncclGetLocalCpu: the CPU fewest hops away (the first on ties). */
static int local_cpu(const nn_system_t *s, int gpu_node)
{
    int c, best = -1, min_hops = 0;
    for (c = 0; c < s->count[NN_CPU]; c++) {
        int hops = path_at(s, gpu_node, s->of_type[NN_CPU][c])->count;
        if (hops > 0 && (min_hops == 0 || hops < min_hops)) {
            best = s->of_type[NN_CPU][c];
            min_hops = hops;
        }
    }
    return best;
}

int nn_get_local(const nn_system_t *s, int type, int i, int rtype, int *locals, int *ptype)
{
    int min_type = ACC_NCCL_PATH_DIS, count = 0, j;
    float max_bw = 0;
    for (j = 0; j < s->count[rtype]; j++) {
        const nn_path_t *p = nn_path(s, type, i, rtype, j);
        if (p->bw > max_bw || (p->bw == max_bw && p->type < min_type)) {
            max_bw = p->bw;
            min_type = p->type;
            count = 0;
        }
        if (p->bw == max_bw && p->type == min_type)
            locals[count++] = j;
    }
    if (ptype)
        *ptype = min_type;
    return count;
}

static int local_net_of(const nn_system_t *s, int g, int channel);

static int mirror_bits(int val, int pow2)
{
    int mirror = 0, b, mb;
    for (b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            mirror |= mb;
    return mirror;
}

int nn_local_net(const nn_system_t *s, int g, int channel)
{
    if (s->local_net)
        return s->local_net[g * NN_MAXCHANNELS + channel % NN_MAXCHANNELS];
    return local_net_of(s, g, channel);
}

static int local_net_of(const nn_system_t *s, int g, int channel)
{
    int nets[NN_MAXCHANNELS * 8], gpus[NN_MAX_GPUS * 2];
    int nnets, ngpus, net, per;
    if (s->count[NN_NET] > NN_MAXCHANNELS * 8 || s->count[NN_GPU] > NN_MAX_GPUS * 2)
        return -1;
    nnets = nn_get_local(s, NN_GPU, g, NN_NET, nets, NULL);
    if (nnets == 0)
        return -1;
    ngpus = nn_get_local(s, NN_NET, nets[0], NN_GPU, gpus, NULL);
    per = ngpus ? (nnets + ngpus - 1) / ngpus : 1;
    net = g; /* gpu.dev: acc numbers GPUs as the CUDA devices of the node */
    if ((nnets & (nnets - 1)) == 0)
        net = mirror_bits(net, nnets);
    net += channel % per;
    return nets[net % nnets];
}

/* ncclTopoSelectNets: the NICs the GPU(s) would use channel by channel, then every other NIC
 * within typeInter, nearest types first. */
int nn_select_nets(const nn_system_t *s, int type_inter, int gpu, int *nets)
{
    int n = 0, g, c, t, i, j;
    for (g = 0; g < s->count[NN_GPU]; g++) {
        int local[NN_MAXCHANNELS], nlocal = 0;
        if (gpu != -1 && gpu != g)
            continue;
        for (c = 0; c < NN_MAXCHANNELS; c++) {
            local[nlocal] = nn_local_net(s, g, c);
            if (local[nlocal] < 0 || (nlocal > 0 && local[nlocal] == local[0]))
                break;
            nlocal++;
        }
        for (i = 0; i < nlocal; i++) {
            for (j = 0; j < n && nets[j] != local[i]; j++)
                ;
            if (j == n)
                nets[n++] = local[i];
        }
    }
    for (t = 0; t <= type_inter; t++)
        for (g = 0; g < s->count[NN_GPU]; g++)
            for (i = 0; i < s->count[NN_NET] && i < NN_MAXCHANNELS && (gpu == -1 || gpu == g);
                 i++) {
                if (nn_path(s, NN_GPU, g, NN_NET, i)->type != t)
                    continue;
                for (j = 0; j < n && nets[j] != i; j++)
                    ;
                if (j == n)
                    nets[n++] = i;
            }
    return n;
}

/* ncclTopoGetLocalGpu: the GPU whose channels start on this NET first. */
static int local_gpu(const nn_system_t *s, int n)
{
    int gpus[NN_MAX_GPUS * 2], ngpus, c, i;
    if (s->count[NN_GPU] > NN_MAX_GPUS * 2)
        return -1;
    ngpus = nn_get_local(s, NN_NET, n, NN_GPU, gpus, NULL);
    for (c = 0; c < NN_MAXCHANNELS; c++)
        for (i = 0; i < ngpus; i++)
            if (nn_local_net(s, gpus[i], c) == n)
                return gpus[i];
    return -1;
}

static acc_status_t fix_gpu_paths(nn_system_t *s)
{
    int g, p;
    /* sheet §1 "GDR": "Default P2P level is PXB (SYS on AMD with <= 2 GPUs)". */
    int level =
        s->cpu_arch == NN_ARCH_X86 && s->cpu_vendor == NN_VENDOR_AMD && s->count[NN_GPU] <= 2
            ? ACC_NCCL_PATH_SYS
            : ACC_NCCL_PATH_PXB;
    for (g = 0; g < s->count[NN_GPU]; g++) {
        int gn = s->of_type[NN_GPU][g], cpu = local_cpu(s, gn);
        for (p = 0; p < s->count[NN_GPU]; p++) {
            int pn = s->of_type[NN_GPU][p];
            acc_status_t st;
            if (path_at(s, pn, gn)->type <= level || cpu < 0)
                continue;
            if ((st = inter_step(s, cpu, pn, gn, 0)) != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}

/* Grace: a NIC on the CPU that a GPU reaches over C2C is P2C, not PHB. */
static void fix_c2c_paths(nn_system_t *s)
{
    int n, g;
    for (n = 0; n < s->count[NN_NET]; n++) {
        int nn = s->of_type[NN_NET][n];
        for (g = 0; g < s->count[NN_GPU]; g++) {
            int gn = s->of_type[NN_GPU][g], c = local_cpu(s, gn);
            if (c < 0 ||
                merge_type(path_at(s, gn, c)->type, path_at(s, nn, c)->type) != ACC_NCCL_PATH_P2C)
                continue;
            if (path_at(s, gn, nn)->type > ACC_NCCL_PATH_P2C)
                path_at(s, gn, nn)->type = ACC_NCCL_PATH_P2C;
            if (path_at(s, nn, gn)->type > ACC_NCCL_PATH_P2C)
                path_at(s, nn, gn)->type = ACC_NCCL_PATH_P2C;
        }
    }
}

/* PXN: reach a NIC through the NVLink peer that sits next to it (GPU -> NIC direction only).
 * GPUDirect RDMA: NCCL diverts a GPU-NIC path through the CPU when GDR is off; with GDR
 * assumed supported by both ends (acc_cost.h "Scope") and the sheet's distance rule (on up to
 * PXB, PXN judged by the peer's distance), no path below PHB is ever diverted, so the step is
 * omitted. */
static acc_status_t fix_net_paths(nn_system_t *s)
{
    int n, g;
    for (n = 0; n < s->count[NN_NET]; n++) {
        int nn = s->of_type[NN_NET][n];
        for (g = 0; g < s->count[NN_GPU]; g++) {
            int gn = s->of_type[NN_GPU][g], peer = local_gpu(s, n), pn;
            const nn_path_t *mine = path_at(s, gn, nn), *theirs;
            acc_status_t st;
            if (peer < 0 || peer == g)
                continue;
            pn = s->of_type[NN_GPU][peer];
            theirs = path_at(s, pn, nn);
            if (theirs->type <= ACC_NCCL_PATH_PXB &&
                path_at(s, pn, gn)->type <= ACC_NCCL_PATH_NVL &&
                (theirs->bw > mine->bw || mine->type > ACC_NCCL_PATH_PXN) &&
                (st = inter_step(s, pn, gn, nn, 1)) != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}

/* ncclTopoSearchInit: the widest path a GPU has to a peer (or to the network) and the most a
 * GPU can send at once (its NVLinks, or its PCIe link). */
static void search_init(nn_system_t *s)
{
    int g, i, l, inter = s->count[NN_NET] > 0, t = inter ? NN_NET : NN_GPU;
    s->max_bw = s->total_bw = 0;
    if (!inter && s->count[NN_GPU] == 1) {
        s->max_bw = s->total_bw = NN_LOC_BW;
        return;
    }
    for (g = 0; g < s->count[NN_GPU]; g++) {
        const nn_node_t *gpu = nn_node(s, NN_GPU, g);
        float nvl = 0, pci = 0;
        for (i = 0; i < s->count[t]; i++) {
            const nn_path_t *p = nn_path(s, NN_GPU, g, t, i);
            if (p->count && p->bw > s->max_bw)
                s->max_bw = p->bw;
        }
        for (l = 0; l < gpu->nlinks; l++) {
            const nn_link_t *k = &s->link[gpu->link0 + l];
            if (k->type == NN_LINK_NVL)
                nvl += k->bw;
            if (k->type == NN_LINK_PCI)
                pci = k->bw;
        }
        if ((nvl > pci ? nvl : pci) > s->total_bw)
            s->total_bw = nvl > pci ? nvl : pci;
    }
}

acc_status_t nn_compute_paths(nn_system_t *s)
{
    static const int bases[] = {NN_CPU, NN_GPU, NN_NET, NN_NVS};
    acc_status_t st = ACC_OK;
    size_t b;
    int i;
    for (b = 0; b < sizeof(bases) / sizeof(bases[0]) && st == ACC_OK; b++)
        for (i = 0; i < s->count[bases[b]] && st == ACC_OK; i++)
            st = set_paths(s, s->of_type[bases[b]][i]);
    if (st == ACC_OK)
        st = fix_gpu_paths(s);
    if (st == ACC_OK) {
        fix_c2c_paths(s);
        st = fix_net_paths(s);
    }
    for (i = 0; i < s->count[NN_NET] && st == ACC_OK; i++)
        nn_node(s, NN_NET, i)->local_gpu = local_gpu(s, i);
    /* The search asks for a GPU's NIC per channel at every step; the answer depends on the
     * paths only, which are final now. */
    if (st == ACC_OK && s->count[NN_NET]) {
        s->local_net = acc_mem_calloc((size_t)s->count[NN_GPU] * NN_MAXCHANNELS, sizeof(int));
        if (!s->local_net)
            st = acc_error_set(ACC_ERR_NOMEM, "NCCL model: out of memory");
        for (i = 0; st == ACC_OK && i < s->count[NN_GPU] * NN_MAXCHANNELS; i++)
            s->local_net[i] = local_net_of(s, i / NN_MAXCHANNELS, i % NN_MAXCHANNELS);
    }
    if (st == ACC_OK)
        search_init(s);
    return st;
}

int nn_gpu_min_path(const nn_system_t *s, int type)
{
    int m = ACC_NCCL_PATH_SYS, i, j;
    for (i = 0; i < s->count[NN_GPU]; i++)
        for (j = 0; j < s->count[type]; j++)
            if (!(type == NN_GPU && i == j) && nn_path(s, NN_GPU, i, type, j)->type < m)
                m = nn_path(s, NN_GPU, i, type, j)->type;
    return m;
}

int nn_gpu_max_path(const nn_system_t *s, int type)
{
    int m = ACC_NCCL_PATH_LOC, i, j;
    for (i = 0; i < s->count[NN_GPU]; i++)
        for (j = 0; j < s->count[type]; j++)
            if (!(type == NN_GPU && i == j) && nn_path(s, NN_GPU, i, type, j)->type > m)
                m = nn_path(s, NN_GPU, i, type, j)->type;
    return m;
}

/* ncclTopoSplitNvLink: two NVLink islands joined only through the CPUs (e.g. QPI). */
int nn_split_nvlink(const nn_system_t *s)
{
    int domain[NN_MAX_GPUS], count[NN_MAX_GPUS], n = s->count[NN_GPU], g, p, islands = 0;
    for (g = 0; g < n; g++) {
        domain[g] = g;
        count[g] = 0;
    }
    for (g = 0; g < n; g++)
        for (p = g + 1; p < n; p++)
            if (nn_path(s, NN_GPU, g, NN_GPU, p)->type == ACC_NCCL_PATH_NVL)
                domain[p] = domain[g];
    for (g = 0; g < n; g++)
        count[domain[g]]++;
    for (g = 0; g < n; g++)
        islands += count[g] > 1;
    return islands == 2;
}
