/*
 * Live discovery (`--topo auto`): the machine this process runs on.
 *
 * NVML comes first, so that a machine without an NVIDIA driver or GPU fails at once with the ways
 * to describe a machine instead.  hwloc then gives the CPUs, NUMA nodes, PCIe tree and NICs through
 * the same conversion as an hwloc XML capture (topo_hwloc.c), with NVML's facts about each GPU in
 * place of hwloc's and of the defaults; NVML also gives the NVLinks.
 */
#include "topo_hwloc.h"

#include <unistd.h>

/* GPUDirect RDMA through a NIC needs the peer-memory module NCCL looks for: nvidia-peermem, or
 * the older nv_peer_mem.  (DMA-BUF, the other route, cannot be checked without CUDA.) */
static int peermem_loaded(void)
{
    return access("/sys/kernel/mm/memory_peers/nv_mem/version", F_OK) == 0 ||
           access("/sys/module/nvidia_peermem", F_OK) == 0 ||
           access("/sys/module/nv_peer_mem", F_OK) == 0;
}

static acc_status_t mark_gdr(acc_topo_t *t)
{
    int i, gdr;
    if (acc_topo_count(t, ACC_VTX_NIC) == 0)
        return ACC_OK;
    gdr = peermem_loaded();
    for (i = 0; i < acc_topo_vertex_count(t); i++) {
        acc_topo_vertex_t *v = acc_topo_vertex_mut(t, i);
        if (v->kind == ACC_VTX_NIC)
            v->gdr = gdr;
    }
    if (!gdr)
        return acc_topo_assume(t, "GPUDirect RDMA taken as unavailable: no peer-memory module "
                                  "(nvidia-peermem) is loaded; DMA-BUF support is not checked");
    return ACC_OK;
}

acc_status_t topo_import_live(acc_topo_t *t)
{
    topo_nvml_t *n = NULL;
    acc_status_t st = topo_nvml_open(&n);

    if (st != ACC_OK)
        return st;
    st = topo_hwloc_build(t, NULL, 0, "this machine", topo_nvml_gpu_facts, n);
    if (st == ACC_OK)
        st = topo_nvml_add_links(n, t);
    if (st == ACC_OK)
        st = mark_gdr(t);
    topo_nvml_close(n);
    return st;
}
