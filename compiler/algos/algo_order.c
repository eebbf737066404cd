/*
 * Ring orders searched on the topology.
 *
 * Within a node the ring (or, across nodes, the path from the GPU that enters the node to the
 * GPU that leaves it) is found by depth-first search over the node's GPUs, best hops first, with
 * branch and bound.  Rings are compared on, in order: the worst path class of a hop (as NCCL,
 * which looks for NVLink-only rings before it accepts a hop through another GPU or the CPU), the
 * narrowest hop's bandwidth, how many hops have that worst class (so a two-socket PCIe ring
 * crosses the sockets twice, not four times), and the sum of hop bandwidths (doubled NVLinks).
 * On a DGX-1 hybrid cube mesh this keeps the ring on direct NVLinks (see hop()).  Eight GPUs need a
 * few thousand steps; the search stops after SEARCH_BUDGET steps with the best ring so far, so
 * large nodes stay cheap, and it is deterministic either way (fixed visiting order, fixed budget).
 *
 * Across nodes the search is done once per lane for the node type and the nodes are chained,
 * which keeps a 1024-rank ring cheap.  Rails: node k is left through GPU x and node k+1 entered
 * through the same local GPU x (same NIC, same rail), so node k+1 runs the path backwards and
 * leaves through the entry GPU e, and so on alternately.  With an odd node count the hop that
 * closes the ring joins x to e and leaves the rail when their NICs differ.
 */
#include "algo_util.h"

#include <string.h>

#define SEARCH_BUDGET 200000L
#define EPS           1e-9

typedef struct {
    double mn, sum;    /* narrowest hop, total */
    int worst, nworst; /* worst class, hops of that class */
} score_t;

typedef struct {
    int g;
    const double *bw; /* g x g, the narrower direction of each pair */
    const int *cls;   /* g x g, the worse class of the two directions */
    const int *nbr;   /* g x g: each GPU's peers, best first */
    int first, last;  /* fixed ends; last -1 asks for a ring back to first */
    int *cur, *best;
    unsigned char *used;
    score_t top;
    double maxbw;
    long budget;
    int found;
} search_t;

static score_t add_hop(score_t s, double bw, int cls)
{
    if (cls > s.worst) {
        s.worst = cls;
        s.nworst = 1;
    } else if (cls == s.worst) {
        s.nworst++;
    }
    s.mn = bw < s.mn ? bw : s.mn;
    s.sum += bw;
    return s;
}

/* Compare a (possibly partial) score with the best: > 0 better, < 0 worse, 0 tied so far. */
static int compare(const score_t *a, const score_t *b)
{
    if (a->worst != b->worst)
        return a->worst < b->worst ? 1 : -1;
    if (a->mn > b->mn + EPS || a->mn < b->mn - EPS)
        return a->mn > b->mn ? 1 : -1;
    if (a->nworst != b->nworst)
        return a->nworst < b->nworst ? 1 : -1;
    return 0;
}

static void dfs(search_t *s, int depth, score_t sc)
{
    int g = s->g, prev = s->cur[depth - 1], k, rem, c;

    if (s->budget-- <= 0)
        return;
    if (depth == g) {
        if (s->last < 0 && g > 1)
            sc = add_hop(sc, s->bw[prev * g + s->first], s->cls[prev * g + s->first]);
        c = s->found ? compare(&sc, &s->top) : 1;
        if (c > 0 || (c == 0 && sc.sum > s->top.sum + EPS)) {
            memcpy(s->best, s->cur, sizeof(int) * g);
            s->top = sc;
            s->found = 1;
        }
        return;
    }
    /* Worst class, narrowest hop and the count at the worst class only get worse as hops are
     * added; the sum can grow by at most maxbw per remaining hop. */
    rem = g - depth + (s->last < 0 ? 1 : 0);
    if (s->found) {
        c = compare(&sc, &s->top);
        if (c < 0 || (c == 0 && sc.sum + rem * s->maxbw <= s->top.sum + EPS))
            return;
    }
    for (k = 0; k < g - 1; k++) {
        int v = s->nbr[prev * g + k];
        if (s->used[v] || (v == s->last && depth != g - 1))
            continue;
        s->used[v] = 1;
        s->cur[depth] = v;
        dfs(s, depth + 1, add_hop(sc, s->bw[prev * g + v], s->cls[prev * g + v]));
        s->used[v] = 0;
    }
}

/* Is hop a->c better than a->b for the visiting order: class, then bandwidth, then id. */
static int before(const double *bw, const int *cls, int g, int a, int c, int b)
{
    if (cls[a * g + c] != cls[a * g + b])
        return cls[a * g + c] < cls[a * g + b];
    return bw[a * g + c] > bw[a * g + b] + EPS;
}

/* Bandwidth and class of the hop a -> b inside a node.  A direct NVLink connection counts as
 * itself: the widest path may run through a third GPU (NVB) and report more bandwidth, but in a
 * ring that third GPU's links carry the ring's own hops too.  Other pairs take the path. */
static acc_status_t hop(const acc_topo_t *topo, int a, int b, double *bw, int *cls)
{
    const acc_topo_link_t *l =
        acc_topo_find_link(topo, acc_topo_find(topo, ACC_VTX_GPU, a),
                           acc_topo_find(topo, ACC_VTX_GPU, b), ACC_LINK_NVLINK);
    acc_topo_path_t p;
    acc_status_t st;
    if (l) {
        *bw = l->bw;
        *cls = ACC_PATH_NVL;
        return ACC_OK;
    }
    if ((st = acc_topo_path(topo, a, b, &p)) != ACC_OK)
        return st;
    *bw = p.bw;
    *cls = (int)p.cls;
    return ACC_OK;
}

/* The node's bandwidth and class matrices (the worse direction of each pair) and neighbour
 * lists. */
static acc_status_t node_matrix(const acc_topo_t *topo, int g, double *bw, int *cls, int *nbr,
                                double *maxbw)
{
    int a, b, k;
    acc_status_t st;
    *maxbw = 0;
    for (a = 0; a < g; a++) {
        for (b = 0; b < g; b++) {
            double wab, wba;
            int cab, cba;
            if (a == b) {
                bw[a * g + b] = 0;
                cls[a * g + b] = ACC_PATH_LOC;
                continue;
            }
            if ((st = hop(topo, a, b, &wab, &cab)) != ACC_OK ||
                (st = hop(topo, b, a, &wba, &cba)) != ACC_OK)
                return st;
            bw[a * g + b] = wab < wba ? wab : wba;
            cls[a * g + b] = cab > cba ? cab : cba;
            if (bw[a * g + b] > *maxbw)
                *maxbw = bw[a * g + b];
        }
    }
    /* Peers best first, ties by GPU id: insertion sort keeps the order deterministic. */
    for (a = 0; a < g; a++) {
        int *row = nbr + a * g, n = 0;
        for (b = 0; b < g; b++) {
            if (b == a)
                continue;
            for (k = n; k > 0 && before(bw, cls, g, a, b, row[k - 1]); k--)
                row[k] = row[k - 1];
            row[k] = b;
            n++;
        }
    }
    return ACC_OK;
}

/* Best ring (last < 0) or path first -> last through the node's g GPUs, into out[g]. */
static acc_status_t node_search(const acc_topo_t *topo, int first, int last, int *out)
{
    int g = acc_topo_gpus_per_node(topo);
    double *bw = acc_mem_calloc((size_t)g * g, sizeof(double));
    int *nbr = acc_mem_calloc((size_t)g * g, sizeof(int)), *cur = acc_mem_calloc((size_t)g, sizeof(int));
    int *cls = acc_mem_calloc((size_t)g * g, sizeof(int));
    unsigned char *used = acc_mem_calloc((size_t)g, 1);
    score_t start = {1e300, 0, ACC_PATH_LOC, 0};
    search_t s;
    acc_status_t st;

    if (!bw || !nbr || !cur || !cls || !used) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory searching a ring over %d GPUs", g);
        goto out;
    }
    if ((st = node_matrix(topo, g, bw, cls, nbr, &s.maxbw)) != ACC_OK)
        goto out;
    s.g = g;
    s.bw = bw;
    s.cls = cls;
    s.nbr = nbr;
    s.first = first;
    s.last = (last == first) ? -1 : last;
    s.cur = cur;
    s.best = out;
    s.used = used;
    s.top = start;
    s.budget = SEARCH_BUDGET;
    s.found = 0;
    cur[0] = first;
    used[first] = 1;
    dfs(&s, 1, start);
    if (!s.found)
        st = acc_error_set(ACC_ERR_INTERNAL, "ring search over %d GPUs found nothing", g);
out:
    acc_mem_free(bw);
    acc_mem_free(nbr);
    acc_mem_free(cls);
    acc_mem_free(cur);
    acc_mem_free(used);
    return st;
}

acc_status_t algo_node_cycle(const acc_topo_t *topo, int *cycle)
{
    return node_search(topo, 0, 0, cycle);
}

/* The GPUs that enter (e) and leave (x) each node on lane pair q: GPUs on different rails,
 * rotating over the rails with q so that lane pairs spread over the NICs. */
static void lane_ends(const acc_topo_t *topo, int g, int q, int *e, int *x)
{
    int rails[64], nr = 0, i, j, k, cnt[2], want[2];

    for (i = 0; i < g; i++) {
        int nic = acc_topo_gpu_nic(topo, i);
        for (j = 0; j < nr && rails[j] != nic; j++)
            ;
        if (j == nr && nr < 64)
            rails[nr++] = nic;
    }
    if (g == 1) {
        *e = *x = 0;
        return;
    }
    if (nr < 2) {
        *e = (2 * q) % g;
        *x = (2 * q + 1) % g;
        return;
    }
    for (k = 0; k < 2; k++) {
        int rail = rails[(2 * q + k) % nr], pick;
        cnt[k] = 0;
        for (i = 0; i < g; i++)
            cnt[k] += acc_topo_gpu_nic(topo, i) == rail;
        pick = ((2 * q + k) / nr) % cnt[k];
        for (i = 0; i < g; i++) {
            if (acc_topo_gpu_nic(topo, i) == rail && pick-- == 0) {
                want[k] = i;
                break;
            }
        }
    }
    *e = want[0];
    *x = want[1];
}

static void reverse(int *a, int n)
{
    int i;
    for (i = 0; i < n / 2; i++) {
        int t = a[i];
        a[i] = a[n - 1 - i];
        a[n - 1 - i] = t;
    }
}

acc_status_t algo_ring_order(const acc_topo_t *topo, int lane, int *order)
{
    int g = acc_topo_gpus_per_node(topo), nodes = acc_topo_nodes(topo), k, i, e, x;
    int *path = acc_mem_calloc((size_t)g, sizeof(int));
    acc_status_t st;

    if (!path)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a ring of %d GPUs", g);
    if (nodes == 1) {
        st = node_search(topo, 0, 0, path);
    } else {
        lane_ends(topo, g, lane / 2, &e, &x);
        st = node_search(topo, e, x, path);
    }
    if (st == ACC_OK) {
        for (k = 0; k < nodes; k++) {
            for (i = 0; i < g; i++)
                order[k * g + i] = k * g + path[(k % 2) ? g - 1 - i : i];
        }
        if (lane % 2)
            reverse(order, nodes * g);
    }
    acc_mem_free(path);
    return st;
}
