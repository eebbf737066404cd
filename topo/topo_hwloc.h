/*
 * topo/topo_hwloc.h - what the hwloc importer (topo_hwloc.c, topo_hwloc_xml.c,
 * topo_hwloc_nvlink.c, topo_hwloc_pcie.c), NVML (topo_nvml.c) and live discovery (topo_live.c)
 * share.  Private to those files.
 */
#ifndef ACC_TOPO_HWLOC_H
#define ACC_TOPO_HWLOC_H

#include "internal.h"

#include <hwloc.h>

/* Fills what a driver knows of a GPU (matched by gpu->busid) and may correct the PCIe link the
 * GPU can run at; returns 0 when the driver does not see the GPU, which then stays out. */
typedef int (*topo_gpu_facts_fn)(void *ctx, acc_topo_vertex_t *gpu, int *gen, int *width);

/* A kept PCI device (GPU or NIC) before and after it becomes a vertex. */
typedef struct {
    hwloc_obj_t obj;
    acc_topo_vertex_t v;
    int nvml, cuda; /* indices of its nvmlN / cudaN OS devices, -1 without */
    int gen, width; /* its own PCIe link; 0 unknown */
    int vertex;     /* -1 when left out */
} topo_hwloc_dev_t;

/* A PCIe switch (its upstream port) or host bridge on the way from kept devices to a CPU. */
typedef struct {
    hwloc_obj_t obj;
    int host;
    hwloc_obj_t child; /* first kept subtree seen below a host bridge */
    int shared;        /* a second kept subtree meets it there */
    int gen, width;    /* link to its parent; for a host bridge, its fastest child's */
    int numa;
    int vertex;
} topo_hwloc_node_t;

/* One conversion of an hwloc topology into t. */
typedef struct {
    acc_topo_t *t;
    hwloc_topology_t h;
    const char *name;  /* for messages */
    int live;          /* this machine rather than a capture */
    hwloc_obj_t *numa; /* NUMA nodes with CPUs, in CPU id order */
    int *cpu;          /* CPU id -> vertex */
    int nnuma;
    topo_hwloc_dev_t *gpu, *nic;
    int ngpu, nnic;
    size_t gpu_cap, nic_cap;
    topo_hwloc_node_t *pn;
    int npn;
    size_t pn_cap;
    int nvswitch_chips; /* NVSwitch PCI functions seen */
    /* GPUs and accelerators of other vendors (3D or other display controllers, processing
     * accelerators; not a BMC's VGA): how many, and the first one, for the message that the
     * machine is not one acc models. */
    int other_gpus;
    unsigned other_vendor, other_device;
    char other_bus[24];
    char other_model[64];
} topo_hwloc_conv_t;

/* Build t from XML text, or from this machine when text is NULL (topo_hwloc.c). */
acc_status_t topo_hwloc_build(acc_topo_t *t, const char *text, size_t len, const char *name,
                              topo_gpu_facts_fn gpu_facts, void *ctx);
/* The CPU id an I/O object is local to; records an assumption when hwloc gives no single NUMA
 * node.  `what` names the object in that assumption. */
acc_status_t topo_hwloc_numa_of(topo_hwloc_conv_t *c, hwloc_obj_t io, const char *what, int *out);
/* The PCIe generation and width of a link hwloc gives as GB/s; 0 when no generation and width
 * give that rate (topo_hwloc_pcie.c). */
int topo_hwloc_pcie_from_speed(double gbs, int *gen, int *width);
/* The PCIe switches and host bridges above the kept devices, as vertices and links
 * (topo_hwloc_pcie.c). */
acc_status_t topo_hwloc_pcie_tree(topo_hwloc_conv_t *c);
/* "dddd:bb:dd.f" of a PCI device or bridge. */
void topo_hwloc_busid(hwloc_obj_t o, char out[24]);
/* NVLinks from a capture's NVLinkBandwidth matrix, or the assumption that they are unknown
 * (topo_hwloc_nvlink.c). */
acc_status_t topo_hwloc_nvlinks(topo_hwloc_conv_t *c);

/* NVML, opened with dlopen (topo_nvml.c).  topo_nvml_open() reads every GPU's facts and links
 * and fails with ACC_ERR_NO_DEVICE, naming the alternatives, without a driver or GPU. */
typedef struct topo_nvml topo_nvml_t;
acc_status_t topo_nvml_open(topo_nvml_t **out);
void topo_nvml_close(topo_nvml_t *n);
int topo_nvml_gpu_facts(void *ctx, acc_topo_vertex_t *gpu, int *gen, int *width);
/* NVLinks of NVML's GPUs; a GPU hwloc did not see on the PCI bus is placed under CPU0 first. */
acc_status_t topo_nvml_add_links(topo_nvml_t *n, acc_topo_t *t);

#endif
