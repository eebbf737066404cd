/*
 * Queries of the NCCL replica: the price of one call (ncclTopoGetAlgoTime), NCCL's pick and
 * its channels and threads (updateCollCostTable + topoGetAlgoInfo, src/enqueue.cc), the
 * tables, the graphs and a dump in the spirit of NCCL_DEBUG_SUBSYS=GRAPH,TUNING.
 */
#include "nccl_internal.h"

#include <string.h>

static const char *coll_label(int c)
{
    return c == ACC_COLL_ALLREDUCE   ? "AllReduce"
           : c == ACC_COLL_ALLGATHER ? "AllGather"
                                     : "ReduceScatter";
}

static acc_status_t check_call(const acc_nccl_model_t *m, acc_coll_t coll)
{
    if (!m)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: no model");
    if ((unsigned)coll >= NN_COLLS)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "NCCL model: collective %d is not modelled; the replica covers "
                             "allreduce, allgather and reduce_scatter",
                             (int)coll);
    return ACC_OK;
}

/* Why NCCL would not run a combination, or NULL when it would.  The filters of
 * updateCollCostTable come first (not on the sheet: CollNetDirect stops above 8 GPUs per node,
 * NVLS allgather / reduce_scatter above 32), then the zeroed table entries. */
static const char *refusal(const acc_nccl_model_t *m, int c, int a, int p)
{
    if ((c != ACC_COLL_ALLREDUCE && (a == NN_T || a == NN_CC || a == NN_NT)) ||
        (c == ACC_COLL_ALLREDUCE && a == NN_PAT))
        return "is not an algorithm NCCL has for this collective";
    if ((a == NN_NV || a == NN_NT || a == NN_PAT || a == NN_CD || a == NN_CC) && p != NN_SIMPLE)
        return "runs the Simple protocol only";
    if ((a == NN_CD || a == NN_CC) && !m->collnet)
        return "needs CollNet (a SHARP plugin, acc_nccl_options_t.collnet) and 2 nodes or more";
    if (a == NN_CD && m->ppn > 8)
        return "supports at most 8 GPUs per node";
    if ((a == NN_NV || a == NN_NT) && !m->nvls)
        return "needs NVLS: sm90 or newer behind an NVSwitch, more than 2 GPUs per node";
    if ((a == NN_NV || a == NN_NT) && c != ACC_COLL_ALLREDUCE && m->ppn > 32)
        return "supports at most 32 GPUs per node for this collective";
    if (a == NN_NV && m->nnodes > 1 && !m->collnet)
        return "needs CollNet across nodes";
    if (a == NN_NT && m->nnodes == 1)
        return "is off on one node";
    if (a == NN_PAT && m->nnodes != m->nranks)
        return "needs one GPU per node";
    if (p == NN_LL128 && m->bw[c][a][p] == 0 && m->bw[c][a][NN_SIMPLE] != 0)
        return "is not enabled for LL128 on this topology (sheet: same sm, typeIntra <= NVB, "
               "typeInter <= PXN on sm90+ or <= PXB)";
    if (m->bw[c][a][p] == 0)
        return "has no bandwidth on this topology";
    return NULL;
}

acc_status_t acc_nccl_model_time(const acc_nccl_model_t *m, acc_coll_t coll, uint64_t nbytes,
                                 acc_nccl_algo_t algo, acc_nccl_proto_t proto, double *us)
{
    acc_status_t st = check_call(m, coll);
    const char *why;
    if (us)
        *us = -1;
    if (st != ACC_OK)
        return st;
    if (!us || (unsigned)algo >= ACC_NCCL_ALGO_COUNT || (unsigned)proto >= ACC_NCCL_PROTO_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: bad algorithm, protocol or output");
    if (m->nranks == 1) { /* one rank: NCCL copies and calls it Ring/Simple at no cost */
        if ((int)algo == NN_R && (int)proto == NN_SIMPLE) {
            *us = 0;
            return ACC_OK;
        }
        return acc_error_set(ACC_ERR_UNSUPPORTED, "NCCL model: one rank runs Ring/Simple only");
    }
    if ((why = refusal(m, coll, algo, proto)) != NULL)
        return acc_error_set(ACC_ERR_UNSUPPORTED, "NCCL model: %s/%s %s %s",
                             acc_nccl_algo_name(algo), acc_nccl_proto_name(proto), why,
                             coll_label(coll));
    *us = nn_algo_time(m, coll, algo, proto, nbytes);
    return ACC_OK;
}

/* topoGetAlgoInfo: channels and threads of the chosen combination (sheet §2 "Threads and
 * channels per call"; the CollNetDirect loop is not on the sheet and follows enqueue.cc). */
static void call_resources(const acc_nccl_model_t *m, int a, int p, uint64_t nbytes, int *pnc,
                           int *pnt)
{
    uint64_t nc = (uint64_t)m->nchannels, nt = (uint64_t)m->max_threads[a][p];
    uint64_t thr = (uint64_t)m->thread_threshold[a][p];
    if (a == NN_CD) {
        uint64_t heads = (uint64_t)m->graph[NN_CD].nchannels, sw = 16;
        int more = 1;
        while (sw >= 1 && more) {
            while ((more = nbytes < nc * nt * heads * thr) && nc > sw) {
                if (nc == sw + sw / 2)
                    thr /= 2;
                nc--;
            }
            sw /= 2;
        }
    } else if (a == NN_NV || a == NN_NT) {
        nc = (uint64_t)m->nvls_channels;
        if (m->nnodes > 1 && a == NN_NV && (uint64_t)m->nchannels < nc)
            nc = (uint64_t)m->nchannels;
    } else {
        while (nbytes < nc * nt * thr && nc >= 2)
            nc--;
    }
    if (a != NN_NV && a != NN_NT && a != NN_CD)
        while (nbytes < nc * nt * thr && nt % 128 == 0 && nt)
            nt /= 2;
    if (p == NN_SIMPLE && a == NN_R) /* sync warp */
        nt += 32;
    if (p == NN_SIMPLE && a == NN_T)
        nt += 128;
    if (nt / 32 < 3) /* "The minimum is 96" */
        nt = 96;
    if (a == NN_T || a == NN_PAT) /* "Tree and PAT always use 640" */
        nt = 640;
    *pnc = (int)nc;
    *pnt = (int)nt;
}

acc_status_t acc_nccl_model_select(const acc_nccl_model_t *m, acc_coll_t coll, uint64_t nbytes,
                                   acc_nccl_choice_t *out)
{
    acc_status_t st = check_call(m, coll);
    float best = -1;
    int a, p, ba = NN_R, bp = NN_SIMPLE;
    double n;
    if (st != ACC_OK)
        return st;
    if (!out)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: no output for the choice");
    memset(out, 0, sizeof(*out));
    if (m->nranks > 1) {
        for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++) {
            for (p = 0; p < ACC_NCCL_PROTO_COUNT; p++) {
                float t;
                if (refusal(m, coll, a, p))
                    continue;
                t = nn_algo_time(m, coll, a, p, nbytes);
                /* The argmin, strictly smaller: ties go to the lower algorithm, protocol. */
                if (t >= 0 && (best < 0 || t < best))
                    best = t, ba = a, bp = p;
            }
        }
        if (best < 0)
            return acc_error_set(ACC_ERR_UNSUPPORTED,
                                 "NCCL model: no algorithm available for %s (NCCL would fail "
                                 "with \"no algorithm/protocol available\")",
                                 coll_label(coll));
    } else {
        best = 0;
    }
    out->algo = (acc_nccl_algo_t)ba;
    out->proto = (acc_nccl_proto_t)bp;
    out->time_us = best;
    call_resources(m, ba, bp, nbytes, &out->nchannels, &out->nthreads);
    n = (double)m->nranks;
    out->algbw = best > 0 ? (double)nbytes / (best * 1e3) : 0;
    out->busbw = out->algbw * (coll == ACC_COLL_ALLREDUCE ? 2 * (n - 1) / n : (n - 1) / n);
    return ACC_OK;
}

acc_status_t acc_nccl_model_graph(const acc_nccl_model_t *m, acc_nccl_algo_t algo,
                                  acc_nccl_graph_t *out)
{
    if (!m || !out || (unsigned)algo >= ACC_NCCL_ALGO_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: bad algorithm %d or no output",
                             (int)algo);
    *out = m->graph[algo];
    return ACC_OK;
}

void acc_nccl_model_summary(const acc_nccl_model_t *m, acc_nccl_summary_t *out)
{
    if (!m || !out)
        return;
    out->nranks = m->nranks;
    out->nnodes = m->nnodes;
    out->ppn = m->ppn;
    out->min_sm = m->min_sm;
    out->max_sm = m->max_sm;
    out->nchannels = m->nchannels;
    out->nvls_channels = m->nvls_channels;
    out->nvls = m->nvls;
    out->collnet = m->collnet;
    out->max_bw = m->max_bw;
    out->total_bw = m->total_bw;
}

static int in_table(const acc_nccl_model_t *m, acc_coll_t c, acc_nccl_algo_t a, acc_nccl_proto_t p)
{
    return m && (unsigned)c < NN_COLLS && (unsigned)a < ACC_NCCL_ALGO_COUNT &&
           (unsigned)p < ACC_NCCL_PROTO_COUNT;
}

double acc_nccl_model_bandwidth(const acc_nccl_model_t *m, acc_coll_t coll, acc_nccl_algo_t algo,
                                acc_nccl_proto_t proto)
{
    return in_table(m, coll, algo, proto) ? m->bw[coll][algo][proto] : 0;
}

double acc_nccl_model_latency(const acc_nccl_model_t *m, acc_coll_t coll, acc_nccl_algo_t algo,
                              acc_nccl_proto_t proto)
{
    return in_table(m, coll, algo, proto) ? m->lat[coll][algo][proto] : 0;
}

acc_status_t acc_nccl_model_dump(const acc_nccl_model_t *m, acc_buf_t *out)
{
    int c, a, p;
    if (!m || !out)
        return acc_error_set(ACC_ERR_INVALID, "NCCL model: nothing to dump");
    acc_buf_printf(out,
                   "NCCL 2.28 model: %d ranks, %d nodes x %d GPUs, sm%d; %d channels, "
                   "NVLS %d channels, CollNet %s\n",
                   m->nranks, m->nnodes, m->ppn, m->min_sm, m->nchannels, m->nvls_channels,
                   m->collnet ? "on" : "off");
    for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++) {
        const acc_nccl_graph_t *g = &m->graph[a];
        if (a == NN_NT || a == NN_PAT || g->pattern == ACC_NCCL_PATTERN_NONE)
            continue; /* NVLSTree and PAT share the NVLS and tree graphs */
        acc_buf_printf(out,
                       "%-13s pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, "
                       "sameChannels %d\n",
                       acc_nccl_algo_name((acc_nccl_algo_t)a), g->pattern, g->crossnic,
                       g->nchannels, g->bw_intra, g->bw_inter, acc_nccl_path_name(g->type_intra),
                       acc_nccl_path_name(g->type_inter), g->same_channels);
    }
    acc_buf_puts(out, "    Algorithm |");
    for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++)
        for (p = 0; p < ACC_NCCL_PROTO_COUNT; p++)
            acc_buf_printf(out, " %8s/%-6s |", acc_nccl_algo_name((acc_nccl_algo_t)a),
                           acc_nccl_proto_name((acc_nccl_proto_t)p));
    acc_buf_puts(out, "\n Max NThreads |");
    for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++)
        for (p = 0; p < ACC_NCCL_PROTO_COUNT; p++)
            acc_buf_printf(out, " %15d |", m->max_threads[a][p]);
    acc_buf_puts(out, "\n");
    for (c = 0; c < NN_COLLS; c++) {
        acc_buf_printf(out, "%13s |", coll_label(c));
        for (a = 0; a < ACC_NCCL_ALGO_COUNT; a++)
            for (p = 0; p < ACC_NCCL_PROTO_COUNT; p++)
                acc_buf_printf(out, " %8.1f/%6.1f |", m->lat[c][a][p], m->bw[c][a][p]);
        acc_buf_puts(out, "\n");
    }
    return acc_buf_status(out);
}
