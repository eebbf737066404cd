/*
 * A fake NVML for the tests of live discovery (tests/topo/test_live_fake.c): built as
 * libnvidia-ml.so.1 in a directory of its own and found by acc's dlopen() through
 * LD_LIBRARY_PATH, so that topo/topo_nvml.c runs unchanged against machines this one is not.
 *
 * It exports the entry points topo_nvml.c looks up, with nvml.h's signatures and return codes
 * (reference/04-topology.md §3), and answers from a description of a machine read at
 * nvmlInit_v2 from the files named in FAKE_NVML_MACHINE (colon-separated, read in order, so
 * that a test adds a failure to a shipped machine with a second file).  Lines:
 *
 *   gpu BUSID DEVICE_ID MAJOR.MINOR MEMORY_MIB PCIE_GEN PCIE_WIDTH NAME...
 *   nvlink GPUS COUNT gpu PEER      COUNT links from each of GPUS (an index or a range a-b) to GPU
 *   nvlink GPUS COUNT switch BUSID  ... to an NVSwitch chip, or "npu BUSID" to a POWER9 CPU
 *   nvlink GPUS COUNT down          ... inactive links
 *   visible GPUS                    only these GPUs are seen (a container's), renumbered from 0
 *   fail FUNCTION CODE [GPU [LINK]] the call answers CODE (for that GPU and link only)
 *
 * Links take the next free link numbers of their GPU, from 0.  What the real library would
 * refuse is refused the same way and counted as misuse (a call before nvmlInit_v2 or after the
 * last nvmlShutdown, a handle it did not give out, a NULL result pointer), which the tests read
 * through fake_nvml_counters().  Test code, so it reads the environment and prints the reason a
 * description is refused on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- nvml.h's ABI ----------------------------------------------------------------------- */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device;
    unsigned int pciDeviceId; /* device id << 16 | vendor id */
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

#define NVML_SUCCESS                   0
#define NVML_ERROR_UNINITIALIZED       1
#define NVML_ERROR_INVALID_ARGUMENT    2
#define NVML_ERROR_NOT_SUPPORTED       3
#define NVML_ERROR_INSUFFICIENT_SIZE   7
#define NVML_ERROR_UNKNOWN             999
#define NVML_FEATURE_DISABLED          0
#define NVML_FEATURE_ENABLED           1
#define NVML_NVLINK_DEVICE_TYPE_GPU    0
#define NVML_NVLINK_DEVICE_TYPE_NPU    1
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2
#define NVML_NVLINK_MAX_LINKS          18 /* NVML 12.3 to 13.2 */
#define NVML_NVLINK_CAP_COUNT          6  /* P2P_SUPPORTED .. VALID */
#define VENDOR_NVIDIA                  0x10de

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
#ifdef FAKE_NVML_PRE_V3
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
#else
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
#endif
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *width);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, int capability,
                                           unsigned int *capResult);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int *type);
/* Not NVML: what the tests read back. */
void fake_nvml_counters(int *refs, int *inits, int *misuses);

/* ---- the machine ------------------------------------------------------------------------ */
#define MAX_GPUS  64
#define MAX_FAILS 32

typedef struct {
    int state, type; /* NVML_FEATURE_*, NVML_NVLINK_DEVICE_TYPE_* */
    int peer;        /* GPU index (in the description) of a GPU peer, else -1 */
    unsigned domain, bus, dev;
} fake_link_t;

struct nvmlDevice_st {
    int index; /* in the description */
    unsigned domain, bus, dev, device_id;
    int major, minor;
    unsigned long long mem_mib;
    unsigned gen, width;
    char name[96];
    fake_link_t link[NVML_NVLINK_MAX_LINKS];
    int nlinks;
};

typedef struct {
    char fn[64];
    nvmlReturn_t code;
    int gpu, link; /* -1: any */
} fake_fail_t;

static struct {
    struct nvmlDevice_st gpu[MAX_GPUS]; /* as described */
    int ngpu;
    int shown[MAX_GPUS]; /* NVML index -> description index */
    int nshown;
    fake_fail_t fail[MAX_FAILS];
    int nfail;
    int refs, inits, misuse;
} m;

static int parse_busid(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
    unsigned fn;
    char tail;
    return sscanf(s, "%x:%x:%x.%x%c", domain, bus, dev, &fn, &tail) == 4 && *bus <= 0xff &&
           *dev <= 0x1f && fn == 0;
}

static int parse_range(const char *s, int n, int *lo, int *hi)
{
    char tail;
    if (sscanf(s, "%d-%d%c", lo, hi, &tail) != 2) {
        if (sscanf(s, "%d%c", lo, &tail) != 1)
            return 0;
        *hi = *lo;
    }
    return *lo >= 0 && *lo <= *hi && *hi < n;
}

static int bad(const char *file, int line, const char *what)
{
    fprintf(stderr, "fake NVML: %s:%d: %s\n", file, line, what);
    return 0;
}

static int parse_gpu(const char *rest, const char *file, int line)
{
    struct nvmlDevice_st *g = &m.gpu[m.ngpu];
    char busid[32];
    int used = 0;

    if (m.ngpu == MAX_GPUS)
        return bad(file, line, "too many GPUs");
    memset(g, 0, sizeof(*g));
    if (sscanf(rest, "%31s %x %d.%d %llu %u %u %n", busid, &g->device_id, &g->major, &g->minor,
               &g->mem_mib, &g->gen, &g->width, &used) != 7 ||
        !rest[used] || !parse_busid(busid, &g->domain, &g->bus, &g->dev))
        return bad(file, line,
                   "expected: gpu BUSID DEVICE_ID MAJOR.MINOR MEMORY_MIB PCIE_GEN "
                   "PCIE_WIDTH NAME");
    snprintf(g->name, sizeof(g->name), "%s", rest + used);
    g->name[strcspn(g->name, "\r\n")] = '\0';
    g->index = m.ngpu++;
    return 1;
}

static int parse_nvlink(const char *rest, const char *file, int line)
{
    char gpus[32], kind[16], target[32] = "";
    int lo, hi, count, i, k;
    fake_link_t l = {NVML_FEATURE_ENABLED, NVML_NVLINK_DEVICE_TYPE_SWITCH, -1, 0, 0, 0};

    if (sscanf(rest, "%31s %d %15s %31s", gpus, &count, kind, target) < 3 ||
        !parse_range(gpus, m.ngpu, &lo, &hi) || count < 1)
        return bad(file, line,
                   "expected: nvlink GPUS COUNT (gpu PEER | switch BUSID | npu "
                   "BUSID | down), GPUS declared before");
    if (strcmp(kind, "gpu") == 0) {
        if (!parse_range(target, m.ngpu, &l.peer, &k) || k != l.peer)
            return bad(file, line, "nvlink ... gpu PEER: PEER must be a GPU declared before");
        l.type = NVML_NVLINK_DEVICE_TYPE_GPU;
    } else if (strcmp(kind, "switch") == 0 || strcmp(kind, "npu") == 0) {
        if (!parse_busid(target, &l.domain, &l.bus, &l.dev))
            return bad(file, line, "nvlink ... switch|npu BUSID: a bus id dddd:bb:dd.0");
        if (kind[0] == 'n')
            l.type = NVML_NVLINK_DEVICE_TYPE_NPU;
    } else if (strcmp(kind, "down") == 0) {
        l.state = NVML_FEATURE_DISABLED;
    } else {
        return bad(file, line, "nvlink kinds are gpu, switch, npu and down");
    }
    for (i = lo; i <= hi; i++) {
        struct nvmlDevice_st *g = &m.gpu[i];
        if (g->nlinks + count > NVML_NVLINK_MAX_LINKS)
            return bad(file, line, "more than 18 NVLinks on one GPU");
        for (k = 0; k < count; k++)
            g->link[g->nlinks++] = l;
    }
    return 1;
}

static int parse_fail(const char *rest, const char *file, int line)
{
    fake_fail_t *f = &m.fail[m.nfail];
    int n;

    if (m.nfail == MAX_FAILS)
        return bad(file, line, "too many failures");
    f->gpu = f->link = -1;
    n = sscanf(rest, "%63s %d %d %d", f->fn, &f->code, &f->gpu, &f->link);
    if (n < 2 || f->code == NVML_SUCCESS)
        return bad(file, line, "expected: fail FUNCTION CODE [GPU [LINK]], CODE not 0");
    m.nfail++;
    return 1;
}

static int parse_visible(const char *rest, const char *file, int line)
{
    char gpus[32];
    int lo, hi;
    if (sscanf(rest, "%31s", gpus) != 1 || !parse_range(gpus, m.ngpu, &lo, &hi))
        return bad(file, line, "expected: visible GPUS (declared before)");
    for (m.nshown = 0; lo <= hi; lo++)
        m.shown[m.nshown++] = lo;
    return 1;
}

static int read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[512], word[16];
    int line = 0, ok = 1, used;

    if (!f) {
        fprintf(stderr, "fake NVML: cannot open %s\n", path);
        return 0;
    }
    while (ok && fgets(buf, sizeof(buf), f)) {
        line++;
        used = 0;
        if (sscanf(buf, " %15s %n", word, &used) != 1 || word[0] == '#')
            continue;
        if (strcmp(word, "gpu") == 0)
            ok = parse_gpu(buf + used, path, line);
        else if (strcmp(word, "nvlink") == 0)
            ok = parse_nvlink(buf + used, path, line);
        else if (strcmp(word, "fail") == 0)
            ok = parse_fail(buf + used, path, line);
        else if (strcmp(word, "visible") == 0)
            ok = parse_visible(buf + used, path, line);
        else
            ok = bad(path, line, "lines start with gpu, nvlink, visible, fail or #");
    }
    fclose(f);
    return ok;
}

static int load_machine(void)
{
    const char *env = getenv("FAKE_NVML_MACHINE");
    char list[4096], *save = NULL, *path;
    int i;

    memset(&m.gpu, 0, sizeof(m.gpu));
    m.ngpu = m.nshown = m.nfail = 0;
    if (!env || snprintf(list, sizeof(list), "%s", env) >= (int)sizeof(list)) {
        fprintf(stderr, "fake NVML: FAKE_NVML_MACHINE names no machine description\n");
        return 0;
    }
    for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save))
        if (!read_file(path))
            return 0;
    if (!m.nshown)
        for (i = 0; i < m.ngpu; i++)
            m.shown[m.nshown++] = i;
    return 1;
}

/* ---- what every entry point checks ------------------------------------------------------ */

/* A call the real library refuses, and that acc must therefore never make. */
static nvmlReturn_t misuse(nvmlReturn_t r)
{
    m.misuse++;
    return r;
}

static struct nvmlDevice_st *device(nvmlDevice_t d)
{
    int i;
    for (i = 0; i < m.nshown; i++)
        if (d == &m.gpu[m.shown[i]])
            return d;
    return NULL;
}

static nvmlReturn_t injected(const char *fn, const struct nvmlDevice_st *g, int link)
{
    int i;
    for (i = 0; i < m.nfail; i++) {
        const fake_fail_t *f = &m.fail[i];
        if (strcmp(f->fn, fn) == 0 && (f->gpu < 0 || (g && f->gpu == g->index)) &&
            (f->link < 0 || f->link == link))
            return f->code;
    }
    return NVML_SUCCESS;
}

/* The checks of a device query: initialised, a handle of ours, somewhere to write. */
static nvmlReturn_t enter(const char *fn, nvmlDevice_t d, int link, const void *out)
{
    if (m.refs == 0)
        return misuse(NVML_ERROR_UNINITIALIZED);
    if (!device(d) || !out)
        return misuse(NVML_ERROR_INVALID_ARGUMENT);
    return injected(fn, d, link);
}

/* A link query: the link must exist on the GPU, and be up for anything but its state. */
static nvmlReturn_t enter_link(const char *fn, nvmlDevice_t d, unsigned link, const void *out,
                               int need_up)
{
    nvmlReturn_t r = enter(fn, d, (int)link, out);
    if (r != NVML_SUCCESS)
        return r;
    if (d->nlinks == 0)
        return NVML_ERROR_NOT_SUPPORTED; /* a GPU without NVLink */
    if (link >= NVML_NVLINK_MAX_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (need_up && ((int)link >= d->nlinks || d->link[link].state != NVML_FEATURE_ENABLED))
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static void fill_pci(nvmlPciInfo_t *p, unsigned domain, unsigned bus, unsigned dev,
                     unsigned device_id)
{
    memset(p, 0, sizeof(*p));
    p->domain = domain;
    p->bus = bus;
    p->device = dev;
    p->pciDeviceId = device_id << 16 | VENDOR_NVIDIA;
    snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.0", domain & 0xffff, bus, dev);
    /* nvml.h's format: an eight-digit domain, upper case. */
    snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.0", domain, bus, dev);
}

/* ---- the entry points ------------------------------------------------------------------- */

nvmlReturn_t nvmlInit_v2(void)
{
    nvmlReturn_t r;
    if (m.refs == 0) {
        if (!load_machine())
            return NVML_ERROR_UNKNOWN;
        if ((r = injected("nvmlInit_v2", NULL, -1)) != NVML_SUCCESS)
            return r;
    }
    m.refs++;
    m.inits++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (m.refs == 0)
        return misuse(NVML_ERROR_UNINITIALIZED);
    m.refs--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    static const struct {
        nvmlReturn_t code;
        const char *text;
    } texts[] = {
        {0, "Success"},
        {1, "Uninitialized"},
        {2, "Invalid Argument"},
        {3, "Not Supported"},
        {4, "Insufficient Permissions"},
        {6, "Not Found"},
        {7, "Insufficient Size"},
        {9, "Driver Not Loaded"},
        {10, "Timeout"},
        {15, "GPU is lost"},
        {999, "Unknown Error"},
    };
    size_t i;
    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (texts[i].code == result)
            return texts[i].text;
    return "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (m.refs == 0)
        return misuse(NVML_ERROR_UNINITIALIZED);
    if (!count)
        return misuse(NVML_ERROR_INVALID_ARGUMENT);
    *count = (unsigned)m.nshown;
    return injected("nvmlDeviceGetCount_v2", NULL, -1);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t r;
    if (m.refs == 0)
        return misuse(NVML_ERROR_UNINITIALIZED);
    if (!device || index >= (unsigned)m.nshown)
        return misuse(NVML_ERROR_INVALID_ARGUMENT);
    if ((r = injected("nvmlDeviceGetHandleByIndex_v2", &m.gpu[m.shown[index]], -1)) != NVML_SUCCESS)
        return r;
    *device = &m.gpu[m.shown[index]];
    return NVML_SUCCESS;
}

#ifdef FAKE_NVML_PRE_V3
/* Drivers before the _v3 entry point exported this one as their newest. */
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    nvmlReturn_t r = enter("nvmlDeviceGetPciInfo_v2", device, -1, pci);
#else
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    nvmlReturn_t r = enter("nvmlDeviceGetPciInfo_v3", device, -1, pci);
#endif
    if (r == NVML_SUCCESS)
        fill_pci(pci, device->domain, device->bus, device->dev, device->device_id);
    return r;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    nvmlReturn_t r = enter("nvmlDeviceGetName", device, -1, name);
    if (r != NVML_SUCCESS)
        return r;
    if (strlen(device->name) >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(name, device->name, strlen(device->name) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    nvmlReturn_t r = enter("nvmlDeviceGetCudaComputeCapability", device, -1, major);
    if (r != NVML_SUCCESS)
        return r;
    if (!minor)
        return misuse(NVML_ERROR_INVALID_ARGUMENT);
    *major = device->major;
    *minor = device->minor;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    nvmlReturn_t r = enter("nvmlDeviceGetMemoryInfo", device, -1, memory);
    if (r != NVML_SUCCESS)
        return r;
    memory->total = device->mem_mib << 20;
    memory->used = 1ull << 20; /* the driver's own reservation on an idle GPU */
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen)
{
    nvmlReturn_t r = enter("nvmlDeviceGetMaxPcieLinkGeneration", device, -1, gen);
    if (r == NVML_SUCCESS)
        *gen = device->gen;
    return r;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *width)
{
    nvmlReturn_t r = enter("nvmlDeviceGetMaxPcieLinkWidth", device, -1, width);
    if (r == NVML_SUCCESS)
        *width = device->width;
    return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive)
{
    nvmlReturn_t r = enter_link("nvmlDeviceGetNvLinkState", device, link, isActive, 0);
    if (r == NVML_SUCCESS)
        *isActive = (int)link < device->nlinks ? device->link[link].state : NVML_FEATURE_DISABLED;
    return r;
}

nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, int capability,
                                           unsigned int *capResult)
{
    nvmlReturn_t r = enter_link("nvmlDeviceGetNvLinkCapability", device, link, capResult, 1);
    if (r != NVML_SUCCESS)
        return r;
    if (capability < 0 || capability >= NVML_NVLINK_CAP_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    *capResult = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    nvmlReturn_t r = enter_link("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, link, pci, 1);
    const fake_link_t *l;
    if (r != NVML_SUCCESS)
        return r;
    l = &device->link[link];
    if (l->peer >= 0) {
        const struct nvmlDevice_st *p = &m.gpu[l->peer];
        fill_pci(pci, p->domain, p->bus, p->dev, p->device_id);
    } else {
        fill_pci(pci, l->domain, l->bus, l->dev, 0);
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int *type)
{
    nvmlReturn_t r = enter_link("nvmlDeviceGetNvLinkRemoteDeviceType", device, link, type, 1);
    if (r == NVML_SUCCESS)
        *type = device->link[link].type;
    return r;
}

void fake_nvml_counters(int *refs, int *inits, int *misuses)
{
    *refs = m.refs;
    *inits = m.inits;
    *misuses = m.misuse;
}
