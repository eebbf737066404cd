/*
 * The YAML's NIC count per GPU: `nics: N` on a GPU says how many of the node's NICs that GPU's
 * traffic between nodes is striped across (four on an AWS p5, two on p5en and OCI's H100 nodes,
 * one on a p4d, where two GPUs share it).  Which NICs those are follows from the node's PCIe tree
 * (topo_nics.c: every NIC the GPU reaches at its best path class); the count is what a reader
 * checks first, so acc writes it on every GPU and, when a hand-written file states it, holds the
 * tree to it: a count the tree does not give is an error naming the file and line, since the
 * tree or the count is then wrong.
 */
#include "topo_yaml.h"

#include <string.h>

/* The most NICs a GPU may be said to stripe across: far above today's four (AWS p5). */
#define MAX_NICS_PER_GPU 64

/* Each GPU's declared count (-1 when not given) and its item; the number declared. */
static acc_status_t read_counts(acc_yaml_doc_t *d, acc_yaml_node_t *seq, int *count,
                                acc_yaml_node_t **item, int n, int *declared)
{
    int g;
    *declared = 0;
    for (g = 0; g < n; g++) {
        int64_t v;
        acc_status_t st;
        item[g] = acc_yaml_seq_at(d, seq, (size_t)g);
        count[g] = -1;
        if (!item[g] || !acc_yaml_get(d, item[g], "nics"))
            continue;
        if ((st = acc_yaml_get_int(d, item[g], "nics", 1, &v)) != ACC_OK)
            return st;
        if (v < 0 || v > MAX_NICS_PER_GPU)
            return acc_yaml_error(d, acc_yaml_get(d, item[g], "nics"), ACC_ERR_RANGE,
                                  "gpus[%d]: 'nics' is %lld; expected the number of NICs the GPU "
                                  "stripes across, 0 to %d",
                                  g, (long long)v, MAX_NICS_PER_GPU);
        count[g] = (int)v;
        (*declared)++;
    }
    return ACC_OK;
}

/* Compare the declared counts with what the node's tree gives, on a finalized copy. */
static acc_status_t hold_tree_to_counts(acc_yaml_doc_t *d, const acc_topo_t *t, const int *count,
                                        acc_yaml_node_t **item, int n)
{
    acc_topo_t *c = NULL;
    acc_status_t st = topo_copy(t, &c);
    int g;

    if (st == ACC_OK && (st = acc_topo_finalize(c)) != ACC_OK)
        st = acc_error_prefix(st,
                              "%s:%d: the node, read to check its GPUs' 'nics': ", acc_yaml_name(d),
                              acc_yaml_line(item[0]));
    for (g = 0; st == ACC_OK && g < n; g++) {
        const int *nics = NULL;
        int have = acc_topo_gpu_nics(c, g, &nics, NULL), k;
        acc_buf_t list;
        if (count[g] < 0 || have == count[g])
            continue;
        acc_buf_init(&list);
        for (k = 0; k < have; k++)
            acc_buf_printf(&list, "%s%s", k ? ", " : "", acc_topo_vertex(c, nics[k])->name);
        st = acc_yaml_error(d, acc_yaml_get(d, item[g], "nics"), ACC_ERR_TOPO,
                            "gpus[%d]: 'nics: %d', but the node's PCIe tree gives GPU%d %d NIC%s "
                            "at its best path class%s%s%s; fix the tree (pci_switches, nics, "
                            "links) or the count",
                            g, count[g], g, have, have == 1 ? "" : "s", have ? " (" : "",
                            have ? list.data : "", have ? ")" : "");
        acc_buf_free(&list);
    }
    acc_topo_destroy(c);
    return st;
}

acc_status_t topo_yaml_gpu_nics(acc_topo_t *t, acc_yaml_doc_t *d, acc_yaml_node_t *node)
{
    acc_yaml_node_t *seq = acc_yaml_get(d, node, "gpus"), **item = NULL;
    int n = seq ? (int)acc_yaml_seq_len(seq) : 0, declared = 0, *count = NULL;
    acc_status_t st = ACC_OK;

    if (n == 0)
        return ACC_OK;
    count = acc_mem_calloc((size_t)n, sizeof(*count));
    item = acc_mem_calloc((size_t)n, sizeof(*item));
    if (!count || !item)
        st = acc_error_set(ACC_ERR_NOMEM, "%s: out of memory for the GPUs' NIC counts",
                           acc_yaml_name(d));
    if (st == ACC_OK)
        st = read_counts(d, seq, count, item, n, &declared);
    if (st == ACC_OK && declared > 0)
        st = hold_tree_to_counts(d, t, count, item, n);
    acc_mem_free(count);
    acc_mem_free(item);
    return st;
}
