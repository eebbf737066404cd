/* The human summary of a topology and its JSON form. */
#include "internal.h"

#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A matrix cell in `nvidia-smi topo -m` words: X, NV#, PIX, PXB, PHB, NODE, SYS. */
static void cell(const acc_topo_t *t, int va, int vb, char out[16])
{
    const acc_topo_path_t *p = &t->vpaths[(size_t)va * t->nvertices + vb];
    const acc_topo_vertex_t *a = &t->vertices[va], *b = &t->vertices[vb];

    if (va == vb) {
        snprintf(out, 16, "X");
    } else if (p->cls == ACC_PATH_NVL && a->kind == ACC_VTX_GPU && b->kind == ACC_VTX_GPU) {
        int direct = acc_topo_nvlinks_between(t, a->id, b->id);
        int sa = acc_topo_nvlinks_to_switches(t, a->id),
            sb = acc_topo_nvlinks_to_switches(t, b->id);
        int via = sa < sb ? sa : sb;
        snprintf(out, 16, "NV%d", direct + via);
    } else {
        snprintf(out, 16, "%s", acc_path_class_name(p->cls));
    }
}

static void matrix(const acc_topo_t *t, acc_buf_t *out)
{
    int v, w;
    char c[16];

    acc_buf_puts(out, "\nMatrix (nvidia-smi topo -m words; NODE is NCCL's PHB)\n      ");
    for (v = 0; v < t->nvertices; v++)
        if (t->vertices[v].kind == ACC_VTX_GPU || t->vertices[v].kind == ACC_VTX_NIC)
            acc_buf_printf(out, " %-5s", t->vertices[v].name);
    acc_buf_puts(out, "  NUMA\n");
    for (v = 0; v < t->nvertices; v++) {
        if (t->vertices[v].kind != ACC_VTX_GPU && t->vertices[v].kind != ACC_VTX_NIC)
            continue;
        acc_buf_printf(out, "%-6s", t->vertices[v].name);
        for (w = 0; w < t->nvertices; w++) {
            if (t->vertices[w].kind != ACC_VTX_GPU && t->vertices[w].kind != ACC_VTX_NIC)
                continue;
            cell(t, v, w, c);
            acc_buf_printf(out, " %-5s", c);
        }
        acc_buf_printf(out, "  %d\n", t->vertex_numa[v]);
    }
}

/* The NICs a GPU leaves its node by, their line rates together, and PXN's peer. */
static void stripe_text(const acc_topo_t *t, int g, acc_buf_t *out)
{
    const int *nic;
    int via, n = acc_topo_gpu_nics(t, g, &nic, &via), k;
    double gbps = 0;

    if (n == 0)
        return;
    acc_buf_puts(out, "  NICs");
    for (k = 0; k < n; k++) {
        acc_buf_printf(out, "%s%s", k ? "," : " ", t->vertices[nic[k]].name);
        gbps += t->vertices[nic[k]].speed_gbps;
    }
    acc_buf_printf(out, " (%.0f Gb/s", gbps);
    if (via >= 0)
        acc_buf_printf(out, ", PXN through GPU%d", via);
    acc_buf_puts(out, ")");
}

static void gpus(const acc_topo_t *t, acc_buf_t *out)
{
    int g;
    acc_buf_puts(out, "\nGPUs\n");
    for (g = 0; g < t->kind_count[ACC_VTX_GPU]; g++) {
        const acc_topo_vertex_t *v = &t->vertices[t->gpu_vertex[g]];
        int sw = acc_topo_nvlinks_to_switches(t, g), direct = 0, o;
        for (o = 0; o < t->kind_count[ACC_VTX_GPU]; o++)
            direct += acc_topo_nvlinks_between(t, g, o);
        acc_buf_printf(out, "  %-5s %-16s sm_%d  %3d SMs  %5.0f GiB  NUMA %d", v->name,
                       v->model[0] ? v->model : "(unknown)", v->sm, v->sm_count,
                       (double)v->mem_bytes / GIB, t->vertex_numa[t->gpu_vertex[g]]);
        if (v->busid[0])
            acc_buf_printf(out, "  bus %s", v->busid);
        if (sw)
            acc_buf_printf(out, "  NVLink %d to NVSwitch", sw);
        if (direct)
            acc_buf_printf(out, "  NVLink %d to GPUs", direct);
        stripe_text(t, g, out);
        acc_buf_puts(out, "\n");
    }
}

static void nics(const acc_topo_t *t, acc_buf_t *out)
{
    int v, g;
    if (!t->kind_count[ACC_VTX_NIC])
        return;
    acc_buf_puts(out, "\nNICs\n");
    for (v = 0; v < t->nvertices; v++) {
        const acc_topo_vertex_t *n = &t->vertices[v];
        acc_path_class_t best = ACC_PATH_DIS;
        if (n->kind != ACC_VTX_NIC)
            continue;
        for (g = 0; g < t->kind_count[ACC_VTX_GPU]; g++) {
            acc_path_class_t c = t->vpaths[(size_t)t->gpu_vertex[g] * t->nvertices + v].cls;
            if (c < best)
                best = c;
        }
        acc_buf_printf(out, "  %-5s %-12s %4.0f Gb/s  NUMA %d  GDR %s  nearest GPUs (%s):", n->name,
                       n->dev_name[0] ? n->dev_name : "-", n->speed_gbps, t->vertex_numa[v],
                       n->gdr ? "yes" : "no", acc_path_class_name(best));
        for (g = 0; g < t->kind_count[ACC_VTX_GPU]; g++)
            if (t->vpaths[(size_t)t->gpu_vertex[g] * t->nvertices + v].cls == best)
                acc_buf_printf(out, " GPU%d", g);
        acc_buf_puts(out, "  rail of:");
        for (g = 0; g < t->kind_count[ACC_VTX_GPU]; g++)
            if (t->gpu_nic[g] == v)
                acc_buf_printf(out, " GPU%d", g);
        acc_buf_puts(out, "\n");
    }
}

static void numa(const acc_topo_t *t, acc_buf_t *out)
{
    int v, d;
    if (!t->kind_count[ACC_VTX_CPU])
        return;
    acc_buf_puts(out, "\nNUMA nodes\n");
    for (v = 0; v < t->nvertices; v++) {
        const acc_topo_vertex_t *c = &t->vertices[v];
        if (c->kind != ACC_VTX_CPU)
            continue;
        acc_buf_printf(out, "  %-5s %s %s", c->name, c->cpu_vendor[0] ? c->cpu_vendor : "-",
                       c->cpu_arch[0] ? c->cpu_arch : "-");
        if (c->cpu_family)
            acc_buf_printf(out, " family %d model %d", c->cpu_family, c->cpu_model);
        if (c->affinity[0])
            acc_buf_printf(out, "  cpus %s", c->affinity);
        acc_buf_puts(out, "  devices:");
        for (d = 0; d < t->nvertices; d++)
            if ((t->vertices[d].kind == ACC_VTX_GPU || t->vertices[d].kind == ACC_VTX_NIC) &&
                t->vertex_numa[d] == c->id)
                acc_buf_printf(out, " %s", t->vertices[d].name);
        acc_buf_puts(out, "\n");
    }
}

/* GPUs whose model, SM count or memory the input left out and no default filled: unknown, which
 * is not the same as assumed.  Appends the statement to out when there are some. */
static int unknown_facts(const acc_topo_t *t, acc_buf_t *out)
{
    int g, n = 0;
    for (g = 0; g < t->kind_count[ACC_VTX_GPU]; g++) {
        const acc_topo_vertex_t *v = &t->vertices[t->gpu_vertex[g]];
        if (v->model[0] && v->sm_count && v->mem_bytes)
            continue;
        acc_buf_printf(out, "%s%s", n ? ", " : "GPU model, SM count or memory unknown for ",
                       v->name);
        n++;
    }
    if (n)
        acc_buf_puts(out, ": not in the input, and acc assumed none (add the PCI device id or "
                          "the model to the input)");
    return n;
}

/* The missing-NVLink warning and the unknown facts, each into its buffer. */
static acc_status_t warnings(const acc_topo_t *t, acc_buf_t *nvlinks, acc_buf_t *unknown)
{
    acc_status_t st;
    topo_missing_nvlinks(t, nvlinks);
    unknown_facts(t, unknown);
    if ((st = acc_buf_status(nvlinks)) != ACC_OK)
        return st;
    return acc_buf_status(unknown);
}

static void text_warnings(const acc_buf_t *nvlinks, const acc_buf_t *unknown, acc_buf_t *out)
{
    if (!nvlinks->len && !unknown->len)
        return;
    acc_buf_puts(out, "\nWarnings\n");
    if (nvlinks->len)
        acc_buf_printf(out, "  - %s\n", nvlinks->data);
    if (unknown->len)
        acc_buf_printf(out, "  - %s\n", unknown->data);
}

acc_status_t acc_topo_describe(const acc_topo_t *t, acc_buf_t *out)
{
    int ngpus = t->kind_count[ACC_VTX_GPU], nnics = t->kind_count[ACC_VTX_NIC], sw = 0, direct = 0;
    const acc_topo_vertex_t *g = ngpus ? &t->vertices[t->gpu_vertex[0]] : NULL;
    double gbps = 0;

    for (int o = 0; o < ngpus; o++)
        direct += acc_topo_nvlinks_between(t, 0, o);
    if (ngpus)
        sw = acc_topo_nvlinks_to_switches(t, 0);
    for (int v = 0; v < t->nvertices; v++)
        if (t->vertices[v].kind == ACC_VTX_NIC && t->vertices[v].speed_gbps > gbps)
            gbps = t->vertices[v].speed_gbps;
    acc_buf_printf(out, "%d node%s x %d %s", t->net.nodes, t->net.nodes > 1 ? "s" : "", ngpus,
                   g && g->model[0] ? g->model : "GPUs");
    if (sw)
        acc_buf_printf(out, ", NVLink %d to NVSwitch", sw);
    else if (direct)
        acc_buf_printf(out, ", NVLink %d to GPUs", direct);
    else
        acc_buf_puts(out, ", no NVLink");
    if (nnics)
        acc_buf_printf(out, ", %d NIC%s x %g Gb/s", nnics, nnics > 1 ? "s" : "", gbps);
    else
        acc_buf_puts(out, ", no NIC");
    return acc_buf_status(out);
}

acc_status_t acc_topo_summary(const acc_topo_t *t, acc_buf_t *out)
{
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t nvlinks, unknown;
    acc_status_t st = acc_topo_fingerprint(t, fp);
    int i;

    if (st != ACC_OK)
        return st;
    acc_buf_init(&nvlinks);
    acc_buf_init(&unknown);
    if ((st = warnings(t, &nvlinks, &unknown)) != ACC_OK)
        goto out;
    acc_buf_printf(out, "Topology     %s\nSource       %s (%s)\n", t->name[0] ? t->name : "-",
                   acc_topo_source(t), acc_topo_format_name(t->format));
    acc_buf_printf(out, "Ranks        %d node%s x %d GPUs = %d\n", t->net.nodes,
                   t->net.nodes > 1 ? "s" : "", t->kind_count[ACC_VTX_GPU], acc_topo_ranks(t));
    acc_buf_printf(
        out, "Vertices     %d GPU, %d NVSwitch fabric, %d PCIe switch, %d NUMA, %d NIC\n",
        t->kind_count[ACC_VTX_GPU], t->kind_count[ACC_VTX_NVSWITCH], t->kind_count[ACC_VTX_PCISW],
        t->kind_count[ACC_VTX_CPU], t->kind_count[ACC_VTX_NIC]);
    acc_buf_printf(out, "Fingerprint  %s\n", fp);
    text_warnings(&nvlinks, &unknown, out);
    gpus(t, out);
    matrix(t, out);
    nics(t, out);
    numa(t, out);
    if (t->net.nodes > 1)
        acc_buf_printf(out,
                       "\nNetwork\n  %d nodes, fabric %s, latency %.2f us, %s, "
                       "oversubscription %.2f:1\n",
                       t->net.nodes, t->net.name[0] ? t->net.name : "-", t->net.latency_us,
                       t->net.rail_optimized ? "rail-optimised" : "not rail-optimised",
                       t->net.oversubscription);
    acc_buf_puts(out, "\nAssumed\n");
    if (!t->nassumed)
        acc_buf_puts(out, unknown.len ? "  nothing, but some facts are unknown (see Warnings)\n"
                                      : "  nothing: every fact came from the input\n");
    for (i = 0; i < t->nassumed; i++)
        acc_buf_printf(out, "  - %s\n", t->assumed[i]);
    st = acc_buf_status(out);
out:
    acc_buf_free(&nvlinks);
    acc_buf_free(&unknown);
    return st;
}

acc_status_t acc_topo_summary_json(const acc_topo_t *t, acc_buf_t *out)
{
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t nvlinks, unknown;
    acc_status_t st = acc_topo_fingerprint(t, fp);
    int v, w, i, first;

    if (st != ACC_OK)
        return st;
    acc_buf_init(&nvlinks);
    acc_buf_init(&unknown);
    if ((st = warnings(t, &nvlinks, &unknown)) != ACC_OK)
        goto out;
    acc_buf_puts(out, "{\"name\": ");
    acc_buf_put_json(out, t->name);
    acc_buf_puts(out, ", \"source\": ");
    acc_buf_put_json(out, acc_topo_source(t));
    acc_buf_printf(out,
                   ", \"format\": \"%s\", \"fingerprint\": \"%s\", \"nodes\": %d, "
                   "\"gpus_per_node\": %d, \"ranks\": %d,\n \"gpus\": [",
                   acc_topo_format_name(t->format), fp, t->net.nodes, t->kind_count[ACC_VTX_GPU],
                   acc_topo_ranks(t));
    for (i = 0; i < t->kind_count[ACC_VTX_GPU]; i++) {
        const acc_topo_vertex_t *g = &t->vertices[t->gpu_vertex[i]];
        acc_buf_printf(out, "%s\n  {\"id\": %d, \"model\": ", i ? "," : "", g->id);
        acc_buf_put_json(out, g->model);
        acc_buf_printf(out,
                       ", \"sm\": %d, \"sms\": %d, \"memory_bytes\": %llu, \"numa\": %d, "
                       "\"busid\": \"%s\", \"nvlinks_to_nvswitch\": %d, \"nic\": %d",
                       g->sm, g->sm_count, (unsigned long long)g->mem_bytes,
                       t->vertex_numa[t->gpu_vertex[i]], g->busid,
                       acc_topo_nvlinks_to_switches(t, i),
                       t->gpu_nic[i] >= 0 ? t->vertices[t->gpu_nic[i]].id : -1);
        {
            const int *nic;
            int via, n = acc_topo_gpu_nics(t, i, &nic, &via), k;
            acc_buf_puts(out, ", \"nics\": [");
            for (k = 0; k < n; k++)
                acc_buf_printf(out, "%s%d", k ? ", " : "", t->vertices[nic[k]].id);
            acc_buf_printf(out, "], \"pxn_via\": %d}", via);
        }
    }
    acc_buf_puts(out, "],\n \"nics\": [");
    first = 1;
    for (v = 0; v < t->nvertices; v++) {
        const acc_topo_vertex_t *n = &t->vertices[v];
        if (n->kind != ACC_VTX_NIC)
            continue;
        acc_buf_printf(out, "%s\n  {\"id\": %d, \"device\": ", first ? "" : ",", n->id);
        acc_buf_put_json(out, n->dev_name);
        acc_buf_printf(out, ", \"speed_gbps\": %g, \"numa\": %d, \"gdr\": %s, \"busid\": \"%s\"}",
                       n->speed_gbps, t->vertex_numa[v], n->gdr ? "true" : "false", n->busid);
        first = 0;
    }
    acc_buf_printf(out, "],\n \"numa_nodes\": %d,\n \"paths\": [", t->kind_count[ACC_VTX_CPU]);
    first = 1;
    for (v = 0; v < t->nvertices; v++) {
        if (t->vertices[v].kind != ACC_VTX_GPU && t->vertices[v].kind != ACC_VTX_NIC)
            continue;
        for (w = 0; w < t->nvertices; w++) {
            const acc_topo_path_t *p = &t->vpaths[(size_t)v * t->nvertices + w];
            if (w == v ||
                (t->vertices[w].kind != ACC_VTX_GPU && t->vertices[w].kind != ACC_VTX_NIC))
                continue;
            acc_buf_printf(out,
                           "%s\n  {\"from\": \"%s\", \"to\": \"%s\", \"class\": \"%s\", "
                           "\"bw_gbs\": %.3f, \"lat_us\": %.3f, \"hops\": %d}",
                           first ? "" : ",", t->vertices[v].name, t->vertices[w].name,
                           acc_path_class_name(p->cls), p->bw, p->lat_us, p->hops);
            first = 0;
        }
    }
    acc_buf_printf(out, "],\n \"network\": {\"nodes\": %d, \"fabric\": ", t->net.nodes);
    acc_buf_put_json(out, t->net.name);
    acc_buf_printf(out,
                   ", \"latency_us\": %g, \"rail_optimized\": %s, \"oversubscription\": %g},"
                   "\n \"assumed\": [",
                   t->net.latency_us, t->net.rail_optimized ? "true" : "false",
                   t->net.oversubscription);
    for (i = 0; i < t->nassumed; i++) {
        acc_buf_puts(out, i ? ",\n  " : "\n  ");
        acc_buf_put_json(out, t->assumed[i]);
    }
    acc_buf_puts(out, "],\n \"warnings\": [");
    if (nvlinks.len) {
        acc_buf_puts(out, "\n  ");
        acc_buf_put_json(out, nvlinks.data);
    }
    if (unknown.len) {
        acc_buf_puts(out, nvlinks.len ? ",\n  " : "\n  ");
        acc_buf_put_json(out, unknown.data);
    }
    acc_buf_puts(out, "]}\n");
    st = acc_buf_status(out);
out:
    acc_buf_free(&nvlinks);
    acc_buf_free(&unknown);
    return st;
}
