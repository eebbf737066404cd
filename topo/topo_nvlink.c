/*
 * Inputs without NVLinks for GPUs that have them.
 *
 * NCCL topology files shipped by network plugins (aws-ofi-nccl's p5.48xlarge) and the partial PCI
 * trees of cloud images describe the PCIe tree and NICs only: NCCL discovers the NVLinks at run
 * time.  acc never invents NVLinks, so plans for such an input are PCIe plans for what is in fact
 * an NVLink machine.  topo_missing_nvlinks() says so (the loader logs it, the summary prints it).
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
