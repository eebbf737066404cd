/* Building blocks that every importer uses, so that the same machine read from different formats
 * becomes the same graph. */
#include "internal.h"

#include <string.h>

acc_status_t topo_nvswitch(acc_topo_t *t, int *index)
{
    int v = acc_topo_find(t, ACC_VTX_NVSWITCH, 0);
    if (v >= 0) {
        *index = v;
        return ACC_OK;
    }
    return acc_topo_add_vertex(t, ACC_VTX_NVSWITCH, index);
}

acc_status_t topo_add_nvlinks(acc_topo_t *t, int a, int b, int count)
{
    int i, found = 0;
    if (count < 1)
        return acc_error_set(ACC_ERR_INVALID, "NVLink count must be at least 1, not %d", count);
    for (i = 0; i < t->nlinks; i++) {
        acc_topo_link_t *l = &t->links[i];
        if (l->kind == ACC_LINK_NVLINK &&
            ((l->from == a && l->to == b) || (l->from == b && l->to == a))) {
            l->count += count;
            found = 1;
        }
    }
    if (found)
        return ACC_OK;
    /* Bandwidth is set from the count by acc_topo_finalize(); 1 keeps add_link's check happy. */
    return acc_topo_add_link(t, a, b, ACC_LINK_NVLINK, count, 1.0, TOPO_LAT_NVLINK_US);
}

acc_status_t topo_add_pcie(acc_topo_t *t, int child, int parent, int gen, int width)
{
    acc_status_t st;
    double bw = acc_topo_pcie_bw(gen, width);
    if (!(bw > 0))
        return acc_error_set(ACC_ERR_INVALID, "PCIe link %s - %s: unknown generation %d x%d",
                             t->vertices[child].name, t->vertices[parent].name, gen, width);
    st = acc_topo_add_link(t, child, parent, ACC_LINK_PCIE, 1, bw, TOPO_LAT_PCIE_US);
    if (st != ACC_OK)
        return st;
    return acc_topo_set_pcie(t, child, parent, gen, width);
}

/* Inter-socket bandwidth per direction.  Intel: UPI links x 20.8 GB/s (10.4 GT/s x 2 bytes) on
 * Skylake and later (2-3 links), QPI on Broadwell 2 x 19.2 GB/s; AMD: Infinity Fabric between
 * sockets (4 x16 xGMI links, about 36 GB/s each on Rome); POWER9 X-Bus 64 GB/s.  These are only
 * used to rank SYS paths below PCIe-local ones. */
double topo_smp_bw(const acc_topo_vertex_t *cpu)
{
    if (strcmp(cpu->cpu_vendor, "AuthenticAMD") == 0)
        return 144.0;
    if (strcmp(cpu->cpu_arch, "ppc64") == 0)
        return 64.0;
    if (strcmp(cpu->cpu_vendor, "GenuineIntel") == 0 && cpu->cpu_family == 6 &&
        cpu->cpu_model < 0x55)
        return 38.4;
    return 62.4; /* Intel Skylake..Emerald Rapids with 3 UPI links; also the unknown case */
}

acc_status_t topo_connect_cpus(acc_topo_t *t)
{
    int a, b;
    for (a = 0; a < t->nvertices; a++) {
        if (t->vertices[a].kind != ACC_VTX_CPU)
            continue;
        for (b = a + 1; b < t->nvertices; b++) {
            double bw;
            acc_status_t st;
            if (t->vertices[b].kind != ACC_VTX_CPU || acc_topo_find_link(t, a, b, ACC_LINK_SMP))
                continue;
            bw = topo_smp_bw(&t->vertices[a]);
            st = acc_topo_add_link(t, a, b, ACC_LINK_SMP, 1, bw, TOPO_LAT_SMP_US);
            if (st != ACC_OK)
                return st;
        }
    }
    return ACC_OK;
}

int topo_pcie_gen_from_speed(const char *speed)
{
    double gts;
    if (!speed || sscanf(speed, "%lf", &gts) != 1)
        return 0;
    if (gts >= 63)
        return 6;
    if (gts >= 31)
        return 5;
    if (gts >= 15)
        return 4;
    if (gts >= 7.9)
        return 3;
    if (gts >= 4.9)
        return 2;
    if (gts >= 2.4)
        return 1;
    return 0;
}

int topo_default_pcie_gen(int sm)
{
    if (sm >= 90)
        return 5;
    if (sm >= 80)
        return 4;
    return 3;
}
