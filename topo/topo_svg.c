/*
 * The topology as a picture (acc_topo_draw_svg): one node's GPUs, NVSwitch fabric, PCIe
 * switches, NICs and CPUs/NUMA nodes with the links between them, each labelled with its class
 * and bandwidth, and for a cluster the node count and the network.
 *
 * The PCIe (and C2C) links form a tree hanging from the CPUs, so the picture is that tree drawn
 * upside down: CPUs at the bottom, switches above them by depth, and at the top each parent's
 * devices as a group: its GPUs in the GPU row, its NICs in a block below them, stacked two
 * wide on both sides of a vertical bus.  Every subtree owns its own horizontal span and edges
 * run as elbows (up, across just above the parent's row, up again), so no edge crosses a box,
 * whatever the depth of the tree.  NVLinks go up from the GPUs to the NVSwitch bar, or arc
 * between GPUs where they are wired directly; SMP links join the CPUs.  Measured for DGX H100
 * (8 GPUs, 8 NICs): 1.2k pixels wide; AWS p5 (32 NICs, four per switch) is as wide and taller.
 */
#include "internal.h"

#include "acc_svg.h"

#include <math.h>
#include <string.h>

enum {
    GPU_W = 96,
    GPU_H = 46,
    GPU_SLOT = GPU_W + 12,
    NIC_W = 72,
    NIC_H = 46,
    NIC_ROW = NIC_H + 8,
    BUS_GAP = 7, /* from the bus to a NIC's edge */
    SW_W = 72,
    SW_H = 28,
    CPU_W = 160,
    CPU_H = 46,
    ROW = 64, /* between switch rows */
    MARGIN = 24,
    TITLE_H = 64,
    NVS_H = 30,
    NVS_GAP = 56, /* from the NVSwitch bar to the GPU row */
    LEGEND_H = 40,
};

static const char *const link_colour[ACC_LINK_KIND_COUNT] = {"#228833", "#4477aa", "#aa3377",
                                                             "#777777"};

typedef struct {
    const acc_topo_t *t;
    int nv;
    int *parent; /* tree parent over PCIe/C2C, -1 for roots and devices outside the tree */
    int *depth;  /* CPUs 0, switches 1.., devices: their parent's + 1 */
    double *x, *y;
    double *bus; /* per parent with devices: x of its devices' bus; NAN when none */
    int max_depth, max_nic_rows;
    double y_gpu, y_nic, y_cpu;
    double width;
} layout_t;

static int is_tree_link(const acc_topo_link_t *l)
{
    return l->kind == ACC_LINK_PCIE || l->kind == ACC_LINK_C2C;
}

static int is_device(const acc_topo_vertex_t *v)
{
    return v->kind == ACC_VTX_GPU || v->kind == ACC_VTX_NIC;
}

/* The tree: breadth first from the CPUs through switches; a device hangs under its first
 * neighbour met. */
static acc_status_t build_tree(layout_t *L)
{
    int *queue = acc_mem_calloc((size_t)L->nv, sizeof(int));
    int head = 0, tail = 0, i, k, n = acc_topo_link_count(L->t);

    if (!queue)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the topology picture");
    for (i = 0; i < L->nv; i++) {
        L->parent[i] = -1;
        L->depth[i] = -1;
        if (acc_topo_vertex(L->t, i)->kind == ACC_VTX_CPU) {
            L->depth[i] = 0;
            queue[tail++] = i;
        }
    }
    while (head < tail) {
        int u = queue[head++];
        for (k = 0; k < n; k++) {
            const acc_topo_link_t *l = acc_topo_link(L->t, k);
            const acc_topo_vertex_t *v;
            if (l->from != u || !is_tree_link(l) || L->depth[l->to] >= 0)
                continue;
            v = acc_topo_vertex(L->t, l->to);
            if (v->kind == ACC_VTX_CPU || v->kind == ACC_VTX_NVSWITCH)
                continue;
            L->parent[l->to] = u;
            L->depth[l->to] = L->depth[u] + 1;
            if (v->kind == ACC_VTX_PCISW) {
                queue[tail++] = l->to;
                if (L->depth[l->to] > L->max_depth)
                    L->max_depth = L->depth[l->to];
            }
        }
    }
    acc_mem_free(queue);
    return ACC_OK;
}

static int count_children(const layout_t *L, int p, acc_vertex_kind_t kind)
{
    int i, n = 0;
    for (i = 0; i < L->nv; i++)
        if (L->parent[i] == p && acc_topo_vertex(L->t, i)->kind == kind)
            n++;
    return n;
}

/* Offset of the k-th of g GPUs of a group from its bus, kept clear of a NIC block of half
 * width half_nics: an odd count puts its middle GPU on the bus itself. */
static double gpu_offset(int k, int g, double half_nics)
{
    double d = half_nics > 0 ? half_nics + GPU_W / 2.0 + 6 : 0;
    if (g % 2) {
        int m = k - g / 2;
        if (m == 0)
            return 0;
        return (m > 0 ? 1 : -1) * (fmax(GPU_SLOT, d) + (fabs((double)m) - 1) * GPU_SLOT);
    } else {
        int m = k < g / 2 ? g / 2 - k : k - g / 2 + 1; /* 1.. outward */
        return (k < g / 2 ? -1 : 1) * (fmax(GPU_SLOT / 2.0, d) + (m - 1) * GPU_SLOT);
    }
}

/* Lay out the devices of parent p from x0; its width. */
static double place_group(layout_t *L, int p, double x0)
{
    int g = count_children(L, p, ACC_VTX_GPU), n = count_children(L, p, ACC_VTX_NIC);
    double half_nics = n ? NIC_W + BUS_GAP : 0, half = half_nics, c;
    int i, kg = 0, kn = 0;

    if (!g && !n)
        return 0;
    for (i = 0; i < g; i++)
        half = fmax(half, fabs(gpu_offset(i, g, half_nics)) + GPU_SLOT / 2.0);
    half = fmax(half + 6, GPU_SLOT / 2.0);
    c = x0 + half;
    L->bus[p] = c;
    for (i = 0; i < L->nv; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(L->t, i);
        if (L->parent[i] != p)
            continue;
        if (v->kind == ACC_VTX_GPU) {
            L->x[i] = c + gpu_offset(kg++, g, half_nics);
            L->y[i] = L->y_gpu;
        } else if (v->kind == ACC_VTX_NIC) {
            /* Right of the bus first, then left, a row per two. */
            L->x[i] = c + (kn % 2 == 0 ? 1 : -1) * (BUS_GAP + NIC_W / 2.0);
            L->y[i] = L->y_nic + (kn / 2) * NIC_ROW;
            kn++;
        }
    }
    if ((n + 1) / 2 > L->max_nic_rows)
        L->max_nic_rows = (n + 1) / 2;
    return 2 * half;
}

/* Lay out the subtree of u from x0: its devices' group first, then each child switch; u sits
 * at the middle of what its children span.  Its width. */
static double place(layout_t *L, int u, double x0)
{
    double w = place_group(L, u, x0), first = NAN, last = NAN;
    int i;

    if (w > 0)
        first = last = L->bus[u];
    for (i = 0; i < L->nv; i++) {
        if (L->parent[i] != u || acc_topo_vertex(L->t, i)->kind != ACC_VTX_PCISW)
            continue;
        w += place(L, i, x0 + w);
        if (isnan(first))
            first = L->x[i];
        last = L->x[i];
    }
    if (w <= 0) /* nothing below it: room for its own box (a CPU's is the widest) */
        w = (acc_topo_vertex(L->t, u)->kind == ACC_VTX_CPU ? CPU_W : SW_W) + 16;
    L->x[u] = isnan(first) ? x0 + w / 2 : (first + last) / 2;
    return w;
}

static void link_text(const acc_topo_link_t *l, char *out, size_t cap)
{
    switch (l->kind) {
    case ACC_LINK_NVLINK:
        snprintf(out, cap, "%d NVLink, %.0f GB/s", l->count, l->bw);
        break;
    case ACC_LINK_PCIE:
        if (l->gen > 0 && l->width > 0)
            snprintf(out, cap, "Gen%d x%d %.0f GB/s", l->gen, l->width, l->bw);
        else
            snprintf(out, cap, "PCIe %.0f GB/s", l->bw);
        break;
    case ACC_LINK_C2C:
        snprintf(out, cap, "C2C %.0f GB/s", l->bw);
        break;
    default:
        snprintf(out, cap, "SMP %.0f GB/s", l->bw);
    }
}

static const acc_topo_link_t *link_of(const layout_t *L, int a, int b)
{
    int k, n = acc_topo_link_count(L->t);
    for (k = 0; k < n; k++) {
        const acc_topo_link_t *l = acc_topo_link(L->t, k);
        if (l->from == a && l->to == b)
            return l;
    }
    return NULL;
}

static void open_link(acc_buf_t *b, const acc_topo_link_t *l, const char *a, const char *z)
{
    acc_buf_printf(b, "<g class=\"link\" data-kind=\"%s\" data-from=\"%s\" data-to=\"%s\">\n",
                   acc_link_kind_name(l->kind), a, z);
}

static void stroke(const acc_topo_link_t *l, char *attrs, size_t cap)
{
    snprintf(attrs, cap, "stroke=\"%s\" stroke-width=\"%s\" fill=\"none\"%s", link_colour[l->kind],
             l->kind == ACC_LINK_NVLINK ? "3" : "1.8",
             l->kind == ACC_LINK_SMP ? " stroke-dasharray=\"6 4\"" : "");
}

/* The top edge of a drawn vertex, and its bottom. */
static double top_of(const layout_t *L, int i)
{
    switch (acc_topo_vertex(L->t, i)->kind) {
    case ACC_VTX_GPU:
    case ACC_VTX_NIC:
        return L->y[i];
    default:
        return L->y[i] - (acc_topo_vertex(L->t, i)->kind == ACC_VTX_CPU ? CPU_H : SW_H) / 2.0;
    }
}

/* The tree edges: a device group's bus with its stubs, and switch elbows. */
static void draw_tree(acc_buf_t *b, const layout_t *L)
{
    char attrs[128], text[64];
    int i;

    for (i = 0; i < L->nv; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(L->t, i), *pv;
        const acc_topo_link_t *l;
        int p = L->parent[i];
        double px, yp;

        if (p < 0 || !(l = link_of(L, i, p)))
            continue;
        pv = acc_topo_vertex(L->t, p);
        stroke(l, attrs, sizeof(attrs));
        link_text(l, text, sizeof(text));
        open_link(b, l, v->name, pv->name);
        yp = top_of(L, p);
        px = L->x[p];
        if (is_device(v)) {
            double bus = L->bus[p];
            /* Up the bus from the parent; a stub across to a NIC; to a GPU off the bus, across
             * just above the NICs and up. */
            acc_buf_printf(b, "<path d=\"M%.1f %.1f V%.1f H%.1f", px, yp, yp - 12, bus);
            if (v->kind == ACC_VTX_NIC)
                acc_buf_printf(b, " V%.1f H%.1f", L->y[i],
                               L->x[i] + (L->x[i] > bus ? -1 : 1) * NIC_W / 2.0);
            else if (fabs(L->x[i] - bus) > 0.5)
                acc_buf_printf(b, " V%.1f H%.1f V%.1f", L->y_gpu + GPU_H + 21, L->x[i],
                               L->y_gpu + GPU_H);
            else
                acc_buf_printf(b, " V%.1f", L->y_gpu + GPU_H);
            acc_buf_printf(b, "\" %s/>\n", attrs);
            if (v->kind == ACC_VTX_GPU)
                acc_svg_label(b, L->x[i], L->y[i] + GPU_H + 13, 9, text);
        } else {
            double ychild = L->y[i] + SW_H / 2.0;
            acc_buf_printf(b, "<path d=\"M%.1f %.1f V%.1f H%.1f V%.1f\" %s/>\n", px, yp, yp - 12,
                           L->x[i], ychild, attrs);
            acc_svg_label(b, L->x[i], ychild + 13, 9, text);
        }
        acc_buf_puts(b, "</g>\n");
    }
}

static void box(acc_buf_t *b, const acc_topo_vertex_t *v, double x, double y, double w, double h,
                const char *fill, const char *line1, const char *line2, const char *line3)
{
    acc_buf_printf(b, "<g class=\"vertex\" data-kind=\"%s\" data-name=\"",
                   acc_vertex_kind_name(v->kind));
    acc_buf_put_xml(b, v->name);
    acc_buf_puts(b, "\">\n");
    acc_buf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" "
                   "fill=\"%s\" stroke=\"#333\"/>\n",
                   x, y, w, h, fill);
    acc_svg_text(b, x + w / 2, y + 15, "text-anchor=\"middle\" font-weight=\"bold\"", "%s", line1);
    if (line2 && *line2)
        acc_svg_text(b, x + w / 2, y + 28, "text-anchor=\"middle\" font-size=\"9\"", "%s", line2);
    if (line3 && *line3)
        acc_svg_text(b, x + w / 2, y + 40, "text-anchor=\"middle\" font-size=\"9\"", "%s", line3);
    acc_buf_puts(b, "</g>\n");
}

static void draw_vertices(acc_buf_t *b, const layout_t *L)
{
    char l2[64], l3[64];
    int i;

    for (i = 0; i < L->nv; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(L->t, i);
        const acc_topo_link_t *l = L->parent[i] >= 0 ? link_of(L, i, L->parent[i]) : NULL;
        switch (v->kind) {
        case ACC_VTX_GPU:
            snprintf(l3, sizeof(l3), "sm_%d, %d SMs", v->sm, v->sm_count);
            box(b, v, L->x[i] - GPU_W / 2.0, L->y[i], GPU_W, GPU_H, "#dff0d8", v->name,
                v->model[0] ? v->model : "GPU", l3);
            break;
        case ACC_VTX_NIC:
            snprintf(l2, sizeof(l2), "%g Gb/s", v->speed_gbps);
            if (l)
                snprintf(l3, sizeof(l3), "Gen%d x%d%s", l->gen, l->width, v->gdr ? " GDR" : "");
            box(b, v, L->x[i] - NIC_W / 2.0, L->y[i] - NIC_H / 2.0, NIC_W, NIC_H, "#fdebd0",
                v->name, l2, l && l->gen ? l3 : v->dev_name);
            break;
        case ACC_VTX_PCISW:
            box(b, v, L->x[i] - SW_W / 2.0, L->y[i] - SW_H / 2.0, SW_W, SW_H,
                v->host_bridge ? "#e8e8e8" : "#dbe9f6", v->name, NULL, NULL);
            break;
        default:
            break;
        }
    }
}

/* CPUs: a box per NUMA node under its subtree, SMP links between them. */
static void draw_cpus(acc_buf_t *b, const layout_t *L)
{
    char l2[64], l3[96], attrs[128], text[64];
    int i, j, prev = -1;

    for (i = 0; i < L->nv; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(L->t, i);
        if (v->kind != ACC_VTX_CPU)
            continue;
        snprintf(l2, sizeof(l2), "NUMA node %d%s%s", v->id, v->cpu_arch[0] ? ", " : "",
                 v->cpu_arch);
        snprintf(l3, sizeof(l3), "%.40s", v->affinity[0] ? v->affinity : v->cpu_vendor);
        if (v->affinity[0])
            snprintf(l3, sizeof(l3), "cores %.34s", v->affinity);
        if (prev >= 0) {
            const acc_topo_link_t *l = NULL;
            int k, n = acc_topo_link_count(L->t);
            for (k = 0; k < n && !l; k++) {
                const acc_topo_link_t *c = acc_topo_link(L->t, k);
                if (c->kind == ACC_LINK_SMP && ((c->from == prev && c->to == i)))
                    l = c;
            }
            for (j = 0; !l && j < n; j++) {
                const acc_topo_link_t *c = acc_topo_link(L->t, j);
                if (c->kind == ACC_LINK_SMP && c->from == i)
                    l = c;
            }
            if (l) {
                stroke(l, attrs, sizeof(attrs));
                link_text(l, text, sizeof(text));
                open_link(b, l, acc_topo_vertex(L->t, prev)->name, v->name);
                acc_svg_line(b, L->x[prev] + CPU_W / 2.0, L->y[i], L->x[i] - CPU_W / 2.0, L->y[i],
                             attrs);
                acc_svg_label(b, (L->x[prev] + L->x[i]) / 2, L->y[i] - 5, 10, text);
                acc_buf_puts(b, "</g>\n");
            }
        }
        box(b, v, L->x[i] - CPU_W / 2.0, L->y[i] - CPU_H / 2.0, CPU_W, CPU_H, "#f2f2f2", v->name,
            l2, l3);
        prev = i;
    }
}

/* NVLinks: to the NVSwitch bar above the GPUs, or arcs between GPUs wired directly. */
static void draw_nvlinks(acc_buf_t *b, const layout_t *L, double gx0, double gx1)
{
    char attrs[128], text[64];
    int k, n = acc_topo_link_count(L->t), nvs = -1, i;
    double ybar = L->y_gpu - NVS_GAP;

    for (i = 0; i < L->nv && nvs < 0; i++)
        if (acc_topo_vertex(L->t, i)->kind == ACC_VTX_NVSWITCH)
            nvs = i;
    for (k = 0; k < n; k++) {
        const acc_topo_link_t *l = acc_topo_link(L->t, k);
        const acc_topo_vertex_t *a = acc_topo_vertex(L->t, l->from), *z;
        if (l->kind != ACC_LINK_NVLINK || a->kind != ACC_VTX_GPU)
            continue;
        z = acc_topo_vertex(L->t, l->to);
        stroke(l, attrs, sizeof(attrs));
        if (z->kind == ACC_VTX_NVSWITCH) {
            open_link(b, l, a->name, z->name);
            acc_svg_line(b, L->x[l->from], L->y_gpu, L->x[l->from], ybar + NVS_H, attrs);
            snprintf(text, sizeof(text), "%d NVLink", l->count);
            acc_svg_label(b, L->x[l->from], ybar + NVS_H + 14, 9, text);
            snprintf(text, sizeof(text), "%.0f GB/s", l->bw);
            acc_svg_label(b, L->x[l->from], ybar + NVS_H + 25, 9, text);
            acc_buf_puts(b, "</g>\n");
        } else if (z->kind == ACC_VTX_GPU && l->from < l->to) {
            double x0 = L->x[l->from], x1 = L->x[l->to], h = fmin(60, 10 + fabs(x1 - x0) / 12);
            open_link(b, l, a->name, z->name);
            acc_buf_printf(b, "<path d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\" %s/>\n", x0, L->y_gpu,
                           (x0 + x1) / 2, L->y_gpu - 2 * h, x1, L->y_gpu, attrs);
            snprintf(text, sizeof(text), "%d", l->count);
            acc_svg_label(b, (x0 + x1) / 2, L->y_gpu - h + 4, 9, text);
            acc_buf_puts(b, "</g>\n");
        }
    }
    if (nvs >= 0) {
        const acc_topo_vertex_t *v = acc_topo_vertex(L->t, nvs);
        acc_buf_printf(b, "<g class=\"vertex\" data-kind=\"nvswitch\" data-name=\"%s\">\n",
                       v->name);
        acc_svg_rect(b, gx0 - GPU_W / 2.0, ybar, gx1 - gx0 + GPU_W, NVS_H,
                     "rx=\"4\" fill=\"#c7e9c0\" stroke=\"#333\"");
        acc_svg_text(b, (gx0 + gx1) / 2, ybar + 20, "text-anchor=\"middle\" font-weight=\"bold\"",
                     "NVSwitch fabric (%s): every GPU's NVLinks", v->name);
        acc_buf_puts(b, "</g>\n");
    }
}

static void draw_titles(acc_buf_t *b, const layout_t *L)
{
    const acc_topo_network_t *net = acc_topo_network(L->t);
    const char *name = acc_topo_name(L->t)[0] ? acc_topo_name(L->t) : acc_topo_source(L->t);
    int ncpu = acc_topo_count(L->t, ACC_VTX_CPU);

    acc_svg_text(b, MARGIN, 26, "font-size=\"17\" font-weight=\"bold\"",
                 "%s: %d GPUs, %s, %d PCIe switches, %d NIC%s, %d NUMA node%s", name,
                 acc_topo_count(L->t, ACC_VTX_GPU),
                 acc_topo_count(L->t, ACC_VTX_NVSWITCH) ? "NVSwitch" : "no NVSwitch",
                 acc_topo_count(L->t, ACC_VTX_PCISW), acc_topo_count(L->t, ACC_VTX_NIC),
                 acc_topo_count(L->t, ACC_VTX_NIC) == 1 ? "" : "s", ncpu, ncpu == 1 ? "" : "s");
    if (net && net->nodes > 1)
        acc_svg_text(b, MARGIN, 46, "font-size=\"13\"",
                     "one node of %d; network %s: %s, oversubscription %g:1, %g us one way "
                     "between NICs",
                     net->nodes, net->name[0] ? net->name : "(unnamed)",
                     net->rail_optimized ? "rail-optimised" : "not rail-optimised",
                     net->oversubscription, net->latency_us);
    else
        acc_svg_text(b, MARGIN, 46, "font-size=\"13\" fill=\"#555\"",
                     "one node; links labelled with their kind and bandwidth per direction");
}

static void draw_legend(acc_buf_t *b, double y)
{
    static const char *const names[ACC_LINK_KIND_COUNT] = {"NVLink", "PCIe", "C2C",
                                                           "SMP (between sockets)"};
    double x = MARGIN;
    int k;

    for (k = 0; k < ACC_LINK_KIND_COUNT; k++) {
        char attrs[128];
        snprintf(attrs, sizeof(attrs), "stroke=\"%s\" stroke-width=\"%s\"%s", link_colour[k],
                 k == ACC_LINK_NVLINK ? "3" : "1.8",
                 k == ACC_LINK_SMP ? " stroke-dasharray=\"6 4\"" : "");
        acc_svg_line(b, x, y, x + 30, y, attrs);
        acc_svg_text(b, x + 36, y + 4, "font-size=\"12\"", "%s", names[k]);
        x += 70 + 7.5 * (double)strlen(names[k]);
    }
    acc_svg_text(b, x, y + 4, "font-size=\"12\" fill=\"#555\"",
                 "bandwidths in GB/s per direction; NIC line rates in Gb/s");
}

acc_status_t acc_topo_draw_svg(const acc_topo_t *t, acc_buf_t *out)
{
    layout_t L;
    acc_status_t st;
    double x = MARGIN, gx0 = INFINITY, gx1 = -INFINITY, height;
    int i, ngpu_top = 0;

    if (!t || !out)
        return acc_error_set(ACC_ERR_INVALID, "acc_topo_draw_svg: topology and buffer needed");
    memset(&L, 0, sizeof(L));
    L.t = t;
    L.nv = acc_topo_vertex_count(t);
    L.parent = acc_mem_calloc((size_t)L.nv + 1, sizeof(int));
    L.depth = acc_mem_calloc((size_t)L.nv + 1, sizeof(int));
    L.x = acc_mem_calloc((size_t)L.nv + 1, sizeof(double));
    L.y = acc_mem_calloc((size_t)L.nv + 1, sizeof(double));
    L.bus = acc_mem_calloc((size_t)L.nv + 1, sizeof(double));
    if (!L.parent || !L.depth || !L.x || !L.y || !L.bus) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory for the topology picture");
        goto out;
    }
    if ((st = build_tree(&L)) != ACC_OK)
        goto out;
    for (i = 0; i < L.nv; i++)
        L.bus[i] = NAN;
    L.y_gpu = TITLE_H + (acc_topo_count(t, ACC_VTX_NVSWITCH) ? NVS_GAP + 10 : 80);
    L.y_nic = L.y_gpu + GPU_H + 26 + NIC_H / 2.0;
    /* Each CPU's subtree side by side; devices outside the tree (no PCIe link) at the end. */
    for (i = 0; i < L.nv; i++)
        if (acc_topo_vertex(t, i)->kind == ACC_VTX_CPU) {
            double w = place(&L, i, x);
            if (w < CPU_W) /* narrower than its CPU's box: again, centred under it */
                place(&L, i, x + (CPU_W - w) / 2);
            x += fmax(w, CPU_W) + 16;
        }
    for (i = 0; i < L.nv; i++) {
        const acc_topo_vertex_t *v = acc_topo_vertex(t, i);
        if (L.depth[i] < 0 && is_device(v)) {
            L.x[i] = x + GPU_SLOT / 2.0;
            L.y[i] = v->kind == ACC_VTX_GPU ? L.y_gpu : L.y_nic;
            x += GPU_SLOT;
        }
    }
    L.width = x + MARGIN;
    if (L.width < 900)
        L.width = 900;
    /* Rows below the devices: switches by depth, deepest first, then the CPUs. */
    {
        double y_sw = L.y_nic + L.max_nic_rows * NIC_ROW + 24;
        L.y_cpu = y_sw + (L.max_depth > 0 ? L.max_depth : 0) * ROW + 20;
        for (i = 0; i < L.nv; i++) {
            const acc_topo_vertex_t *v = acc_topo_vertex(t, i);
            if (v->kind == ACC_VTX_PCISW)
                L.y[i] = y_sw + (L.max_depth - (L.depth[i] > 0 ? L.depth[i] : 1)) * ROW;
            else if (v->kind == ACC_VTX_CPU)
                L.y[i] = L.y_cpu;
            if (v->kind == ACC_VTX_GPU) {
                gx0 = fmin(gx0, L.x[i]);
                gx1 = fmax(gx1, L.x[i]);
                ngpu_top++;
            }
        }
    }
    height = L.y_cpu + CPU_H / 2.0 + 20 + LEGEND_H;
    acc_svg_begin(out, L.width, height);
    draw_titles(out, &L);
    draw_tree(out, &L);
    if (ngpu_top)
        draw_nvlinks(out, &L, gx0, gx1);
    draw_cpus(out, &L);
    draw_vertices(out, &L);
    draw_legend(out, height - LEGEND_H / 2.0);
    acc_svg_end(out);
    st = acc_buf_status(out);
out:
    acc_mem_free(L.parent);
    acc_mem_free(L.depth);
    acc_mem_free(L.x);
    acc_mem_free(L.y);
    acc_mem_free(L.bus);
    return st;
}
