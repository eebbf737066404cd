/*
 * Synthetic topologies from a one-line description, as hwloc's synthetic topologies:
 *
 *     nodes=2 gpus=8 nvlink=18 nic=8x400
 *
 * builds two nodes of eight H100s, each with 18 NVLinks into an NVSwitch fabric and eight
 * 400 Gb/s NICs.  Every key, its accepted values and its default are in the table below and in
 * schedules/TOPOLOGY.md; the defaults chosen are written into the topology's source as the full
 * description, so nothing is assumed silently.  One default is also recorded as assumed: no
 * NVLink for GPUs of a part that has them, when nvlink= is not given.
 */
#include "internal.h"

#include <string.h>

#define SYNTH_MAX_GPUS  64
#define SYNTH_MAX_NICS  128
#define SYNTH_MAX_NUMA  64

typedef struct {
    int nodes, gpus, nvlink, nvswitch, nics, numa, pcie, rail, planes;
    int sw_gpus, sw_nics; /* GPUs and NICs per PCIe switch; 0 and 0: devices on the CPU */
    double nic_gbps, latency, oversub;
    char fabric[ACC_TOPO_NAME_MAX];
    const acc_gpu_model_t *gpu;
    const char *arch; /* the name written back into the description */
    unsigned given;   /* bit per key index */
} synth_t;

typedef acc_status_t (*parse_fn)(synth_t *s, const char *key, const char *val);

/* GPU generations by name; each maps to the SXM part of that generation (topo_hw.c's table). */
static const struct {
    const char *name, *alias;
    int device_id;
} archs[] = {
    {"v100", "sm_70", 0x1db1}, /* V100 SXM2 16GB (DGX-1) */
    {"a100", "sm_80", 0x20b2}, /* A100 SXM4 80GB */
    {"l40s", "sm_89", 0x26b9}, /* L40S, PCIe only */
    {"h100", "sm_90", 0x2330}, /* H100 SXM5 80GB */
    {"h200", NULL, 0x2335},    /* H200 SXM 141GB */
    {"b200", "sm_100", 0x2901},
};

static acc_status_t bad(const char *key, const char *val, const char *form)
{
    return acc_error_set(ACC_ERR_INVALID, "synthetic topology: %s=%s: expected %s", key, val, form);
}

static acc_status_t p_nodes(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 1, TOPO_MAX_NODES, &s->nodes) ? ACC_OK
                                                          : bad(k, v, "a whole number 1 to 131072");
}

static acc_status_t p_gpus(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 1, SYNTH_MAX_GPUS, &s->gpus)
               ? ACC_OK
               : bad(k, v, "the GPUs per node, a whole number 1 to 64");
}

static acc_status_t p_arch(synth_t *s, const char *k, const char *v)
{
    size_t i;
    for (i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
        if (acc_str_ieq(v, archs[i].name) || (archs[i].alias && acc_str_ieq(v, archs[i].alias))) {
            s->gpu = acc_topo_gpu_model_by_pci(archs[i].device_id);
            s->arch = archs[i].name;
            return ACC_OK;
        }
    }
    return bad(k, v, "sm_70, sm_80, sm_89, sm_90, sm_100, v100, a100, l40s, h100, h200 or b200");
}

static acc_status_t p_nvlink(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 0, 64, &s->nvlink) ? ACC_OK
                                               : bad(k, v, "the NVLinks per GPU, 0 (none) to 18");
}

static acc_status_t p_nvswitch(synth_t *s, const char *k, const char *v)
{
    return topo_kv_flag(v, &s->nvswitch) ? ACC_OK : bad(k, v, "yes or no");
}

static acc_status_t p_nic(synth_t *s, const char *k, const char *v)
{
    const char *x = strchr(v, 'x');
    char count[16];
    if (strcmp(v, "0") == 0) {
        s->nics = 0;
        return ACC_OK;
    }
    if (!x || (size_t)(x - v) >= sizeof(count))
        return bad(k, v, "COUNTxGBPS such as 8x400 (eight 400 Gb/s NICs per node), or 0");
    memcpy(count, v, (size_t)(x - v));
    count[x - v] = '\0';
    if (!topo_kv_count(count, 1, SYNTH_MAX_NICS, &s->nics) ||
        !topo_kv_number(x + 1, 1, 100000, &s->nic_gbps))
        return bad(k, v, "COUNTxGBPS such as 8x400, with 1 to 128 NICs of 1 to 100000 Gb/s");
    return ACC_OK;
}

static acc_status_t p_numa(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 1, SYNTH_MAX_NUMA, &s->numa)
               ? ACC_OK
               : bad(k, v, "the NUMA nodes (CPU sockets) per node, 1 to 64");
}

static acc_status_t p_pcie(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 1, 6, &s->pcie) ? ACC_OK : bad(k, v, "a PCIe generation 1 to 6");
}

static acc_status_t p_switch(synth_t *s, const char *k, const char *v)
{
    const char *plus = strchr(v, '+');
    char g[16];
    if (strcmp(v, "0") == 0) {
        s->sw_gpus = s->sw_nics = 0;
        return ACC_OK;
    }
    if (plus && (size_t)(plus - v) < sizeof(g)) {
        memcpy(g, v, (size_t)(plus - v));
        g[plus - v] = '\0';
        if (topo_kv_count(g, 1, SYNTH_MAX_GPUS, &s->sw_gpus) &&
            topo_kv_count(plus + 1, 0, SYNTH_MAX_NICS, &s->sw_nics))
            return ACC_OK;
    }
    return bad(k, v,
               "GPUS+NICS per PCIe switch such as 2+1, or 0 for devices on the CPU's own "
               "PCIe ports");
}

static acc_status_t p_fabric(synth_t *s, const char *k, const char *v)
{
    return topo_kv_fabric(v, s->fabric)
               ? ACC_OK
               : bad(k, v, "a fabric name of 1 to 63 letters, digits, '-', '_' and '.' (ib-ndr)");
}

static acc_status_t p_latency(synth_t *s, const char *k, const char *v)
{
    return topo_kv_number(v, 0, 1e6, &s->latency)
               ? ACC_OK
               : bad(k, v, "the one-way network latency in microseconds, >= 0");
}

static acc_status_t p_rail(synth_t *s, const char *k, const char *v)
{
    return topo_kv_flag(v, &s->rail) ? ACC_OK : bad(k, v, "1 (rail-optimised) or 0");
}

static acc_status_t p_planes(synth_t *s, const char *k, const char *v)
{
    return topo_kv_count(v, 1, ACC_TOPO_PLANES_MAX, &s->planes)
               ? ACC_OK
               : bad(k, v, "the number of network planes, NIC k on plane k mod P, 1 to 64");
}

static acc_status_t p_oversub(synth_t *s, const char *k, const char *v)
{
    return topo_kv_number(v, 1, 1e6, &s->oversub)
               ? ACC_OK
               : bad(k, v, "an oversubscription ratio >= 1 (1 = non-blocking)");
}

enum {
    K_NODES,
    K_GPUS,
    K_ARCH,
    K_NVLINK,
    K_NVSWITCH,
    K_NIC,
    K_NUMA,
    K_PCIE,
    K_SWITCH,
    K_FABRIC,
    K_LATENCY,
    K_RAIL,
    K_OVERSUB,
    K_PLANES,
    K_COUNT
};

static const topo_kv_key_t keys[K_COUNT] = {
    {"nodes", NULL, "nodes=N"},         {"gpus", NULL, "gpus=N"},
    {"arch", NULL, "arch=h100"},        {"nvlink", NULL, "nvlink=18"},
    {"nvswitch", NULL, "nvswitch=yes"}, {"nic", NULL, "nic=8x400"},
    {"numa", NULL, "numa=2"},           {"pcie", NULL, "pcie=5"},
    {"switch", NULL, "switch=1+1"},     {"fabric", NULL, "fabric=ib-ndr"},
    {"latency", NULL, "latency=2.7"},   {"rail", NULL, "rail=1"},
    {"oversub", NULL, "oversub=1"},     {"planes", NULL, "planes=1"},
};

/* The parser of each key, in the order of keys[]. */
static const parse_fn parsers[K_COUNT] = {p_nodes,   p_gpus, p_arch,    p_nvlink, p_nvswitch,
                                          p_nic,     p_numa, p_pcie,    p_switch, p_fabric,
                                          p_latency, p_rail, p_oversub, p_planes};

static acc_status_t parse_pair(void *ctx, int key, const char *name, const char *val)
{
    return parsers[key](ctx, name, val);
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Fill the defaults and check that the keys agree with each other. */
static acc_status_t resolve(synth_t *s)
{
    const acc_gpu_arch_t *a;
    int nsw;

    if (!(s->given & (1u << K_GPUS)))
        return acc_error_set(ACC_ERR_PARSE, "synthetic topology: key 'gpus' is required "
                                            "(gpus=N, the GPUs per node)");
    if (!s->gpu) {
        const char *name = s->nvlink == 12 ? "a100" : s->nvlink == 6 ? "v100" : "h100";
        p_arch(s, "arch", name);
    }
    a = acc_topo_gpu_arch(s->gpu->sm);
    if (s->nvlink > (a ? a->max_nvlinks : 0))
        return acc_error_set(ACC_ERR_INVALID,
                             "synthetic topology: nvlink=%d: a %s GPU has %d "
                             "NVLinks at most",
                             s->nvlink, s->arch, a ? a->max_nvlinks : 0);
    if (!(s->given & (1u << K_NVSWITCH)))
        s->nvswitch = s->nvlink > 0 && s->gpus > 2;
    if (s->nvswitch && s->nvlink == 0)
        return acc_error_set(ACC_ERR_INVALID, "synthetic topology: nvswitch=yes needs nvlink=N "
                                              "(the NVLinks from each GPU into the switches)");
    if (!s->nvswitch && s->nvlink > 0) {
        if (s->gpus == 1)
            return acc_error_set(ACC_ERR_INVALID,
                                 "synthetic topology: nvlink=%d with one GPU "
                                 "and nvswitch=no: there is no peer to link to",
                                 s->nvlink);
        if (s->nvlink % (s->gpus - 1) != 0)
            return acc_error_set(ACC_ERR_INVALID,
                                 "synthetic topology: nvlink=%d with "
                                 "nvswitch=no: direct all-to-all links need nvlink divisible by "
                                 "gpus-1 = %d",
                                 s->nvlink, s->gpus - 1);
    }
    if (s->nodes > 1 && !(s->given & (1u << K_NIC)))
        return acc_error_set(ACC_ERR_INVALID,
                             "synthetic topology: nodes=%d needs nic=COUNTxGBPS "
                             "(the NICs per node, e.g. nic=8x400)",
                             s->nodes);
    if (s->nodes > 1 && s->nics == 0)
        return acc_error_set(ACC_ERR_INVALID,
                             "synthetic topology: nodes=%d with nic=0: nodes "
                             "need NICs to talk",
                             s->nodes);
    if (!(s->given & (1u << K_NUMA)))
        s->numa = s->gpus >= 4 ? 2 : 1;
    if (!(s->given & (1u << K_PCIE)))
        s->pcie = topo_default_pcie_gen(s->gpu->sm);
    if (!(s->given & (1u << K_SWITCH))) {
        /* gcd(gpus, nics) switches share GPUs and NICs evenly: 8+8 -> 1+1 per switch, 8+4 ->
         * 2+1, 8+32 -> 1+4; without NICs each GPU has a switch of its own. */
        nsw = s->nics ? gcd(s->gpus, s->nics) : s->gpus;
        s->sw_gpus = s->gpus / nsw;
        s->sw_nics = s->nics / nsw;
    } else if (s->sw_gpus == 0) {
        if (s->sw_nics != 0)
            return bad("switch", "0+N", "at least one GPU per switch");
    } else {
        if (s->gpus % s->sw_gpus != 0)
            return acc_error_set(ACC_ERR_INVALID,
                                 "synthetic topology: switch=%d+%d: gpus=%d "
                                 "does not divide into switches of %d GPUs",
                                 s->sw_gpus, s->sw_nics, s->gpus, s->sw_gpus);
        nsw = s->gpus / s->sw_gpus;
        if (nsw * s->sw_nics != s->nics)
            return acc_error_set(ACC_ERR_INVALID,
                                 "synthetic topology: switch=%d+%d: %d switches "
                                 "of %d NICs hold %d NICs, but nic= gives %d per node",
                                 s->sw_gpus, s->sw_nics, nsw, s->sw_nics, nsw * s->sw_nics,
                                 s->nics);
    }
    return ACC_OK;
}

/* ---- building ------------------------------------------------------------------------------ */

static acc_status_t add_gpu(acc_topo_t *t, const synth_t *s, int numa, int *v)
{
    acc_topo_vertex_t *x;
    acc_status_t st = acc_topo_add_vertex(t, ACC_VTX_GPU, v);
    if (st != ACC_OK)
        return st;
    x = acc_topo_vertex_mut(t, *v);
    snprintf(x->model, sizeof(x->model), "%s", s->gpu->model);
    x->sm = s->gpu->sm;
    x->sm_count = s->gpu->sm_count;
    x->mem_bytes = s->gpu->mem_bytes;
    x->device_id = s->gpu->device_id;
    x->vendor_id = 0x10de;
    x->numa = numa;
    return topo_fill_gpu_defaults(t, *v);
}

static acc_status_t build(acc_topo_t *t, const synth_t *s)
{
    int cpu[SYNTH_MAX_NUMA], sw[SYNTH_MAX_GPUS], gpu[SYNTH_MAX_GPUS];
    int nsw = s->sw_gpus ? s->gpus / s->sw_gpus : 0, i, j, v, nvs;
    /* A link runs at the lower generation of its two ends. */
    int gpu_gen = s->pcie < s->gpu->pcie_gen ? s->pcie : s->gpu->pcie_gen;
    acc_status_t st = ACC_OK;

    for (i = 0; i < s->numa && st == ACC_OK; i++)
        st = acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu[i]);
    if (st != ACC_OK || (st = topo_connect_cpus(t)) != ACC_OK)
        return st;
    for (i = 0; i < nsw; i++) {
        int numa = i * s->numa / nsw;
        if ((st = acc_topo_add_vertex(t, ACC_VTX_PCISW, &sw[i])) != ACC_OK ||
            (st = topo_add_pcie(t, sw[i], cpu[numa], s->pcie, 16)) != ACC_OK)
            return st;
        acc_topo_vertex_mut(t, sw[i])->numa = numa;
    }
    for (i = 0; i < s->gpus; i++) {
        int numa = nsw ? (i / s->sw_gpus) * s->numa / nsw : i * s->numa / s->gpus;
        if ((st = add_gpu(t, s, numa, &gpu[i])) != ACC_OK ||
            (st = topo_add_pcie(t, gpu[i], nsw ? sw[i / s->sw_gpus] : cpu[numa], gpu_gen, 16)) !=
                ACC_OK)
            return st;
    }
    if (s->nvswitch) {
        if ((st = topo_nvswitch(t, &nvs)) != ACC_OK)
            return st;
        for (i = 0; i < s->gpus && st == ACC_OK; i++)
            st = topo_add_nvlinks(t, gpu[i], nvs, s->nvlink);
    } else if (s->nvlink > 0) {
        for (i = 0; i < s->gpus; i++)
            for (j = i + 1; j < s->gpus && st == ACC_OK; j++)
                st = topo_add_nvlinks(t, gpu[i], gpu[j], s->nvlink / (s->gpus - 1));
    }
    for (i = 0; i < s->nics && st == ACC_OK; i++) {
        acc_topo_vertex_t *x;
        int parent = nsw ? sw[i / s->sw_nics] : cpu[i * s->numa / s->nics];
        if ((st = acc_topo_add_vertex(t, ACC_VTX_NIC, &v)) != ACC_OK)
            return st;
        x = acc_topo_vertex_mut(t, v);
        x->speed_gbps = s->nic_gbps;
        x->plane = i % s->planes;
        x->numa = nsw ? acc_topo_vertex(t, parent)->numa : i * s->numa / s->nics;
        /* GPUDirect RDMA where the NIC shares a PCIe switch with GPUs (NCCL's default GDR
         * level is PXB). */
        x->gdr = nsw > 0;
        st = topo_add_pcie(t, v, parent, s->pcie, 16);
    }
    return st;
}

static void describe(const synth_t *s, acc_buf_t *b)
{
    acc_buf_printf(b, "nodes=%d gpus=%d arch=%s nvlink=%d nvswitch=%s nic=", s->nodes, s->gpus,
                   s->arch, s->nvlink, s->nvswitch ? "yes" : "no");
    if (s->nics)
        acc_buf_printf(b, "%dx%g", s->nics, s->nic_gbps);
    else
        acc_buf_puts(b, "0");
    acc_buf_printf(b, " numa=%d pcie=%d switch=", s->numa, s->pcie);
    if (s->sw_gpus)
        acc_buf_printf(b, "%d+%d", s->sw_gpus, s->sw_nics);
    else
        acc_buf_puts(b, "0");
    if (s->fabric[0])
        acc_buf_printf(b, " fabric=%s", s->fabric);
    acc_buf_printf(b, " latency=%g rail=%d oversub=%g", s->latency, s->rail, s->oversub);
    if (s->planes > 1) /* one plane, the default, is not written: descriptions stay as they were */
        acc_buf_printf(b, " planes=%d", s->planes);
}

acc_status_t topo_import_synthetic(acc_topo_t *t, const char *desc)
{
    synth_t s;
    topo_kv_t kv = {"synthetic topology", " \t\n\r\v\f", keys, K_COUNT, 0};
    acc_buf_t b;
    const acc_gpu_arch_t *a;
    acc_status_t st;

    memset(&s, 0, sizeof(s));
    s.nodes = 1;
    s.latency = TOPO_LAT_NET_US;
    s.rail = 1;
    s.oversub = 1.0;
    s.planes = 1;
    if (!desc)
        return acc_error_set(ACC_ERR_INVALID, "synthetic topology: no description");
    if ((st = topo_kv_parse(&kv, desc, parse_pair, &s)) != ACC_OK)
        return st;
    s.given = kv.given;
    if (!(s.given & (1u << K_LATENCY))) /* a known fabric brings its latency (topo_fabric.c) */
        s.latency = acc_topo_fabric_latency_us(s.fabric);
    if ((st = resolve(&s)) != ACC_OK || (st = build(t, &s)) != ACC_OK)
        return st;
    if (s.nodes > 1 ||
        (s.given & ((1u << K_FABRIC) | (1u << K_LATENCY) | (1u << K_RAIL) | (1u << K_OVERSUB)))) {
        acc_topo_network_t net;
        memset(&net, 0, sizeof(net));
        net.nodes = s.nodes;
        snprintf(net.name, sizeof(net.name), "%s", s.fabric);
        net.latency_us = s.latency;
        net.rail_optimized = s.rail;
        net.oversubscription = s.oversub;
        if ((st = acc_topo_set_network(t, &net)) != ACC_OK)
            return st;
    }
    /* acc never invents NVLinks, so a description without nvlink= is PCIe alone, also for a
     * part that has them: said under "Assumed", with the key that adds them. */
    if (!(s.given & (1u << K_NVLINK)) && s.gpus > 1 && (a = acc_topo_gpu_arch(s.gpu->sm)) &&
        a->max_nvlinks > 0 &&
        (st = acc_topo_assume(t,
                              "no NVLink between the %d %s GPUs: the description gives no "
                              "nvlink=, so their plans are PCIe plans; an HGX board of this part "
                              "has %d NVLinks per GPU into NVSwitches: add nvlink=%d "
                              "(schedules/TOPOLOGY.md, 'Synthetic topologies')",
                              s.gpus, s.gpu->model, a->max_nvlinks, a->max_nvlinks)) != ACC_OK)
        return st;
    /* The name is short; the source spells out every value, defaults included. */
    acc_buf_init(&b);
    acc_buf_printf(&b, "synthetic-%dx%d-%s", s.nodes, s.gpus, s.arch);
    st = acc_buf_status(&b);
    if (st == ACC_OK)
        st = acc_topo_set_name(t, b.data);
    acc_buf_reset(&b);
    describe(&s, &b);
    if (st == ACC_OK && (st = acc_buf_status(&b)) == ACC_OK)
        st = acc_topo_set_source(t, b.data, ACC_TOPO_FMT_SYNTHETIC);
    acc_buf_free(&b);
    return st;
}
