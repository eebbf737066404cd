/*
 * The parameter variants the table builder tries: which lanes, chunk counts and inner/outer
 * pairs are worth generating, verifying and simulating on a topology.
 *
 * Lanes.  A lane is one ring, tree or thread block; more lanes help only while they find links
 * to spread over.  Within an NVLink node that is about two lanes per NVLink of a GPU (one per
 * direction; NCCL's channel counts on NVSwitch machines are of the same order), at most 32; on a
 * PCIe node a few lanes overlap the two directions and hide latency, more only add overhead.
 *
 * Chunks.  One chunk per lane has the least latency; pipelined generators (trees, rooted
 * plans) default to more, and four times their default fills long pipelines at large sizes.
 *
 * Search.  Lanes and chunks are searched one after the other, not as a grid: first the lanes
 * line through the generator's default (every lane count at the default chunks), then the
 * chunk counts at each lane count that won a size.  On the shipped 8-GPU platforms this found
 * the full grid's (lanes 1..32 x chunks 1, default, 4 x default) best times within 3% at every
 * size, with about half the plans and simulations.
 *
 * Scale.  Verification costs time in proportion to a plan's operations, which for flat rings
 * grow with lanes x ranks^2 (a two-lane ring of 1024 ranks has four million of them) and for
 * hierarchical plans with lanes x ranks x nodes.  So the search shrinks with the rank count:
 *   <= 16 ranks    the search above, for every generator and inner x outer pair;
 *   <= 64 ranks    the same with lanes 1, 4, 16 and the cap only (simulations of several
 *                  nodes cost tens of milliseconds each);
 *   <= 256 ranks   flat generators: their defaults; hierarchical: the default inner with every
 *                  outer, at the default lanes and at 8;
 *   larger         the defaults of each generator and of each outer algorithm, and plans of
 *                  more than a million operations (rings over every rank, hierarchical
 *                  allgather and reduce-scatter) without LL;
 *   > ACC_SELECT_CLASS_RANKS   the same, and hierarchical generators with rings inside and
 *                  between nodes, whose class form the sweep then prices on its quotient.
 *
 * Protocols.  A variant is simulated with every protocol acc has a kernel for with that plan
 * (acc_kernel_supports: Simple always, LL when the plan passes messages, LL128 never), so that a
 * table never names a kernel that does not exist; except that in that last case LL is not
 * tried: a plan that large wins only at large sizes (below them the logarithmic plans, with a
 * thousand times fewer operations, are ten times faster), where LL's 8-byte stores lose to
 * Simple, and each of its simulations costs about a second.
 */
#include "select_internal.h"

#include <stdlib.h>
#include <string.h>

static const int lane_steps[] = {1, 2, 4, 8, 16, 24, 32};
/* Beyond one node a simulation costs tens of milliseconds: every other step, and the cap. */
static const int lane_steps_coarse[] = {1, 4, 16, 32};
static const char *const inner_names[] = {"ring", "direct"};
static const char *const outer_names[] = {"ring", "rhd", "rh", "rd", "tree"};

enum { TIER_FINE = 16, TIER_LINES = 64, TIER_MEDIUM = 256, ALGO_CHUNKS_MAX = 1024 };
#define HUGE_PLAN_OPS 1000000

int select_lanes_cap(const acc_topo_t *topo)
{
    int gpn = acc_topo_gpus_per_node(topo), links, j, cap;

    if (gpn < 1)
        return 1;
    links = acc_topo_nvlinks_to_switches(topo, 0);
    for (j = 1; j < gpn; j++)
        links += acc_topo_nvlinks_between(topo, 0, j);
    cap = links > 0 ? 2 * links : 4;
    return cap > 32 ? 32 : cap;
}

/* Does the generator take inner/outer?  Only hierarchical ones accept them. */
static int is_hierarchical(const acc_topo_t *topo, const acc_algo_t *algo)
{
    acc_algo_args_t a;
    size_t i;
    int yes = 0;

    memset(&a, 0, sizeof(a));
    for (i = 0; i < sizeof(inner_names) / sizeof(inner_names[0]) && !yes; i++) {
        a.inner = inner_names[i];
        yes = algo->supports(topo, &a) == ACC_OK;
    }
    acc_error_clear();
    return yes;
}

size_t select_pairs(const acc_topo_t *topo, const acc_algo_t *algo, select_pair_t *out)
{
    acc_algo_args_t a;
    size_t i, j, n = 0;
    int large = acc_topo_ranks(topo) > TIER_LINES;

    if (!is_hierarchical(topo, algo)) {
        out[0].inner = out[0].outer = NULL;
        return 1;
    }
    memset(&a, 0, sizeof(a));
    /* Large topologies: the generator's own inner choice (direct where NVLink allows) only. */
    for (i = 0; i < (large ? 1 : sizeof(inner_names) / sizeof(inner_names[0])); i++) {
        for (j = 0; j < sizeof(outer_names) / sizeof(outer_names[0]); j++) {
            a.inner = large ? NULL : inner_names[i];
            a.outer = outer_names[j];
            if (algo->supports(topo, &a) != ACC_OK)
                continue;
            out[n].inner = a.inner;
            out[n].outer = a.outer;
            n++;
        }
    }
    /* By class, rings inside and between nodes too: the pair with a class form, unless the
     * generator's own choice already is it. */
    for (i = 0, j = 0; i < n; i++) {
        a.inner = out[i].inner;
        a.outer = out[i].outer;
        j += acc_algo_has_class(algo, topo, &a);
    }
    a.inner = a.outer = "ring";
    if (acc_select_by_class(acc_topo_ranks(topo)) && n < SELECT_PAIRS_MAX && j == 0 &&
        algo->supports(topo, &a) == ACC_OK && acc_algo_has_class(algo, topo, &a)) {
        out[n].inner = out[n].outer = "ring";
        n++;
    }
    acc_error_clear();
    return n;
}

/* "lanes=2 chunks=4 ...": the value of key in params, or 0. */
static int param_int(const char *params, const char *key)
{
    size_t k = strlen(key);
    const char *p = params;

    while ((p = strstr(p, key)) != NULL) {
        if ((p == params || p[-1] == ' ') && p[k] == '=')
            return atoi(p + k + 1);
        p += k;
    }
    return 0;
}

typedef struct {
    acc_algo_args_t *v;
    size_t n, cap;
} vlist_t;

/* Add lanes x chunks unless it is the default (already swept) or a duplicate. */
static acc_status_t add(vlist_t *l, const acc_algo_args_t *base, int lanes, int chunks, int dl,
                        int dc)
{
    acc_algo_args_t a = *base;
    void *p = l->v;
    size_t i;

    if ((lanes == dl && chunks == dc) || chunks > ALGO_CHUNKS_MAX)
        return ACC_OK;
    for (i = 0; i < l->n; i++)
        if (l->v[i].lanes == lanes && l->v[i].chunks == chunks)
            return ACC_OK;
    if (acc_array_reserve(&p, &l->cap, l->n + 1, sizeof(*l->v)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory listing algorithm variants");
    l->v = p;
    a.lanes = lanes;
    a.chunks = chunks;
    l->v[l->n++] = a;
    return ACC_OK;
}

/* Keep what the generator accepts; a refusal only means "not a variant". */
static void keep_supported(const acc_topo_t *topo, const acc_algo_t *algo, vlist_t *l)
{
    size_t i, kept = 0;
    for (i = 0; i < l->n; i++)
        if (algo->supports(topo, &l->v[i]) == ACC_OK)
            l->v[kept++] = l->v[i];
    l->n = kept;
    acc_error_clear();
}

static void defaults_of(const char *def_params, int *dl, int *dc)
{
    *dl = param_int(def_params, "lanes");
    *dc = param_int(def_params, "chunks");
    if (*dl < 1)
        *dl = 1;
    if (*dc < 1)
        *dc = 1;
}

acc_status_t select_lane_variants(const acc_topo_t *topo, const acc_algo_t *algo,
                                  const acc_algo_args_t *base, const char *def_params,
                                  int max_lanes, acc_algo_args_t **out, size_t *n)
{
    int ranks = acc_topo_ranks(topo), hier = base->inner || base->outer, dl, dc;
    size_t k, nl = sizeof(lane_steps) / sizeof(lane_steps[0]);
    vlist_t l;
    acc_status_t st = ACC_OK;

    memset(&l, 0, sizeof(l));
    defaults_of(def_params, &dl, &dc);
    /* Past 64 ranks across nodes a plan's simulation costs seconds: hierarchical plans try 8
     * lanes and nothing else does.  One node of more (an NVL72 rack's NVLink domain) takes the
     * coarse steps: there lanes are what fills NVLink, and its plans are small. */
    if (ranks > TIER_LINES && acc_topo_nodes(topo) > 1) {
        if (hier && ranks <= TIER_MEDIUM && max_lanes >= 8)
            st = add(&l, base, 8, dc, dl, dc);
    } else if (ranks > TIER_FINE) {
        for (k = 0; k < 4 && st == ACC_OK && lane_steps_coarse[k] < max_lanes; k++)
            st = add(&l, base, lane_steps_coarse[k], dc, dl, dc);
        if (st == ACC_OK)
            st = add(&l, base, max_lanes, dc, dl, dc);
    } else {
        for (k = 0; k < nl && st == ACC_OK && lane_steps[k] <= max_lanes; k++)
            st = add(&l, base, lane_steps[k], dc, dl, dc);
    }
    if (st != ACC_OK) {
        acc_mem_free(l.v);
        return st;
    }
    keep_supported(topo, algo, &l);
    *out = l.v;
    *n = l.n;
    return ACC_OK;
}

acc_status_t select_chunk_variants(const acc_topo_t *topo, const acc_algo_t *algo,
                                   const acc_algo_args_t *base, const char *def_params, int lanes,
                                   acc_algo_args_t **out, size_t *n)
{
    int dl, dc, chunks[2], c;
    vlist_t l;
    acc_status_t st = ACC_OK;

    memset(&l, 0, sizeof(l));
    defaults_of(def_params, &dl, &dc);
    chunks[0] = 1;
    chunks[1] = 4 * dc;
    for (c = 0;
         c < 2 && st == ACC_OK && (acc_topo_ranks(topo) <= TIER_LINES || acc_topo_nodes(topo) == 1);
         c++)
        if (chunks[c] != dc)
            st = add(&l, base, lanes, chunks[c], dl, dc);
    if (st != ACC_OK) {
        acc_mem_free(l.v);
        return st;
    }
    keep_supported(topo, algo, &l);
    *out = l.v;
    *n = l.n;
    return ACC_OK;
}

int select_proto_worth(const acc_topo_t *topo, const acc_plan_t *plan, size_t ops,
                       acc_proto_t proto)
{
    if (acc_kernel_supports(plan, proto) != ACC_OK) {
        acc_error_clear(); /* no kernel: not a candidate, not a failure */
        return 0;
    }
    return proto != ACC_PROTO_LL || acc_topo_ranks(topo) <= TIER_MEDIUM || ops <= HUGE_PLAN_OPS;
}

void select_short_params(const char *params, char *out, size_t cap)
{
    const char *p = params;
    size_t len = 0;

    out[0] = '\0';
    while (*p) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && strncmp(p, "ring=", 5) != 0 && len + n + 2 < cap) {
            if (len)
                out[len++] = ' ';
            memcpy(out + len, p, n);
            len += n;
            out[len] = '\0';
        }
        p += n;
        while (*p == ' ')
            p++;
    }
}

void select_size_name(uint64_t bytes, char *out, size_t cap)
{
    acc_size_text(bytes, out, cap);
}
