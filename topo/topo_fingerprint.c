/*
 * The fingerprint: SHA-256 of a canonical text of what matters to schedules.
 *
 * The canonical text lists, in GPU id order, each GPU's generation, SM count, memory and NUMA
 * node; for every GPU pair the path class, bottleneck bandwidth and direct NVLink count; each GPU's
 * links into the NVSwitch fabric; the NICs as self-describing lines (speed, NUMA node, the class
 * and bandwidth of the path to every GPU) sorted, so that NIC numbering does not matter; and the
 * cluster (nodes, latency, rail optimisation, oversubscription).  Bus ids, host names, model
 * strings and vertex names are left out, so the same machine type has the same fingerprint on
 * every node of a fleet and from every input format that describes it fully.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static acc_status_t nic_lines(const acc_topo_t *t, acc_buf_t *out)
{
    int n = t->kind_count[ACC_VTX_NIC], ngpu = t->kind_count[ACC_VTX_GPU], i, g, k = 0;
    char **lines = acc_mem_calloc((size_t)n + 1, sizeof(char *));
    acc_status_t st = ACC_OK;

    if (!lines)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (i = 0; i < t->nvertices; i++) {
        const acc_topo_vertex_t *v = &t->vertices[i];
        acc_buf_t b;
        if (v->kind != ACC_VTX_NIC)
            continue;
        acc_buf_init(&b);
        acc_buf_printf(&b, "nic speed=%.0f numa=%d gdr=%d", v->speed_gbps, t->vertex_numa[i],
                       v->gdr);
        if (v->plane) /* one-plane machines keep the fingerprints they had */
            acc_buf_printf(&b, " plane=%d", v->plane);
        acc_buf_puts(&b, " rail=");
        for (g = 0; g < ngpu; g++)
            if (t->gpu_nic[g] == i)
                acc_buf_printf(&b, "%d,", g);
        acc_buf_puts(&b, " to");
        for (g = 0; g < ngpu; g++) {
            const acc_topo_path_t *p = &t->vpaths[(size_t)t->gpu_vertex[g] * t->nvertices + i];
            acc_buf_printf(&b, " %s/%.2f", acc_path_class_name(p->cls), p->bw);
        }
        lines[k] = acc_buf_take(&b);
        if (!lines[k]) {
            st = acc_error_set(ACC_ERR_NOMEM, "out of memory");
            goto out;
        }
        k++;
    }
    qsort(lines, (size_t)k, sizeof(char *), cmp_str);
    for (i = 0; i < k; i++)
        acc_buf_printf(out, "%s\n", lines[i]);
out:
    for (i = 0; i < n; i++)
        acc_mem_free(lines[i]);
    acc_mem_free(lines);
    return st;
}

acc_status_t acc_topo_canonical(const acc_topo_t *t, acc_buf_t *out)
{
    int ngpu = t->kind_count[ACC_VTX_GPU], a, b;
    acc_status_t st;

    if (!t->finalized)
        return acc_error_set(ACC_ERR_INVALID, "topology not finalized (call acc_topo_finalize)");
    acc_buf_printf(out, "acc-topo-canonical 1\ngpus %d numa %d\n", ngpu,
                   t->kind_count[ACC_VTX_CPU]);
    for (a = 0; a < ngpu; a++) {
        const acc_topo_vertex_t *v = &t->vertices[t->gpu_vertex[a]];
        /* Memory in whole GiB: NVML reports what is usable (81559 MiB on an H100 80GB), files
         * the datasheet figure; both must give the machine one fingerprint. */
        acc_buf_printf(out, "gpu %d sm=%d sms=%d mem=%lluG numa=%d nvswitch=%d\n", a, v->sm,
                       v->sm_count, (unsigned long long)((v->mem_bytes + (1ull << 29)) >> 30),
                       t->vertex_numa[t->gpu_vertex[a]], acc_topo_nvlinks_to_switches(t, a));
    }
    for (a = 0; a < ngpu; a++) {
        acc_buf_printf(out, "row %d:", a);
        for (b = 0; b < ngpu; b++) {
            const acc_topo_path_t *p =
                &t->vpaths[(size_t)t->gpu_vertex[a] * t->nvertices + t->gpu_vertex[b]];
            acc_buf_printf(out, " %s/%.2f/%d", acc_path_class_name(p->cls), p->bw,
                           acc_topo_nvlinks_between(t, a, b));
        }
        acc_buf_puts(out, "\n");
    }
    if ((st = nic_lines(t, out)) != ACC_OK)
        return st;
    acc_buf_printf(out, "nodes %d latency=%.3f rail=%d oversub=%.3f\n", t->net.nodes,
                   t->net.nodes > 1 ? t->net.latency_us : 0.0,
                   t->net.nodes > 1 ? t->net.rail_optimized : 0,
                   t->net.nodes > 1 ? t->net.oversubscription : 1.0);
    return acc_buf_status(out);
}

acc_status_t acc_topo_fingerprint(const acc_topo_t *t, char out[ACC_SHA256_HEX_LEN + 1])
{
    acc_buf_t b;
    acc_status_t st;

    acc_buf_init(&b);
    st = acc_topo_canonical(t, &b);
    if (st == ACC_OK)
        st = acc_sha256_hex(b.data, b.len, out);
    acc_buf_free(&b);
    return st;
}
