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
#define NVML_ERROR_INVALID_ARGUMENT   2
#define NVML_ERROR_NOT_SUPPORTED      3
#define NVML_ERROR_DRIVER_NOT_LOADED  9
#define NVML_FEATURE_ENABLED          1
#define NVML_NVLINK_CAP_P2P_SUPPORTED 0
#define NVML_NVLINK_DEVICE_TYPE_GPU   0
#define NVML_NVLINK_DEVICE_TYPE_NPU   1 /* IBM POWER9 NVLink port: the CPU */
#define VENDOR_NVIDIA                 0x10de
#define NVML_DEVICE_NAME_BUFFER_SIZE  96
#define NVLINK_SLOTS                  18 /* links probed per GPU, as NCCL: 18 from sm_90 on */

#define NO_GPU_HINT_TAIL                                                                           \
    "give its topology instead (in a job ACC_TOPO=SRC, to acc's programs --topo SRC): an NCCL "    \
    "topology dump (NCCL_TOPO_DUMP_FILE), hwloc XML from `lstopo --of xml`, `nvidia-smi topo -m` " \
    "output, or a shipped platform name (`acc-compile --list-platforms`)"
#define NO_GPU_HINT "to use acc for a machine without using its GPUs, " NO_GPU_HINT_TAIL

static struct {
    void *lib;
    char why[256];
    int too_old; /* the library is there but lacks an entry point */
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
    int pci_device;                /* PCI device id, 0 unknown */
    char remote[NVLINK_SLOTS][24]; /* bus id at the other end of each active link, "" unknown */
    int remote_type[NVLINK_SLOTS]; /* NVML_NVLINK_DEVICE_TYPE_*, -1 unknown */
    int nlinks;
    int unread; /* NVLinks NVML failed to read */
    char unread_why[128];
    char name[NVML_DEVICE_NAME_BUFFER_SIZE];
    int sm;
    uint64_t mem_bytes;
    int gen, width;
    int vertex; /* -1 until hwloc's conversion finds it */
} nvml_gpu_t;

struct topo_nvml {
    nvml_gpu_t *gpu;
    unsigned int ngpu;
    int links_unread; /* this NVML cannot tell what an NVLink leads to */
};

static int load_sym(void **slot, const char *sym, int required)
{
    *slot = dlsym(nv.lib, sym);
    if (!*slot && required) {
        if (!nv.too_old) /* name the first one missing */
            snprintf(nv.why, sizeof(nv.why), "its libnvidia-ml.so.1 lacks %s", sym);
        nv.too_old = 1;
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

/* A link NVML fails to read is left out, as NCCL leaves it out; the first failure is kept for
 * the assumption that says so. */
static void unread(nvml_gpu_t *g, const char *call, nvmlReturn_t r)
{
    if (!g->unread++)
        snprintf(g->unread_why, sizeof(g->unread_why), "%s: NVML error %d, %s", call, r,
                 nvml_text(r));
}

static void read_links(nvmlDevice_t dev, nvml_gpu_t *g)
{
    unsigned int l;
    for (l = 0; l < (unsigned)link_slots(g->sm); l++) {
        int state = 0, type = -1;
        unsigned int p2p = 0;
        nvmlPciInfo_t rp;
        nvmlReturn_t r;
        /* A GPU with fewer links than the slots probed answers the extra ones "not supported" or
         * "invalid argument": those links do not exist.  Other errors are failures. */
        if ((r = nv.link_state(dev, l, &state)) != NVML_SUCCESS) {
            if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_INVALID_ARGUMENT)
                unread(g, "nvmlDeviceGetNvLinkState", r);
            continue;
        }
        if (state != NVML_FEATURE_ENABLED)
            continue;
        if (nv.link_cap &&
            (nv.link_cap(dev, l, NVML_NVLINK_CAP_P2P_SUPPORTED, &p2p) != NVML_SUCCESS || !p2p))
            continue;
        /* A far end NVML fails to read is no evidence of an NVSwitch (only one it reads but
         * cannot name is, add_other_links): a GPU peer's own report of the link still counts. */
        memset(&rp, 0, sizeof(rp));
        if ((r = nv.link_remote(dev, l, &rp)) != NVML_SUCCESS) {
            unread(g, "nvmlDeviceGetNvLinkRemotePciInfo_v2", r);
            continue;
        }
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
    g->pci_device = (int)(pci.pciDeviceId >> 16);
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
    if (nv.link_state && nv.link_remote)
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
    if (!nv.lib && nv.too_old)
        return acc_error_set(ACC_ERR_NO_DEVICE,
                             "the NVIDIA driver of this machine is too old for acc (%s); "
                             "update it, or " NO_GPU_HINT_TAIL,
                             nv.why);
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
    n = acc_mem_calloc(1, sizeof(*n));
    if (!n || !(n->gpu = acc_mem_calloc(count, sizeof(*n->gpu)))) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for %u GPUs", count);
        goto out;
    }
    n->ngpu = count;
    n->links_unread = !nv.link_state || !nv.link_remote;
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
    acc_mem_free(n->gpu);
    acc_mem_free(n);
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

/* A GPU that NVML reports and hwloc does not see on the PCI bus: a container or VM that hides
 * the device from /sys, as sandboxed GPU runtimes can.  NCCL hangs a GPU it finds no sysfs path
 * for under a CPU of unknown NUMA node; the model has no such CPU, so the first one stands for
 * it, straight above the GPU, and the assumption says that its PCIe switches and locality are
 * unknown. */
static acc_status_t place_unseen(acc_topo_t *t, nvml_gpu_t *g)
{
    int cpu = acc_topo_find(t, ACC_VTX_CPU, 0), gen = g->gen, width = g->width;
    acc_topo_vertex_t *v;
    acc_status_t st;

    if (cpu < 0)
        return acc_error_set(ACC_ERR_TOPO, "NVML reports GPU %s (%s), and no CPU was found",
                             g->busid, g->name);
    if ((st = acc_topo_add_vertex(t, ACC_VTX_GPU, &g->vertex)) != ACC_OK)
        return st;
    v = acc_topo_vertex_mut(t, g->vertex);
    snprintf(v->busid, sizeof(v->busid), "%s", g->busid);
    snprintf(v->model, sizeof(v->model), "%.*s", (int)sizeof(v->model) - 1, g->name);
    v->numa = 0;
    v->vendor_id = VENDOR_NVIDIA;
    v->device_id = g->pci_device;
    v->sm = g->sm;
    v->mem_bytes = g->mem_bytes;
    if ((st = topo_fill_gpu_defaults(t, g->vertex)) != ACC_OK)
        return acc_error_prefix(st, "GPU %s: ", g->busid);
    if (!gen || !width) {
        gen = topo_default_pcie_gen(g->sm);
        width = 16;
        if ((st = acc_topo_assume(t, "%s %s: NVML gives no PCIe link speed: taken as Gen%d x16",
                                  v->name, g->busid, gen)) != ACC_OK)
            return st;
    }
    if ((st = topo_add_pcie(t, g->vertex, cpu, gen, width)) != ACC_OK)
        return st;
    return acc_topo_assume(t,
                           "%s %s (%s): NVML reports it but hwloc does not see it on the PCI "
                           "bus (hidden from this container or VM?): placed directly under CPU0, "
                           "without the PCIe switches above it",
                           v->name, g->busid, g->name);
}

/* NVLinks GPU a reports to GPU b. */
static int links_to(const nvml_gpu_t *a, const nvml_gpu_t *b)
{
    int l, count = 0;
    for (l = 0; l < a->nlinks; l++)
        count += strcmp(a->remote[l], b->busid) == 0;
    return count;
}

/* Each GPU pair's NVLinks are what either end reports, the larger count where they differ: an
 * end may fail to read a link (read_links), and the two ends of one cable are one link. */
static acc_status_t add_pair_links(topo_nvml_t *n, acc_topo_t *t)
{
    unsigned int i, j;
    acc_status_t st;

    for (i = 0; i < n->ngpu; i++) {
        for (j = i + 1; j < n->ngpu; j++) {
            nvml_gpu_t *a = &n->gpu[i], *b = &n->gpu[j];
            int ab = links_to(a, b), ba = links_to(b, a);
            if (ab != ba &&
                (st = acc_topo_assume(
                     t, "%s and %s report %d and %d NVLinks between them: %d taken",
                     acc_topo_vertex(t, a->vertex)->name, acc_topo_vertex(t, b->vertex)->name, ab,
                     ba, ab > ba ? ab : ba)) != ACC_OK)
                return st;
            if ((ab || ba) &&
                (st = topo_add_nvlinks(t, a->vertex, b->vertex, ab > ba ? ab : ba)) != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}

/* The links of g that do not lead to a GPU NVML sees: to the CPU of a POWER9, to a GPU hidden
 * from this process (left out), or into the NVSwitch fabric. */
static acc_status_t add_other_links(topo_nvml_t *n, acc_topo_t *t, nvml_gpu_t *g)
{
    char name[ACC_TOPO_NAME_MAX];
    int l, to, numa = acc_topo_vertex(t, g->vertex)->numa;
    acc_status_t st;

    snprintf(name, sizeof(name), "%s", acc_topo_vertex(t, g->vertex)->name);
    for (l = 0; l < g->nlinks; l++) {
        /* As NCCL: a peer that is not a GPU, or that NVML names with no valid bus id (a VM's
         * NVSwitch), is the NVSwitch fabric. */
        if (by_busid(n, g->remote[l]))
            continue; /* a GPU pair: add_pair_links */
        if (g->remote_type[l] == NVML_NVLINK_DEVICE_TYPE_NPU) {
            to = acc_topo_find(t, ACC_VTX_CPU, numa >= 0 ? numa : 0);
        } else if (g->remote_type[l] == NVML_NVLINK_DEVICE_TYPE_GPU) {
            ACC_INFO(TOPO,
                     "%s: NVLink %d leads to GPU %s, which this process cannot see: "
                     "not modelled",
                     name, l, g->remote[l]);
            continue;
        } else if ((st = topo_nvswitch(t, &to)) != ACC_OK) {
            return st;
        }
        if (to >= 0 && (st = topo_add_nvlinks(t, g->vertex, to, 1)) != ACC_OK)
            return st;
    }
    if (g->unread)
        return acc_topo_assume(t,
                               "%s %s: %d NVLink%s NVML fails to read (%s): left out unless a "
                               "GPU at the other end reports %s",
                               name, g->busid, g->unread, g->unread > 1 ? "s" : "", g->unread_why,
                               g->unread > 1 ? "them" : "it");
    return ACC_OK;
}

acc_status_t topo_nvml_add_links(topo_nvml_t *n, acc_topo_t *t)
{
    unsigned int i;
    int probed = 0;
    acc_status_t st;

    for (i = 0; i < n->ngpu; i++) {
        nvml_gpu_t *g = &n->gpu[i];
        if (g->vertex < 0)
            st = place_unseen(t, g);
        else if ((g->vertex = acc_topo_find_busid(t, g->busid)) < 0)
            st = acc_error_set(ACC_ERR_TOPO,
                               "NVML's GPU %s (%s) was found on the PCI bus but "
                               "became no vertex",
                               g->busid, g->name);
        else
            st = ACC_OK;
        if (st != ACC_OK)
            return st;
        probed |= link_slots(g->sm) > 0;
    }
    if (n->links_unread && probed)
        return acc_topo_assume(t, "NVLinks not read: this driver's NVML lacks "
                                  "nvmlDeviceGetNvLinkState or "
                                  "nvmlDeviceGetNvLinkRemotePciInfo_v2; GPUs modelled without "
                                  "NVLinks");
    if ((st = add_pair_links(n, t)) != ACC_OK)
        return st;
    for (i = 0; i < n->ngpu; i++)
        if ((st = add_other_links(n, t, &n->gpu[i])) != ACC_OK)
            return st;
    return ACC_OK;
}
