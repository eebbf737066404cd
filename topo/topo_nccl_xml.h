/*
 * topo/topo_nccl_xml.h - what the two halves of the NCCL topology XML importer share:
 * topo_nccl_xml.c parses the file and walks its tree into a table of devices and link records,
 * topo_nccl_xml_build.c turns the table into vertices and links.  Private to those two files.
 */
#ifndef ACC_TOPO_NCCL_XML_H
#define ACC_TOPO_NCCL_XML_H

#include "internal.h"

#include <libxml/tree.h>

/* NCCL's parser keeps at most 255 characters of an attribute (MAX_STR_LEN, src/graph/xml.h). */
#define NXML_ATTR_MAX 256

typedef enum { NXML_CPU, NXML_SWITCH, NXML_GPU, NXML_NIC } nxml_kind_t;

/* One device of the file; becomes one vertex. */
typedef struct {
    nxml_kind_t kind;
    xmlNodePtr where;     /* element named in messages */
    xmlNodePtr pci;       /* its <pci>; NULL for CPUs and for NICs given by a bare <nic> */
    xmlNodePtr net;       /* NICs: the <net>; NULL when the <pci> has no <nic> */
    xmlNodePtr gpu;       /* GPUs: the <gpu> child; NULL in partial files */
    int parent;           /* item of the CPU or switch above; -1 for CPUs */
    int cpu;              /* item of the owning CPU */
    char busid[24];       /* normalised; "" when the file gives none */
    int order, has_order; /* numaid of a CPU, dev of a GPU or NIC */
    int gen;              /* PCIe generation of the link to the parent; 0 when not given */
    int width;            /* its lane count; 0 when not given */
    int width_zero;       /* link_width="0" was written (NCCL: unknown, read as 16) */
    int vertex;           /* set by the build */
} nxml_item_t;

typedef enum { NXML_NVLINK, NXML_C2C, NXML_PCILINK } nxml_rec_kind_t;

/* An <nvlink>, <c2c> or <pcilink>, resolved once every device exists. */
typedef struct {
    nxml_rec_kind_t kind;
    xmlNodePtr where;
    int from;                   /* item of the GPU (nvlink, c2c) or switch (pcilink) */
    char target[24];            /* normalised target bus id */
    int vm_nvswitch;            /* target "fffffff:ff:ff.0": the NVSwitch fabric seen from a VM */
    char tclass[NXML_ATTR_MAX]; /* class of the target as written; "" when absent */
    int count;                  /* nvlink and c2c link count */
    double bw;                  /* c2c: GB/s of all links together */
} nxml_rec_t;

typedef struct {
    acc_topo_t *t;
    const char *name;
    xmlNodePtr root;
    nxml_item_t *items;
    int nitems;
    size_t items_cap;
    nxml_rec_t *recs;
    int nrecs;
    size_t recs_cap;
    char (*nvs_busids)[24]; /* <pci> elements of the NVSwitch class (0x068000) */
    int nnvs;
    size_t nvs_cap;
    int unclassified; /* leaf <pci> elements without a class */
    char first_unclassified[24];
    /* build state */
    int *by_busid; /* item indices sorted by bus id */
    int nbusid;
    int max_sm;
} nxml_ctx_t;

/* Set an error "file:line: <element>: message" and return st. */
acc_status_t topo_nxml_fail(const nxml_ctx_t *c, acc_status_t st, xmlNodePtr n, const char *fmt,
                            ...) ACC_PRINTF(4, 5);
/* Attribute readers: *present says whether the element has it; a malformed or over-long value
 * is an ACC_ERR_PARSE naming the file, line, element and attribute. */
acc_status_t topo_nxml_attr(const nxml_ctx_t *c, xmlNodePtr n, const char *key,
                            char buf[NXML_ATTR_MAX], int *present);
acc_status_t topo_nxml_int(const nxml_ctx_t *c, xmlNodePtr n, const char *key, int64_t lo,
                           int64_t hi, int64_t *out, int *present);
acc_status_t topo_nxml_double(const nxml_ctx_t *c, xmlNodePtr n, const char *key, double lo,
                              double *out, int *present);
/* Into a fixed-size field; absent leaves dst unchanged. */
acc_status_t topo_nxml_str(const nxml_ctx_t *c, xmlNodePtr n, const char *key, char *dst,
                           size_t cap);
/* A PCI class such as "0x030200" starts with prefix ("0x03"). */
int topo_nxml_class_is(const char *cls, const char *prefix);

/* Pass 2: vertices, links and network from the walked table. */
acc_status_t topo_nxml_build(nxml_ctx_t *c);

#endif
