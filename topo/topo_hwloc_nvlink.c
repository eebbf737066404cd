/*
 * NVLinks of an hwloc capture, from its NVLinkBandwidth distance matrix: unidirectional MB/s
 * summed over the links between two objects (GPUs' OS devices, NVSwitch PCI devices, CPU
 * packages), written by hwloc's NVML backend from 2.5 on.  Only link counts are taken from it;
 * bandwidth follows from the GPU generation (internal.h).  A capture without the matrix gets no
 * NVLinks, and says so.
 */
#include "topo_hwloc.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define VENDOR_NVIDIA 0x10de
#define VENDOR_IBM    0x1014

#define EP_NONE   (-1)
#define EP_FABRIC (-2)

/* The vertex an NVLinkBandwidth object stands for, EP_FABRIC for an NVSwitch chip, EP_NONE for
 * none; *gpu says whether it is a GPU. */
static int endpoint(topo_hwloc_conv_t *c, hwloc_obj_t o, int *gpu)
{
    int i;
    *gpu = 0;
    while (o && o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    if (!o)
        return EP_NONE;
    if (o->type == HWLOC_OBJ_PCI_DEVICE) {
        for (i = 0; i < c->ngpu; i++) {
            if (c->gpu[i].obj == o) {
                *gpu = c->gpu[i].vertex >= 0;
                return c->gpu[i].vertex >= 0 ? c->gpu[i].vertex : EP_NONE;
            }
        }
        if (o->attr->pcidev.vendor_id == VENDOR_IBM) { /* a POWER9 NPU: the CPU's NVLink port */
            int numa;
            if (topo_hwloc_numa_of(c, o, "an NVLink port of the CPU", &numa) != ACC_OK)
                return EP_NONE;
            return c->cpu[numa];
        }
        if (o->attr->pcidev.vendor_id == VENDOR_NVIDIA ||
            (o->subtype && strcmp(o->subtype, "NVSwitch") == 0))
            return EP_FABRIC; /* every NVSwitch chip folds into the node's one fabric vertex */
        return EP_NONE;
    }
    if (o->type == HWLOC_OBJ_BRIDGE || o->type == HWLOC_OBJ_MISC || !o->nodeset)
        return EP_NONE;
    for (i = 0; i < c->nnuma; i++)
        if (hwloc_bitmap_isset(o->nodeset, c->numa[i]->os_index))
            return c->cpu[i];
    return EP_NONE;
}

static void obj_label(hwloc_obj_t o, char *buf, size_t n)
{
    if (o->type == HWLOC_OBJ_PCI_DEVICE) {
        char bus[24];
        topo_hwloc_busid(o, bus);
        snprintf(buf, n, "%s", bus);
    } else if (o->name) {
        snprintf(buf, n, "%s", o->name);
    } else {
        snprintf(buf, n, "%s:%u", hwloc_obj_type_string(o->type), o->logical_index);
    }
}

/* The MB/s per link that the capturing hwloc wrote for a GPU's generation.  hwloc's table moved
 * between versions (reference/04-topology.md §1): 2.9.0 wrote 50000 for NVLink3/4 (twice the
 * truth, open-mpi/hwloc#574) and later versions write 25000 for every NVLink3 link, GA10x too. */
static double hwloc_link_mbps(int sm, const char *hwloc_version)
{
    const acc_gpu_arch_t *a = acc_topo_gpu_arch(sm);
    if (hwloc_version && strcmp(hwloc_version, "2.9.0") == 0 && sm >= 80 && sm < 100)
        return 50000.0;
    if (sm == 86)
        return 25000.0;
    return a ? a->nvlink_gbs * 1000.0 : 0.0;
}

static acc_status_t nvlink_pair(topo_hwloc_conv_t *c, hwloc_obj_t oa, hwloc_obj_t ob,
                                uint64_t value, const char *hwloc_version)
{
    int ga, gb, a = endpoint(c, oa, &ga), b = endpoint(c, ob, &gb), count, sm;
    char la[64], lb[64];
    double rate;

    obj_label(oa, la, sizeof(la));
    obj_label(ob, lb, sizeof(lb));
    if (!ga && !gb)
        return ACC_OK; /* switch-switch or CPU-side entries: inside the fabric */
    if (!ga) {
        int tmp = a;
        a = b;
        b = tmp;
    }
    if (a == EP_NONE || b == EP_NONE)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: NVLinkBandwidth joins %s and %s, which are not a "
                             "GPU, an NVSwitch and a CPU",
                             c->name, la, lb);
    sm = c->t->vertices[a].sm;
    rate = hwloc_link_mbps(sm, hwloc_version);
    if (!(rate > 0))
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: NVLinkBandwidth gives %s (sm_%d) NVLinks, but its "
                             "generation has none",
                             c->name, ga ? la : lb, sm);
    if ((double)value / rate > 64.0) /* no GPU has that many: 18 is the most so far */
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: NVLinkBandwidth %s - %s is %llu MB/s, more than "
                             "64 links of %.0f MB/s",
                             c->name, la, lb, (unsigned long long)value, rate);
    count = (int)((double)value / rate + 0.5);
    if (count < 1 || fabs((double)value - count * rate) > 0.25 * rate)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: NVLinkBandwidth %s - %s is %llu MB/s, not a whole "
                             "number of %.0f MB/s links (sm_%d)",
                             c->name, la, lb, (unsigned long long)value, rate, sm);
    acc_topo_assume(c->t,
                    "NVLink count = NVLinkBandwidth / %.0f MB/s per link for sm_%d (the "
                    "per-link value hwloc %s writes)",
                    rate, sm, hwloc_version ? hwloc_version : "of this capture");
    if (b == EP_FABRIC) {
        acc_status_t st = topo_nvswitch(c->t, &b);
        if (st != ACC_OK)
            return st;
    }
    return topo_add_nvlinks(c->t, a, b, count);
}

static int might_have_nvlink(const acc_topo_vertex_t *v)
{
    const acc_gpu_model_t *m = acc_topo_gpu_model_by_name(v->model);
    const acc_gpu_arch_t *a = acc_topo_gpu_arch(v->sm);
    if (!m)
        m = acc_topo_gpu_model_by_pci(v->device_id);
    return m ? m->nvlinks > 0 : (a && a->max_nvlinks > 0);
}

static acc_status_t no_matrix(topo_hwloc_conv_t *c, const char *hwloc_version)
{
    int i, might = 0;
    for (i = 0; i < c->t->nvertices; i++)
        if (c->t->vertices[i].kind == ACC_VTX_GPU)
            might |= might_have_nvlink(&c->t->vertices[i]);
    if (!might && !c->nvswitch_chips)
        return ACC_OK;
    return acc_topo_assume(c->t,
                           "NVLinks unknown: the capture (hwloc %s) has no NVLinkBandwidth "
                           "matrix%s, so the model has none; hwloc writes the matrix from 2.5 on, "
                           "and only with its NVML backend, which distribution builds lack; for "
                           "NVLinks use an NCCL topology dump (NCCL_TOPO_DUMP_FILE) or `nvidia-smi "
                           "topo -m` output of the machine",
                           hwloc_version ? hwloc_version : "version unrecorded",
                           c->nvswitch_chips ? " although NVSwitch chips are on the PCI bus" : "");
}

acc_status_t topo_hwloc_nvlinks(topo_hwloc_conv_t *c)
{
    struct hwloc_distances_s *d = NULL;
    const char *version = hwloc_obj_get_info_by_name(hwloc_get_root_obj(c->h), "hwlocVersion");
    unsigned nr = 1, i, j, n;
    acc_status_t st = ACC_OK;

    if (hwloc_distances_get_by_name(c->h, "NVLinkBandwidth", &nr, &d, 0) < 0)
        return acc_error_set(ACC_ERR_HWLOC, "%s: reading the NVLinkBandwidth matrix: %s", c->name,
                             strerror(errno));
    if (nr == 0 || !d)
        return no_matrix(c, version);
    n = d->nbobjs;
    for (i = 0; i < n && st == ACC_OK; i++) {
        for (j = i + 1; j < n && st == ACC_OK; j++) {
            uint64_t vij = d->values[i * n + j], vji = d->values[j * n + i];
            char la[64], lb[64];
            if (vij != vji) {
                obj_label(d->objs[i], la, sizeof(la));
                obj_label(d->objs[j], lb, sizeof(lb));
                st = acc_error_set(ACC_ERR_TOPO,
                                   "%s: NVLinkBandwidth is not symmetric: %s -> %s "
                                   "%llu MB/s, back %llu MB/s",
                                   c->name, la, lb, (unsigned long long)vij,
                                   (unsigned long long)vji);
            } else if (vij && d->objs[i] && d->objs[j]) {
                st = nvlink_pair(c, d->objs[i], d->objs[j], vij, version);
            }
        }
    }
    hwloc_distances_release(c->h, d);
    return st;
}
