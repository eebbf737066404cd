/*
 * NCCL topology XML import, pass 2: from the table of devices and link records that
 * topo_nccl_xml.c walked out of the file, create the vertices in id order (CPUs by numaid, GPUs
 * by <gpu dev>, NICs by <net dev>, each in document order where the file gives no number), then
 * the PCIe links, NVLinks and C2C links, the SMP links between CPUs and the acc_ extensions.
 * Every fact the file leaves out is filled from a documented default and recorded with
 * acc_topo_assume().
 */
#include "topo_nccl_xml.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int has, order, item;
} order_key_t;

static int cmp_order(const void *a, const void *b)
{
    const order_key_t *x = a, *y = b;
    if (x->has != y->has)
        return x->has ? -1 : 1;
    if (x->has && x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->item - y->item; /* document order */
}

typedef struct {
    char busid[24];
    int item;
} busid_key_t;

static int cmp_busid(const void *a, const void *b)
{
    const busid_key_t *x = a, *y = b;
    int d = strcmp(x->busid, y->busid);
    return d ? d : x->item - y->item;
}

/* Items of one kind in id order: by their numaid/dev where given, then in document order.  Two
 * devices claiming the same number are an error. */
static acc_status_t order_items(nxml_ctx_t *c, nxml_kind_t kind, const char *attr, int **out,
                                int *n)
{
    order_key_t *keys = acc_mem_calloc((size_t)c->nitems + 1, sizeof(*keys));
    int i, k = 0;

    *out = acc_mem_calloc((size_t)c->nitems + 1, sizeof(int));
    if (!keys || !*out) {
        acc_mem_free(keys);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
    }
    for (i = 0; i < c->nitems; i++) {
        if (c->items[i].kind != kind)
            continue;
        keys[k].has = c->items[i].has_order;
        keys[k].order = c->items[i].order;
        keys[k++].item = i;
    }
    qsort(keys, (size_t)k, sizeof(*keys), cmp_order);
    for (i = 0; i < k; i++) {
        (*out)[i] = keys[i].item;
        if (i > 0 && keys[i].has && keys[i - 1].has && keys[i].order == keys[i - 1].order) {
            const nxml_item_t *it = &c->items[keys[i].item];
            long other = xmlGetLineNo(c->items[keys[i - 1].item].where);
            acc_mem_free(keys);
            return topo_nxml_fail(c, ACC_ERR_PARSE, it->gpu ? it->gpu : it->where,
                                  "%s=\"%d\" is also used at line %ld", attr, it->order, other);
        }
    }
    acc_mem_free(keys);
    *n = k;
    return ACC_OK;
}

/* Index the items by bus id; two <pci> elements with one bus id are an error. */
static acc_status_t index_busids(nxml_ctx_t *c)
{
    busid_key_t *keys = acc_mem_calloc((size_t)c->nitems + 1, sizeof(*keys));
    int i, k = 0;

    c->by_busid = acc_mem_calloc((size_t)c->nitems + 1, sizeof(int));
    if (!keys || !c->by_busid) {
        acc_mem_free(keys);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
    }
    for (i = 0; i < c->nitems; i++) {
        if (!c->items[i].busid[0])
            continue;
        memcpy(keys[k].busid, c->items[i].busid, 24);
        keys[k++].item = i;
    }
    qsort(keys, (size_t)k, sizeof(*keys), cmp_busid);
    for (i = 0; i < k; i++) {
        c->by_busid[i] = keys[i].item;
        if (i > 0 && strcmp(keys[i].busid, keys[i - 1].busid) == 0) {
            const nxml_item_t *it = &c->items[keys[i].item];
            long other = xmlGetLineNo(c->items[keys[i - 1].item].pci);
            acc_mem_free(keys);
            return topo_nxml_fail(c, ACC_ERR_PARSE, it->pci,
                                  "busid=\"%s\" is also used at line %ld", it->busid, other);
        }
    }
    c->nbusid = k;
    acc_mem_free(keys);
    return ACC_OK;
}

/* The first item with this bus id, or -1. */
static int find_busid(const nxml_ctx_t *c, const char *busid)
{
    int lo = 0, hi = c->nbusid;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(c->items[c->by_busid[mid]].busid, busid) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nbusid && strcmp(c->items[c->by_busid[lo]].busid, busid) == 0 ? c->by_busid[lo]
                                                                                 : -1;
}

static int numa_of(const nxml_ctx_t *c, const nxml_item_t *it)
{
    return c->t->vertices[c->items[it->cpu].vertex].id;
}

/* PCI vendor and device ids of a <pci>, and acc_numa where acc wrote one. */
static acc_status_t read_pci_ids(nxml_ctx_t *c, const nxml_item_t *it, int v)
{
    int64_t x;
    int present;
    acc_status_t st;

    if (!it->pci)
        return ACC_OK;
    if ((st = topo_nxml_int(c, it->pci, "vendor", 0, 0xffff, &x, &present)) != ACC_OK)
        return st;
    if (present)
        c->t->vertices[v].vendor_id = (int)x;
    if ((st = topo_nxml_int(c, it->pci, "device", 0, 0xffff, &x, &present)) != ACC_OK)
        return st;
    if (present)
        c->t->vertices[v].device_id = (int)x;
    if ((st = topo_nxml_int(c, it->pci, "acc_numa", -1, INT_MAX, &x, &present)) != ACC_OK)
        return st;
    if (present)
        c->t->vertices[v].numa = (int)x;
    return ACC_OK;
}

static acc_status_t make_vertex(nxml_ctx_t *c, int i, acc_vertex_kind_t kind,
                                acc_topo_vertex_t **out)
{
    nxml_item_t *it = &c->items[i];
    acc_status_t st = acc_topo_add_vertex(c->t, kind, &it->vertex);

    if (st != ACC_OK)
        return st;
    *out = &c->t->vertices[it->vertex];
    memcpy((*out)->busid, it->busid, sizeof((*out)->busid));
    if (kind != ACC_VTX_CPU)
        (*out)->numa = numa_of(c, it);
    return read_pci_ids(c, it, it->vertex);
}

static acc_status_t make_cpu(nxml_ctx_t *c, int i)
{
    xmlNodePtr n = c->items[i].where;
    acc_topo_vertex_t *v;
    int64_t x;
    int present;
    acc_status_t st;

    if ((st = make_vertex(c, i, ACC_VTX_CPU, &v)) != ACC_OK ||
        (st = topo_nxml_str(c, n, "arch", v->cpu_arch, sizeof(v->cpu_arch))) != ACC_OK ||
        (st = topo_nxml_str(c, n, "vendor", v->cpu_vendor, sizeof(v->cpu_vendor))) != ACC_OK ||
        (st = topo_nxml_str(c, n, "affinity", v->affinity, sizeof(v->affinity))) != ACC_OK)
        return st;
    if ((st = topo_nxml_int(c, n, "familyid", 0, INT_MAX, &x, &present)) != ACC_OK)
        return st;
    v->cpu_family = present ? (int)x : 0;
    if ((st = topo_nxml_int(c, n, "modelid", 0, INT_MAX, &x, &present)) != ACC_OK)
        return st;
    v->cpu_model = present ? (int)x : 0;
    return ACC_OK;
}

/* Partial files (Azure's ND series) give a GPU only a bus id, a class and a link speed: NCCL
 * completes it from the GPU it detects at run time.  Without that GPU, take the generation that
 * first shipped on the link's PCIe generation, capped by what the host CPU can speak, and say so
 * loudly: the user can state it (a device id or <gpu sm>) or pass a full NCCL dump. */
static acc_status_t guess_generation(nxml_ctx_t *c, const nxml_item_t *it)
{
    acc_topo_vertex_t *v = &c->t->vertices[it->vertex];
    const acc_topo_vertex_t *cpu = it->cpu >= 0 ? &c->t->vertices[c->items[it->cpu].vertex] : NULL;
    int gen = it->gen, cap = topo_cpu_max_pcie_gen(cpu);
    const acc_gpu_model_t *m;

    if (cap && (!gen || gen > cap))
        gen = cap;
    m = topo_gpu_model_for_pcie_gen(gen);
    if (!m)
        return ACC_OK; /* the caller's error explains what to add */
    snprintf(v->model, sizeof(v->model), "%s", m->model);
    return acc_topo_assume(c->t,
                           "GPU model not in the file (a partial PCI tree: NCCL fills it from the "
                           "GPU it detects): %s taken from the PCIe Gen%d link%s; add "
                           "device=\"0x....\" or <gpu sm=\"..\"/>, or pass the file "
                           "NCCL_TOPO_DUMP_FILE writes, to state it",
                           m->model, gen, cap && it->gen > cap ? " (capped by the host CPU)" : "");
}

/* Network plugins' files (aws-ofi-nccl's p5.48xlarge) give a GPU its compute capability but no
 * model: NCCL completes it from the GPU it detects.  An sm_80 or sm_90 GPU of class 0x0302 (a
 * 3D controller, as data-centre parts are; workstation cards are VGA, 0x0300) on a 16 or 32 GT/s
 * link is taken as its generation's SXM part, the part of the 8-GPU machines these files
 * describe; the H100 and A100 PCIe cards share class and link, so the assumption says how to
 * state the part.  The SXM part's NVLinks are still not invented (topo_missing_nvlinks warns). */
static acc_status_t sxm_from_arch(nxml_ctx_t *c, const nxml_item_t *it)
{
    acc_topo_vertex_t *v = &c->t->vertices[it->vertex];
    const acc_gpu_model_t *m;
    char cls[NXML_ATTR_MAX];
    int has_cls;
    acc_status_t st;

    if ((v->sm != 80 && v->sm != 90) || (it->gen != 4 && it->gen != 5))
        return ACC_OK;
    if ((st = topo_nxml_attr(c, it->pci, "class", cls, &has_cls)) != ACC_OK)
        return st;
    if (!has_cls || !topo_nxml_class_is(cls, "0x0302") || !(m = acc_topo_gpu_model_of(v)))
        return ACC_OK;
    snprintf(v->model, sizeof(v->model), "%s", m->model);
    return acc_topo_assume(c->t,
                           "GPU model not in the file (NCCL fills it from the GPU it detects): "
                           "%s for sm_%d GPUs of class 0x0302 on %s GT/s links, the SXM part; "
                           "add device=\"0x....\" to their <pci> to state another (the PCIe "
                           "card looks the same)",
                           m->model, v->sm, it->gen == 5 ? "32" : "16");
}

static acc_status_t make_gpu(nxml_ctx_t *c, int i)
{
    const nxml_item_t *it = &c->items[i];
    acc_topo_vertex_t *v;
    int64_t x;
    int present;
    acc_status_t st;

    if ((st = make_vertex(c, i, ACC_VTX_GPU, &v)) != ACC_OK)
        return st;
    if (it->gpu) {
        xmlNodePtr g = it->gpu;
        if ((st = topo_nxml_int(c, g, "sm", 1, 1000, &x, &present)) != ACC_OK)
            return st;
        v->sm = present ? (int)x : 0;
        if ((st = topo_nxml_int(c, g, "gdr", 0, 1, &x, &present)) != ACC_OK)
            return st;
        v->gdr = present ? (int)x : 0;
        /* What NCCL's schema has no room for, as acc_topo_export_nccl_xml() writes it. */
        if ((st = topo_nxml_str(c, g, "acc_model", v->model, sizeof(v->model))) != ACC_OK)
            return st;
        if ((st = topo_nxml_int(c, g, "acc_sm_count", 0, 100000, &x, &present)) != ACC_OK)
            return st;
        v->sm_count = present ? (int)x : 0;
        if ((st = topo_nxml_int(c, g, "acc_mem_bytes", 0, INT64_MAX, &x, &present)) != ACC_OK)
            return st;
        v->mem_bytes = present ? (uint64_t)x : 0;
    }
    if (!v->sm && !v->device_id && !v->model[0] && (st = guess_generation(c, it)) != ACC_OK)
        return st;
    if (v->sm && !v->device_id && !v->model[0] && it->pci && (st = sxm_from_arch(c, it)) != ACC_OK)
        return st;
    if ((st = topo_fill_gpu_defaults(c->t, it->vertex)) != ACC_OK) {
        const acc_topo_vertex_t *g = &c->t->vertices[it->vertex];
        if (!g->sm && !g->device_id && !g->model[0])
            return acc_error_set(st,
                                 "%s:%ld: <pci busid=\"%s\">: a GPU with no PCI device id "
                                 "and no <gpu sm=...>: acc cannot tell its generation (NCCL "
                                 "fills it in from the GPU it detects).  Add vendor=\"0x10de\" "
                                 "device=\"0x....\" to the <pci>, or a <gpu sm=\"..\"/> child, "
                                 "or pass the file NCCL_TOPO_DUMP_FILE writes on the machine",
                                 c->name, xmlGetLineNo(it->where), it->busid);
        return acc_error_prefix(st, "%s:%ld: <pci busid=\"%s\">: ", c->name,
                                xmlGetLineNo(it->where), it->busid);
    }
    if (c->t->vertices[it->vertex].sm > c->max_sm)
        c->max_sm = c->t->vertices[it->vertex].sm;
    return ACC_OK;
}

/* Line rates of NICs a partial file names only by PCI id.  Device ids as the PCI ID Repository
 * (pci-ids.ucw.cz) names them; rates are the part's fastest port: NVIDIA ConnectX product
 * briefs (CX-4/5 EDR 100, CX-6 HDR 200, CX-7 and BlueField-3 NDR 400), and for EFA the AWS
 * p4d.24xlarge specification (400 Gb/s over 4 EFA devices, reference/04-topology.md). */
static const struct {
    int vendor, device;
    double gbps;
    const char *part;
} nic_rates[] = {
    {0x15b3, 0x1013, 100, "ConnectX-4"},    {0x15b3, 0x1017, 100, "ConnectX-5"},
    {0x15b3, 0x1019, 100, "ConnectX-5 Ex"}, {0x15b3, 0x101b, 200, "ConnectX-6"},
    {0x15b3, 0x101c, 200, "ConnectX-6 VF"}, {0x15b3, 0x1021, 400, "ConnectX-7"},
    {0x15b3, 0xa2dc, 400, "BlueField-3"},   {0x1d0f, 0xefa0, 100, "AWS EFA (p4d)"},
};

static acc_status_t default_nic_speed(nxml_ctx_t *c, acc_topo_vertex_t *v)
{
    size_t i;
    for (i = 0; i < sizeof(nic_rates) / sizeof(nic_rates[0]); i++) {
        if (nic_rates[i].vendor == v->vendor_id && nic_rates[i].device == v->device_id) {
            v->speed_gbps = nic_rates[i].gbps;
            return acc_topo_assume(c->t,
                                   "NIC speed %.0f Gb/s for %s NICs the file gives "
                                   "without <nic><net speed> (the part's port rate)",
                                   v->speed_gbps, nic_rates[i].part);
        }
    }
    /* Unknown part: the InfiniBand generation NVIDIA's DGX of the same GPU generation ships
     * with (DGX-1: EDR 100 Gb/s; DGX A100: HDR 200 Gb/s; DGX H100 and B200: NDR 400 Gb/s).
     * Azure's ND v2 / A100 v4 / H100 v5 match it (reference/04-topology.md). */
    v->speed_gbps = c->max_sm < 80 ? 100 : c->max_sm < 90 ? 200 : 400;
    return acc_topo_assume(c->t,
                           "NIC speed %.0f Gb/s for NICs the file gives only as PCI "
                           "devices (the DGX NIC rate of sm_%d GPUs)",
                           v->speed_gbps, c->max_sm);
}

static acc_status_t make_nic(nxml_ctx_t *c, int i)
{
    const nxml_item_t *it = &c->items[i];
    acc_topo_vertex_t *v;
    int64_t x;
    int present;
    acc_status_t st;

    if ((st = make_vertex(c, i, ACC_VTX_NIC, &v)) != ACC_OK)
        return st;
    if (!it->net)
        return default_nic_speed(c, v);
    if ((st = topo_nxml_str(c, it->net, "name", v->dev_name, sizeof(v->dev_name))) != ACC_OK)
        return st;
    if ((st = topo_nxml_int(c, it->net, "gdr", 0, 1, &x, &present)) != ACC_OK)
        return st;
    v->gdr = present ? (int)x : 0;
    /* NCCL's own dumps always write gdr; a file without it says nothing about GPUDirect RDMA,
     * and the fingerprint holds what is taken instead. */
    if (!present && (st = acc_topo_assume(c->t, "GPUDirect RDMA off for a NIC whose <net> has no "
                                                "gdr attribute")) != ACC_OK)
        return st;
    if ((st = topo_nxml_int(c, it->net, "speed", INT_MIN, INT_MAX, &x, &present)) != ACC_OK)
        return st;
    if (present && x > 0) {
        v->speed_gbps = (double)x / 1000.0; /* Mb/s */
        return ACC_OK;
    }
    /* Some net plugins report -1; NCCL then uses 10 Gb/s (ncclTopoAddNet). */
    v->speed_gbps = 10.0;
    return acc_topo_assume(c->t, "NIC speed 10 Gb/s where <net speed> is missing or not "
                                 "positive (NCCL's fallback)");
}

static acc_status_t make_switch(nxml_ctx_t *c, int i)
{
    acc_topo_vertex_t *v;
    int64_t x;
    int present;
    acc_status_t st;

    if ((st = make_vertex(c, i, ACC_VTX_PCISW, &v)) != ACC_OK)
        return st;
    /* NCCL's schema has no host bridges; acc writes acc_host_bridge for those it knows of. */
    if ((st = topo_nxml_int(c, c->items[i].pci, "acc_host_bridge", 0, 1, &x, &present)) != ACC_OK)
        return st;
    c->t->vertices[c->items[i].vertex].host_bridge = present ? (int)x : 0;
    return ACC_OK;
}

/* The smallest x16 link of Gen3..Gen5 that carries a NIC's line rate. */
static int gen_for_rate(double gbps)
{
    int gen;
    for (gen = 3; gen < 5; gen++)
        if (acc_topo_pcie_bw(gen, 16) * 8.0 >= gbps)
            break;
    return gen;
}

/* The PCIe link from an item to the CPU or switch above it. */
static acc_status_t link_up(nxml_ctx_t *c, int i)
{
    const nxml_item_t *it = &c->items[i];
    const acc_topo_vertex_t *v = &c->t->vertices[it->vertex];
    int gen = it->gen, width = it->width;
    acc_status_t st = ACC_OK;

    if (!it->pci) {
        /* A <nic> straight under a <cpu>: NCCL joins it to the CPU with an unlimited link
         * (LOC_BW, ncclTopoAddCpu); a PCIe link that never limits the NIC is the nearest. */
        gen = gen_for_rate(v->speed_gbps);
        width = 16;
        st = acc_topo_assume(c->t,
                             "NICs given without <pci>: PCIe Gen%d x16 to their CPU, "
                             "wide enough for the NIC (NCCL: unlimited)",
                             gen);
    }
    if (st == ACC_OK && !gen) {
        int sm = it->kind == NXML_GPU ? v->sm : c->max_sm;
        gen = topo_default_pcie_gen(sm);
        st = acc_topo_assume(c->t,
                             "PCIe Gen%d where link_speed is missing or unknown (the "
                             "host link of sm_%d GPUs)",
                             gen, sm);
    }
    if (st == ACC_OK && !width) {
        width = 16;
        st = acc_topo_assume(c->t, it->width_zero ? "PCIe link_width=\"0\" read as x16, as "
                                                    "NCCL does (ncclTopoAddPci)"
                                                  : "PCIe x16 where link_width is missing");
    }
    if (st != ACC_OK)
        return st;
    return topo_add_pcie(c->t, it->vertex, c->items[it->parent].vertex, gen, width);
}

typedef struct {
    int a, b, count; /* GPU ids; a lists count links to b */
    xmlNodePtr where;
} pair_t;

static int cmp_pair(const void *x, const void *y)
{
    const pair_t *p = x, *q = y;
    int pa = p->a < p->b ? p->a : p->b, pb = p->a < p->b ? p->b : p->a;
    int qa = q->a < q->b ? q->a : q->b, qb = q->a < q->b ? q->b : q->a;
    if (pa != qa)
        return pa - qa;
    if (pb != qb)
        return pb - qb;
    return p->a - q->a;
}

static int is_nvs_busid(const nxml_ctx_t *c, const char *busid)
{
    int i;
    for (i = 0; i < c->nnvs; i++)
        if (strcmp(c->nvs_busids[i], busid) == 0)
            return 1;
    return 0;
}

typedef enum { TO_NVSWITCH, TO_CPU, TO_GPU } nvl_target_t;

/* What an <nvlink> reaches.  With a tclass we follow NCCL (ncclTopoAddNvLinks): a GPU class is
 * a peer GPU, 0x068001 is the GPU's own CPU (POWER9), and every other class is the NVSwitch
 * fabric.  Without one (hand-written files), the target decides: the VM placeholder or an
 * NVSwitch <pci> is the fabric, a GPU of the file is a peer, anything else is taken as the CPU. */
static nvl_target_t nvlink_target(const nxml_ctx_t *c, const nxml_rec_t *r, int target)
{
    if (r->tclass[0]) {
        if (topo_nxml_class_is(r->tclass, "0x03"))
            return TO_GPU;
        return topo_nxml_class_is(r->tclass, "0x068001") ? TO_CPU : TO_NVSWITCH;
    }
    if (r->vm_nvswitch || is_nvs_busid(c, r->target))
        return TO_NVSWITCH;
    return target >= 0 && c->items[target].kind == NXML_GPU ? TO_GPU : TO_CPU;
}

/* NVLinks between GPUs, counted once per pair although NCCL dumps list them on both GPUs. */
static acc_status_t add_gpu_pairs(nxml_ctx_t *c, pair_t *pairs, int n, const int *gpu_items)
{
    int i = 0, j;
    acc_status_t st;

    qsort(pairs, (size_t)n, sizeof(*pairs), cmp_pair);
    for (i = 0; i < n; i = j) {
        int lo = pairs[i].a < pairs[i].b ? pairs[i].a : pairs[i].b;
        int hi = pairs[i].a < pairs[i].b ? pairs[i].b : pairs[i].a;
        int up = 0, down = 0;
        for (j = i; j < n && ((pairs[j].a == lo && pairs[j].b == hi) ||
                              (pairs[j].a == hi && pairs[j].b == lo));
             j++) {
            if (pairs[j].a == lo)
                up += pairs[j].count;
            else
                down += pairs[j].count;
        }
        if (up && down && up != down)
            return topo_nxml_fail(c, ACC_ERR_PARSE, pairs[j - 1].where,
                                  "GPU%d lists %d NVLinks to GPU%d but GPU%d lists %d back", lo, up,
                                  hi, hi, down);
        st = topo_add_nvlinks(c->t, c->items[gpu_items[lo]].vertex, c->items[gpu_items[hi]].vertex,
                              up > down ? up : down);
        if (st != ACC_OK)
            return st;
    }
    return ACC_OK;
}

/* Every <nvlink>: summed per GPU into the NVSwitch fabric and into its CPU, per pair between
 * GPUs.  Links whose far end is not in the file are left out, never guessed. */
static acc_status_t build_nvlinks(nxml_ctx_t *c, const int *gpu_items, int ngpu)
{
    int *to_nvs = acc_mem_calloc((size_t)ngpu + 1, sizeof(int));
    int *to_cpu = acc_mem_calloc((size_t)ngpu + 1, sizeof(int));
    pair_t *pairs = acc_mem_calloc((size_t)c->nrecs + 1, sizeof(pair_t));
    int i, npairs = 0, g;
    acc_status_t st = ACC_OK;

    if (!to_nvs || !to_cpu || !pairs) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
        goto out;
    }
    for (i = 0; i < c->nrecs && st == ACC_OK; i++) {
        const nxml_rec_t *r = &c->recs[i];
        const nxml_item_t *gi = &c->items[r->from];
        int id, target;
        if (r->kind != NXML_NVLINK)
            continue;
        id = c->t->vertices[gi->vertex].id;
        target = r->vm_nvswitch ? -1 : find_busid(c, r->target);
        if (!r->vm_nvswitch && strcmp(r->target, gi->busid) == 0) {
            /* VM dumps (Azure NC A100 v4) list NVLinks from a GPU to its own bus id. */
            st = acc_topo_assume(c->t, "NVLinks a GPU lists to its own bus id are left "
                                       "out (a virtual machine artefact)");
            continue;
        }
        switch (nvlink_target(c, r, target)) {
        case TO_NVSWITCH:
            to_nvs[id] += r->count;
            break;
        case TO_CPU:
            to_cpu[id] += r->count;
            break;
        case TO_GPU:
            if (target < 0 || c->items[target].kind != NXML_GPU) {
                /* A dump made with CUDA_VISIBLE_DEVICES names peers it does not describe. */
                st = acc_topo_assume(c->t, "NVLinks to GPUs absent from the file are "
                                           "left out");
                break;
            }
            pairs[npairs].a = id;
            pairs[npairs].b = c->t->vertices[c->items[target].vertex].id;
            pairs[npairs].count = r->count;
            pairs[npairs++].where = r->where;
            break;
        }
    }
    if (st == ACC_OK)
        st = add_gpu_pairs(c, pairs, npairs, gpu_items);
    for (g = 0; g < ngpu && st == ACC_OK; g++) {
        const nxml_item_t *gi = &c->items[gpu_items[g]];
        int nvs;
        if (to_nvs[g] && (st = topo_nvswitch(c->t, &nvs)) == ACC_OK)
            st = topo_add_nvlinks(c->t, gi->vertex, nvs, to_nvs[g]);
        if (st == ACC_OK && to_cpu[g])
            st = topo_add_nvlinks(c->t, gi->vertex, c->items[gi->cpu].vertex, to_cpu[g]);
    }
out:
    acc_mem_free(to_nvs);
    acc_mem_free(to_cpu);
    acc_mem_free(pairs);
    return st;
}

/* <c2c>: NVLink-C2C between a GPU and its own CPU, bw x count / 1000 GB/s (ncclTopoAddC2c). */
static acc_status_t build_c2c(nxml_ctx_t *c, const nxml_rec_t *r)
{
    int gpu = c->items[r->from].vertex, cpu = c->items[c->items[r->from].cpu].vertex, i, found = 0;

    for (i = 0; i < c->t->nlinks; i++) {
        acc_topo_link_t *l = &c->t->links[i];
        if (l->kind == ACC_LINK_C2C &&
            ((l->from == gpu && l->to == cpu) || (l->from == cpu && l->to == gpu))) {
            l->bw += r->bw;
            found = 1;
        }
    }
    return found ? ACC_OK
                 : acc_topo_add_link(c->t, gpu, cpu, ACC_LINK_C2C, 1, r->bw, TOPO_LAT_C2C_US);
}

/* <pcilink target>: a peer link between two PCIe switches (Broadcom P2P), which NCCL gives
 * unlimited bandwidth (LOC_BW).  acc writes its generation and width as acc_link_speed and
 * acc_link_width; without them it is taken as wide as the faster of the two switch uplinks. */
static acc_status_t build_pcilink(nxml_ctx_t *c, const nxml_rec_t *r)
{
    int a = c->items[r->from].vertex, target = find_busid(c, r->target), b, gen = 0, width = 0;
    int k, present;
    char speed[NXML_ATTR_MAX];
    int64_t w;
    acc_status_t st;

    if (target < 0 || c->items[target].kind != NXML_SWITCH)
        return acc_topo_assume(c->t, "<pcilink> to a bus id that is no switch of the file is "
                                     "left out (as NCCL does)");
    b = c->items[target].vertex;
    if (acc_topo_find_link(c->t, a, b, ACC_LINK_PCIE))
        return ACC_OK;
    if ((st = topo_nxml_attr(c, r->where, "acc_link_speed", speed, &present)) != ACC_OK)
        return st;
    if (present && !(gen = topo_pcie_gen_from_speed(speed)))
        return topo_nxml_fail(c, ACC_ERR_PARSE, r->where,
                              "acc_link_speed=\"%s\" is no PCIe "
                              "speed such as \"32.0 GT/s PCIe\"",
                              speed);
    if ((st = topo_nxml_int(c, r->where, "acc_link_width", 1, 32, &w, &present)) != ACC_OK)
        return st;
    width = present ? (int)w : 0;
    if (!gen || !width) {
        for (k = 0; k < 2; k++) {
            int v = k ? b : a;
            const nxml_item_t *it = &c->items[k ? target : r->from];
            const acc_topo_link_t *up =
                acc_topo_find_link(c->t, v, c->items[it->parent].vertex, ACC_LINK_PCIE);
            if (up && !present && up->width > width)
                width = up->width;
            if (up && !gen && up->gen > gen)
                gen = up->gen;
        }
        st = acc_topo_assume(c->t, "PCIe switch peer links (<pcilink>) as wide as the faster "
                                   "switch uplink (NCCL: unlimited)");
        if (st != ACC_OK)
            return st;
    }
    return topo_add_pcie(c->t, a, b, gen, width);
}

/* The acc_ attributes of <system>: the cluster, the name and the SMP bandwidth, which NCCL's
 * schema cannot carry. */
static acc_status_t build_system(nxml_ctx_t *c)
{
    acc_topo_network_t net = c->t->net;
    xmlNodePtr n = c->root;
    char fabric[NXML_ATTR_MAX];
    int64_t x;
    double d;
    int present, any = 0, i;
    acc_status_t st;

    if ((st = topo_nxml_int(c, n, "acc_nodes", 1, 1 << 24, &x, &present)) != ACC_OK)
        return st;
    if (present)
        net.nodes = (int)x;
    any |= present;
    if ((st = topo_nxml_attr(c, n, "acc_fabric", fabric, &present)) != ACC_OK)
        return st;
    if (present && strlen(fabric) >= sizeof(net.name))
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "acc_fabric=\"%s\" is over %zu characters",
                              fabric, sizeof(net.name) - 1);
    if (present)
        memcpy(net.name, fabric, strlen(fabric) + 1);
    any |= present;
    if ((st = topo_nxml_double(c, n, "acc_latency_us", 0, &net.latency_us, &present)) != ACC_OK)
        return st;
    any |= present;
    if ((st = topo_nxml_int(c, n, "acc_rail", 0, 1, &x, &present)) != ACC_OK)
        return st;
    if (present)
        net.rail_optimized = (int)x;
    any |= present;
    if ((st = topo_nxml_double(c, n, "acc_oversub", 1, &net.oversubscription, &present)) != ACC_OK)
        return st;
    any |= present;
    if (any && (st = acc_topo_set_network(c->t, &net)) != ACC_OK)
        return acc_error_prefix(st, "%s:%ld: <system>: ", c->name, xmlGetLineNo(n));
    if ((st = topo_nxml_str(c, n, "acc_name", c->t->name, sizeof(c->t->name))) != ACC_OK)
        return st;
    if ((st = topo_nxml_double(c, n, "acc_smp_bw", 0, &d, &present)) != ACC_OK)
        return st;
    if (present && !(d > 0))
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "acc_smp_bw must be > 0 GB/s");
    for (i = 0; present && i < c->t->nlinks; i++)
        if (c->t->links[i].kind == ACC_LINK_SMP)
            c->t->links[i].bw = d;
    return ACC_OK;
}

static acc_status_t no_gpu(const nxml_ctx_t *c)
{
    if (c->unclassified)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: no GPU can be identified: %d <pci> elements "
                             "(the first %s) carry only a bus id, which NCCL matches with the "
                             "devices it detects at run time.  Add class=\"0x030200\" to the "
                             "GPUs' <pci> (with vendor/device ids), or pass the file "
                             "NCCL_TOPO_DUMP_FILE writes on the machine",
                             c->name, c->unclassified, c->first_unclassified);
    return acc_error_set(ACC_ERR_TOPO, "%s: no GPU (no <pci> of class 0x03.. and no <gpu>)",
                         c->name);
}

acc_status_t topo_nxml_build(nxml_ctx_t *c)
{
    int *cpus = NULL, *gpus = NULL, *nics = NULL, ncpu = 0, ngpu = 0, nnic = 0, i;
    acc_status_t st;

    if ((st = index_busids(c)) != ACC_OK ||
        (st = order_items(c, NXML_CPU, "numaid", &cpus, &ncpu)) != ACC_OK ||
        (st = order_items(c, NXML_GPU, "dev", &gpus, &ngpu)) != ACC_OK ||
        (st = order_items(c, NXML_NIC, "dev", &nics, &nnic)) != ACC_OK)
        goto out;
    if (c->unclassified && (st = acc_topo_assume(c->t, "PCI devices with only a bus id (no "
                                                       "class) are left out")) != ACC_OK)
        goto out;
    if (ngpu == 0) {
        st = no_gpu(c);
        goto out;
    }
    /* Vertices: CPUs first, so that devices can name their NUMA node; GPUs before NICs and
     * switches, whose defaults depend on the GPU generation. */
    for (i = 0; i < ncpu && st == ACC_OK; i++)
        st = make_cpu(c, cpus[i]);
    for (i = 0; i < ngpu && st == ACC_OK; i++)
        st = make_gpu(c, gpus[i]);
    for (i = 0; i < nnic && st == ACC_OK; i++)
        st = make_nic(c, nics[i]);
    for (i = 0; i < c->nitems && st == ACC_OK; i++)
        if (c->items[i].kind == NXML_SWITCH)
            st = make_switch(c, i);
    for (i = 0; i < c->nitems && st == ACC_OK; i++)
        if (c->items[i].kind != NXML_CPU)
            st = link_up(c, i);
    if (st == ACC_OK)
        st = build_nvlinks(c, gpus, ngpu);
    for (i = 0; i < c->nrecs && st == ACC_OK; i++) {
        if (c->recs[i].kind == NXML_C2C)
            st = build_c2c(c, &c->recs[i]);
        else if (c->recs[i].kind == NXML_PCILINK)
            st = build_pcilink(c, &c->recs[i]);
    }
    if (st == ACC_OK && (st = topo_connect_cpus(c->t)) == ACC_OK)
        st = build_system(c);
out:
    acc_mem_free(cpus);
    acc_mem_free(gpus);
    acc_mem_free(nics);
    return st;
}
