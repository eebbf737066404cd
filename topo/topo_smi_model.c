/*
 * The second stage of the `nvidia-smi topo -m` importer: from the checked matrix of topo_smi.c to
 * vertices and links.  CPUs come from NUMA grouping, the GPU model from a named line or the NVLink
 * pattern, NVLinks from the NV# cells (into one NVSwitch fabric where no GPU could have them all
 * directly), and the PCIe tree is the smallest one whose path classes reproduce the matrix.
 */
#include "topo_smi.h"

#include <stdlib.h>
#include <string.h>

static int uf_find(int *par, int x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* The smaller index becomes the root, so a group is named by its first device. */
static void uf_join(int *par, int a, int b)
{
    a = uf_find(par, a);
    b = uf_find(par, b);
    if (a != b)
        par[a > b ? a : b] = a < b ? a : b;
}

static void uf_flatten(int *par, int n)
{
    int a;
    for (a = 0; a < n; a++)
        par[a] = uf_find(par, a);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* "GPU0, GPU1, NIC0" for the members of one group. */
static void list_members(const smi_t *p, const int *of, int id, acc_buf_t *b)
{
    int d, first = 1;
    for (d = 0; d < p->ndev; d++) {
        if (of[d] != id)
            continue;
        acc_buf_printf(b, "%s%s", first ? "" : ", ", p->col[d]);
        first = 0;
    }
}

/* CPU groups (NUMA nodes).  PIX/PXB/PHB/NODE never leave a NUMA node, so devices joined by them
 * share one; GPUs carry their node in the NUMA Affinity column.  What is left (NICs SYS to every
 * GPU, GPUs with NUMA Affinity N/A) joins the first group it is not SYS to, or opens a group of
 * its own.  Known nodes get CPU ids 0..k-1 in numeric order, the others follow. */
static acc_status_t group_numa(smi_t *p, acc_topo_t *t)
{
    int n = p->ndev, a, b, g, nvals = 0, ngrp;
    int *mem = acc_mem_alloc(5 * (size_t)n * sizeof(int));
    unsigned char *conflict = acc_mem_calloc((size_t)n, 1);
    int *par, *val, *who, *gid, *vals;
    acc_buf_t b1;
    acc_status_t st = ACC_OK;

    acc_buf_init(&b1);
    if (!mem || !conflict) {
        st = topo_smi_nomem();
        goto out;
    }
    par = mem, val = mem + n, who = mem + 2 * n, gid = mem + 3 * n, vals = mem + 4 * n;
    for (a = 0; a < n; a++) {
        par[a] = a;
        val[a] = who[a] = gid[a] = -1;
    }
    for (a = 0; a < n; a++)
        for (b = a + 1; b < n; b++)
            if (SMI_CELL(p, a, b) >= SMI_C_PIX && SMI_CELL(p, a, b) <= SMI_C_NODE)
                uf_join(par, a, b);
    uf_flatten(par, n);
    for (a = 0; a < p->ngpu; a++) {
        int r = par[a];
        if (p->numa_val[a] < 0)
            continue;
        if (val[r] >= 0 && val[r] != p->numa_val[a]) {
            st = topo_smi_error(p, p->row_line[a],
                                "%s (NUMA Affinity %d) and %s (NUMA Affinity %d) are "
                                "joined by PIX/PXB/PHB/NODE cells, which never cross NUMA nodes",
                                p->col[who[r]], val[r], p->col[a], p->numa_val[a]);
            goto out;
        }
        val[r] = p->numa_val[a];
        who[r] = a;
        vals[nvals++] = p->numa_val[a];
    }
    qsort(vals, (size_t)nvals, sizeof(int), cmp_int);
    for (a = 0, b = 0; a < nvals; a++)
        if (a == 0 || vals[a] != vals[b - 1])
            vals[b++] = vals[a];
    nvals = ngrp = b;
    for (a = 0; a < n; a++)
        if (val[par[a]] >= 0)
            for (gid[par[a]] = 0; vals[gid[par[a]]] != val[par[a]]; gid[par[a]]++)
                ;
    for (a = 0; a < n; a++) {
        int r = par[a], m, e;
        if (gid[r] >= 0)
            continue;
        memset(conflict, 0, (size_t)n);
        for (m = 0; m < n; m++) {
            if (par[m] != r)
                continue;
            for (e = 0; e < n; e++)
                if (gid[par[e]] >= 0 && SMI_CELL(p, m, e) == SMI_C_SYS)
                    conflict[gid[par[e]]] = 1;
        }
        for (g = 0; g < ngrp && conflict[g]; g++)
            ;
        gid[r] = g;
        ngrp += g == ngrp;
    }
    for (a = 0; a < n; a++)
        p->grp[a] = gid[par[a]];
    p->ngrp = ngrp;

    for (a = 0; a < nvals && vals[a] == a; a++)
        ;
    if (a < nvals) {
        for (a = 0; a < nvals; a++)
            acc_buf_printf(&b1, "%sCPU%d = NUMA %d", a ? ", " : "", a, vals[a]);
        if ((st = acc_buf_status(&b1)) != ACC_OK ||
            (st = acc_topo_assume(t,
                                  "CPU vertices from the NUMA Affinity column: %s (NUMA "
                                  "nodes without GPUs do not appear in nvidia-smi topo -m)",
                                  b1.data)) != ACC_OK)
            goto out;
    }
    if (p->aff_long &&
        (st = acc_topo_assume(t,
                              "the CPU Affinity of %s is longer than %d "
                              "characters and was not kept",
                              p->col[p->aff_long - 1], ACC_TOPO_AFFINITY_MAX - 1)) != ACC_OK)
        goto out;
    for (g = nvals; g < ngrp; g++) {
        int gpus = 0;
        for (a = 0; a < p->ngpu; a++)
            gpus += p->grp[a] == g;
        acc_buf_reset(&b1);
        list_members(p, p->grp, g, &b1);
        if ((st = acc_buf_status(&b1)) != ACC_OK)
            goto out;
        st = acc_topo_assume(t, "CPU%d: a NUMA node the input does not number, holding %s (%s)", g,
                             b1.data,
                             gpus ? "NUMA Affinity N/A; devices not SYS to each other are taken "
                                    "to share a NUMA node"
                                  : "SYS to every GPU, so on a node without GPUs");
        if (st != ACC_OK)
            goto out;
    }
out:
    acc_buf_free(&b1);
    acc_mem_free(mem);
    acc_mem_free(conflict);
    return st;
}

/* The most NVLinks any GPU has (NVLink4/5 parts: 18); more per GPU means an NVSwitch. */
#define MOST_NVLINKS 18

typedef struct {
    const acc_gpu_model_t *m; /* table entry, or NULL when only sm is known */
    int sm;
    char model[SMI_NAME_LEN];
    int uniform;  /* NV# of every GPU pair when all are equal, else 0 */
    int tmax;     /* most NVLinks of one GPU, summed over its peers */
    int nvswitch; /* links go into one NVSwitch fabric vertex */
} gpu_plan_t;

/* The NVLinks one GPU can have: the part's own count where the table knows it (A800 and H800 have
 * 8, fewer than the 12 and 18 of their generations), else the most of its generation. */
static int most_links(const acc_gpu_model_t *m, const acc_gpu_arch_t *arch)
{
    if (m && m->nvlinks > 0)
        return m->nvlinks;
    return arch ? arch->max_nvlinks : 0;
}

/* The table's model for a name fragment, or only `sm` and a label for parts not in the table. */
static void use_model(gpu_plan_t *g, const char *fragment, int sm, const char *model)
{
    g->m = fragment ? acc_topo_gpu_model_by_name(fragment) : NULL;
    g->sm = g->m ? g->m->sm : sm;
    snprintf(g->model, sizeof(g->model), "%s", g->m ? g->m->model : model);
}

/* Which GPU: named on some line, else inferred from the NVLink pattern, else refused. */
static acc_status_t choose_model(smi_t *p, acc_topo_t *t, gpu_plan_t *g)
{
    int G = p->ngpu, a, b, min_peers = G, any = 0;
    const acc_gpu_arch_t *arch;
    acc_status_t st;

    memset(g, 0, sizeof(*g));
    g->uniform = -1;
    for (a = 0; a < G; a++) {
        int total = 0, peers = 0;
        for (b = 0; b < G; b++) {
            int c = SMI_CELL(p, a, b), nv = SMI_IS_NV(c) ? c - SMI_C_NV : 0;
            if (a == b)
                continue;
            total += nv;
            peers += nv > 0;
            any |= nv > 0;
            if (b > a)
                g->uniform = g->uniform < 0 || g->uniform == nv ? nv : 0;
        }
        g->tmax = total > g->tmax ? total : g->tmax;
        min_peers = peers < min_peers ? peers : min_peers;
    }
    g->uniform = g->uniform < 0 ? 0 : g->uniform;
    if (p->named) {
        int most;
        arch = acc_topo_gpu_arch(p->named->sm);
        most = most_links(p->named, arch);
        if (!any || (arch && arch->nvlink_gbs > 0 &&
                     (g->tmax <= most || (g->uniform && G >= 3 && g->uniform <= most)))) {
            use_model(g, NULL, p->named->sm, p->named->model);
            g->m = p->named;
            return acc_topo_assume(t,
                                   "GPU model %s, named on line %d ('%s'); nvidia-smi topo -m "
                                   "does not print it",
                                   g->model, p->named_line, p->named_text);
        }
        st = acc_topo_assume(t,
                             "line %d names %s, which cannot have the NVLinks of the matrix "
                             "(%d for one GPU); the model is inferred from the NV# cells instead",
                             p->named_line, p->named->model, g->tmax);
        if (st != ACC_OK)
            return st;
    }
    if (!any)
        return topo_smi_error(
            p, p->header_line,
            "the GPU model is unknown: nvidia-smi topo -m does not print it, this matrix "
            "has no NVLink (NV#) to infer it from, and no line names it; add a comment "
            "line naming it, such as '# GPU 0-%d: NVIDIA L40S', with the name that "
            "`nvidia-smi --query-gpu=name --format=csv,noheader` prints",
            G - 1);
    if (g->uniform && G >= 3 && g->uniform * (G - 1) > MOST_NVLINKS) {
        /* No GPU has that many links: the pairs meet in an NVSwitch fabric. */
        const char *why = "";
        switch (g->uniform) {
        case 18:
            use_model(g, "H100", 90, "");
            why = "HGX/DGX H100; H200 (same links) and B200 (NVLink5, twice the rate) systems "
                  "look the same";
            break;
        case 12:
            use_model(g, "A100-SXM4", 80, "");
            why = "DGX/HGX A100; an 80GB part looks the same";
            break;
        case 8:
            use_model(g, "A800-SXM4-80", 80, "");
            why = "A800 with 8 NVLinks; an H800 (sm_90) looks the same";
            break;
        case 6:
            use_model(g, "V100-SXM3", 70, "");
            why = "DGX-2 with NVSwitch";
            break;
        default:
            return topo_smi_error(
                p, p->header_line,
                "the GPU model is unknown: NV%d between every GPU "
                "pair matches no known NVSwitch system; add a comment line naming it, "
                "such as '# GPU 0-%d: NVIDIA H100 80GB HBM3'",
                g->uniform, G - 1);
        }
        return acc_topo_assume(t,
                               "GPU model %s (sm_%d) inferred from NV%d between every GPU "
                               "pair (%s); name the model in a comment line to be exact",
                               g->model, g->sm, g->uniform, why);
    }
    if (g->tmax > MOST_NVLINKS)
        return topo_smi_error(
            p, p->header_line,
            "the NV# cells give one GPU %d NVLinks, more than any GPU has, yet the GPU "
            "pairs differ, as they never do behind an NVSwitch: a damaged capture?",
            g->tmax);
    if (g->uniform || min_peers >= 2) {
        /* A direct mesh: the links per GPU tell the generation. */
        if (g->tmax <= 6)
            use_model(g, "V100-SXM2", 70, "");
        else if (g->tmax <= 12)
            use_model(g, "A100-SXM4", 80, "");
        else
            use_model(g, "H100", 90, "");
        return acc_topo_assume(t,
                               "GPU model %s (sm_%d) inferred from up to %d direct NVLinks "
                               "per GPU (%s); name the model in a comment line to be exact",
                               g->model, g->sm, g->tmax,
                               g->tmax <= 6 ? "a DGX-1 hybrid cube mesh; P100 looks alike"
                                            : "a GPU generation with that many links");
    }
    return topo_smi_error(
        p, p->header_line,
        "the GPU model is unknown: nvidia-smi topo -m does not print it, and NVLinks "
        "that join only pairs of GPUs (bridged PCIe cards?) do not tell it; add a comment "
        "line naming it, such as '# GPU 0-%d: NVIDIA A40'",
        G - 1);
}

static acc_status_t add_switch(acc_topo_t *t, int parent, int numa, int host_bridge, int gen,
                               int *out)
{
    acc_topo_vertex_t *v;
    acc_status_t st = acc_topo_add_vertex(t, ACC_VTX_PCISW, out);
    if (st != ACC_OK)
        return st;
    v = acc_topo_vertex_mut(t, *out);
    v->numa = numa;
    v->host_bridge = host_bridge;
    return topo_add_pcie(t, *out, parent, gen, 16);
}

/* The smallest PCIe tree with the matrix's classes: devices PIX to each other share a switch;
 * PIX groups PXB to each other hang from leaf switches under one upper switch; PXB groups PHB to
 * each other share a host bridge; the rest hang from their CPU, so that NODE crosses it.  A
 * lone device hangs directly from the level above, and a host bridge only one subtree uses is
 * folded into its CPU, as NCCL's own topology does. */
static acc_status_t build_pcie(smi_t *p, acc_topo_t *t, const int *vtx, const int *cpu_vtx, int gen,
                               int *nsw, int *nhb)
{
    int n = p->ndev, a, b;
    int *mem = acc_mem_alloc(6 * (size_t)n * sizeof(int));
    int *pxb_in_hb, *pix_in_pxb, *dev_in_pix, *top_hb, *top_pxb, *top_pix;
    acc_status_t st = ACC_OK;

    if (!mem)
        return topo_smi_nomem();
    pxb_in_hb = mem, pix_in_pxb = mem + n, dev_in_pix = mem + 2 * n;
    top_hb = mem + 3 * n, top_pxb = mem + 4 * n, top_pix = mem + 5 * n;
    for (a = 0; a < n; a++) {
        p->hb[a] = p->pxb[a] = p->pix[a] = a;
        pxb_in_hb[a] = pix_in_pxb[a] = dev_in_pix[a] = 0;
        top_hb[a] = top_pxb[a] = top_pix[a] = -1;
    }
    for (a = 0; a < n; a++) {
        for (b = a + 1; b < n; b++) {
            int c = SMI_CELL(p, a, b);
            if (p->grp[a] != p->grp[b] || !SMI_IS_PCIE(c))
                continue;
            if (c <= SMI_C_PHB)
                uf_join(p->hb, a, b);
            if (c <= SMI_C_PXB)
                uf_join(p->pxb, a, b);
            if (c == SMI_C_PIX)
                uf_join(p->pix, a, b);
        }
    }
    uf_flatten(p->hb, n);
    uf_flatten(p->pxb, n);
    uf_flatten(p->pix, n);
    /* Groups nest (PIX within PXB within PHB), so counting roots counts subgroups. */
    for (a = 0; a < n; a++) {
        pxb_in_hb[p->hb[a]] += p->pxb[a] == a;
        pix_in_pxb[p->pxb[a]] += p->pix[a] == a;
        dev_in_pix[p->pix[a]]++;
    }
    for (a = 0; a < n && st == ACC_OK; a++) {
        int h = p->hb[a], x = p->pxb[a], q = p->pix[a], numa = p->grp[a];
        if (top_hb[h] < 0) {
            top_hb[h] = cpu_vtx[numa];
            if (pxb_in_hb[h] >= 2 &&
                (st = add_switch(t, cpu_vtx[numa], numa, 1, gen, &top_hb[h])) == ACC_OK)
                ++*nhb;
        }
        if (st == ACC_OK && top_pxb[x] < 0) {
            top_pxb[x] = top_hb[h];
            if (pix_in_pxb[x] >= 2 &&
                (st = add_switch(t, top_hb[h], numa, 0, gen, &top_pxb[x])) == ACC_OK)
                ++*nsw;
        }
        if (st == ACC_OK && top_pix[q] < 0) {
            top_pix[q] = top_pxb[x];
            /* Leaf switches for every PIX group under an upper switch: two devices PXB to
             * each other must cross more than one switch. */
            if ((pix_in_pxb[x] >= 2 || dev_in_pix[q] >= 2) &&
                (st = add_switch(t, top_pxb[x], numa, 0, gen, &top_pix[q])) == ACC_OK)
                ++*nsw;
        }
        if (st == ACC_OK)
            st = topo_add_pcie(t, vtx[a], top_pix[q], gen, 16);
    }
    acc_mem_free(mem);
    return st;
}

/* The class the rebuilt tree gives a pair, for comparison with the matrix. */
static int tree_class(const smi_t *p, int a, int b)
{
    if (p->grp[a] != p->grp[b])
        return SMI_C_SYS;
    if (p->hb[a] != p->hb[b])
        return SMI_C_NODE;
    if (p->pxb[a] != p->pxb[b])
        return SMI_C_PHB;
    return p->pix[a] != p->pix[b] ? SMI_C_PXB : SMI_C_PIX;
}

/* Matrices from NVML always fit a tree, except that some machines report SYS between devices
 * of one NUMA node; the NUMA Affinity column wins there, as it does in hwloc and NCCL's view of
 * the same machine.  Either way the pairs whose class changes are reported. */
static acc_status_t report_tree(const smi_t *p, acc_topo_t *t)
{
    int a, b, nsys = 0, nother = 0, sa = -1, sb = -1, oa = -1, ob = -1;
    char s1[8], s2[8];
    acc_status_t st = ACC_OK;

    for (a = 0; a < p->ndev; a++) {
        for (b = a + 1; b < p->ndev; b++) {
            int c = SMI_CELL(p, a, b), tc = tree_class(p, a, b);
            if (!SMI_IS_PCIE(c) || c == tc)
                continue;
            if (c == SMI_C_SYS) {
                sa = nsys++ ? sa : a;
                sb = nsys > 1 ? sb : b;
            } else {
                oa = nother++ ? oa : a;
                ob = nother > 1 ? ob : b;
            }
        }
    }
    if (nsys)
        st = acc_topo_assume(t,
                             "%d device pairs on one NUMA node are SYS in the matrix (first "
                             "%s-%s); the NUMA Affinity column puts them under one CPU, so their "
                             "path class is %s",
                             nsys, p->col[sa], p->col[sb],
                             topo_smi_cell_str(tree_class(p, sa, sb), s1));
    if (st == ACC_OK && nother)
        st = acc_topo_assume(t,
                             "the matrix fits no PCIe tree at %d device pairs (first %s-%s: "
                             "%s in the matrix, %s in the rebuilt tree)",
                             nother, p->col[oa], p->col[ob],
                             topo_smi_cell_str(SMI_CELL(p, oa, ob), s1),
                             topo_smi_cell_str(tree_class(p, oa, ob), s2));
    return st;
}

static acc_status_t add_devices(smi_t *p, acc_topo_t *t, const gpu_plan_t *g, int *vtx)
{
    int d, e, named = 1;
    double speed = g->sm >= 90 ? 400 : g->sm == 80 ? 200 : 100;
    acc_status_t st;

    for (d = 0; d < p->ndev; d++) {
        acc_topo_vertex_t *v;
        int gpu = d < p->ngpu;
        if ((st = acc_topo_add_vertex(t, gpu ? ACC_VTX_GPU : ACC_VTX_NIC, &vtx[d])) != ACC_OK)
            return st;
        v = acc_topo_vertex_mut(t, vtx[d]);
        v->numa = p->grp[d];
        if (gpu) {
            snprintf(v->model, sizeof(v->model), "%s", g->model);
            v->sm = g->sm;
            if ((st = topo_fill_gpu_defaults(t, vtx[d])) != ACC_OK)
                return acc_error_prefix(st, "%s: ", p->file);
            continue;
        }
        snprintf(v->dev_name, sizeof(v->dev_name), "%s", p->dev[d]);
        named &= p->dev[d][0] != 0;
        v->speed_gbps = speed;
        for (e = 0; e < p->ngpu; e++)
            v->gdr |= SMI_CELL(p, d, e) == SMI_C_PIX || SMI_CELL(p, d, e) == SMI_C_PXB;
    }
    if (p->nnic && (st = acc_topo_assume(
                        t,
                        "NIC speed %.0f Gb/s: nvidia-smi topo -m gives none (default for %s); "
                        "GPUDirect RDMA taken as usable for NICs PIX or PXB to a GPU",
                        speed,
                        g->sm >= 90   ? "an H100-generation system's ConnectX-7"
                        : g->sm == 80 ? "an A100-generation system's ConnectX-6"
                                      : "other systems")) != ACC_OK)
        return st;
    if (!named)
        return acc_topo_assume(t, "NIC device names unknown: the text has no NIC Legend");
    return ACC_OK;
}

static acc_status_t add_nvlinks(const smi_t *p, acc_topo_t *t, gpu_plan_t *g, const int *vtx)
{
    const acc_gpu_arch_t *arch = acc_topo_gpu_arch(g->sm);
    int a, b, nvs, G = p->ngpu;
    acc_status_t st = ACC_OK;

    if (!g->tmax)
        return ACC_OK;
    g->nvswitch = g->uniform && G >= 3 && arch && g->uniform * (G - 1) > most_links(g->m, arch);
    if (g->nvswitch) {
        if ((st = topo_nvswitch(t, &nvs)) != ACC_OK)
            return st;
        for (a = 0; a < G && st == ACC_OK; a++)
            st = topo_add_nvlinks(t, vtx[a], nvs, g->uniform);
        if (st == ACC_OK)
            st = acc_topo_assume(t,
                                 "NV%d between every pair of the %d GPUs: an NVSwitch "
                                 "fabric, %d NVLinks from each GPU into it (nvidia-smi shows no "
                                 "switches)",
                                 g->uniform, G, g->uniform);
        return st;
    }
    for (a = 0; a < G && st == ACC_OK; a++)
        for (b = a + 1; b < G && st == ACC_OK; b++)
            if (SMI_IS_NV(SMI_CELL(p, a, b)))
                st = topo_add_nvlinks(t, vtx[a], vtx[b], SMI_CELL(p, a, b) - SMI_C_NV);
    if (st == ACC_OK)
        st = acc_topo_assume(t, "NV# cells taken as direct GPU-GPU NVLinks (no NVSwitch: the "
                                "pairs differ, or a full mesh fits the GPU's links)");
    return st;
}

acc_status_t topo_smi_build(smi_t *p, acc_topo_t *t)
{
    gpu_plan_t g;
    int *vtx = acc_mem_calloc((size_t)p->ndev + (size_t)p->ndev, sizeof(int)), *cpu_vtx, c;
    int gen, nsw = 0, nhb = 0;
    acc_status_t st;

    if (!vtx)
        return topo_smi_nomem();
    cpu_vtx = vtx + p->ndev;
    if ((st = choose_model(p, t, &g)) != ACC_OK || (st = group_numa(p, t)) != ACC_OK)
        goto out;
    for (c = 0; c < p->ngrp; c++) {
        int d;
        if ((st = acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu_vtx[c])) != ACC_OK)
            goto out;
        for (d = 0; d < p->ngpu; d++) {
            if (p->grp[d] == c && p->cpu_aff[d][0]) {
                snprintf(acc_topo_vertex_mut(t, cpu_vtx[c])->affinity, ACC_TOPO_AFFINITY_MAX, "%s",
                         p->cpu_aff[d]);
                break;
            }
        }
    }
    gen = topo_default_pcie_gen(g.sm);
    if ((st = topo_connect_cpus(t)) != ACC_OK || (st = add_devices(p, t, &g, vtx)) != ACC_OK ||
        (st = add_nvlinks(p, t, &g, vtx)) != ACC_OK ||
        (st = build_pcie(p, t, vtx, cpu_vtx, gen, &nsw, &nhb)) != ACC_OK ||
        (st = report_tree(p, t)) != ACC_OK)
        goto out;
    if ((st = acc_topo_assume(t,
                              "PCIe tree rebuilt from the matrix classes (PCIe switches: "
                              "%d, host bridges: %d); no bus ids (nvidia-smi topo -m prints none)",
                              nsw, nhb)) != ACC_OK)
        goto out;
    st = acc_topo_assume(t,
                         "PCIe Gen%d x16 on every PCIe link: nvidia-smi topo -m gives no link "
                         "speeds (default for sm_%d GPUs)",
                         gen, g.sm);
out:
    acc_mem_free(vtx);
    return st;
}
