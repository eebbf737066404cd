/* Shared by the generators: argument checks, plan headers, NVLink checks, layouts. */
#include "algo_util.h"

#include <string.h>

acc_status_t algo_params(const algo_spec_t *spec, const acc_topo_t *topo,
                         const acc_algo_args_t *args, algo_params_t *out)
{
    acc_algo_args_t none;
    int n = acc_topo_ranks(topo);

    if (!args) {
        memset(&none, 0, sizeof(none));
        args = &none;
    }
    if (n < 1)
        return acc_error_set(ACC_ERR_INVALID, "%s: the topology has no GPUs", spec->name);
    if (args->lanes < 0 || args->lanes > ALGO_MAX_LANES)
        return acc_error_set(ACC_ERR_RANGE,
                             "%s: lanes=%d is out of range (1 to %d, 0 for the "
                             "default %d)",
                             spec->name, args->lanes, ALGO_MAX_LANES, spec->def_lanes);
    if (args->chunks < 0 || args->chunks > ALGO_MAX_CHUNKS)
        return acc_error_set(ACC_ERR_RANGE,
                             "%s: chunks=%d is out of range (1 to %d, 0 for the "
                             "default %d)",
                             spec->name, args->chunks, ALGO_MAX_CHUNKS, spec->def_chunks);
    if (args->proto < 0 || args->proto >= ACC_PROTO_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "%s: unknown protocol %d", spec->name,
                             (int)args->proto);
    if (spec->rooted && (args->root < 0 || args->root >= n))
        return acc_error_set(ACC_ERR_RANGE, "%s: root=%d is not a rank of this topology (0 to %d)",
                             spec->name, args->root, n - 1);
    if (!spec->rooted && args->root != 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s takes no root (root=%d given); only broadcast "
                             "and reduce have one",
                             spec->name, args->root);
    if (!spec->hierarchical && ((args->inner && args->inner[0]) || (args->outer && args->outer[0])))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s takes no inner/outer algorithm ('%s'/'%s' "
                             "given); only hier does",
                             spec->name, args->inner ? args->inner : "",
                             args->outer ? args->outer : "");
    out->lanes = args->lanes ? args->lanes : spec->def_lanes;
    out->chunks = args->chunks ? args->chunks : spec->def_chunks;
    out->root = spec->rooted ? args->root : -1;
    return ACC_OK;
}

acc_status_t algo_check_args(const algo_spec_t *spec, const acc_topo_t *topo,
                             const acc_algo_args_t *args)
{
    algo_params_t pr;
    return algo_params(spec, topo, args, &pr);
}

acc_status_t algo_plan_new(const acc_topo_t *topo, acc_coll_t coll, const char *algo,
                           const acc_algo_args_t *args, int lanes, uint32_t in_chunks,
                           uint32_t out_chunks, uint32_t scratch_chunks, acc_plan_t **out)
{
    acc_plan_t *p;
    acc_status_t st = acc_plan_create(coll, acc_topo_ranks(topo), lanes, in_chunks, out_chunks,
                                      scratch_chunks, &p);
    if (st != ACC_OK)
        return st;
    snprintf(p->algo, sizeof(p->algo), "%s", algo);
    p->proto = args ? args->proto : ACC_PROTO_SIMPLE;
    *out = p;
    return ACC_OK;
}

void algo_params_format(char *text, size_t cap, const algo_params_t *pr, const int *order, int n)
{
    size_t len, base;
    int i;

    base = len = (size_t)snprintf(text, cap, "lanes=%d chunks=%d", pr->lanes, pr->chunks);
    /* The order tells a reader which links the ring uses; when it does not fit it is left out
     * rather than cut. */
    for (i = 0; order && i < n && len < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s%d", i ? "," : " ring=", order[i]);
    if (len >= cap)
        text[base] = '\0';
}

acc_status_t algo_set_params(acc_plan_t *p, const algo_params_t *pr, const int *order)
{
    char text[ACC_PLAN_PARAMS_MAX];
    algo_params_format(text, sizeof(text), pr, order, p->nranks);
    return acc_plan_set_params(p, "%s", text);
}

/* Is every pair of GPUs of one node joined by NVLink, directly or through NVSwitches (a path
 * through a third GPU, NVB, allows no peer access)?  On failure, *a and *b name the first pair
 * that is not and *cls its class. */
static int nvlink_clique(const acc_topo_t *topo, int *a, int *b, acc_path_class_t *cls)
{
    int g = acc_topo_gpus_per_node(topo), i, j;
    acc_topo_path_t path;
    for (i = 0; i < g; i++) {
        for (j = i + 1; j < g; j++) {
            if (acc_topo_nvlinks_between(topo, i, j) > 0)
                continue;
            if (acc_topo_path(topo, i, j, &path) != ACC_OK || path.cls != ACC_PATH_NVL) {
                *a = i;
                *b = j;
                *cls = path.cls;
                return 0;
            }
        }
    }
    return 1;
}

acc_status_t algo_need_nvlink_within(const acc_topo_t *topo, const char *name)
{
    int a, b;
    acc_path_class_t cls = ACC_PATH_DIS;
    if (!nvlink_clique(topo, &a, &b, &cls))
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s needs every GPU pair of a node connected "
                             "by NVLink/NVSwitch (peer memory); GPU%d-GPU%d is %s on this "
                             "topology",
                             name, a, b, acc_path_class_name(cls));
    return ACC_OK;
}

acc_status_t algo_need_nvlink_node(const acc_topo_t *topo, const char *name)
{
    int nodes = acc_topo_nodes(topo);
    if (nodes > 1)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s works within one node (peer memory does "
                             "not cross the network); this topology has %d nodes: use hier with "
                             "inner=direct",
                             name, nodes);
    return algo_need_nvlink_within(topo, name);
}

algo_layout_t algo_layout(acc_bufid_t buf, uint32_t base, uint32_t stride, uint32_t cnt)
{
    algo_layout_t l;
    memset(&l, 0, sizeof(l));
    l.buf = (uint8_t)buf;
    l.base = base;
    l.stride = stride;
    l.cnt = cnt;
    l.nsub = 1;
    return l;
}

/* Virtual block w of a layout is actual blocks [first(w), first(w + 1)). */
static uint32_t first_block(const algo_layout_t *l, int w)
{
    return (uint32_t)(w < l->fold ? 2 * w : w + l->fold);
}

static int contiguous(const algo_layout_t *l)
{
    return l->nsub <= 1 && l->stride == l->cnt;
}

static uint32_t run_count(const algo_layout_t *l, int lo, int hi)
{
    uint32_t nb = first_block(l, hi) - first_block(l, lo);
    if (nb == 0)
        return 0;
    return contiguous(l) ? 1 : nb * (l->nsub ? l->nsub : 1);
}

static acc_ref_t run(const algo_layout_t *l, int lo, int hi, uint32_t k)
{
    uint32_t b0 = first_block(l, lo), nsub = l->nsub ? l->nsub : 1;
    if (contiguous(l))
        return acc_ref((acc_bufid_t)l->buf, l->base + b0 * l->stride,
                       (first_block(l, hi) - b0) * l->cnt);
    return acc_ref((acc_bufid_t)l->buf,
                   l->base + (b0 + k / nsub) * l->stride +
                       ((l->sub_first + k % nsub) % nsub) * l->sub_stride,
                   l->cnt);
}

int algo_layout_eq(const algo_layout_t *a, const algo_layout_t *b)
{
    return a->buf == b->buf && a->base == b->base && a->stride == b->stride && a->cnt == b->cnt &&
           a->nsub == b->nsub && a->sub_stride == b->sub_stride && a->sub_first == b->sub_first &&
           a->fold == b->fold;
}

algo_layout_t algo_layout_piece(const algo_layout_t *l, uint32_t s)
{
    algo_layout_t one = *l;
    uint32_t nsub = l->nsub ? l->nsub : 1;
    one.base = l->base + ((l->sub_first + s) % nsub) * l->sub_stride;
    one.nsub = 1;
    one.sub_stride = 0;
    one.sub_first = 0;
    return one;
}

acc_status_t algo_emit_exchange(acc_plan_t *p, int rank, int lane, int peer,
                                const algo_layout_t *out, int slo, int shi, acc_opcode_t code,
                                const algo_layout_t *src, const algo_layout_t *dst, int rlo,
                                int rhi)
{
    uint32_t ns = run_count(out, slo, shi), nr = run_count(dst, rlo, rhi), k;
    acc_status_t st = ACC_OK;

    if (src && run_count(src, rlo, rhi) != nr)
        return acc_error_set(ACC_ERR_INTERNAL,
                             "exchange: blocks [%d,%d) cut into different runs "
                             "in source and destination",
                             rlo, rhi);
    for (k = 0; (k < ns || k < nr) && st == ACC_OK; k++) {
        if (k < ns) {
            acc_op_t op = acc_op_init(ACC_OP_SEND);
            op.peer = peer;
            op.src = run(out, slo, shi, k);
            st = acc_plan_add(p, rank, lane, &op, NULL);
        }
        if (k < nr && st == ACC_OK) {
            acc_op_t op = acc_op_init(code);
            op.peer = peer;
            if (src)
                op.src = run(src, rlo, rhi, k);
            op.dst = run(dst, rlo, rhi, k);
            st = acc_plan_add(p, rank, lane, &op, NULL);
        }
    }
    return st;
}

acc_status_t algo_emit(acc_plan_t *p, int rank, int lane, acc_opcode_t code, int peer, int peer2,
                       const algo_layout_t *src, int lo, int hi, const algo_layout_t *dst, int dlo,
                       int dhi)
{
    uint32_t n = src ? run_count(src, lo, hi) : run_count(dst, dlo, dhi), k;
    acc_status_t st;

    if (src && dst && run_count(dst, dlo, dhi) != n)
        return acc_error_set(ACC_ERR_INTERNAL,
                             "%s: source blocks [%d,%d) and destination "
                             "blocks [%d,%d) cut into different runs",
                             acc_op_name(code), lo, hi, dlo, dhi);
    for (k = 0; k < n; k++) {
        acc_op_t op = acc_op_init(code);
        op.peer = peer;
        op.peer2 = peer2;
        if (src)
            op.src = run(src, lo, hi, k);
        if (dst)
            op.dst = run(dst, dlo, dhi, k);
        if (src && dst && op.src.cnt != op.dst.cnt)
            return acc_error_set(ACC_ERR_INTERNAL,
                                 "%s: %u source chunks against %u destination "
                                 "chunks",
                                 acc_op_name(code), op.src.cnt, op.dst.cnt);
        if ((st = acc_plan_add(p, rank, lane, &op, NULL)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}
