/*
 * MSCCL thread blocks to acc lanes (compiler/msccl/msccl_lanes.c): every schedule MSCCL's
 * runtime runs imports, however its blocks are linked through their connections.  In MSCCL each
 * block is a sequential program of its own and a connection is (peer, channel, direction); a
 * peer may use one block to send to a gpu and another to receive from it on the same channel,
 * while that gpu uses a single block for both.  Such files import, verify, compute the
 * collective on the host executor and come back unchanged through export -> import; fused steps
 * whose two connections land on different lanes are split; and files that are really wrong
 * still fail at their line.
 */
#include "acc_test.h"
#include "msccl_checks.h"

/* ---- hand-written schedules ------------------------------------------------------------------ */

/* The 2-gpu ring allreduce of FORMAT.md as MSCCL writes it, except that gpu 1 sends to gpu 0
 * from one block and receives from it in another, on the channel where gpu 0 has one block for
 * both.  acc refused it until lanes were given per connection ("gpu 1 tb 0 and tb 1 (line 10)
 * are linked through the connections of their peers on the same channels, so they would have to
 * run as one lane"). */
static const char ar2_split_xml[] =
    "<algo name=\"ar2_split\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" "
    "coll=\"allreduce\" inplace=\"0\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n"
    "  <gpu id=\"0\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"rrcs\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "  <gpu id=\"1\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\">\n"
    "    <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
    "      <step s=\"1\" type=\"s\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" "
    "depid=\"1\" deps=\"0\" hasdep=\"1\"/>\n"
    "    </tb>\n"
    "    <tb id=\"1\" send=\"-1\" recv=\"0\" chan=\"0\">\n"
    "      <step s=\"0\" type=\"rrc\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"o\" dstoff=\"1\" "
    "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
    "      <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" "
    "depid=\"0\" deps=\"1\" hasdep=\"0\"/>\n"
    "    </tb>\n"
    "  </gpu>\n"
    "</algo>\n";

static acc_plan_t *import_text(const char *text, const char *name)
{
    acc_plan_t *p = NULL;
    CHECK_OK(acc_plan_import_msccl(text, strlen(text), name, &p));
    CHECK_OK(acc_plan_verify(p));
    return p;
}

/* How many operations of the plan have this opcode. */
static size_t count_ops(const acc_plan_t *p, acc_opcode_t code)
{
    size_t n = 0;
    int r, l;
    uint32_t k;
    for (r = 0; r < p->nranks; r++)
        for (l = 0; l < p->nlanes; l++)
            for (k = 0; k < acc_plan_prog(p, r, l)->nops; k++)
                n += acc_plan_prog(p, r, l)->ops[k].code == code;
    return n;
}

ACC_TEST(peer_with_separate_send_and_receive_blocks_imports)
{
    acc_plan_t *p = import_text(ar2_split_xml, "ar2_split.xml");
    CHECK_INT(p->nranks, 2);
    CHECK_INT(p->nlanes, 2);
    /* gpu 0's rrcs receives on one lane and sends on the other: an rrc, then a send of out[0] */
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_COPY_SEND), 0);
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_COPY), 2);
    CHECK_INT(count_ops(p, ACC_OP_SEND), 4);
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
}

/* A 3-gpu ring allreduce (s, rrs, rrcs, rcs, r on every gpu) where gpu 2 receives in one block
 * and sends in another, keeping its partial sum in scratch.  gpu 0's block shares a lane with
 * both of its peers' blocks; gpu 1's cannot (gpu 2's two blocks would be on one lane), so all
 * three of its fused steps are split, the rrs through a scratch chunk of its own. */
static void ring3_xml(acc_buf_t *b)
{
/* A literal, so that the compiler checks the arguments against it. */
#define step                                                                                       \
    "   <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%d\" dstbuf=\"%c\" dstoff=\"%d\" "       \
    "cnt=\"1\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n"
    int r;
    acc_buf_puts(b, "<algo name=\"ring3_split\" proto=\"Simple\" nchannels=\"1\" "
                    "nchunksperloop=\"3\" ngpus=\"3\" coll=\"allreduce\" inplace=\"0\" "
                    "outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n");
    for (r = 0; r < 2; r++) {
        int prev = (r + 2) % 3, next = (r + 1) % 3;
        acc_buf_printf(b,
                       " <gpu id=\"%d\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"0\">\n"
                       "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n",
                       r, next, prev);
        acc_buf_printf(b, step, 0, "s", 'i', r, 'i', r, -1, -1, 0);
        acc_buf_printf(b, step, 1, "rrs", 'i', prev, 'i', prev, -1, -1, 0);
        acc_buf_printf(b, step, 2, "rrcs", 'i', next, 'o', next, -1, -1, 0);
        acc_buf_printf(b, step, 3, "rcs", 'o', r, 'o', r, -1, -1, 0);
        acc_buf_printf(b, step, 4, "r", 'o', prev, 'o', prev, -1, -1, 0);
        acc_buf_puts(b, "  </tb>\n </gpu>\n");
    }
    acc_buf_puts(b, " <gpu id=\"2\" i_chunks=\"3\" o_chunks=\"3\" s_chunks=\"1\">\n"
                    "  <tb id=\"0\" send=\"0\" recv=\"-1\" chan=\"0\">\n");
    acc_buf_printf(b, step, 0, "s", 'i', 2, 'i', 2, -1, -1, 0);
    acc_buf_printf(b, step, 1, "s", 's', 0, 's', 0, 1, 0, 0);
    acc_buf_printf(b, step, 2, "s", 'o', 0, 'o', 0, 1, 1, 0);
    acc_buf_printf(b, step, 3, "s", 'o', 2, 'o', 2, 1, 2, 0);
    acc_buf_puts(b, "  </tb>\n  <tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"0\">\n");
    acc_buf_printf(b, step, 0, "rrc", 'i', 1, 's', 0, -1, -1, 1);
    acc_buf_printf(b, step, 1, "rrc", 'i', 0, 'o', 0, -1, -1, 1);
    acc_buf_printf(b, step, 2, "r", 'o', 2, 'o', 2, -1, -1, 1);
    acc_buf_printf(b, step, 3, "r", 'o', 1, 'o', 1, -1, -1, 0);
    acc_buf_puts(b, "  </tb>\n </gpu>\n</algo>\n");
}
#undef step

ACC_TEST(fused_steps_split_where_their_connections_part)
{
    acc_buf_t b;
    acc_plan_t *p;
    int l;
    uint32_t k;
    acc_buf_init(&b);
    ring3_xml(&b);
    p = import_text(b.data, "ring3_split.xml");
    CHECK_INT(p->nlanes, 2);
    /* gpu 1 still runs its steps in order, but none of them fused; gpu 0 keeps its own */
    for (l = 0; l < p->nlanes; l++)
        for (k = 0; k < acc_plan_prog(p, 1, l)->nops; k++)
            CHECK_MSG(acc_plan_prog(p, 1, l)->ops[k].code <= ACC_OP_RECV_REDUCE_COPY ||
                          acc_plan_prog(p, 1, l)->ops[k].code >= ACC_OP_COPY,
                      "rank 1 lane %d op %u is still %s", l, k,
                      acc_op_name((acc_opcode_t)acc_plan_prog(p, 1, l)->ops[k].code));
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_SEND), 1);
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_COPY_SEND), 1);
    CHECK_INT(count_ops(p, ACC_OP_RECV_COPY_SEND), 1);
    /* gpu 2's partial sum, and gpu 1's split rrs */
    CHECK_INT(p->scratch_chunks, 2);
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
    acc_buf_free(&b);
}

/* ---- a 32-rank allreduce written by another synthesizer -------------------------------------- */

/* Recursive halving (reduce-scatter) then doubling (allgather), on each of `nch` channels for
 * its share of the chunks, n a power of two.  At distance d, gpu r pairs with p = r ^ d: it keeps
 * K, the d blocks from (r & ~(d-1)), and gives away P, those from (p & ~(d-1)).  The lower gpu of
 * a pair has one block that sends to and receives from its partner; the higher has one that
 * sends and one that receives.  At d = 1 the lower one fuses its last reduction with the first
 * send of the allgather (rrcs). */
typedef struct {
    const char *type;
    char sbuf;
    int soff, doff, cnt; /* dst is always o */
    int dep_tb, dep_step;
} gen_step_t;

typedef struct {
    int send, recv, chan, nsteps;
    gen_step_t steps[4];
} gen_tb_t;

/* The block (ids per gpu: channel by channel, d from n/2 down, the lower's single block or
 * the higher's sending and receiving blocks) and the step of each phase at distance d. */
typedef struct {
    int n, nch, r;
} gen_t;

static int gen_lower(const gen_t *g, int d)
{
    return !(g->r & d);
}

static int gen_tb(const gen_t *g, int c, int d, int receiving)
{
    int id = 0, e, per = 0;
    for (e = g->n / 2; e >= 1; e /= 2)
        per += gen_lower(g, e) ? 1 : 2;
    id = c * per;
    for (e = g->n / 2; e > d; e /= 2)
        id += gen_lower(g, e) ? 1 : 2;
    return id + (!gen_lower(g, d) && receiving);
}

enum { H_SEND, H_REDUCE, D_SEND, D_RECV };

static void gen_where(const gen_t *g, int c, int d, int phase, int *tb, int *step)
{
    static const int lower[2][4] = {{0, 1, 2, 3}, {0, 1, 1, 2}}; /* d > 1, d = 1 */
    static const int higher[4] = {0, 0, 1, 1};
    int receiving = phase == H_REDUCE || phase == D_RECV;
    *tb = gen_tb(g, c, d, receiving);
    *step = gen_lower(g, d) ? lower[d == 1][phase] : higher[phase];
}

static void gen_put(gen_tb_t *t, const gen_t *g, int c, const char *type, char sbuf, int soff,
                    int doff, int d, int dep_d, int dep_phase)
{
    gen_step_t *s = &t->steps[t->nsteps++];
    *s = (gen_step_t){type, sbuf, soff, doff, d, -1, -1};
    if (dep_d >= 1 && dep_d <= g->n / 2)
        gen_where(g, c, dep_d, dep_phase, &s->dep_tb, &s->dep_step);
}

/* The blocks of gpu g.r; tbs has room for nch x 2 x log2(n). */
static int gen_gpu(const gen_t *g, gen_tb_t *tbs)
{
    int c, d, ntb = 0, top = g->n / 2;
    for (c = 0; c < g->nch; c++)
        for (d = top; d >= 1; d /= 2) {
            int p = g->r ^ d, base = c * g->n, none = 0;
            int keep = base + (g->r & ~(d - 1)), give = base + (p & ~(d - 1));
            char first = d == top ? 'i' : 'o';
            gen_tb_t *t = &tbs[ntb++], *rt = t;
            memset(t, 0, sizeof(*t));
            t->send = t->recv = p;
            t->chan = c;
            if (!gen_lower(g, d)) {
                rt = &tbs[ntb++];
                memset(rt, 0, sizeof(*rt));
                t->recv = rt->send = -1;
                rt->recv = p;
                rt->chan = c;
            }
            /* halving: send P (after it was reduced at 2d), reduce K */
            gen_put(t, g, c, "s", first, give, give, d, 2 * d, H_REDUCE);
            if (d == 1 && gen_lower(g, d)) {
                gen_put(t, g, c, "rrcs", first, keep, keep, d, none, 0);
                gen_put(t, g, c, "r", 'o', give, give, d, none, 0);
                continue;
            }
            gen_put(rt, g, c, "rrc", first, keep, keep, d, gen_lower(g, d) ? none : 2 * d,
                    H_REDUCE);
            /* doubling: send K once it is whole, receive P once K has been sent */
            if (d == 1)
                gen_put(t, g, c, "s", 'o', keep, keep, d, 1, H_REDUCE);
            else
                gen_put(t, g, c, "s", 'o', keep, keep, d, d / 2, D_RECV);
            gen_put(rt, g, c, "r", 'o', give, give, d, gen_lower(g, d) ? none : d, D_SEND);
        }
    return ntb;
}

static void rhd_allreduce_xml(acc_buf_t *b, int n, int nch)
{
    gen_tb_t *tbs = calloc((size_t)nch * 2 * 16, sizeof(gen_tb_t));
    unsigned char waited[64][4];
    int r, t, k, ntb;

    CHECK(tbs != NULL);
    acc_buf_printf(b,
                   "<algo name=\"rhd_allreduce\" proto=\"Simple\" nchannels=\"%d\" "
                   "nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"allreduce\" inplace=\"1\" "
                   "outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\">\n",
                   nch, nch * n, n);
    for (r = 0; r < n; r++) {
        gen_t g = {n, nch, r};
        ntb = gen_gpu(&g, tbs);
        memset(waited, 0, sizeof(waited));
        for (t = 0; t < ntb; t++)
            for (k = 0; k < tbs[t].nsteps; k++)
                if (tbs[t].steps[k].dep_tb >= 0)
                    waited[tbs[t].steps[k].dep_tb][tbs[t].steps[k].dep_step] = 1;
        acc_buf_printf(b, " <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"0\">\n", r,
                       nch * n, nch * n);
        for (t = 0; t < ntb; t++) {
            acc_buf_printf(b, "  <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", t,
                           tbs[t].send, tbs[t].recv, tbs[t].chan);
            for (k = 0; k < tbs[t].nsteps; k++) {
                const gen_step_t *s = &tbs[t].steps[k];
                acc_buf_printf(b,
                               "   <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%d\" "
                               "dstbuf=\"o\" dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" "
                               "hasdep=\"%d\"/>\n",
                               k, s->type, s->sbuf, s->soff, s->doff, s->cnt, s->dep_tb,
                               s->dep_step, waited[t][k]);
            }
            acc_buf_puts(b, "  </tb>\n");
        }
        acc_buf_puts(b, " </gpu>\n");
    }
    acc_buf_puts(b, "</algo>\n");
    free(tbs);
}

ACC_TEST(rhd_allreduce_32_ranks_imports_runs_and_round_trips)
{
    static const msccl_case_t cases[] = {
        {ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT},
        {ACC_DT_F16, ACC_RED_SUM, ACC_FILL_EXACT},
    };
    static const uint64_t counts[] = {1001};
    acc_buf_t b, x;
    acc_plan_t *p, *q = NULL;

    acc_buf_init(&b);
    acc_buf_init(&x);
    rhd_allreduce_xml(&b, 32, 2);
    p = import_text(b.data, "rhd_allreduce_32.xml");
    CHECK_INT(p->nranks, 32);
    CHECK_INT(p->in_chunks, 64);
    CHECK_INT(p->inplace, 1);
    /* each pair's lower gpu splits its rrcs: the higher one's blocks need two lanes */
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_COPY_SEND), 0);
    CHECK_INT(count_ops(p, ACC_OP_RECV_REDUCE_COPY), 32 * 2 * 5);
    run_cases(p, cases, 2, counts, 1);
    /* acc's export names the lanes; importing it gives this plan back, which still computes */
    CHECK_OK(acc_plan_export_msccl(p, &x));
    CHECK_OK(acc_plan_import_msccl(x.data, x.len, "exported.xml", &q));
    CHECK(acc_plan_equal(p, q));
    run_cases(q, cases, 2, counts, 1);
    acc_plan_destroy(q);
    acc_plan_destroy(p);
    acc_buf_free(&x);
    acc_buf_free(&b);
}

/* ---- files that are wrong stay wrong, at their line ------------------------------------------ */

/* ar2_split_xml with `from` replaced by `to` fails verification with `where` and `what`. */
static void expect_verify_error(const char *from, const char *to, const char *where,
                                const char *what)
{
    char *bad = edit(ar2_split_xml, from, to, NULL);
    acc_plan_t *p = NULL;
    CHECK_ERR(acc_plan_import_msccl(bad, strlen(bad), "bad.xml", &p), ACC_ERR_VERIFY);
    CHECK(p == NULL);
    CHECK_MSG_HAS(where);
    CHECK_MSG_HAS(what);
    free(bad);
}

ACC_TEST(real_deadlock_in_split_blocks_is_named_at_its_step)
{
    /* gpu 1's receiving block now waits for its sending block's second step (line 12), which
     * waits for the receive: the verifier's cycle of waits, traced back to the file */
    expect_verify_error("cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
                        "      <step s=\"1\" type=\"r\"",
                        "cnt=\"1\" depid=\"0\" deps=\"1\" hasdep=\"1\"/>\n"
                        "      <step s=\"1\" type=\"r\"",
                        "bad.xml:12: gpu 1 <tb id=\"0\"> <step s=\"1\"> does not verify",
                        "deadlock, a cycle of waits");
}

ACC_TEST(unmatched_sends_in_split_blocks_are_named_at_their_step)
{
    /* gpu 0 no longer receives the last chunk: gpu 1's second send (now line 11) is never
     * received */
    expect_verify_error("      <step s=\"2\" type=\"r\" srcbuf=\"o\" srcoff=\"1\" dstbuf=\"o\" "
                        "dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n",
                        "", "bad.xml:11: gpu 1 <tb id=\"0\"> <step s=\"1\"> does not verify",
                        "its message is never received");
}
