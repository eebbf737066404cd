/*
 * Inputs without NVLinks for GPUs that have them.
 *
 * NCCL topology files shipped by network plugins (aws-ofi-nccl's p5.48xlarge) and the partial PCI
 * trees of cloud images describe the PCIe tree and NICs only: NCCL discovers the NVLinks at run
 * time.  acc never invents NVLinks, so plans for such an input are PCIe plans for what is in fact
 * an NVLink machine.  topo_missing_nvlinks() says so (the loader logs it, the summary prints it),
 * and acc_topo_nvlink_from() takes the NVLink fabric of a shipped platform of the same GPUs when
 * the user asks for it, recording where the links came from among the assumptions.
 */
#include "internal.h"

#include <string.h>

/* The part the input names for a GPU (PCI id or model name), without the generation fallback of
 * acc_topo_gpu_model_of(): an sm_90 GPU of unknown model may be a PCIe card. */
static const acc_gpu_model_t *named_part(const acc_topo_vertex_t *v)
{
    const acc_gpu_model_t *m = v->device_id ? acc_topo_gpu_model_by_pci(v->device_id) : NULL;
    return m ? m : acc_topo_gpu_model_by_name(v->model);
}

static int has_nvlinks(const acc_topo_t *t)
{
    int i;
    for (i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == ACC_LINK_NVLINK)
            return 1;
    return 0;
}

static const char *label(const acc_topo_t *t)
{
    return t->name[0] ? t->name : acc_topo_source(t)[0] ? acc_topo_source(t) : "the topology";
}

int topo_missing_nvlinks(const acc_topo_t *t, acc_buf_t *out)
{
    const acc_gpu_model_t *first = NULL;
    int i, n = 0;

    /* A synthetic description states its NVLinks, and live discovery reads the driver's. */
    if (t->format == ACC_TOPO_FMT_SYNTHETIC || t->format == ACC_TOPO_FMT_LIVE || has_nvlinks(t))
        return 0;
    for (i = 0; i < t->nvertices; i++) {
        const acc_gpu_model_t *m;
        if (t->vertices[i].kind != ACC_VTX_GPU)
            continue;
        m = named_part(&t->vertices[i]);
        if (m && m->nvlinks > 0) {
            first = first ? first : m;
            n++;
        }
    }
    if (n && out)
        acc_buf_printf(out,
                       "%s lists no NVLink, but %d of its GPUs are %s parts with %d NVLinks "
                       "(NCCL discovers them at run time; acc invents none): plans for it will "
                       "be PCIe plans.  For NVLink plans pass --nvlink-from PLATFORM (a shipped "
                       "platform with as many GPUs of the same generation, see "
                       "--list-platforms), or --topo auto on the machine",
                       label(t), n, first->model, first->nvlinks);
    return n;
}

/* NVLinks per GPU id in a node graph, into *per (ngpu entries); GPU-GPU links count at both
 * ends, as they do at the GPUs. */
static void links_per_gpu(const acc_topo_t *t, int *per)
{
    int i;
    for (i = 0; i < t->nlinks; i++) {
        const acc_topo_link_t *l = &t->links[i];
        if (l->kind == ACC_LINK_NVLINK && t->vertices[l->from].kind == ACC_VTX_GPU)
            per[t->vertices[l->from].id] += l->count;
    }
}

/* The GPU vertex of an id; -1 when absent (before finalisation acc_topo_find scans). */
static const acc_topo_vertex_t *gpu_of(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

/* Whether the platform's fabric fits t: no NVLink yet, as many GPUs, the same generations, no
 * more links per GPU than its part has, and only links acc can carry over. */
static acc_status_t check_fits(const acc_topo_t *t, const acc_topo_t *p, const int *per)
{
    int ngpu = t->kind_count[ACC_VTX_GPU], g, i, any = 0;

    if (has_nvlinks(t))
        return acc_error_set(ACC_ERR_TOPO,
                             "%s already lists NVLinks; NVLinks are taken from %s only for an "
                             "input that lists none",
                             label(t), label(p));
    if (p->kind_count[ACC_VTX_GPU] != ngpu)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s has %d GPUs per node but %s has %d: take the NVLinks of a "
                             "platform with as many GPUs (see --list-platforms)",
                             label(t), ngpu, label(p), p->kind_count[ACC_VTX_GPU]);
    for (i = 0; i < p->nlinks; i++) {
        const acc_topo_link_t *l = &p->links[i];
        acc_vertex_kind_t a = p->vertices[l->from].kind, b = p->vertices[l->to].kind;
        if (l->kind == ACC_LINK_C2C ||
            (l->kind == ACC_LINK_NVLINK && (a == ACC_VTX_CPU || b == ACC_VTX_CPU)))
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "%s joins GPUs to CPUs by NVLink or C2C, which cannot be "
                                 "carried over to the CPUs of %s; take a platform whose NVLinks "
                                 "join GPUs and NVSwitches only",
                                 label(p), label(t));
    }
    for (g = 0; g < ngpu; g++) {
        const acc_topo_vertex_t *tv = gpu_of(t, g), *pv = gpu_of(p, g);
        const acc_gpu_model_t *m = named_part(tv);
        const acc_gpu_arch_t *arch = acc_topo_gpu_arch(tv->sm);
        int limit = m ? m->nvlinks : arch ? arch->max_nvlinks : 0;
        if (tv->sm != pv->sm)
            return acc_error_set(ACC_ERR_TOPO,
                                 "GPU%d of %s is sm_%d but GPU%d of %s is sm_%d: NVLink "
                                 "generations differ; take a platform of the same GPUs",
                                 g, label(t), tv->sm, g, label(p), pv->sm);
        if (per[g] > limit)
            return acc_error_set(ACC_ERR_TOPO,
                                 "GPU%d of %s (%s) has %d NVLinks, but GPU%d of %s has %d; take "
                                 "a platform of the same part",
                                 g, label(t), tv->model[0] ? tv->model : "sm_?", limit, g, label(p),
                                 per[g]);
        any |= per[g] > 0;
    }
    if (!any)
        return acc_error_set(ACC_ERR_TOPO, "%s has no NVLink to take for %s", label(p), label(t));
    return ACC_OK;
}

/* Add p's GPU-NVSwitch and GPU-GPU NVLinks to c, GPU by id; each GPU pair once. */
static acc_status_t copy_fabric(acc_topo_t *c, const acc_topo_t *p)
{
    int i, nvs = -1;
    acc_status_t st = ACC_OK;

    for (i = 0; i < p->nlinks && st == ACC_OK; i++) {
        const acc_topo_link_t *l = &p->links[i];
        const acc_topo_vertex_t *a = &p->vertices[l->from], *b = &p->vertices[l->to];
        int va;
        if (l->kind != ACC_LINK_NVLINK || a->kind != ACC_VTX_GPU)
            continue;
        va = acc_topo_find(c, ACC_VTX_GPU, a->id);
        if (b->kind == ACC_VTX_NVSWITCH) {
            if (nvs < 0 && (st = topo_nvswitch(c, &nvs)) != ACC_OK)
                break;
            st = topo_add_nvlinks(c, va, nvs, l->count);
        } else if (b->kind == ACC_VTX_GPU && a->id < b->id) {
            st = topo_add_nvlinks(c, va, acc_topo_find(c, ACC_VTX_GPU, b->id), l->count);
        }
    }
    return st;
}

/* "18 per GPU into the NVSwitch fabric", or per GPU where they differ. */
static acc_status_t assume_fabric(acc_topo_t *c, const acc_topo_t *p, const int *per, int ngpu)
{
    acc_buf_t b;
    int g, same = 1;
    acc_status_t st;

    acc_buf_init(&b);
    for (g = 1; g < ngpu; g++)
        same &= per[g] == per[0];
    if (same)
        acc_buf_printf(&b, "%d per GPU", per[0]);
    for (g = 0; !same && g < ngpu; g++)
        acc_buf_printf(&b, "%sGPU%d %d", g ? ", " : "", g, per[g]);
    acc_buf_puts(&b, p->kind_count[ACC_VTX_NVSWITCH] ? ", through the NVSwitch fabric"
                                                     : ", directly between GPUs");
    if ((st = acc_buf_status(&b)) == ACC_OK)
        st = acc_topo_assume(c,
                             "NVLinks taken from the shipped platform %s (%s): the input lists "
                             "none, as NCCL discovers them at run time",
                             label(p), b.data);
    acc_buf_free(&b);
    return st;
}

acc_status_t acc_topo_nvlink_from(const acc_topo_t *t, const acc_topo_t *platform, acc_topo_t **out)
{
    int ngpu = t->kind_count[ACC_VTX_GPU];
    int *per = acc_mem_calloc((size_t)platform->kind_count[ACC_VTX_GPU] + 1, sizeof(int));
    acc_topo_t *c = NULL;
    acc_status_t st;

    *out = NULL;
    if (!per)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    links_per_gpu(platform, per);
    if ((st = check_fits(t, platform, per)) != ACC_OK || (st = acc_topo_clone(t, &c)) != ACC_OK)
        goto out;
    topo_free_paths(c); /* the copy changes, and is finalized again below */
    if ((st = copy_fabric(c, platform)) != ACC_OK ||
        (st = assume_fabric(c, platform, per, ngpu)) != ACC_OK)
        goto out;
    if ((st = acc_topo_finalize(c)) != ACC_OK) {
        acc_error_prefix(st, "%s with the NVLinks of %s: ", label(t), label(platform));
        goto out;
    }
    ACC_INFO(TOPO, "%s: NVLinks of %s added", label(t), label(platform));
    *out = c;
    c = NULL;
out:
    acc_topo_destroy(c);
    acc_mem_free(per);
    return st;
}
