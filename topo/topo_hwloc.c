/*
 * hwloc topologies, from an XML capture (`lstopo --of xml`, checked first by topo_hwloc_xml.c) or
 * from this machine for live discovery (topo_live.c).
 *
 * Both go through this one conversion, so that a machine discovered live and its capture give
 * the same graph (see the building conventions in internal.h):
 *  - CPU vertices: one per NUMA node that has CPUs, numbered in os_index order.
 *  - GPUs: PCI devices of class 0x03xx from NVIDIA, numbered by NVML index, else by CUDA index
 *    when every GPU has one, else by bus id.  Other display devices are not part of the model.
 *  - NICs: InfiniBand controllers (class 0x0207), and Ethernet controllers (0x0200) that carry an
 *    RDMA (OpenFabrics) device or come from an RDMA vendor (Mellanox, AWS EFA).  Ethernet without
 *    RDMA is the management network of a node, not its fabric.
 *  - PCIe switches as NCCL counts them: a switch is its upstream port, into which its downstream
 *    ports fold, and root ports fold into their host bridge.  A host bridge is kept only where two
 *    kept subtrees meet under it; elsewhere it would change no path class.
 *  - NVLinks only from a capture's NVLinkBandwidth matrix (live: from NVML), never guessed.
 * hwloc must be told to keep I/O objects before loading, or PCI devices, OS devices and the
 * NVLink matrix silently vanish (reference/04-topology.md §0).
 */
#include "topo_hwloc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>

#define VENDOR_NVIDIA   0x10de
#define VENDOR_MELLANOX 0x15b3
#define VENDOR_AMAZON   0x1d0f

/* hwloc records no port speed, so a NIC's speed comes from its PCI device id: the line rate of
 * the adapter generation (NVIDIA ConnectX product briefs: ConnectX-4 and -5 EDR 100 Gb/s,
 * ConnectX-6 HDR 200 Gb/s, ConnectX-7 NDR 400 Gb/s; AWS: first-generation EFA 100 Gb/s on
 * g4dn/p3dn), with the PCIe generation the adapter ships with for captures without link speed. */
static const struct {
    int vendor, device;
    const char *model;
    double gbps;
    int gen;
} nic_models[] = {
    {VENDOR_MELLANOX, 0x1013, "ConnectX-4", 100, 3},
    {VENDOR_MELLANOX, 0x1017, "ConnectX-5", 100, 3},
    {VENDOR_MELLANOX, 0x1019, "ConnectX-5 Ex", 100, 4},
    {VENDOR_MELLANOX, 0x101b, "ConnectX-6", 200, 4},
    {VENDOR_MELLANOX, 0x1021, "ConnectX-7", 400, 5},
    {VENDOR_AMAZON, 0xefa0, "EFA", 100, 3},
};
#define NIC_DEFAULT_GBPS 100.0

/* ---- small helpers ---------------------------------------------------------------------- */

static const char *info_up(hwloc_obj_t o, const char *key)
{
    for (; o; o = o->parent) {
        const char *v = hwloc_obj_get_info_by_name(o, key);
        if (v)
            return v;
    }
    return NULL;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

void topo_hwloc_busid(hwloc_obj_t o, char out[24])
{
    const struct hwloc_pcidev_attr_s *p =
        o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci : &o->attr->pcidev;
    snprintf(out, 24, "%04x:%02x:%02x.%x", (unsigned)p->domain, p->bus, p->dev, p->func);
}

/* ---- CPUs ------------------------------------------------------------------------------- */

static int cmp_numa(const void *a, const void *b)
{
    unsigned x = (*(const hwloc_obj_t *)a)->os_index, y = (*(const hwloc_obj_t *)b)->os_index;
    return x < y ? -1 : x > y;
}

static void set_arch(acc_topo_vertex_t *v, const char *arch)
{
    if (!arch)
        return;
    if (strcmp(arch, "x86_64") == 0 || strcmp(arch, "amd64") == 0)
        arch = "x86_64";
    else if (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0)
        arch = "arm64";
    else if (strncmp(arch, "ppc64", 5) == 0)
        arch = "ppc64";
    copy_str(v->cpu_arch, sizeof(v->cpu_arch), arch);
}

static acc_status_t add_cpus(topo_hwloc_conv_t *c)
{
    int n = hwloc_get_nbobjs_by_type(c->h, HWLOC_OBJ_NUMANODE), i;
    acc_status_t st;

    c->numa = acc_mem_calloc((size_t)n + 1, sizeof(*c->numa));
    c->cpu = acc_mem_calloc((size_t)n + 1, sizeof(*c->cpu));
    if (!c->numa || !c->cpu)
        return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", c->name);
    for (i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(c->h, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (!o->cpuset || hwloc_bitmap_iszero(o->cpuset)) {
            ACC_INFO(TOPO, "%s: NUMA node %u has memory but no CPUs: not a CPU vertex", c->name,
                     o->os_index);
            continue;
        }
        c->numa[c->nnuma++] = o;
    }
    if (!c->nnuma)
        return acc_error_set(ACC_ERR_TOPO, "%s: no NUMA node with CPUs", c->name);
    qsort(c->numa, (size_t)c->nnuma, sizeof(*c->numa), cmp_numa);
    for (i = 0; i < c->nnuma; i++) {
        hwloc_obj_t o = c->numa[i];
        acc_topo_vertex_t *v;
        const char *s;
        int64_t num;

        if ((st = acc_topo_add_vertex(c->t, ACC_VTX_CPU, &c->cpu[i])) != ACC_OK)
            return st;
        v = acc_topo_vertex_mut(c->t, c->cpu[i]);
        v->numa = v->id;
        set_arch(v, info_up(o, "Architecture"));
        copy_str(v->cpu_vendor, sizeof(v->cpu_vendor), info_up(o, "CPUVendor"));
        if ((s = info_up(o, "CPUFamilyNumber")) && acc_parse_int64(s, &num) == ACC_OK && num >= 0 &&
            num <= INT_MAX)
            v->cpu_family = (int)num;
        if ((s = info_up(o, "CPUModelNumber")) && acc_parse_int64(s, &num) == ACC_OK && num >= 0 &&
            num <= INT_MAX)
            v->cpu_model = (int)num;
        if (hwloc_bitmap_list_snprintf(v->affinity, sizeof(v->affinity), o->cpuset) >=
            (int)sizeof(v->affinity))
            v->affinity[0] = '\0'; /* a cut list would name the wrong CPUs */
    }
    return ACC_OK;
}

/* The CPU a device hangs under: the NUMA node of its non-I/O ancestor. */
acc_status_t topo_hwloc_numa_of(topo_hwloc_conv_t *c, hwloc_obj_t io, const char *what, int *out)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->h, io);
    int i, found = -1, n = 0;

    for (i = 0; i < c->nnuma; i++) {
        if (anc && anc->nodeset && hwloc_bitmap_isset(anc->nodeset, c->numa[i]->os_index)) {
            if (found < 0)
                found = i;
            n++;
        }
    }
    *out = found < 0 ? 0 : found;
    if (n == 1)
        return ACC_OK;
    return acc_topo_assume(c->t,
                           "%s: hwloc gives it no single NUMA node (it hangs under the %s); "
                           "taken as local to CPU%d",
                           what, anc ? hwloc_obj_type_string(anc->type) : "machine", *out);
}

/* ---- GPUs and NICs ---------------------------------------------------------------------- */

static int osdev_index(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end;
    long i;
    if (!name || strncmp(name, prefix, n) != 0 || !name[n])
        return -1;
    i = strtol(name + n, &end, 10);
    return (*end || i < 0 || i > INT_MAX) ? -1 : (int)i;
}

static topo_hwloc_dev_t *new_dev(topo_hwloc_dev_t **arr, int *n, size_t *cap, hwloc_obj_t o)
{
    const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
    void *a = *arr;
    topo_hwloc_dev_t *d;
    if (acc_array_reserve(&a, cap, (size_t)*n + 1, sizeof(**arr)) != ACC_OK)
        return NULL;
    *arr = a;
    d = &(*arr)[(*n)++];
    memset(d, 0, sizeof(*d));
    d->obj = o;
    d->nvml = d->cuda = -1;
    d->vertex = -1;
    d->v.numa = -1;
    d->v.vendor_id = p->vendor_id;
    d->v.device_id = p->device_id;
    topo_hwloc_busid(o, d->v.busid);
    topo_hwloc_pcie_from_speed(p->linkspeed, &d->gen, &d->width);
    return d;
}

static void gpu_osdev_facts(topo_hwloc_dev_t *d)
{
    hwloc_obj_t o;
    for (o = d->obj->io_first_child; o; o = o->next_sibling) {
        const char *model, *s;
        int64_t num;
        if (o->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        model = hwloc_obj_get_info_by_name(o, "GPUModel");
        if (model && !d->v.model[0])
            copy_str(d->v.model, sizeof(d->v.model), model);
        if (osdev_index(o->name, "nvml") >= 0)
            d->nvml = osdev_index(o->name, "nvml");
        if (osdev_index(o->name, "cuda") >= 0) {
            d->cuda = osdev_index(o->name, "cuda");
            if ((s = hwloc_obj_get_info_by_name(o, "CUDAMultiProcessors")) &&
                acc_parse_int64(s, &num) == ACC_OK && num > 0 && num < INT_MAX)
                d->v.sm_count = (int)num;
            if ((s = hwloc_obj_get_info_by_name(o, "CUDAGlobalMemorySize")) &&
                acc_parse_int64(s, &num) == ACC_OK && num > 0 && num < (INT64_MAX >> 10))
                d->v.mem_bytes = (uint64_t)num << 10; /* hwloc writes KiB */
        }
    }
    /* pci.ids' name (PCIDevice) knows no more than the PCI id does, and reads "GA100 [A100 SXM4
     * 80GB]" where the driver says "A100-SXM4-80GB": it only names parts the id table lacks. */
    if (!d->v.model[0] && !acc_topo_gpu_model_by_pci(d->v.device_id))
        copy_str(d->v.model, sizeof(d->v.model), hwloc_obj_get_info_by_name(d->obj, "PCIDevice"));
}

static int has_osdev(hwloc_obj_t dev, hwloc_obj_osdev_type_t type, const char **name)
{
    hwloc_obj_t o;
    for (o = dev->io_first_child; o; o = o->next_sibling) {
        if (o->type == HWLOC_OBJ_OS_DEVICE && o->attr->osdev.type == type && o->name) {
            *name = o->name;
            return 1;
        }
    }
    return 0;
}

static int is_efa(const struct hwloc_pcidev_attr_s *p)
{
    return p->vendor_id == VENDOR_AMAZON && (p->device_id & 0xfff0) == 0xefa0;
}

/* A fabric NIC: see the file comment for the rule. */
static int is_fabric_nic(hwloc_obj_t o)
{
    const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
    const char *ofed;
    if (p->class_id == 0x0207)
        return 1;
    if (p->class_id != 0x0200)
        return 0;
    return has_osdev(o, HWLOC_OBJ_OSDEV_OPENFABRICS, &ofed) || p->vendor_id == VENDOR_MELLANOX ||
           is_efa(p);
}

static acc_status_t nic_facts(topo_hwloc_conv_t *c, topo_hwloc_dev_t *d)
{
    const struct hwloc_pcidev_attr_s *p = &d->obj->attr->pcidev;
    const char *dev = NULL;
    acc_status_t st;
    size_t i;

    if (has_osdev(d->obj, HWLOC_OBJ_OSDEV_OPENFABRICS, &dev) ||
        has_osdev(d->obj, HWLOC_OBJ_OSDEV_NETWORK, &dev))
        copy_str(d->v.dev_name, sizeof(d->v.dev_name), dev);
    for (i = 0; i < sizeof(nic_models) / sizeof(nic_models[0]); i++) {
        if (nic_models[i].vendor == p->vendor_id && nic_models[i].device == p->device_id)
            break;
    }
    if (i < sizeof(nic_models) / sizeof(nic_models[0])) {
        d->v.speed_gbps = nic_models[i].gbps;
        if (!d->gen) {
            d->gen = nic_models[i].gen;
            d->width = 16;
            if ((st = acc_topo_assume(c->t,
                                      "PCIe link speed not in the input: %s taken as Gen%d "
                                      "x16",
                                      nic_models[i].model, d->gen)) != ACC_OK)
                return st;
        }
        return acc_topo_assume(c->t,
                               "NIC speed %.0f Gb/s for %s (%04x:%04x): hwloc records no "
                               "port speed",
                               nic_models[i].gbps, nic_models[i].model, p->vendor_id, p->device_id);
    }
    d->v.speed_gbps = NIC_DEFAULT_GBPS;
    if (!d->gen) {
        d->gen = 3;
        d->width = 16;
        if ((st = acc_topo_assume(c->t,
                                  "PCIe link speed not in the input: NIC %04x:%04x taken "
                                  "as Gen3 x16",
                                  p->vendor_id, p->device_id)) != ACC_OK)
            return st;
    }
    return acc_topo_assume(c->t,
                           "NIC speed %.0f Gb/s for the unknown adapter %04x:%04x (%s): "
                           "hwloc records no port speed; give it in an acc YAML topology if it "
                           "differs",
                           NIC_DEFAULT_GBPS, p->vendor_id, p->device_id,
                           d->v.dev_name[0] ? d->v.dev_name : d->v.busid);
}

/* The first GPU of another vendor: its ids, bus and the model its OS device names (ROCm's
 * "GPUModel"), for the message that acc does not model it. */
static void note_other_gpu(topo_hwloc_conv_t *c, hwloc_obj_t o, const char *bus)
{
    hwloc_obj_t k;
    c->other_vendor = o->attr->pcidev.vendor_id;
    c->other_device = o->attr->pcidev.device_id;
    copy_str(c->other_bus, sizeof(c->other_bus), bus);
    for (k = o->io_first_child; k; k = k->next_sibling) {
        const char *m = hwloc_obj_get_info_by_name(k, "GPUModel");
        if (m) {
            copy_str(c->other_model, sizeof(c->other_model), m);
            break;
        }
    }
}

static const char *vendor_name(unsigned id)
{
    switch (id) {
    case 0x1002:
        return "AMD";
    case 0x8086:
        return "Intel";
    case 0x1da3:
        return "Habana";
    case 0x1d0f:
        return "Amazon";
    default:
        return "another vendor";
    }
}

static acc_status_t collect(topo_hwloc_conv_t *c)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_pcidev(c->h, o)) != NULL) {
        const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
        char bus[24];
        topo_hwloc_dev_t *d = NULL;

        topo_hwloc_busid(o, bus);
        if ((p->class_id >> 8) == 0x03 && p->vendor_id == VENDOR_NVIDIA) {
            if (!(d = new_dev(&c->gpu, &c->ngpu, &c->gpu_cap, o)))
                return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", c->name);
            d->v.kind = ACC_VTX_GPU;
            gpu_osdev_facts(d);
        } else if ((p->class_id >> 8) == 0x03 || p->class_id == 0x1200) {
            ACC_INFO(TOPO, "%s: display device %s (%04x:%04x) is not an NVIDIA GPU: not modelled",
                     c->name, bus, p->vendor_id, p->device_id);
            if (p->class_id != 0x0300 && c->other_gpus++ == 0)
                note_other_gpu(c, o, bus);
        } else if ((p->vendor_id == VENDOR_NVIDIA && p->class_id == 0x0680) ||
                   (o->subtype && strcmp(o->subtype, "NVSwitch") == 0)) {
            c->nvswitch_chips++;
        } else if (is_fabric_nic(o)) {
            if (!(d = new_dev(&c->nic, &c->nnic, &c->nic_cap, o)))
                return acc_error_set(ACC_ERR_NOMEM, "%s: out of memory", c->name);
            d->v.kind = ACC_VTX_NIC;
        } else if (p->class_id == 0x0200) {
            ACC_INFO(TOPO,
                     "%s: Ethernet controller %s (%04x:%04x) has no RDMA device: not a "
                     "fabric NIC",
                     c->name, bus, p->vendor_id, p->device_id);
        }
    }
    return ACC_OK;
}

/* Insertion sort by bus id (key 0), NVML index (1) or CUDA index (2): a handful of devices. */
static int dev_before(const topo_hwloc_dev_t *a, const topo_hwloc_dev_t *b, int key)
{
    if (key == 1 && a->nvml != b->nvml)
        return a->nvml < b->nvml;
    if (key == 2 && a->cuda != b->cuda)
        return a->cuda < b->cuda;
    return strcmp(a->v.busid, b->v.busid) < 0;
}

static void sort_devs(topo_hwloc_dev_t *d, int n, int key)
{
    int i, j;
    for (i = 1; i < n; i++) {
        topo_hwloc_dev_t x = d[i];
        for (j = i; j > 0 && dev_before(&x, &d[j - 1], key); j--)
            d[j] = d[j - 1];
        d[j] = x;
    }
}

/* An OS-device index orders GPUs only if every GPU has a distinct one. */
static int index_usable(const topo_hwloc_dev_t *d, int n, int key)
{
    int i, j;
    for (i = 0; i < n; i++) {
        int a = key == 1 ? d[i].nvml : d[i].cuda;
        if (a < 0)
            return 0;
        for (j = 0; j < i; j++)
            if (a == (key == 1 ? d[j].nvml : d[j].cuda))
                return 0;
    }
    return 1;
}

/* The GPU's host link where the input's is missing or lowered: hwloc records the current link
 * speed, which an idle GPU drops to Gen1 to save power (open-mpi/hwloc#653), and none at all in
 * old captures.  The part's own generation is taken then; a Gen3 link of a Gen4 part is a Gen3
 * slot and stays. */
static acc_status_t gpu_link(topo_hwloc_conv_t *c, topo_hwloc_dev_t *d)
{
    const acc_topo_vertex_t *v = acc_topo_vertex(c->t, d->vertex);
    const acc_gpu_model_t *m = acc_topo_gpu_model_by_name(v->model);
    int part = m && m->pcie_gen ? m->pcie_gen : topo_default_pcie_gen(v->sm);

    if (!d->gen) {
        d->gen = part;
        d->width = 16;
        return acc_topo_assume(c->t, "PCIe link speed not in the input: %s taken as Gen%d x16",
                               v->model[0] ? v->model : "GPU", part);
    }
    if (d->gen < 3 && part >= 3) {
        int seen = d->gen;
        d->gen = part;
        return acc_topo_assume(c->t,
                               "%s %s: PCIe link recorded at Gen%d, the speed of an idle "
                               "GPU; taken as Gen%d x%d",
                               v->name, v->busid, seen, part, d->width);
    }
    return ACC_OK;
}

static acc_status_t add_gpus(topo_hwloc_conv_t *c, topo_gpu_facts_fn gpu_facts, void *ctx)
{
    int i, key = index_usable(c->gpu, c->ngpu, 1) ? 1 : index_usable(c->gpu, c->ngpu, 2) ? 2 : 0;
    acc_status_t st;

    sort_devs(c->gpu, c->ngpu, key);
    for (i = 0; i < c->ngpu; i++) {
        topo_hwloc_dev_t *d = &c->gpu[i];
        acc_topo_vertex_t *v;

        if ((st = topo_hwloc_numa_of(c, d->obj, d->v.busid, &d->v.numa)) != ACC_OK)
            return st;
        if (gpu_facts && !gpu_facts(ctx, &d->v, &d->gen, &d->width)) {
            st = acc_topo_assume(c->t,
                                 "GPU %s is on the PCI bus but not visible to the driver "
                                 "here (container or cgroup): left out",
                                 d->v.busid);
            if (st != ACC_OK)
                return st;
            continue;
        }
        if (!d->v.sm && !acc_topo_gpu_model_by_pci(d->v.device_id) &&
            !acc_topo_gpu_model_by_name(d->v.model))
            return acc_error_set(ACC_ERR_TOPO,
                                 "%s: GPU %s (PCI 10de:%04x, \"%s\") is a model acc "
                                 "does not know, so its compute capability is unknown; describe "
                                 "the machine in an acc YAML topology with 'sm' set, or pass an "
                                 "NCCL topology dump of it",
                                 c->name, d->v.busid, d->v.device_id, d->v.model);
        if ((st = acc_topo_add_vertex(c->t, ACC_VTX_GPU, &d->vertex)) != ACC_OK)
            return st;
        v = acc_topo_vertex_mut(c->t, d->vertex);
        d->v.id = v->id;
        copy_str(d->v.name, sizeof(d->v.name), v->name);
        *v = d->v;
        if ((st = topo_fill_gpu_defaults(c->t, d->vertex)) != ACC_OK)
            return acc_error_prefix(st, "%s: GPU %s: ", c->name, d->v.busid);
        if ((st = gpu_link(c, d)) != ACC_OK)
            return st;
    }
    /* Live, NVML places GPUs hwloc cannot see (a sandbox whose /sys hides them); only without
     * NVML's facts is an empty PCI bus the end. */
    if (acc_topo_count(c->t, ACC_VTX_GPU) == 0 && c->live && !gpu_facts)
        return acc_error_set(ACC_ERR_TOPO, "hwloc finds no NVIDIA GPU on the PCI bus of this "
                                           "machine");
    if (acc_topo_count(c->t, ACC_VTX_GPU) == 0 && c->other_gpus > 0)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s: its %d GPUs are %s's (PCI %04x:%04x at %s%s%s%s), not NVIDIA's: "
                             "acc models NVIDIA GPUs (NVLink, NCCL) only, so it has no schedules "
                             "for this machine",
                             c->name, c->other_gpus, vendor_name(c->other_vendor), c->other_vendor,
                             c->other_device, c->other_bus, c->other_model[0] ? ", \"" : "",
                             c->other_model, c->other_model[0] ? "\"" : "");
    if (acc_topo_count(c->t, ACC_VTX_GPU) == 0 && !c->live)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: no NVIDIA GPU (a PCI device of class 0x03xx from "
                             "vendor 10de); if the machine has GPUs, export its topology with I/O "
                             "devices: `lstopo --whole-io --of xml`",
                             c->name);
    return ACC_OK;
}

static acc_status_t add_nics(topo_hwloc_conv_t *c)
{
    int i;
    acc_status_t st;

    sort_devs(c->nic, c->nnic, 0);
    for (i = 0; i < c->nnic; i++) {
        topo_hwloc_dev_t *d = &c->nic[i];
        acc_topo_vertex_t *v;
        if ((st = topo_hwloc_numa_of(c, d->obj, d->v.busid, &d->v.numa)) != ACC_OK ||
            (st = nic_facts(c, d)) != ACC_OK ||
            (st = acc_topo_add_vertex(c->t, ACC_VTX_NIC, &d->vertex)) != ACC_OK)
            return st;
        v = acc_topo_vertex_mut(c->t, d->vertex);
        d->v.id = v->id;
        copy_str(d->v.name, sizeof(d->v.name), v->name);
        *v = d->v;
    }
    if (c->nnic && !c->live)
        return acc_topo_assume(c->t, "GPUDirect RDMA is not recorded in hwloc captures: NICs "
                                     "marked without it");
    return ACC_OK;
}

/* ---- the conversion --------------------------------------------------------------------- */

/* What firmware writes into DMI's product name when the vendor left it unset (the defaults of
 * AMI's and Insyde's BIOS kits, and dmidecode's words for an absent string). */
static int dmi_placeholder(const char *s)
{
    static const char *const words[] = {"To be filled by O.E.M.",
                                        "To Be Filled By O.E.M.",
                                        "Default string",
                                        "System Product Name",
                                        "Not Specified",
                                        "Not Applicable",
                                        "None",
                                        "N/A",
                                        "0123456789",
                                        "System Name",
                                        "Type1ProductConfigId"};
    size_t i;
    while (*s == ' ')
        s++;
    if (!*s)
        return 1;
    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasecmp(s, words[i]) == 0)
            return 1;
    return 0;
}

static acc_status_t convert(topo_hwloc_conv_t *c, topo_gpu_facts_fn gpu_facts, void *ctx)
{
    hwloc_obj_t root = hwloc_get_root_obj(c->h);
    const char *product = hwloc_obj_get_info_by_name(root, "DMIProductName");
    acc_status_t st;

    if (!product)
        product = hwloc_obj_get_info_by_name(root, "PlatformModel");
    if (product && dmi_placeholder(product)) {
        /* The file's own name then, without its directories (live: none). */
        const char *slash = strrchr(c->name, '/');
        ACC_INFO(TOPO, "%s: DMI product name \"%s\" is a firmware placeholder: not a name", c->name,
                 product);
        product = c->live ? NULL : slash ? slash + 1 : c->name;
    }
    if (product && product[0] && !acc_topo_name(c->t)[0])
        acc_topo_set_name(c->t, product);
    if ((st = add_cpus(c)) != ACC_OK || (st = collect(c)) != ACC_OK ||
        (st = add_gpus(c, gpu_facts, ctx)) != ACC_OK || (st = add_nics(c)) != ACC_OK ||
        (st = topo_hwloc_pcie_tree(c)) != ACC_OK)
        return st;
    /* Live, NVML gives the NVLinks: a matrix from an hwloc built with NVML would count twice. */
    if (!c->live && (st = topo_hwloc_nvlinks(c)) != ACC_OK)
        return st;
    return topo_connect_cpus(c->t);
}

acc_status_t topo_hwloc_build(acc_topo_t *t, const char *text, size_t len, const char *name,
                              topo_gpu_facts_fn gpu_facts, void *ctx)
{
    topo_hwloc_conv_t c;
    acc_status_t st = ACC_OK;
    /* hwloc's libxml2 plugin sets this thread's libxml2 error handler to a function of its own,
     * then unloads itself with the last topology: the next libxml2 error in this thread (ours, or
     * any other XML reader's) would call into unmapped memory.  Put the handler back after. */
    xmlGenericErrorFunc saved_handler = xmlGenericError;
    void *saved_context = xmlGenericErrorContext;

    memset(&c, 0, sizeof(c));
    c.t = t;
    c.name = name;
    c.live = text == NULL;
    if (hwloc_topology_init(&c.h) < 0)
        return acc_error_set(ACC_ERR_HWLOC, "hwloc_topology_init: %s", strerror(errno));
    /* The machine, not the cgroup of the process that captured it (or that runs now). */
    hwloc_topology_set_flags(c.h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(c.h, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!text) {
        /* Live: OS devices of OpenCL and GL would make hwloc initialise the GPUs' OpenCL driver
         * and open an X display, for names NVML gives.  On Linux, hwloc reads PCI devices from
         * sysfs by itself; its libpciaccess plugin finds the same and leaks libpciaccess's
         * tables on every load. */
        hwloc_topology_set_components(c.h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
        hwloc_topology_set_components(c.h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
#ifdef __linux__
        hwloc_topology_set_components(c.h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
#endif
    }
    if (text && hwloc_topology_set_xmlbuffer(c.h, text, (int)len) < 0) {
        st = acc_error_set(ACC_ERR_PARSE, "%s: hwloc cannot read this XML (%s)", name,
                           strerror(errno));
        goto out;
    }
    if (hwloc_topology_load(c.h) < 0) {
        if (text)
            st = acc_error_set(ACC_ERR_PARSE,
                               "%s: hwloc rejects this topology (%s): is it a "
                               "complete `lstopo --of xml` export?",
                               name, strerror(errno));
        else
            st = acc_error_set(ACC_ERR_HWLOC, "hwloc cannot discover this machine: %s",
                               strerror(errno));
        goto out;
    }
    if (c.live && !hwloc_topology_is_thissystem(c.h))
        acc_topo_assume(t, "hwloc described another machine than this one (HWLOC_XMLFILE or "
                           "HWLOC_FSROOT is set in the environment)");
    st = convert(&c, gpu_facts, ctx);
out:
    acc_mem_free(c.numa);
    acc_mem_free(c.cpu);
    acc_mem_free(c.gpu);
    acc_mem_free(c.nic);
    acc_mem_free(c.pn);
    hwloc_topology_destroy(c.h);
    xmlSetGenericErrorFunc(saved_context, saved_handler);
    return st;
}
