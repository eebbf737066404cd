/*
 * NCCL topology XML import: the files NCCL writes with NCCL_TOPO_DUMP_FILE and reads with
 * NCCL_TOPO_FILE (schema: reference/02-nccl.md §1), full dumps and partial PCI trees alike.
 *
 * The file is a tree.  <system version="1"> holds one <cpu> per NUMA node; a <cpu> holds <pci>
 * elements, where bridges and switches nest and GPUs and NICs are leaves, and possibly bare
 * <nic> elements that NCCL could not place on PCI.  A GPU's <pci> holds a <gpu> with its
 * <nvlink> and <c2c> children; a NIC's <pci> holds <nic><net .../></nic>.
 *
 * We read it in two passes.  The walk turns the tree into a flat table of devices and link
 * records and checks every attribute acc uses.  The build then creates vertices in id order (CPUs
 * by numaid, GPUs by <gpu dev>, NICs by <net dev>), then PCIe links, NVLinks and C2C links: nvlink
 * targets may name devices later in the file, and PCIe and NIC defaults depend on the GPU
 * generation, known only once every GPU is read.
 *
 * Where NCCL's reading is specific (src/graph/topo.cc, ncclTopoAddCpu/Pci/Nic/Net/NvLinks/C2c,
 * 2.28), we read the same way, so that acc sees the machine NCCL sees.  Attributes acc does not
 * use are ignored, as NCCL ignores what it does not know.  The attributes prefixed acc_ are
 * written by acc_topo_export_nccl_xml() (topo_nccl_xml_export.c) for facts NCCL's schema cannot
 * carry; NCCL ignores them.
 */
#include "topo_nccl_xml.h"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bounds far above NCCL's own limit of 256 XML nodes per file (NCCL_TOPO_XML_MAX_NODES), so that
 * no real file is refused and a hostile one cannot make the import slow. */
#define MAX_ITEMS        2048
#define MAX_RECS         8192
#define MAX_PCI_DEPTH    32
#define MAX_NVLINK_COUNT 1024

acc_status_t topo_nxml_fail(const nxml_ctx_t *c, acc_status_t st, xmlNodePtr n, const char *fmt,
                            ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n)
        return acc_error_set(st, "%s:%ld: <%s>: %s", c->name, xmlGetLineNo(n),
                             (const char *)n->name, msg);
    return acc_error_set(st, "%s: %s", c->name, msg);
}

static int is_elem(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && xmlStrEqual(n->name, BAD_CAST name);
}

static xmlNodePtr first_child(xmlNodePtr n, const char *name, int *count)
{
    xmlNodePtr k, first = NULL;
    *count = 0;
    for (k = n->children; k; k = k->next) {
        if (is_elem(k, name)) {
            if (!first)
                first = k;
            (*count)++;
        }
    }
    return first;
}

/* Copy an attribute into buf; *present says whether the element has it. */
acc_status_t topo_nxml_attr(const nxml_ctx_t *c, xmlNodePtr n, const char *key,
                            char buf[NXML_ATTR_MAX], int *present)
{
    xmlChar *v = xmlGetProp(n, BAD_CAST key);
    size_t len;

    buf[0] = '\0';
    *present = v != NULL;
    if (!v)
        return ACC_OK;
    len = strlen((const char *)v);
    if (len >= NXML_ATTR_MAX) {
        xmlFree(v);
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "%s is %zu characters long; NCCL keeps %d", key,
                              len, NXML_ATTR_MAX - 1);
    }
    memcpy(buf, v, len + 1);
    xmlFree(v);
    return ACC_OK;
}

/* An integer attribute (decimal or 0x hex) within [lo, hi]. */
acc_status_t topo_nxml_int(const nxml_ctx_t *c, xmlNodePtr n, const char *key, int64_t lo,
                           int64_t hi, int64_t *out, int *present)
{
    char buf[NXML_ATTR_MAX];
    acc_status_t st = topo_nxml_attr(c, n, key, buf, present);

    if (st != ACC_OK || !*present)
        return st;
    if (acc_parse_int64(buf, out) != ACC_OK || *out < lo || *out > hi)
        return topo_nxml_fail(c, ACC_ERR_PARSE, n,
                              "%s=\"%s\": expected an integer from %lld to %lld", key, buf,
                              (long long)lo, (long long)hi);
    return ACC_OK;
}

/* A floating-point attribute >= lo. */
acc_status_t topo_nxml_double(const nxml_ctx_t *c, xmlNodePtr n, const char *key, double lo,
                              double *out, int *present)
{
    char buf[NXML_ATTR_MAX];
    acc_status_t st = topo_nxml_attr(c, n, key, buf, present);

    if (st != ACC_OK || !*present)
        return st;
    if (acc_parse_double(buf, out) != ACC_OK || !(*out >= lo))
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "%s=\"%s\": expected a number >= %g", key, buf,
                              lo);
    return ACC_OK;
}

/* A string attribute copied into a vertex field of `cap` bytes; too long is an error. */
acc_status_t topo_nxml_str(const nxml_ctx_t *c, xmlNodePtr n, const char *key, char *dst,
                           size_t cap)
{
    char buf[NXML_ATTR_MAX];
    int present;
    acc_status_t st = topo_nxml_attr(c, n, key, buf, &present);

    if (st != ACC_OK || !present)
        return st;
    if (strlen(buf) >= cap)
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "%s=\"%s\" is longer than %zu characters", key,
                              buf, cap - 1);
    memcpy(dst, buf, strlen(buf) + 1);
    return ACC_OK;
}

static acc_status_t add_item(nxml_ctx_t *c, nxml_kind_t kind, xmlNodePtr where, int parent, int cpu,
                             int *index)
{
    void *p = c->items;
    nxml_item_t *it;

    if (c->nitems >= MAX_ITEMS)
        return topo_nxml_fail(c, ACC_ERR_PARSE, where,
                              "more than %d devices (NCCL reads 256 elements at most)", MAX_ITEMS);
    if (acc_array_reserve(&p, &c->items_cap, (size_t)c->nitems + 1, sizeof(*it)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
    c->items = p;
    it = &c->items[c->nitems];
    memset(it, 0, sizeof(*it));
    it->kind = kind;
    it->where = where;
    it->parent = parent;
    it->cpu = cpu;
    it->vertex = -1;
    *index = c->nitems++;
    return ACC_OK;
}

static acc_status_t add_rec(nxml_ctx_t *c, nxml_rec_kind_t kind, xmlNodePtr where, int from,
                            nxml_rec_t **out)
{
    void *p = c->recs;

    if (c->nrecs >= MAX_RECS)
        return topo_nxml_fail(c, ACC_ERR_PARSE, where, "more than %d links", MAX_RECS);
    if (acc_array_reserve(&p, &c->recs_cap, (size_t)c->nrecs + 1, sizeof(nxml_rec_t)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
    c->recs = p;
    *out = &c->recs[c->nrecs++];
    memset(*out, 0, sizeof(**out));
    (*out)->kind = kind;
    (*out)->where = where;
    (*out)->from = from;
    return ACC_OK;
}

/* ---- pass 1: walk the tree --------------------------------------------------------------- */

/* The VM placeholder NCCL dumps as the NVSwitch fabric: "fffffff:ff:ff.0" (NVML gives no bus id
 * of the switches to a guest).  topo_busid_normalize() refuses it (device ff > 1f). */
static int is_vm_nvswitch(const char *s)
{
    unsigned dom, bus, dev, fn;
    char tail;
    return sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 && dom == 0xfffffff &&
           bus == 0xff && dev == 0xff;
}

/* <nvlink target count tclass> and <c2c count bw> of the GPU item `gpu`. */
static acc_status_t walk_gpu_links(nxml_ctx_t *c, xmlNodePtr g, int gpu)
{
    xmlNodePtr k;
    acc_status_t st = ACC_OK;

    for (k = g->children; k && st == ACC_OK; k = k->next) {
        char target[NXML_ATTR_MAX];
        int64_t count = 0, bw = 0;
        int present;
        nxml_rec_t *r;

        if (is_elem(k, "nvlink")) {
            if ((st = topo_nxml_attr(c, k, "target", target, &present)) != ACC_OK)
                break;
            if (!present)
                return topo_nxml_fail(c, ACC_ERR_PARSE, k,
                                      "no target attribute (the peer's bus id)");
            if ((st = topo_nxml_int(c, k, "count", 1, MAX_NVLINK_COUNT, &count, &present)) !=
                ACC_OK)
                break;
            if (!present)
                return topo_nxml_fail(c, ACC_ERR_PARSE, k,
                                      "no count attribute (the number of links)");
            if ((st = add_rec(c, NXML_NVLINK, k, gpu, &r)) != ACC_OK)
                break;
            r->count = (int)count;
            r->vm_nvswitch = is_vm_nvswitch(target);
            if (!r->vm_nvswitch && !topo_busid_normalize(target, r->target))
                return topo_nxml_fail(c, ACC_ERR_PARSE, k,
                                      "target=\"%s\" is not a PCI bus id (dddd:bb:dd.f)", target);
            st = topo_nxml_attr(c, k, "tclass", r->tclass, &present);
        } else if (is_elem(k, "c2c")) {
            /* NCCL reads both as integers: bw in MB/s per link (ncclTopoAddC2c). */
            if ((st = topo_nxml_int(c, k, "count", 1, MAX_NVLINK_COUNT, &count, &present)) !=
                ACC_OK)
                break;
            if (!present)
                return topo_nxml_fail(c, ACC_ERR_PARSE, k, "no count attribute");
            if ((st = topo_nxml_int(c, k, "bw", 1, INT_MAX, &bw, &present)) != ACC_OK)
                break;
            if (!present)
                return topo_nxml_fail(c, ACC_ERR_PARSE, k, "no bw attribute (MB/s per link)");
            if ((st = add_rec(c, NXML_C2C, k, gpu, &r)) != ACC_OK)
                break;
            r->count = (int)count;
            r->bw = (double)bw * (double)count / 1000.0;
        }
    }
    return st;
}

/* The NICs of a <nic>: one per <net> with a dev attribute (NCCL ignores nets without one). */
static acc_status_t walk_nic(nxml_ctx_t *c, xmlNodePtr nic, xmlNodePtr pci, const char *busid,
                             int parent, int cpu, int *added)
{
    xmlNodePtr k;
    acc_status_t st;

    *added = 0;
    for (k = nic->children; k; k = k->next) {
        int64_t dev;
        int present, idx;
        if (!is_elem(k, "net"))
            continue;
        if ((st = topo_nxml_int(c, k, "dev", 0, INT_MAX, &dev, &present)) != ACC_OK)
            return st;
        if (!present)
            continue;
        if ((st = add_item(c, NXML_NIC, k, parent, cpu, &idx)) != ACC_OK)
            return st;
        c->items[idx].pci = pci;
        c->items[idx].net = k;
        c->items[idx].order = (int)dev;
        c->items[idx].has_order = 1;
        /* A bus id names one vertex (acc_topo_check); the further ports of a multi-port
         * <pci> are NICs of their own on the same link, without one. */
        if (*added == 0)
            snprintf(c->items[idx].busid, sizeof(c->items[idx].busid), "%s", busid);
        (*added)++;
    }
    return ACC_OK;
}

/* link_speed and link_width of a <pci>: the link to its parent. */
static acc_status_t read_pcie(nxml_ctx_t *c, xmlNodePtr n, nxml_item_t *it)
{
    char speed[NXML_ATTR_MAX];
    int present;
    int64_t width = 0;
    acc_status_t st = topo_nxml_attr(c, n, "link_speed", speed, &present);

    if (st != ACC_OK)
        return st;
    /* "32.0 GT/s PCIe" from current kernels, "16 GT/s" from kernels up to 5.6.  An empty or
     * unknown string gets the default of the GPU generation later; NCCL falls back to Gen3
     * there (kvDictPciGen), which would be wrong for every Ampere and Hopper machine. */
    it->gen = present ? topo_pcie_gen_from_speed(speed) : 0;
    if ((st = topo_nxml_int(c, n, "link_width", 0, 32, &width, &present)) != ACC_OK)
        return st;
    it->width = (int)width;
    it->width_zero = present && width == 0;
    return ACC_OK;
}

int topo_nxml_class_is(const char *cls, const char *prefix)
{
    for (; *prefix; prefix++, cls++)
        if (tolower((unsigned char)*cls) != tolower((unsigned char)*prefix))
            return 0;
    return 1;
}

static acc_status_t walk_pci(nxml_ctx_t *c, xmlNodePtr n, int cpu, int parent, int depth);

static acc_status_t walk_children(nxml_ctx_t *c, xmlNodePtr n, int cpu, int self, int depth)
{
    xmlNodePtr k;
    acc_status_t st = ACC_OK;

    for (k = n->children; k && st == ACC_OK; k = k->next) {
        if (is_elem(k, "pci")) {
            st = walk_pci(c, k, cpu, self, depth + 1);
        } else if (is_elem(k, "nic")) {
            int added;
            st = walk_nic(c, k, NULL, "", self, cpu, &added);
        } else if (is_elem(k, "pcilink") && c->items[self].kind == NXML_SWITCH) {
            char target[NXML_ATTR_MAX];
            int present;
            nxml_rec_t *r;
            if ((st = topo_nxml_attr(c, k, "target", target, &present)) != ACC_OK)
                break;
            if ((st = add_rec(c, NXML_PCILINK, k, self, &r)) != ACC_OK)
                break;
            if (!present || !topo_busid_normalize(target, r->target))
                return topo_nxml_fail(c, ACC_ERR_PARSE, k, "target=\"%s\" is not a PCI bus id",
                                      present ? target : "");
        }
    }
    return st;
}

static acc_status_t walk_pci(nxml_ctx_t *c, xmlNodePtr n, int cpu, int parent, int depth)
{
    char raw[NXML_ATTR_MAX], busid[24], cls[NXML_ATTR_MAX];
    int present, has_cls, ngpu, nnic, npci, idx, added;
    xmlNodePtr gpu, nic;
    nxml_kind_t kind;
    acc_status_t st;

    if (depth > MAX_PCI_DEPTH)
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "PCI tree nested deeper than %d levels",
                              MAX_PCI_DEPTH);
    if ((st = topo_nxml_attr(c, n, "busid", raw, &present)) != ACC_OK)
        return st;
    if (!present)
        return topo_nxml_fail(c, ACC_ERR_PARSE, n, "no busid attribute (NCCL requires one)");
    if (!topo_busid_normalize(raw, busid))
        return topo_nxml_fail(c, ACC_ERR_PARSE, n,
                              "busid=\"%s\" is not a PCI bus id (dddd:bb:dd.f)", raw);
    if ((st = topo_nxml_attr(c, n, "class", cls, &has_cls)) != ACC_OK)
        return st;
    gpu = first_child(n, "gpu", &ngpu);
    nic = first_child(n, "nic", &nnic);
    first_child(n, "pci", &npci);
    if (ngpu > 1)
        return topo_nxml_fail(c, ACC_ERR_UNSUPPORTED, n,
                              "%d <gpu> elements (MLOPart partitions) are not supported", ngpu);

    /* NCCL decides by content first (a <gpu> or <nic> child), then by class prefix
     * (kvDictPciClass), and treats every other class as a PCI switch. */
    if (gpu)
        kind = NXML_GPU;
    else if (nic)
        kind = NXML_NIC;
    else if (has_cls && topo_nxml_class_is(cls, "0x068000")) {
        /* An NVSwitch's management function: nvlinks name it; it carries no data over PCIe. */
        void *p = c->nvs_busids;
        if (acc_array_reserve(&p, &c->nvs_cap, (size_t)c->nnvs + 1, 24) != ACC_OK)
            return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", c->name);
        c->nvs_busids = p;
        memcpy(c->nvs_busids[c->nnvs++], busid, 24);
        return ACC_OK;
    } else if (has_cls && topo_nxml_class_is(cls, "0x068001"))
        return ACC_OK; /* NCCL's class for a CPU's NVLink bridge: nothing on PCIe */
    else if (has_cls && topo_nxml_class_is(cls, "0x03"))
        kind = NXML_GPU; /* partial file: NCCL adds the <gpu> from what it detects */
    else if (has_cls && topo_nxml_class_is(cls, "0x02"))
        kind = NXML_NIC; /* partial file: NCCL adds the <nic> from its net plugin */
    else if ((has_cls &&
              (topo_nxml_class_is(cls, "0x0604") || topo_nxml_class_is(cls, "0x080100"))) ||
             npci > 0)
        kind = NXML_SWITCH;
    else if (!has_cls) {
        /* A leaf with only a bus id (AWS g5.48xlarge file): NCCL matches it with a device it
         * detects at run time; nothing in the file says whether it is a GPU or a NIC. */
        if (c->unclassified++ == 0)
            memcpy(c->first_unclassified, busid, sizeof(busid));
        return ACC_OK;
    } else
        return ACC_OK; /* another device class (NVMe, ...), a leaf: no GPU or NIC path uses it */

    if ((kind == NXML_GPU || kind == NXML_NIC) && npci > 0)
        return topo_nxml_fail(c, ACC_ERR_PARSE, n,
                              "a %s's <pci> holds a <pci>, but GPUs and NICs are leaves",
                              kind == NXML_GPU ? "GPU" : "NIC");
    if (kind == NXML_NIC && nic) {
        int before = c->nitems;
        if ((st = walk_nic(c, nic, n, busid, parent, cpu, &added)) != ACC_OK)
            return st;
        for (idx = before; idx < c->nitems; idx++)
            if ((st = read_pcie(c, n, &c->items[idx])) != ACC_OK)
                return st;
        if (added > 0)
            return ACC_OK;
    }
    if ((st = add_item(c, kind, n, parent, cpu, &idx)) != ACC_OK)
        return st;
    c->items[idx].pci = n;
    c->items[idx].gpu = gpu;
    memcpy(c->items[idx].busid, busid, sizeof(busid));
    if ((st = read_pcie(c, n, &c->items[idx])) != ACC_OK)
        return st;
    if (kind == NXML_GPU && gpu) {
        int64_t dev;
        if ((st = topo_nxml_int(c, gpu, "dev", 0, INT_MAX, &dev, &present)) != ACC_OK)
            return st;
        c->items[idx].order = (int)dev;
        c->items[idx].has_order = present;
        return walk_gpu_links(c, gpu, idx);
    }
    if (kind == NXML_SWITCH)
        return walk_children(c, n, cpu, idx, depth);
    return ACC_OK;
}

static acc_status_t walk_system(nxml_ctx_t *c, xmlNodePtr root)
{
    char host[NXML_ATTR_MAX], first_host[NXML_ATTR_MAX] = "";
    xmlNodePtr k;
    acc_status_t st;

    for (k = root->children; k; k = k->next) {
        int64_t numaid;
        int present, idx;
        if (!is_elem(k, "cpu"))
            continue;
        /* NCCL fuses the XML of every host of a multi-node NVLink domain (MNNVL) into one
         * dump, telling hosts apart by host_hash; acc models one node type. */
        if ((st = topo_nxml_attr(c, k, "host_hash", host, &present)) != ACC_OK)
            return st;
        if (present && !first_host[0])
            memcpy(first_host, host, sizeof(host));
        else if (present && strcmp(host, first_host) != 0)
            return topo_nxml_fail(c, ACC_ERR_UNSUPPORTED, k,
                                  "host_hash=\"%s\" differs from \"%s\": the dump spans several "
                                  "hosts (an MNNVL domain); keep the <cpu> elements of one host",
                                  host, first_host);
        if ((st = topo_nxml_int(c, k, "numaid", INT_MIN, INT_MAX, &numaid, &present)) != ACC_OK)
            return st;
        if (!present)
            return topo_nxml_fail(c, ACC_ERR_PARSE, k, "no numaid attribute (NCCL requires one)");
        if ((st = add_item(c, NXML_CPU, k, -1, c->nitems, &idx)) != ACC_OK)
            return st;
        c->items[idx].order = (int)numaid;
        c->items[idx].has_order = 1;
        if ((st = walk_children(c, k, idx, idx, 0)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

/* ---- entry point ------------------------------------------------------------------------- */

/* The first error libxml2 reports, kept instead of printed. */
typedef struct {
    int have;
    int line;
    int code;
    char msg[256];
} xml_error_t;

static void keep_xml_error(void *data, xmlErrorPtr e)
{
    xml_error_t *x = data;
    size_t n;

    if (!e || e->level < XML_ERR_ERROR || x->have)
        return;
    x->have = 1;
    x->line = e->line;
    x->code = e->code;
    snprintf(x->msg, sizeof(x->msg), "%s", e->message ? e->message : "unknown error");
    n = strlen(x->msg);
    while (n && isspace((unsigned char)x->msg[n - 1]))
        x->msg[--n] = '\0';
}

/* Parse without network access and without entity expansion; every libxml2 message goes to
 * keep_xml_error for the calling thread (libxml2 keeps the handler per thread). */
static acc_status_t parse(const nxml_ctx_t *c, const char *text, size_t len, xmlDocPtr *doc)
{
    xml_error_t err;
    xmlStructuredErrorFunc old_fn;
    void *old_data;

    memset(&err, 0, sizeof(err));
    if (!text || len == 0)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: empty input; expected an NCCL topology XML "
                             "(<system version=\"1\">)",
                             c->name);
    if (len > INT_MAX)
        return acc_error_set(ACC_ERR_PARSE, "%s: %zu bytes is too large for a topology file",
                             c->name, len);
    xmlInitParser();
    old_fn = xmlStructuredError;
    old_data = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(&err, keep_xml_error);
    *doc = xmlReadMemory(text, (int)len, c->name, NULL,
                         XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_BIG_LINES);
    xmlSetStructuredErrorFunc(old_data, old_fn);
    if (!*doc) {
        if (err.have)
            return acc_error_set(ACC_ERR_PARSE, "%s:%d: not well-formed XML: %s (libxml2 code %d)",
                                 c->name, err.line, err.msg, err.code);
        return acc_error_set(ACC_ERR_PARSE, "%s: not well-formed XML", c->name);
    }
    /* NCCL's own parser reads no DTD; refusing one also keeps entity tricks out. */
    if ((*doc)->intSubset || (*doc)->extSubset)
        return acc_error_set(ACC_ERR_PARSE, "%s: remove the <!DOCTYPE>: NCCL topology XML has none",
                             c->name);
    return ACC_OK;
}

static acc_status_t check_root(const nxml_ctx_t *c, xmlNodePtr root)
{
    char version[NXML_ATTR_MAX];
    int present;
    acc_status_t st;

    if (!root)
        return acc_error_set(ACC_ERR_PARSE, "%s: no root element", c->name);
    if (is_elem(root, "graphs"))
        return topo_nxml_fail(c, ACC_ERR_UNSUPPORTED, root,
                              "this is an NCCL graph file (NCCL_GRAPH_FILE / NCCL_GRAPH_DUMP_FILE: "
                              "the channels, rings and trees NCCL chose), not a topology; pass "
                              "the topology NCCL writes with NCCL_TOPO_DUMP_FILE=topo.xml");
    if (!is_elem(root, "system"))
        return topo_nxml_fail(c, ACC_ERR_PARSE, root,
                              "expected <system version=\"1\"> as the root "
                              "element of an NCCL topology XML");
    if ((st = topo_nxml_attr(c, root, "version", version, &present)) != ACC_OK)
        return st;
    if (!present)
        return topo_nxml_fail(c, ACC_ERR_PARSE, root,
                              "no version attribute (expected "
                              "version=\"1\")");
    if (strcmp(version, "1") != 0)
        return topo_nxml_fail(c, ACC_ERR_PARSE, root,
                              "version=\"%s\": acc reads version 1 (NCCL_TOPO_XML_VERSION)",
                              version);
    return ACC_OK;
}

acc_status_t topo_import_nccl_xml(acc_topo_t *t, const char *text, size_t len, const char *name)
{
    nxml_ctx_t c;
    xmlDocPtr doc = NULL;
    acc_status_t st;

    memset(&c, 0, sizeof(c));
    c.t = t;
    c.name = name && name[0] ? name : "(NCCL topology XML)";
    if (t->nvertices || t->finalized)
        return acc_error_set(ACC_ERR_INVALID, "%s: import into a topology that is not empty",
                             c.name);
    if ((st = parse(&c, text, len, &doc)) != ACC_OK)
        goto out;
    c.root = xmlDocGetRootElement(doc);
    if ((st = check_root(&c, c.root)) != ACC_OK || (st = walk_system(&c, c.root)) != ACC_OK)
        goto out;
    st = topo_nxml_build(&c);
out:
    acc_mem_free(c.items);
    acc_mem_free(c.recs);
    acc_mem_free(c.nvs_busids);
    acc_mem_free(c.by_busid);
    xmlFreeDoc(doc);
    return st;
}
