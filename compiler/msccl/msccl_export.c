/*
 * acc plans as MSCCL algorithm XML.
 *
 * The mapping, chosen so that acc_plan_import_msccl(acc_plan_export_msccl(p)) equals p:
 *
 * - Lane L is channel L.  MSCCL connects (sender, receiver, channel) and acc (sender, receiver,
 *   lane), so with channel = lane the connections, and the FIFO order on each, are the same.
 * - An MSCCL thread block has at most one send peer and one receive peer; an acc lane may talk
 *   to many.  Each lane is cut, greedily, where its next operation would need a second send or
 *   receive peer; each piece becomes one <tb> and the pieces of a lane are consecutive thread
 *   blocks.  The first step of each later piece waits (depid/deps) for the last step of the
 *   piece before, so that MSCCL runtimes keep the lane's order; where that first operation has a
 *   dependency of its own, a nop step placed before it carries the chain instead (MSCCL gives a
 *   step one dependency).
 * - What MSCCL has no words for rides on attributes its runtimes ignore: acc_lane on each <tb>;
 *   acc_nlanes, acc_algo, acc_params, acc_slots and, for broadcast and reduce, acc_root on
 *   <algo>.  The importer, seeing acc_lane, concatenates a lane's thread blocks in id order and
 *   drops the chain (dependencies on the block's own lane, and the nop steps carrying them).
 * - inplace is the plan's; outofplace="1", as every acc plan is correct out of place.
 *   nchunksperloop is the chunk count of the larger buffer; name, minBytes and maxBytes come
 *   from the parameters of an imported plan (else the algorithm's name, 0 and 0 = unbounded).
 *
 * Not expressible (ACC_ERR_UNSUPPORTED, with the operation named): peer-memory operations,
 * sends to the own rank, a dependency on the operation's own lane, and input and output chunks
 * of different sizes (MSCCL has one chunk size for all buffers).
 */
#include "acc_plan.h"

#include <string.h>

typedef struct {
    int lane;
    uint32_t first, last; /* operations [first, last] of the lane */
    int send, recv;
    int chain; /* a leading nop step carries the dependency on the piece before */
} piece_t;

static int send_peer(const acc_op_t *o)
{
    if (o->code == ACC_OP_SEND)
        return o->peer;
    if (o->code == ACC_OP_RECV_COPY_SEND || o->code == ACC_OP_RECV_REDUCE_SEND ||
        o->code == ACC_OP_RECV_REDUCE_COPY_SEND)
        return o->peer2;
    return -1;
}

static int recv_peer(const acc_op_t *o)
{
    return (o->code >= ACC_OP_RECV && o->code <= ACC_OP_RECV_REDUCE_COPY_SEND) ? o->peer : -1;
}

static const char *step_type(uint8_t code)
{
    static const char *const types[] = {"s", "r", "rrc", "rcs", "rrs", "rrcs", "cpy", "re"};
    if (code <= ACC_OP_REDUCE)
        return types[code];
    return code == ACC_OP_NOP ? "nop" : NULL;
}

static acc_status_t check(const acc_plan_t *p)
{
    uint32_t n = (uint32_t)p->nranks, min = 1, mout = 1, k;
    int r, l;

    if (p->coll == ACC_COLL_REDUCE_SCATTER || p->coll == ACC_COLL_ALLTOALL)
        min = n;
    if (p->coll == ACC_COLL_ALLGATHER || p->coll == ACC_COLL_ALLTOALL)
        mout = n;
    if (!p->in_chunks || !p->out_chunks ||
        (uint64_t)p->in_chunks * mout != (uint64_t)p->out_chunks * min)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "MSCCL export: in %u chunks and out %u chunks "
                             "are not one chunk size for %s of %d ranks; MSCCL has a single "
                             "chunk size for every buffer",
                             p->in_chunks, p->out_chunks, acc_coll_name(p->coll), p->nranks);
    for (r = 0; r < p->nranks; r++)
        for (l = 0; l < p->nlanes; l++) {
            const acc_lane_prog_t *g = acc_plan_prog(p, r, l);
            for (k = 0; k < g->nops; k++) {
                const acc_op_t *o = &g->ops[k];
                const char *why = NULL;
                if (!step_type(o->code))
                    why = "is a peer-memory operation; MSCCL XML has only message passing (an "
                          "MSCCL++ execution plan would be needed)";
                else if (send_peer(o) == r || recv_peer(o) == r)
                    why = "talks to its own rank; MSCCL thread blocks cannot";
                else if (o->dep_lane == l)
                    why = "depends on its own lane, which lane order already ensures";
                else if ((o->code == ACC_OP_COPY || o->code == ACC_OP_REDUCE ||
                          o->code == ACC_OP_RECV_REDUCE_COPY ||
                          o->code == ACC_OP_RECV_REDUCE_COPY_SEND) &&
                         o->src.cnt != o->dst.cnt)
                    why = "has different source and destination chunk counts; an MSCCL step "
                          "has one cnt";
                if (why)
                    return acc_error_set(ACC_ERR_UNSUPPORTED,
                                         "MSCCL export: rank %d lane %d "
                                         "op %u (%s) %s",
                                         r, l, k, acc_op_name((acc_opcode_t)o->code), why);
            }
        }
    return ACC_OK;
}

/* Cut the lanes of rank r into pieces; tb[] and step[] receive, per operation (indexed by
 * base[lane] + op), the thread block and step it becomes. */
static acc_status_t cut(const acc_plan_t *p, int r, piece_t **pieces, int *npieces,
                        const uint32_t *base, int *tb, int *step)
{
    size_t cap = 0;
    int l, n = 0;
    uint32_t k;
    piece_t *v = NULL;

    for (l = 0; l < p->nlanes; l++) {
        const acc_lane_prog_t *g = acc_plan_prog(p, r, l);
        int cur = -1, at = 0;
        for (k = 0; k < g->nops; k++) {
            const acc_op_t *o = &g->ops[k];
            int s = send_peer(o), q = recv_peer(o);
            if (cur < 0 || (s >= 0 && v[cur].send >= 0 && v[cur].send != s) ||
                (q >= 0 && v[cur].recv >= 0 && v[cur].recv != q)) {
                void *grown = v;
                if (acc_array_reserve(&grown, &cap, (size_t)n + 1, sizeof(piece_t)) != ACC_OK) {
                    acc_mem_free(v);
                    return acc_error_set(ACC_ERR_NOMEM, "out of memory exporting MSCCL XML");
                }
                v = grown;
                v[n] = (piece_t){l, k, k, -1, -1, 0};
                /* a continuation whose first operation needs the dependency slot itself (a
                 * piece never starts with a NOP: only a new peer starts one) */
                v[n].chain = cur >= 0 && o->dep_lane >= 0;
                cur = n++;
                at = v[cur].chain;
            }
            if (s >= 0)
                v[cur].send = s;
            if (q >= 0)
                v[cur].recv = q;
            v[cur].last = k;
            tb[base[l] + k] = cur;
            step[base[l] + k] = at++;
        }
    }
    *pieces = v;
    *npieces = n;
    return ACC_OK;
}

/* The value of key=... among the plan's space-separated parameters, or NULL. */
static const char *param(const char *params, const char *key, char *buf, size_t len)
{
    size_t kl = strlen(key);
    const char *s = params;
    while ((s = strstr(s, key)) != NULL) {
        if ((s == params || s[-1] == ' ') && s[kl] == '=') {
            size_t n = strcspn(s + kl + 1, " ");
            if (n >= len)
                n = len - 1;
            memcpy(buf, s + kl + 1, n);
            buf[n] = '\0';
            return buf;
        }
        s += kl;
    }
    return NULL;
}

static void put_step(acc_buf_t *b, int s, const char *type, acc_ref_t src, acc_ref_t dst,
                     uint32_t cnt, int depid, int deps, int hasdep)
{
    static const char bufs[] = "ios";
    acc_buf_printf(b,
                   "      <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%u\" dstbuf=\"%c\" "
                   "dstoff=\"%u\" cnt=\"%u\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n",
                   s, type, bufs[src.buf % 3], src.off, bufs[dst.buf % 3], dst.off, cnt, depid,
                   deps, hasdep);
}

static acc_status_t put_rank(const acc_plan_t *p, int r, acc_buf_t *b, const uint32_t *base,
                             int *tb, int *step, unsigned char *hasdep)
{
    piece_t *v = NULL;
    int n = 0, i, l;
    uint32_t k;
    acc_status_t st = cut(p, r, &v, &n, base, tb, step);

    if (st != ACC_OK)
        return st;
    memset(hasdep, 0, base[p->nlanes]);
    for (l = 0; l < p->nlanes; l++) {
        const acc_lane_prog_t *g = acc_plan_prog(p, r, l);
        for (k = 0; k < g->nops; k++) {
            const acc_op_t *o = &g->ops[k];
            if (o->dep_lane >= 0)
                hasdep[base[o->dep_lane] + (uint32_t)o->dep_op] = 1;
            if (k && tb[base[l] + k] != tb[base[l] + k - 1])
                hasdep[base[l] + k - 1] = 1; /* the chain into the next piece */
        }
    }
    acc_buf_printf(b, "  <gpu id=\"%d\" i_chunks=\"%u\" o_chunks=\"%u\" s_chunks=\"%u\">\n", r,
                   p->in_chunks, p->out_chunks, p->scratch_chunks);
    for (i = 0; i < n; i++) {
        const piece_t *c = &v[i];
        const acc_lane_prog_t *g = acc_plan_prog(p, r, c->lane);
        int prev = (i > 0 && v[i - 1].lane == c->lane) ? i - 1 : -1;
        acc_buf_printf(b,
                       "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\" acc_lane=\"%d\">\n",
                       i, c->send, c->recv, c->lane, c->lane);
        if (c->chain)
            put_step(b, 0, "nop", acc_ref(ACC_BUF_IN, 0, 0), acc_ref(ACC_BUF_OUT, 0, 0), 0, prev,
                     step[base[c->lane] + c->first - 1], 0);
        for (k = c->first; k <= c->last; k++) {
            const acc_op_t *o = &g->ops[k];
            int depid = -1, deps = -1;
            acc_ref_t src = o->src, dst = o->dst;
            uint32_t at = base[c->lane] + k;
            if (o->dep_lane >= 0) {
                uint32_t t = base[o->dep_lane] + (uint32_t)o->dep_op;
                depid = tb[t];
                deps = step[t];
            } else if (k == c->first && prev >= 0 && !c->chain) {
                depid = prev;
                deps = step[at - 1];
            }
            /* MSCCL files name both buffers on every step; the unused one mirrors the other */
            if (o->code == ACC_OP_RECV || o->code == ACC_OP_RECV_COPY_SEND)
                src = dst;
            else if (o->code == ACC_OP_SEND || o->code == ACC_OP_RECV_REDUCE_SEND)
                dst = src;
            else if (o->code == ACC_OP_NOP)
                src = dst = acc_ref(ACC_BUF_IN, 0, 0);
            put_step(b, step[at], step_type(o->code), src, dst,
                     o->code == ACC_OP_NOP ? 0 : (src.cnt > dst.cnt ? src.cnt : dst.cnt), depid,
                     deps, hasdep[at]);
        }
        acc_buf_puts(b, "    </tb>\n");
    }
    acc_buf_puts(b, "  </gpu>\n");
    acc_mem_free(v);
    return ACC_OK;
}

acc_status_t acc_plan_export_msccl(const acc_plan_t *p, acc_buf_t *out)
{
    static const char *const colls[ACC_COLL_COUNT] = {"allreduce", "allgather", "reducescatter",
                                                      "broadcast", "reduce",    "alltoall"};
    char name[ACC_PLAN_PARAMS_MAX], minb[32], maxb[32];
    uint32_t *base = NULL, total = 0;
    int *tb = NULL, *step = NULL, r, l;
    unsigned char *hasdep = NULL;
    acc_status_t st = check(p);

    if (st != ACC_OK)
        return st;
    base = acc_mem_calloc((size_t)p->nlanes + 1, sizeof(uint32_t));
    for (r = 0; base && r < p->nranks; r++) {
        uint32_t sum = 0;
        for (l = 0; l < p->nlanes; l++)
            sum += acc_plan_prog(p, r, l)->nops;
        if (sum > total)
            total = sum;
    }
    tb = acc_mem_calloc((size_t)total + 1, sizeof(int));
    step = acc_mem_calloc((size_t)total + 1, sizeof(int));
    hasdep = acc_mem_calloc((size_t)total + 1, 1);
    if (!base || !tb || !step || !hasdep) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory exporting MSCCL XML");
        goto out;
    }
    if (!(strcmp(p->algo, "msccl") == 0 && param(p->params, "name", name, sizeof(name))))
        snprintf(name, sizeof(name), "%s", p->algo);
    if (!param(p->params, "minBytes", minb, sizeof(minb)))
        strcpy(minb, "0");
    if (!param(p->params, "maxBytes", maxb, sizeof(maxb)))
        strcpy(maxb, "0");
    acc_buf_puts(out, "<algo name=\"");
    acc_buf_put_xml(out, name);
    acc_buf_printf(out,
                   "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%u\" ngpus=\"%d\" "
                   "coll=\"%s\" inplace=\"%d\" outofplace=\"1\" minBytes=\"",
                   acc_proto_name(p->proto), p->nlanes,
                   p->in_chunks > p->out_chunks ? p->in_chunks : p->out_chunks, p->nranks,
                   colls[p->coll], p->inplace ? 1 : 0);
    acc_buf_put_xml(out, minb);
    acc_buf_puts(out, "\" maxBytes=\"");
    acc_buf_put_xml(out, maxb);
    acc_buf_puts(out, "\" acc_algo=\"");
    acc_buf_put_xml(out, p->algo);
    acc_buf_puts(out, "\" acc_params=\"");
    acc_buf_put_xml(out, p->params);
    acc_buf_printf(out, "\" acc_slots=\"%d\" acc_nlanes=\"%d\"", p->slots, p->nlanes);
    if (p->coll == ACC_COLL_BROADCAST || p->coll == ACC_COLL_REDUCE)
        acc_buf_printf(out, " acc_root=\"%d\"", p->root);
    acc_buf_puts(out, ">\n");
    for (r = 0; r < p->nranks && st == ACC_OK; r++) {
        for (l = 0; l < p->nlanes; l++)
            base[l + 1] = base[l] + acc_plan_prog(p, r, l)->nops;
        st = put_rank(p, r, out, base, tb, step, hasdep);
    }
    acc_buf_puts(out, "</algo>\n");
    if (st == ACC_OK)
        st = acc_buf_status(out);
out:
    acc_mem_free(base);
    acc_mem_free(tb);
    acc_mem_free(step);
    acc_mem_free(hasdep);
    return st;
}
