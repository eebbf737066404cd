/*
 * Hardware facts used to fill what an input leaves out.  Every number has its source beside it;
 * the rates are hardware rates per direction, not the effective rates a cost model uses.
 */
#include "internal.h"

#include <ctype.h>
#include <string.h>

#define GIB (1024ull * 1024 * 1024)

/* NVLink per-link rate per direction:
 *   NVLink1 (P100) 20 GB/s: 4 links, 160 GB/s bidirectional (NVIDIA P100 whitepaper).
 *   NVLink2 (V100) 25 GB/s: 6 links, 300 GB/s bidirectional (V100 datasheet).
 *   NVLink3 (A100) 25 GB/s: 12 links, 600 GB/s bidirectional (A100 datasheet; DGX A100 NV12).
 *   NVLink3 on GA10x (A40/A10 bridge) 14.0625 GB/s: 4 links, 112.5 GB/s bidirectional
 *     (A40 datasheet).
 *   NVLink4 (H100/H200) 25 GB/s: 18 links, 900 GB/s bidirectional (H100 datasheet; NV18).
 *   NVLink5 (B200/GB200) 50 GB/s: 18 links, 1.8 TB/s bidirectional (reference/04-topology.md §5).
 * Ada (sm_89) and Turing (sm_75) data-centre parts have no NVLink. */
static const acc_gpu_arch_t archs[] = {
    {20, "fermi", 0.0, 0},        {35, "kepler", 0.0, 0},     {37, "kepler", 0.0, 0},
    {60, "pascal", 20.0, 4},      {61, "pascal", 0.0, 0},     {70, "volta", 25.0, 6},
    {75, "turing", 0.0, 0},       {80, "ampere", 25.0, 12},   {86, "ampere", 14.0625, 4},
    {89, "ada", 0.0, 0},          {90, "hopper", 25.0, 18},   {100, "blackwell", 50.0, 18},
    {103, "blackwell", 50.0, 18}, {120, "blackwell", 0.0, 0},
};

/* PCI device ids of NVIDIA data-centre and common workstation GPUs (vendor 0x10de), as they
 * appear in lspci, hwloc and NCCL dumps; SM counts, memory and memory bandwidth (GB/s) from each
 * product's datasheet.  Memory bandwidth feeds the simulator's memory resources. */
static const acc_gpu_model_t models[] = {
    {0x1094, "Tesla M2075", 20, 14, 6 * GIB, 150, 0, 2},
    {0x1023, "Tesla K40m", 35, 15, 12 * GIB, 288, 0, 3},
    {0x15f9, "P100 SXM2 16GB", 60, 56, 16 * GIB, 732, 4, 3},
    {0x1db1, "V100 SXM2 16GB", 70, 80, 16 * GIB, 900, 6, 3},
    {0x1db5, "V100 SXM2 32GB", 70, 80, 32 * GIB, 900, 6, 3},
    {0x1db8, "V100 SXM3 32GB", 70, 80, 32 * GIB, 980, 6, 3}, /* the DGX-2H part */
    {0x1db4, "V100 PCIe 16GB", 70, 80, 16 * GIB, 900, 0, 3},
    {0x1eb8, "T4", 75, 40, 16 * GIB, 320, 0, 3},
    {0x20b0, "A100 SXM4 40GB", 80, 108, 40 * GIB, 1555, 12, 4},
    {0x20b2, "A100 SXM4 80GB", 80, 108, 80 * GIB, 2039, 12, 4},
    {0x20b5, "A100 PCIe 80GB", 80, 108, 80 * GIB, 1935, 0, 4},
    {0x20f1, "A100 PCIe 40GB", 80, 108, 40 * GIB, 1555, 0, 4},
    /* A800 and H800, the export parts for China, are A100 and H100 silicon with 8 NVLinks:
     * 400 GB/s bidirectional (reference/04-topology.md §5; the NV8 matrix of NVIDIA/nccl#933),
     * SMs, memory and PCIe as their A100 SXM4 80GB and H100 SXM5 80GB siblings.  PCI ids as the
     * driver lists "NVIDIA A800-SXM4-80GB" 20F3 and "NVIDIA H800" 2324 (README of
     * NVIDIA/open-gpu-kernel-modules 560.31.02, "Compatible GPUs"). */
    {0x20f3, "A800 SXM4 80GB", 80, 108, 80 * GIB, 2039, 8, 4},
    {0x2236, "A10", 86, 72, 24 * GIB, 600, 0, 4},
    {0x2237, "A10G", 86, 80, 24 * GIB, 600, 0, 4},
    {0x2235, "A40", 86, 84, 48 * GIB, 696, 0, 4},
    {0x2684, "GeForce RTX 4090", 89, 128, 24 * GIB, 1008, 0, 4},
    {0x26b5, "L40", 89, 142, 48 * GIB, 864, 0, 4},
    {0x26b9, "L40S", 89, 142, 48 * GIB, 864, 0, 4},
    {0x2330, "H100 SXM5 80GB", 90, 132, 80 * GIB, 3350, 18, 5},
    {0x2331, "H100 PCIe 80GB", 90, 114, 80 * GIB, 2000, 0, 5},
    {0x2324, "H800 SXM5 80GB", 90, 132, 80 * GIB, 3350, 8, 5},
    {0x2335, "H200 SXM 141GB", 90, 132, 141 * GIB, 4800, 18, 5},
    {0x2901, "B200", 100, 148, 180 * GIB, 8000, 18, 5},
};

/* The part a GPU known only by its compute capability (and perhaps its memory) is taken to be:
 * the generation's data-centre part, its SXM form where there is one, and the larger-memory SXM
 * part where the memory exceeds the smaller one's (an A100 with more than 48 GiB is the 80 GB
 * one, an sm_90 part with more than 100 GiB the H200).  A compute capability between two rows
 * takes the lower row. */
static const struct {
    int sm;
    uint64_t mem_above;
    int device_id;
} generation_parts[] = {
    {20, 0, 0x1094}, {35, 0, 0x1023}, {60, 0, 0x15f9},         {70, 0, 0x1db1},
    {75, 0, 0x1eb8}, {80, 0, 0x20b0}, {80, 48 * GIB, 0x20b2},  {86, 0, 0x2236},
    {89, 0, 0x26b5}, {90, 0, 0x2330}, {90, 100 * GIB, 0x2335}, {100, 0, 0x2901},
};

/* Name fragments as nvidia-smi, NVML and hwloc's GPUModel or PCIDevice print them, most specific
 * first; '-', '_' and ' ' match each other ("V100-PCIE" finds pci.ids' "Tesla V100 PCIe 32GB").
 * Device id 0 marks a part without a row above, listed so that a shorter fragment below it does
 * not claim it: the bare "V100", "A800" and "H800" are last resorts for free text ("8x V100") and
 * must not turn a PCIe card into an SXM part with NVLinks.  Those names are the driver's
 * (open-gpu-kernel-modules README) and pci.ids'.  One part per line: clang-format would pack it. */
/* clang-format off */
static const struct {
    const char *fragment;
    int device_id;
} name_map[] = {
    {"K40m", 0x1023},
    {"M2075", 0x1094},
    {"P100-SXM2", 0x15f9},
    {"V100-SXM2-32", 0x1db5},
    {"V100-SXM2", 0x1db1},
    {"V100-SXM3", 0x1db8},
    {"V100-PCIE", 0x1db4},
    {"V100S", 0},               /* Tesla V100S-PCIE-32GB */
    {"V100-DGXS-32", 0},        /* Tesla V100-DGXS-32GB (DGX Station) */
    {"V100-FHHL", 0},           /* Tesla V100-FHHL-16GB, a PCIe card */
    {"Quadro GV100", 0},        /* a 32 GB workstation card */
    {"V100", 0x1db1},           /* the first V100, as in DGX-1 */
    {"T4", 0x1eb8},
    {"A100-SXM4-80", 0x20b2},
    {"A100-SXM-80", 0x20b2},
    {"A100 80GB PCIE", 0x20b5},
    {"A100-PCIE-80", 0x20b5},
    {"A100-PCIE", 0x20f1},
    {"A100-SXM4", 0x20b0},
    {"A100", 0x20b0},
    {"A800-SXM4-80", 0x20f3},
    {"A800-SXM4-40", 0},        /* NVIDIA A800-SXM4-40GB */
    {"A800 80GB PCIE", 0},      /* NVIDIA A800 80GB PCIe, and its LC variant */
    {"A800 40GB", 0},           /* NVIDIA A800 40GB Active */
    {"A800", 0x20f3},
    {"A10G", 0x2237},
    {"A40", 0x2235},
    {"A10", 0x2236},
    {"RTX 4090", 0x2684},
    {"4090", 0x2684},
    {"L40S", 0x26b9},
    {"L40", 0x26b5},
    {"H100 PCIE", 0x2331},
    {"H100 NVL", 0x2331},
    {"H200", 0x2335},
    {"H100", 0x2330},
    {"H800 PCIE", 0},           /* NVIDIA H800 PCIe */
    {"H800 NVL", 0},            /* NVIDIA H800 NVL */
    {"H800", 0x2324},           /* the SXM5 part, "NVIDIA H800" to the driver */
    {"B200", 0x2901},
};
/* clang-format on */

const acc_gpu_arch_t *acc_topo_gpu_arch(int sm)
{
    size_t i;
    for (i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
        if (archs[i].sm == sm)
            return &archs[i];
    return NULL;
}

const acc_gpu_model_t *acc_topo_gpu_model_by_pci(int device_id)
{
    size_t i;
    for (i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (models[i].device_id == device_id)
            return &models[i];
    return NULL;
}

const acc_gpu_model_t *acc_topo_gpu_models(size_t *count)
{
    *count = sizeof(models) / sizeof(models[0]);
    return models;
}

/* The generation's part for a compute capability and memory size, or NULL below the first row. */
static const acc_gpu_model_t *generation_part(int sm, uint64_t mem_bytes)
{
    const acc_gpu_model_t *m = NULL;
    size_t i;
    for (i = 0; i < sizeof(generation_parts) / sizeof(generation_parts[0]); i++)
        if (generation_parts[i].sm <= sm &&
            (!generation_parts[i].mem_above || mem_bytes > generation_parts[i].mem_above))
            m = acc_topo_gpu_model_by_pci(generation_parts[i].device_id);
    return m;
}

const acc_gpu_model_t *acc_topo_gpu_model_of(const acc_topo_vertex_t *gpu)
{
    const acc_gpu_model_t *m = acc_topo_gpu_model_by_pci(gpu->device_id);
    return m ? m : generation_part(gpu->sm, gpu->mem_bytes);
}

/* A name character folded for matching: case and the separator between words do not count. */
static int fold(char c)
{
    return c == '-' || c == '_' ? ' ' : toupper((unsigned char)c);
}

/* Substring search on folded characters. */
static int contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i;
        for (i = 0; i < n; i++)
            if (!hay[i] || fold(hay[i]) != fold(needle[i]))
                break;
        if (i == n)
            return 1;
    }
    return 0;
}

const acc_gpu_model_t *acc_topo_gpu_model_by_name(const char *name)
{
    size_t i;
    if (!name || !*name)
        return NULL;
    /* acc's own canonical names first ("A100 PCIe 80GB" must not fall to the "A100" fragment). */
    for (i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (acc_str_ieq(name, models[i].model))
            return &models[i];
    for (i = 0; i < sizeof(name_map) / sizeof(name_map[0]); i++)
        if (contains(name, name_map[i].fragment))
            return name_map[i].device_id ? acc_topo_gpu_model_by_pci(name_map[i].device_id) : NULL;
    return NULL;
}

/* Per-lane rates after line coding: Gen1/2 8b/10b at 2.5/5 GT/s, Gen3+ 128b/130b at 8/16/32/64
 * GT/s (PCI-SIG); Gen3 x16 = 15.75 GB/s as hwloc reports it. */
double acc_topo_pcie_bw(int gen, int width)
{
    static const double lane[] = {0, 0.25, 0.5, 0.984615, 1.969231, 3.938462, 7.876923};
    if (gen < 1 || gen > 6 || width < 1)
        return 0.0;
    return lane[gen] * width;
}

acc_status_t topo_fill_gpu_defaults(acc_topo_t *t, int vertex)
{
    acc_topo_vertex_t *v = acc_topo_vertex_mut(t, vertex);
    const acc_gpu_model_t *m = NULL;

    if (!v || v->kind != ACC_VTX_GPU)
        return acc_error_set(ACC_ERR_INVALID, "vertex %d is not a GPU", vertex);
    /* The name the driver reports (NVML, CUDA, nvidia-smi) wins over the PCI id: PCI id tables
     * lag behind and boards share ids (the hwloc capture of a K40m names PCI id 10de:1094, a
     * Tesla M2075, in pci.ids). */
    if (v->model[0])
        m = acc_topo_gpu_model_by_name(v->model);
    if (!m && v->device_id)
        m = acc_topo_gpu_model_by_pci(v->device_id);
    if (m && v->sm && m->sm != v->sm)
        m = NULL; /* the input's compute capability wins over a guessed model */
    if (m) {
        if (!v->model[0] || !acc_topo_gpu_model_by_name(v->model) ||
            acc_topo_gpu_model_by_name(v->model) == m)
            snprintf(v->model, sizeof(v->model), "%s", m->model);
        if (!v->sm) {
            v->sm = m->sm;
            acc_topo_assume(t, "GPU compute capability sm_%d (from the %s model)", m->sm, m->model);
        }
        if (!v->sm_count) {
            v->sm_count = m->sm_count;
            acc_topo_assume(t, "%s: %d SMs (datasheet)", m->model, m->sm_count);
        }
        if (!v->mem_bytes) {
            v->mem_bytes = m->mem_bytes;
            acc_topo_assume(t, "%s: %llu GiB memory (datasheet)", m->model,
                            (unsigned long long)(m->mem_bytes / GIB));
        }
        if (!v->device_id)
            v->device_id = m->device_id;
        if (!v->vendor_id)
            v->vendor_id = 0x10de;
    }
    if (!v->sm)
        return acc_error_set(ACC_ERR_TOPO,
                             "%s: unknown GPU model '%s' (PCI device 0x%04x) and no compute "
                             "capability given; add 'sm' to the input",
                             v->name, v->model, v->device_id);
    if (!acc_topo_gpu_arch(v->sm))
        return acc_error_set(ACC_ERR_TOPO, "%s: unknown compute capability sm_%d", v->name, v->sm);
    return ACC_OK;
}

/* Root-port generations by CPUID: Intel family 6 model 0x55 Skylake-SP / Cascade Lake Gen3,
 * 0x6a/0x6c Ice Lake-SP Gen4, 0x8f Sapphire Rapids and 0xcf Emerald Rapids Gen5; AMD family
 * 0x17 (Zen, Zen 2): Naples (model 0x01) Gen3, Rome (0x31) Gen4; family 0x19 (Zen 3/4): Milan
 * (0x01) Gen4, Genoa (0x11) Gen5 (vendors' platform briefs).  Hand-written VM topology files
 * write "16 GT/s" on Skylake hosts (Azure ND v2), so the CPU caps what a file claims. */
int topo_cpu_max_pcie_gen(const acc_topo_vertex_t *cpu)
{
    if (!cpu)
        return 0;
    if (strcmp(cpu->cpu_vendor, "GenuineIntel") == 0 && cpu->cpu_family == 6) {
        if (cpu->cpu_model >= 0x8f)
            return 5;
        if (cpu->cpu_model >= 0x6a)
            return 4;
        if (cpu->cpu_model >= 0x4f)
            return 3;
    }
    if (strcmp(cpu->cpu_vendor, "AuthenticAMD") == 0) {
        if (cpu->cpu_family == 0x17)
            return cpu->cpu_model >= 0x30 ? 4 : 3;
        if (cpu->cpu_family == 0x19)
            return cpu->cpu_model >= 0x10 ? 5 : 4;
        if (cpu->cpu_family > 0x19)
            return 5;
    }
    return 0;
}

const acc_gpu_model_t *topo_gpu_model_for_pcie_gen(int gen)
{
    if (gen >= 5)
        return generation_part(90, 0); /* Hopper */
    if (gen == 4)
        return generation_part(80, 0); /* Ampere */
    if (gen == 3)
        return generation_part(70, 0); /* Volta */
    return NULL;
}
