/*
 * NVML through dlopen, for live discovery: what only the driver knows of each GPU (compute
 * capability, memory, the PCIe link it can run at) and its NVLinks.
 *
 * Nothing of NVML is needed at build time.  The few types and entry points used are declared
 * here with nvml.h's ABI (reference/04-topology.md §3), looked up with dlsym in the versioned
 * library the driver installs, as NCCL does.  The library stays loaded for the life of the
 * process: unloading NVML while a driver thread it started may still run is not safe, and NCCL
 * never unloads it either, and the first attempt to load it decides for the whole process.
 * Calls are serialised, because NVML has had thread-safety bugs.
 */
#include "topo_hwloc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* ---- the part of nvml.h that is used ---------------------------------------------------- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device;
    unsigned int pciDeviceId, pciSubSystemId;
    char busId[32]; /* "00000000:18:00.0" */
} nvmlPciInfo_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

#define NVML_SUCCESS                  0
#define NVML_ERROR_DRIVER_NOT_LOADED  9
#define NVML_FEATURE_ENABLED          1
#define NVML_NVLINK_CAP_P2P_SUPPORTED 0
#define NVML_NVLINK_DEVICE_TYPE_GPU   0
#define NVML_NVLINK_DEVICE_TYPE_NPU   1 /* IBM POWER9 NVLink port: the CPU */
#define NVML_DEVICE_NAME_BUFFER_SIZE  96
#define NVLINK_SLOTS                  18 /* links probed per GPU, as NCCL: 18 from sm_90 on */

#define NO_GPU_HINT                                                                                \
    "to compile for a machine without using its GPUs, give its topology instead: --topo with an "  \
    "NCCL topology dump (NCCL_TOPO_DUMP_FILE), hwloc XML from `lstopo --of xml`, `nvidia-smi "     \
    "topo -m` output, or a shipped platform name (`acc-compile --list-platforms`)"

static struct {
    void *lib;
    char why[256];
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*cc)(nvmlDevice_t, int *, int *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*max_gen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*max_width)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*link_cap)(nvmlDevice_t, unsigned int, int, unsigned int *);
    nvmlReturn_t (*link_remote)(nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
    nvmlReturn_t (*link_remote_type)(nvmlDevice_t, unsigned int, int *);
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- what is kept of each GPU ----------------------------------------------------------- */
typedef struct {
    char busid[24];
    char remote[NVLINK_SLOTS][24]; /* bus id at the other end of each active link, "" unknown */
    int remote_type[NVLINK_SLOTS]; /* NVML_NVLINK_DEVICE_TYPE_*, -1 unknown */
    int nlinks;
    char name[NVML_DEVICE_NAME_BUFFER_SIZE];
    int sm;
    uint64_t mem_bytes;
    int gen, width;
    int vertex; /* -1 until hwloc's conversion finds it */
} nvml_gpu_t;

struct topo_nvml {
    nvml_gpu_t *gpu;
    unsigned int ngpu;
};

static int load_sym(void **slot, const char *sym, int required)
{
    *slot = dlsym(nv.lib, sym);
    if (!*slot && required) {
        snprintf(nv.why, sizeof(nv.why), "libnvidia-ml.so.1 lacks %s: driver too old", sym);
        return 0;
    }
    return 1;
}

static void load_library(void)
{
    int ok = 1;
    const char *e;

    nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        e = dlerror();
        snprintf(nv.why, sizeof(nv.why), "%s", e ? e : "libnvidia-ml.so.1 cannot be loaded");
        return;
    }
    /* The suffixed names are the current ABI; nvml.h maps the plain names onto them. */
    ok &= load_sym((void **)&nv.init, "nvmlInit_v2", 1);
    ok &= load_sym((void **)&nv.shutdown, "nvmlShutdown", 1);
    ok &= load_sym((void **)&nv.error_string, "nvmlErrorString", 1);
    ok &= load_sym((void **)&nv.count, "nvmlDeviceGetCount_v2", 1);
    ok &= load_sym((void **)&nv.handle, "nvmlDeviceGetHandleByIndex_v2", 1);
    ok &= load_sym((void **)&nv.pci, "nvmlDeviceGetPciInfo_v3", 1);
    ok &= load_sym((void **)&nv.name, "nvmlDeviceGetName", 1);
    ok &= load_sym((void **)&nv.cc, "nvmlDeviceGetCudaComputeCapability", 1);
    ok &= load_sym((void **)&nv.memory, "nvmlDeviceGetMemoryInfo", 1);
    load_sym((void **)&nv.max_gen, "nvmlDeviceGetMaxPcieLinkGeneration", 0);
    load_sym((void **)&nv.max_width, "nvmlDeviceGetMaxPcieLinkWidth", 0);
    load_sym((void **)&nv.link_state, "nvmlDeviceGetNvLinkState", 0);
    load_sym((void **)&nv.link_cap, "nvmlDeviceGetNvLinkCapability", 0);
    load_sym((void **)&nv.link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2", 0);
    load_sym((void **)&nv.link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType", 0);
    if (!ok) {
        dlclose(nv.lib); /* nothing of it ran yet */
        nv.lib = NULL;
    }
}

static const char *nvml_text(nvmlReturn_t r)
{
    const char *s = nv.error_string ? nv.error_string(r) : NULL;
    return s ? s : "unknown error";
}

static acc_status_t nvml_fail(const char *call, int gpu, nvmlReturn_t r)
{
    if (gpu < 0)
        return acc_error_set(ACC_ERR_NVML, "%s failed: NVML error %d (%s)", call, r, nvml_text(r));
    return acc_error_set(ACC_ERR_NVML, "%s for GPU %d failed: NVML error %d (%s)", call, gpu, r,
                         nvml_text(r));
}

static void pci_busid(const nvmlPciInfo_t *p, char out[24])
{
    char tmp[33];
    memcpy(tmp, p->busId, sizeof(p->busId));
    tmp[32] = '\0';
    if (!topo_busid_normalize(tmp, out))
        out[0] = '\0'; /* a remote NVML cannot see (a VM's NVSwitch) */
}

/* Links probed for a GPU generation (NCCL's bounds): Pascal 4, Volta 6, Ampere 12, later 18. */
static int link_slots(int sm)
{
    return sm < 60 ? 0 : sm < 70 ? 4 : sm < 80 ? 6 : sm < 90 ? 12 : NVLINK_SLOTS;
}

static void read_links(nvmlDevice_t dev, nvml_gpu_t *g)
{
    unsigned int l;
    if (!nv.link_state)
        return;
    for (l = 0; l < (unsigned)link_slots(g->sm); l++) {
        int state = 0, type = -1;
        unsigned int p2p = 0;
        nvmlPciInfo_t rp;
        /* An unreadable link is an absent one, as for NCCL: a GPU with fewer links than the
         * slots probed answers the extra ones with an error. */
        if (nv.link_state(dev, l, &state) != NVML_SUCCESS || state != NVML_FEATURE_ENABLED)
            continue;
        if (nv.link_cap &&
            (nv.link_cap(dev, l, NVML_NVLINK_CAP_P2P_SUPPORTED, &p2p) != NVML_SUCCESS || !p2p))
            continue;
        memset(&rp, 0, sizeof(rp));
        if (nv.link_remote && nv.link_remote(dev, l, &rp) == NVML_SUCCESS)
            pci_busid(&rp, g->remote[g->nlinks]);
        if (nv.link_remote_type && nv.link_remote_type(dev, l, &type) != NVML_SUCCESS)
            type = -1;
        g->remote_type[g->nlinks++] = type;
    }
}

static acc_status_t read_gpu(unsigned int i, nvml_gpu_t *g)
{
    nvmlDevice_t dev;
    nvmlPciInfo_t pci;
    nvmlMemory_t mem;
    unsigned int gen = 0, width = 0;
    int major = 0, minor = 0;
    nvmlReturn_t r;

    g->vertex = -1;
    if ((r = nv.handle(i, &dev)) != NVML_SUCCESS)
        return nvml_fail("nvmlDeviceGetHandleByIndex_v2", (int)i, r);
    if ((r = nv.pci(dev, &pci)) != NVML_SUCCESS)
        return nvml_fail("nvmlDeviceGetPciInfo_v3", (int)i, r);
    pci_busid(&pci, g->busid);
    if (!g->busid[0])
        snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.0", pci.domain & 0xffff,
                 pci.bus & 0xff, pci.device & 0x1f);
    if ((r = nv.name(dev, g->name, sizeof(g->name))) != NVML_SUCCESS)
        return nvml_fail("nvmlDeviceGetName", (int)i, r);
    if ((r = nv.cc(dev, &major, &minor)) != NVML_SUCCESS)
        return nvml_fail("nvmlDeviceGetCudaComputeCapability", (int)i, r);
    g->sm = major * 10 + minor;
    if ((r = nv.memory(dev, &mem)) != NVML_SUCCESS)
        return nvml_fail("nvmlDeviceGetMemoryInfo", (int)i, r);
    g->mem_bytes = mem.total;
    /* The link the GPU can run at: an idle GPU lowers its current link speed (hwloc#653). */
    if (nv.max_gen && nv.max_width && nv.max_gen(dev, &gen) == NVML_SUCCESS &&
        nv.max_width(dev, &width) == NVML_SUCCESS && gen <= 6 && width <= 32) {
        g->gen = (int)gen;
        g->width = (int)width;
    }
    read_links(dev, g);
    return ACC_OK;
}

acc_status_t topo_nvml_open(topo_nvml_t **out)
{
    topo_nvml_t *n = NULL;
    unsigned int count = 0, i;
    acc_status_t st = ACC_OK;
    nvmlReturn_t r;

    *out = NULL;
    pthread_once(&nv_once, load_library);
    if (!nv.lib)
        return acc_error_set(ACC_ERR_NO_DEVICE,
                             "no NVIDIA driver found on this machine (%s); " NO_GPU_HINT, nv.why);
    pthread_mutex_lock(&nv_lock);
    if ((r = nv.init()) != NVML_SUCCESS) {
        if (r == NVML_ERROR_DRIVER_NOT_LOADED)
            st = acc_error_set(ACC_ERR_NO_DEVICE,
                               "the NVIDIA driver is not loaded (nvmlInit_v2: "
                               "NVML error %d, %s); " NO_GPU_HINT,
                               r, nvml_text(r));
        else
            st = nvml_fail("nvmlInit_v2", -1, r);
        pthread_mutex_unlock(&nv_lock);
        return st;
    }
    if ((r = nv.count(&count)) != NVML_SUCCESS) {
        st = nvml_fail("nvmlDeviceGetCount_v2", -1, r);
        goto out;
    }
    if (count == 0) {
        st = acc_error_set(ACC_ERR_NO_DEVICE, "the NVIDIA driver sees no GPU; " NO_GPU_HINT);
        goto out;
    }
    n = acc_calloc(1, sizeof(*n));
    if (!n || !(n->gpu = acc_calloc(count, sizeof(*n->gpu)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u GPUs", count);
        goto out;
    }
    n->ngpu = count;
    for (i = 0; i < count && st == ACC_OK; i++)
        st = read_gpu(i, &n->gpu[i]);
out:
    nv.shutdown();
    pthread_mutex_unlock(&nv_lock);
    if (st != ACC_OK) {
        topo_nvml_close(n);
        return st;
    }
    *out = n;
    return ACC_OK;
}

void topo_nvml_close(topo_nvml_t *n)
{
    if (!n)
        return;
    acc_free(n->gpu);
    acc_free(n);
}

static nvml_gpu_t *by_busid(topo_nvml_t *n, const char *busid)
{
    unsigned int i;
    for (i = 0; i < n->ngpu; i++)
        if (busid[0] && strcmp(n->gpu[i].busid, busid) == 0)
            return &n->gpu[i];
    return NULL;
}

int topo_nvml_gpu_facts(void *ctx, acc_topo_vertex_t *gpu, int *gen, int *width)
{
    nvml_gpu_t *g = by_busid(ctx, gpu->busid);
    if (!g)
        return 0;
    snprintf(gpu->model, sizeof(gpu->model), "%.*s", (int)sizeof(gpu->model) - 1, g->name);
    gpu->sm = g->sm;
    gpu->mem_bytes = g->mem_bytes;
    if (g->gen > 0 && g->width > 0) {
        *gen = g->gen;
        *width = g->width;
    }
    g->vertex = 0; /* seen; the index is looked up once the vertex exists */
    return 1;
}

/* The vertex at the far end of link l of GPU g, or -1 when the link is counted elsewhere or
 * leads out of the model. */
static acc_status_t link_target(topo_nvml_t *n, acc_topo_t *t, unsigned int gi, int l, int *out)
{
    nvml_gpu_t *g = &n->gpu[gi], *peer = by_busid(n, g->remote[l]);
    const acc_topo_vertex_t *v = acc_topo_vertex(t, g->vertex);

    *out = -1;
    if (g->remote_type[l] == NVML_NVLINK_DEVICE_TYPE_NPU) {
        *out = acc_topo_find(t, ACC_VTX_CPU, v->numa >= 0 ? v->numa : 0);
        return ACC_OK;
    }
    if (peer) {
        /* Each GPU pair is counted from its lower-numbered GPU. */
        if (peer > g)
            *out = peer->vertex;
        return ACC_OK;
    }
    if (g->remote_type[l] == NVML_NVLINK_DEVICE_TYPE_GPU) {
        ACC_INFO(TOPO,
                 "%s: NVLink %d leads to GPU %s, which this process cannot see: not "
                 "modelled",
                 v->name, l, g->remote[l]);
        return ACC_OK;
    }
    /* As NCCL: a peer that is not a GPU, or that NVML cannot name, is the NVSwitch fabric. */
    return topo_nvswitch(t, out);
}

acc_status_t topo_nvml_add_links(topo_nvml_t *n, acc_topo_t *t)
{
    unsigned int i;
    int l;
    acc_status_t st;

    for (i = 0; i < n->ngpu; i++) {
        nvml_gpu_t *g = &n->gpu[i];
        if (g->vertex < 0 || (g->vertex = acc_topo_find_busid(t, g->busid)) < 0)
            return acc_error_set(ACC_ERR_TOPO,
                                 "NVML reports GPU %s (%s), which hwloc did not "
                                 "find on the PCI bus",
                                 g->busid, g->name);
    }
    for (i = 0; i < n->ngpu; i++) {
        for (l = 0; l < n->gpu[i].nlinks; l++) {
            int to;
            if ((st = link_target(n, t, i, l, &to)) != ACC_OK)
                return st;
            if (to >= 0 && (st = topo_add_nvlinks(t, n->gpu[i].vertex, to, 1)) != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}
