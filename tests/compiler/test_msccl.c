/*
 * MSCCL algorithm XML: the four real files of tests/data/msccl-xml import, verify and give
 * correct results on the host executor; export -> import gives back the same plan; the other
 * dialects (old runtime, MSCCLang, in-place-only) import; and broken files fail with the file,
 * the line and what is wrong, never a crash.
 */
#include "acc_compiler.h"
#include "acc_test.h"
#include "host_plans.h"
#include "msccl_checks.h"

static const char *const real_files[] = {
    "msccl-xml/msccl-scheduler__ncv4_ag_hier_4_LL.xml",
    "msccl-xml/msccl-scheduler__ncv4_ar_tree_12_LL.xml",
    "msccl-xml/msccl-scheduler__ndv4_a2a2ll.xml",
    "msccl-xml/msccl-scheduler__ndv4_ag-1k-512k.xml",
};

static char *load(const char *rel, size_t *len)
{
    char *text = NULL;
    CHECK_OK(acc_read_file(acc_test_data(rel), &text, len));
    return text;
}

static acc_plan_t *import_text(const char *text)
{
    acc_plan_t *p = NULL;
    CHECK_OK(acc_plan_import_msccl(text, strlen(text), "dialect.xml", &p));
    return p;
}

static void expect_error(const char *text, acc_status_t want, int line, const char *fragment)
{
    acc_plan_t *p = (acc_plan_t *)&p;
    char where[64];
    CHECK_ERR(acc_plan_import_msccl(text, strlen(text), "broken.xml", &p), want);
    CHECK(p == NULL);
    snprintf(where, sizeof(where), "broken.xml:%d:", line);
    if (line)
        CHECK_MSG_HAS(where);
    CHECK_MSG_HAS(fragment);
}

/* Edit the smallest real file in one place and expect the import to fail there. */
static void broken(const char *from, const char *to, acc_status_t want, int line_delta,
                   const char *fragment)
{
    size_t len;
    char *text = load(real_files[0], &len), *bad;
    int line;
    bad = edit(text, from, to, &line);
    expect_error(bad, want, line + line_delta, fragment);
    free(bad);
    acc_mem_free(text);
}

static acc_plan_t *import_real(int i)
{
    acc_plan_t *p = NULL;
    CHECK_OK(acc_plan_import_msccl_file(acc_test_data(real_files[i]), &p));
    CHECK_OK(acc_plan_verify(p));
    return p;
}

ACC_TEST(ag_hier_4_imports_verifies_and_runs)
{
    acc_plan_t *p = import_real(0);
    CHECK_INT(p->coll, ACC_COLL_ALLGATHER);
    CHECK_INT(p->nranks, 4);
    CHECK_INT(p->in_chunks, 4);
    CHECK_INT(p->out_chunks, 16);
    CHECK_INT(p->proto, ACC_PROTO_LL);
    CHECK_INT(p->inplace, 0);
    CHECK_STR(p->algo, "msccl");
    CHECK_STR(p->params, "name=allgather_hierarchical minBytes=64 maxBytes=792576");
    CHECK_INT(acc_plan_op_count(p), 96);
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
}

ACC_TEST(ar_tree_12_in_place_only_runs_both_ways)
{
    /* inplace="1" outofplace="0": the program works on i alone; acc runs it on a home buffer so
     * that the plan is correct out of place as well */
    acc_plan_t *p = import_real(1);
    CHECK_INT(p->coll, ACC_COLL_ALLREDUCE);
    CHECK_INT(p->nranks, 4);
    CHECK_INT(p->in_chunks, 24);
    CHECK_INT(p->out_chunks, 24);
    CHECK_INT(p->inplace, 1);
    CHECK_STR(p->params, "name=allreduce_ncv4 minBytes=96 maxBytes=617472 inplace_only=1");
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
}

ACC_TEST(a2a_allpairs_8_imports_verifies_and_runs)
{
    acc_plan_t *p = import_real(2);
    CHECK_INT(p->coll, ACC_COLL_ALLTOALL);
    CHECK_INT(p->nranks, 8);
    CHECK_INT(p->in_chunks, 16);
    CHECK_INT(p->inplace, 0);
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
}

ACC_TEST(ag_1k_512k_in_place_allgather_runs_both_ways)
{
    acc_plan_t *p = import_real(3);
    CHECK_INT(p->coll, ACC_COLL_ALLGATHER);
    CHECK_INT(p->nranks, 8);
    CHECK_INT(p->in_chunks, 2); /* i_chunks="0": the input is the rank's 2 chunks of output */
    CHECK_INT(p->out_chunks, 16);
    CHECK_INT(p->inplace, 1);
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
}

/* ---- export ------------------------------------------------------------------------------ */

/* Lane 1 talks to every peer in turn, so it becomes several thread blocks; one piece starts
 * with an operation that has a dependency of its own, so the chain between the pieces needs a
 * nop step; a NOP of the plan's own sits inside a piece. */
static acc_plan_t *many_peers_alltoall(int n)
{
    acc_plan_t *p = create(ACC_COLL_ALLTOALL, n, 2, (uint32_t)n, (uint32_t)n, 0, "pieces");
    int r, q, k;
    for (r = 0; r < n; r++) {
        uint32_t copy = add(p, r, 0, ACC_OP_COPY, -1, -1, IN(r, 1), OUT(r, 1));
        for (k = 1; k < n; k++) {
            q = (r + k) % n;
            if (k == 2) {
                acc_op_t o = acc_op_init(ACC_OP_SEND);
                o.peer = q;
                o.src = IN(q, 1);
                o.dep_lane = 0;
                o.dep_op = (int32_t)copy;
                CHECK_OK(acc_plan_add(p, r, 1, &o, NULL));
            } else {
                if (k == 3)
                    add(p, r, 1, ACC_OP_NOP, -1, -1, NONE, NONE);
                add(p, r, 1, ACC_OP_SEND, q, -1, IN(q, 1), NONE);
            }
            add(p, r, 1, ACC_OP_RECV, (r - k + n) % n, -1, NONE, OUT((r - k + n) % n, 1));
        }
    }
    return p;
}

ACC_TEST(export_import_is_the_identity)
{
    acc_plan_t *p;
    p = ring_allreduce(4, 2);
    round_trip(p);
    acc_plan_destroy(p);
    p = ring_allgather(3, 2);
    round_trip(p);
    acc_plan_destroy(p);
    p = ring_reduce_scatter(4, 1);
    round_trip(p);
    acc_plan_destroy(p);
    p = chain_broadcast(4, 1, 5, 2);
    round_trip(p);
    acc_plan_destroy(p);
    p = chain_reduce(4, 3, 4); /* scratch, REDUCE, root 3 */
    round_trip(p);
    acc_plan_destroy(p);
    p = direct_alltoall(4, 2, 1); /* one lane to every peer: many thread blocks per lane */
    round_trip(p);
    acc_plan_destroy(p);
    p = many_peers_alltoall(5);
    CHECK_OK(acc_plan_verify(p));
    round_trip(p);
    run_plan(p);
    acc_plan_destroy(p);
}

/* Every registered generator's plan either round-trips exactly or, for peer-memory algorithms,
 * is refused as such. */
static void generated_round_trip(const char *desc, int min_exported)
{
    acc_topo_t *t = NULL;
    size_t n, i;
    const acc_algo_t *const *list = acc_algo_list(&n);
    int exported = 0;

    CHECK_OK(acc_topo_load_synthetic(desc, &t));
    for (i = 0; i < n; i++) {
        acc_algo_args_t args;
        acc_plan_t *p = NULL;
        acc_buf_t b;
        acc_status_t st;
        memset(&args, 0, sizeof(args));
        args.lanes = 2;
        if (list[i]->supports(t, &args) != ACC_OK)
            continue;
        CHECK_MSG(acc_algo_generate(list[i], t, &args, &p) == ACC_OK, "%s on %s: %s", list[i]->name,
                  desc, acc_error_message());
        acc_buf_init(&b);
        st = acc_plan_export_msccl(p, &b);
        acc_buf_free(&b);
        if (st == ACC_OK) {
            round_trip(p);
            exported++;
        } else {
            CHECK_MSG(st == ACC_ERR_UNSUPPORTED && strstr(acc_error_message(), "peer-memory"),
                      "%s %s on %s: %s", acc_coll_name(list[i]->coll), list[i]->name, desc,
                      acc_error_message());
        }
        acc_plan_destroy(p);
    }
    CHECK_MSG(exported >= min_exported, "%s: %d plans exported, expected %d", desc, exported,
              min_exported);
    acc_topo_destroy(t);
}

ACC_TEST(generated_plans_round_trip)
{
    generated_round_trip("gpus=5", 11);
    generated_round_trip("gpus=4 nvlink=6 nvswitch=no", 11);
    generated_round_trip("nodes=2 gpus=4 nvlink=18 nic=4x400", 11);
}

ACC_TEST(exported_pieces_chain_in_msccl_terms)
{
    /* rank 0's lane 1 sends to 1 and receives from 4, then sends to 2 (after lane 0's copy) and
     * receives from 3, ...: one thread block per peer pair.  The second piece's send has a
     * dependency of its own, so a nop step carries the chain to the piece before; every step
     * waited for says hasdep="1" */
    acc_plan_t *p = many_peers_alltoall(5);
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_OK(acc_plan_export_msccl(p, &b));
    CHECK(strstr(b.data, "<tb id=\"1\" send=\"1\" recv=\"4\" chan=\"1\" acc_lane=\"1\">") != NULL);
    CHECK(strstr(b.data, "<tb id=\"2\" send=\"2\" recv=\"3\" chan=\"1\" acc_lane=\"1\">\n"
                         "      <step s=\"0\" type=\"nop\" srcbuf=\"i\" srcoff=\"0\" "
                         "dstbuf=\"o\" dstoff=\"0\" cnt=\"0\" depid=\"1\" deps=\"1\" "
                         "hasdep=\"0\"/>\n"
                         "      <step s=\"1\" type=\"s\" srcbuf=\"i\" srcoff=\"2\" "
                         "dstbuf=\"i\" dstoff=\"2\" cnt=\"1\" depid=\"0\" deps=\"0\" "
                         "hasdep=\"0\"/>") != NULL);
    CHECK(strstr(b.data, "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" "
                         "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"") != NULL);
    CHECK(strstr(b.data, "acc_nlanes=\"2\"") != NULL);
    acc_buf_free(&b);
    acc_plan_destroy(p);
}

ACC_TEST(exported_rings_read_as_plain_msccl)
{
    /* without acc's own attributes a generic MSCCL reader still gets a correct algorithm */
    acc_plan_t *p = ring_allreduce(4, 2), *q = NULL;
    acc_buf_t b;
    char *s, *d;
    acc_buf_init(&b);
    CHECK_OK(acc_plan_export_msccl(p, &b));
    for (s = d = b.data; *s;) { /* drop every acc_*="..." attribute */
        if (s[0] == ' ' && !strncmp(s + 1, "acc_", 4)) {
            s = strchr(s, '"') + 1;
            s = strchr(s, '"') + 1;
            continue;
        }
        *d++ = *s++;
    }
    *d = '\0';
    CHECK(strstr(b.data, "acc_") == NULL);
    q = import_text(b.data);
    CHECK_STR(q->algo, "msccl");
    CHECK_INT(q->nlanes, 2);
    CHECK_INT(acc_plan_op_count(q), acc_plan_op_count(p));
    run_plan(q);
    acc_plan_destroy(q);
    acc_buf_free(&b);
    acc_plan_destroy(p);
}

ACC_TEST(export_refuses_peer_memory)
{
    acc_plan_t *p = oneshot_allreduce(3);
    acc_buf_t b;
    acc_buf_init(&b);
    CHECK_ERR(acc_plan_export_msccl(p, &b), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("rank 0 lane 0 op 1 (signal) is a peer-memory operation");
    acc_buf_free(&b);
    acc_plan_destroy(p);
}

/* ---- dialects ------------------------------------------------------------------------------ */

/* Old runtime: reduce_scatter with an underscore, no outofplace or size range, nthreads, no
 * proto (Simple), a thread block without peers on chan="-1", and <copy> elements. */
ACC_TEST(old_runtime_reduce_scatter)
{
    acc_buf_t b;
    acc_plan_t *p;
    int r;
    acc_buf_init(&b);
    acc_buf_puts(&b, "<!-- a 3-gpu ring --><algo name=\"rs_ring\" nchunksperloop=\"3\" "
                     "ngpus=\"3\" coll=\"reduce_scatter\" inplace=\"0\" nthreads=\"256\">\n");
    for (r = 0; r < 3; r++) {
        acc_buf_printf(&b, " <gpu id=\"%d\" i_chunks=\"3\" o_chunks=\"1\" s_chunks=\"0\">\n", r);
        acc_buf_printf(&b, "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n", (r + 1) % 3,
                       (r + 2) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n",
                       (r + 2) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"1\" type=\"rrs\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n",
                       (r + 1) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"2\" type=\"rrc\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"0\" cnt=\"1\" depid=\"1\" deps=\"0\" hasdep=\"0\"/>\n",
                       r);
        acc_buf_puts(&b, "  </tb>\n  <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"-1\">\n"
                         "   <step s=\"0\" type=\"nop\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" "
                         "dstoff=\"0\" cnt=\"0\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"
                         "  </tb>\n  <copy src=\"0\" dst=\"1\"/>\n </gpu>\n");
    }
    acc_buf_puts(&b, "</algo>\n");
    p = import_text(b.data);
    CHECK_INT(p->coll, ACC_COLL_REDUCE_SCATTER);
    CHECK_INT(p->proto, ACC_PROTO_SIMPLE);
    CHECK_INT(p->inplace, 0);
    CHECK_STR(p->params, "name=rs_ring minBytes=0 maxBytes=0 nthreads=256");
    CHECK_INT(p->progs[0].ops[2].dep_lane, 1); /* step 2 waits for the nop of tb 1 */
    run_plan(p);
    acc_plan_destroy(p);
    acc_buf_free(&b);
}

/* The ring allgather of MSCCLang and the new executor: inplace and outofplace both 1 (the
 * copy of i to o[r] is a copy onto itself in place), redop and maxcount recorded. */
static void ring_allgather_xml(acc_buf_t *b, const char *algo_attrs, int inplace_only)
{
    int r, t;
    acc_buf_printf(b,
                   "<algo name=\"ag_ring\" proto=\"LL128\" nchannels=\"1\" "
                   "nchunksperloop=\"3\" ngpus=\"3\" coll=\"allgather\" %s>\n",
                   algo_attrs);
    for (r = 0; r < 3; r++) {
        acc_buf_printf(b, " <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"3\" s_chunks=\"0\">\n", r,
                       inplace_only ? 0 : 1);
        acc_buf_printf(b, "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n", (r + 1) % 3,
                       (r + 2) % 3);
        if (!inplace_only)
            acc_buf_printf(b,
                           "   <step s=\"0\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" "
                           "dstbuf=\"o\" dstoff=\"%d\" cnt=\"1\"/>\n",
                           r);
        t = !inplace_only;
        acc_buf_printf(b,
                       "   <step s=\"%d\" type=\"s\" srcbuf=\"o\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"%d\" cnt=\"1\"/>\n",
                       t, r, r);
        acc_buf_printf(b,
                       "   <step s=\"%d\" type=\"rcs\" srcbuf=\"o\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"%d\" cnt=\"1\"/>\n",
                       t + 1, (r + 2) % 3, (r + 2) % 3);
        acc_buf_printf(b,
                       "   <step s=\"%d\" type=\"r\" srcbuf=\"o\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"%d\" cnt=\"1\"/>\n",
                       t + 2, (r + 1) % 3, (r + 1) % 3);
        acc_buf_puts(b, "  </tb>\n </gpu>\n");
    }
    acc_buf_puts(b, "</algo>\n");
}

ACC_TEST(mscclang_ring_allgather_both_modes)
{
    acc_buf_t b;
    acc_plan_t *p;
    acc_buf_init(&b);
    ring_allgather_xml(&b,
                       "inplace=\"1\" outofplace=\"1\" minBytes=\"0\" maxBytes=\"0\" "
                       "redop=\"nop\" maxcount=\"8\"",
                       0);
    p = import_text(b.data);
    CHECK_INT(p->proto, ACC_PROTO_LL128);
    CHECK_INT(p->inplace, 1);
    CHECK_STR(p->params, "name=ag_ring minBytes=0 maxBytes=0 redop=nop maxcount=8");
    run_plan(p);
    round_trip(p);
    acc_plan_destroy(p);
    acc_buf_reset(&b);
    /* the same ring written for in place only: no copy, i_chunks="0" */
    ring_allgather_xml(&b, "inplace=\"1\" outofplace=\"0\"", 1);
    p = import_text(b.data);
    CHECK_INT(p->in_chunks, 1);
    run_plan(p);
    acc_plan_destroy(p);
    acc_buf_free(&b);
}

ACC_TEST(in_place_only_reducescatter_runs_out_of_place_too)
{
    /* new spelling; the result is written to i at the rank's block, which o aliases */
    acc_buf_t b;
    acc_plan_t *p;
    int r;
    acc_buf_init(&b);
    acc_buf_puts(&b, "<algo name=\"rs_inplace\" proto=\"Simple\" nchannels=\"1\" "
                     "nchunksperloop=\"3\" ngpus=\"3\" coll=\"reducescatter\" inplace=\"1\" "
                     "outofplace=\"0\" minBytes=\"0\" maxBytes=\"0\">\n");
    for (r = 0; r < 3; r++) {
        acc_buf_printf(&b,
                       " <gpu id=\"%d\" i_chunks=\"3\" o_chunks=\"0\" s_chunks=\"1\">\n"
                       "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n",
                       r, (r + 1) % 3, (r + 2) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" "
                       "dstoff=\"0\" cnt=\"1\"/>\n",
                       (r + 2) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"1\" type=\"r\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"s\" "
                       "dstoff=\"0\" cnt=\"1\"/>\n"
                       "   <step s=\"2\" type=\"re\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"s\" "
                       "dstoff=\"0\" cnt=\"1\"/>\n"
                       "   <step s=\"3\" type=\"s\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"s\" "
                       "dstoff=\"0\" cnt=\"1\"/>\n",
                       (r + 1) % 3);
        acc_buf_printf(&b,
                       "   <step s=\"4\" type=\"rrc\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"o\" "
                       "dstoff=\"0\" cnt=\"1\"/>\n  </tb>\n </gpu>\n",
                       r);
    }
    acc_buf_puts(&b, "</algo>\n");
    p = import_text(b.data);
    CHECK_INT(p->coll, ACC_COLL_REDUCE_SCATTER);
    CHECK_INT(p->in_chunks, 3);
    CHECK_INT(p->out_chunks, 1);
    CHECK_INT(p->scratch_chunks, 4); /* 3 for the aliased input, 1 of the file's own */
    CHECK_INT(p->inplace, 1);
    run_plan(p);
    acc_plan_destroy(p);
    acc_buf_free(&b);
}

ACC_TEST(broadcast_with_root)
{
    acc_plan_t *p = chain_broadcast(3, 2, 2, 1), *q;
    acc_buf_t b;
    int line;
    char *text;
    acc_buf_init(&b);
    CHECK_OK(acc_plan_export_msccl(p, &b));
    text = edit(b.data, " acc_root=\"2\"", " root=\"2\"", &line);
    q = import_text(text);
    CHECK_INT(q->root, 2);
    run_plan(q);
    acc_plan_destroy(q);
    free(text);
    acc_buf_free(&b);
    acc_plan_destroy(p);
}

/* ---- broken files -------------------------------------------------------------------------- */

ACC_TEST(missing_attributes_are_named)
{
    broken(" ngpus=\"4\"", "", ACC_ERR_PARSE, 0, "<algo> lacks the attribute ngpus");
    broken(" coll=\"allgather\"", "", ACC_ERR_PARSE, 0, "<algo> lacks the attribute coll");
    broken(" cnt=\"1\"", "", ACC_ERR_PARSE, 0, "<step> lacks the attribute cnt");
    broken(" dstbuf=\"o\" dstoff=\"4\"", " dstoff=\"4\"", ACC_ERR_PARSE, 0,
           "<step> lacks the attribute dstbuf (i, o or s)");
    broken(" i_chunks=\"4\"", "", ACC_ERR_PARSE, 0, "<gpu> lacks the attribute i_chunks");
    broken(" chan=\"0\"", "", ACC_ERR_PARSE, 0, "<tb> lacks the attribute chan");
}

ACC_TEST(bad_values_are_named)
{
    broken("type=\"r\"", "type=\"rx\"", ACC_ERR_PARSE, 0, "<step type=\"rx\">: unknown step type");
    broken("type=\"r\"", "type=\"ra\"", ACC_ERR_PARSE, 0, "'ra' of the old runtime");
    broken("type=\"s\" srcbuf=\"i\"", "type=\"s\" srcbuf=\"x\"", ACC_ERR_PARSE, 0,
           "<step srcbuf=\"x\">: expected i (input), o (output) or s (scratch)");
    broken("recv=\"1\"", "recv=\"7\"", ACC_ERR_PARSE, 0,
           "<tb recv=\"7\">: expected an integer from -1 to 3");
    broken("recv=\"1\"", "recv=\"0\"", ACC_ERR_PARSE, 0,
           "may not send to or receive from its "
           "own gpu");
    broken("coll=\"allgather\"", "coll=\"custom\"", ACC_ERR_PARSE, 0,
           "<algo coll=\"custom\">: not a collective acc can run");
    broken("nchunksperloop=\"16\"", "nchunksperloop=\"8\"", ACC_ERR_PARSE, 0,
           "nchunksperloop=\"8\" but the output buffer has 16 chunks");
    broken("inplace=\"0\" outofplace=\"1\"", "inplace=\"0\" outofplace=\"0\"", ACC_ERR_PARSE, 0,
           "applies to no call");
    broken("o_chunks=\"16\"", "o_chunks=\"12\"", ACC_ERR_PARSE, 50,
           "gpu 1 has i_chunks=4 o_chunks=16 but gpu 0 has 4 and 12: acc needs one buffer "
           "layout on every rank");
    broken(" s=\"1\"", " s=\"5\"", ACC_ERR_PARSE, 0, "steps are numbered 0, 1, 2, ... in order");
    broken("dstoff=\"4\"", "dstoff=\"16\"", ACC_ERR_PARSE, 0,
           "reaches chunk 16 of a buffer of 16 chunks");
    broken("<gpu id=\"3\"", "<gpu id=\"2\"", ACC_ERR_PARSE, 0, "<gpu id=\"2\"> is defined twice");
    broken("<tb id=\"1\"", "<tb id=\"0\"", ACC_ERR_PARSE, 0,
           "<tb id=\"0\"> of gpu 0 is defined "
           "twice");
    broken("<tb id=\"11\"", "<tb id=\"12\"", ACC_ERR_PARSE, 0, "their ids are 0 to 11");
}

ACC_TEST(chunk_sizes_must_agree)
{
    acc_buf_t b;
    acc_buf_init(&b);
    /* allgather of 2: o_chunks must be 2 x i_chunks for one chunk size */
    acc_buf_puts(&b, "<algo coll=\"allgather\" ngpus=\"2\" nchunksperloop=\"3\">\n"
                     "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"3\" s_chunks=\"0\"/>\n"
                     "<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"3\" s_chunks=\"0\"/>\n</algo>\n");
    expect_error(b.data, ACC_ERR_PARSE, 2,
                 "i_chunks=1 and o_chunks=3 make chunks of different "
                 "sizes for allgather of 2 gpus (the output holds 2 times the input's elements)");
    acc_buf_free(&b);
}

ACC_TEST(dangling_and_silent_dependencies_are_named)
{
    broken("depid=\"-1\" deps=\"-1\"", "depid=\"40\" deps=\"0\"", ACC_ERR_PARSE, 0,
           "<step depid=\"40\">: expected an integer from -1 to 11");
    broken("depid=\"-1\" deps=\"-1\"", "depid=\"1\" deps=\"9\"", ACC_ERR_PARSE, 0,
           "waits for step 9 of tb 1, which has 2 steps");
    broken("depid=\"-1\" deps=\"-1\"", "depid=\"2\" deps=\"-1\"", ACC_ERR_PARSE, 0,
           "give both (the thread block and the step waited for) or neither");
    /* waiting on a step that does not say hasdep="1": MSCCL would hang; the complaint is at the
     * step waited for (tb 1 step 0, 4 lines further down) */
    broken("depid=\"-1\" deps=\"-1\"", "depid=\"1\" deps=\"0\"", ACC_ERR_PARSE, 4,
           "says hasdep=\"0\": MSCCL would never signal it and tb 0 would hang");
    broken("depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"1\"", ACC_ERR_PARSE, 0,
           "waits for its own step 1, which comes later");
}

ACC_TEST(unmatched_connections_are_named)
{
    /* gpu 0 tb 0 receives from gpu 1 on channel 0; move it to channel 3: gpu 1's sender on
     * channel 0 (tb 4, line 69) is left without a receiver */
    broken("<tb id=\"0\" send=\"-1\" recv=\"1\" chan=\"0\">",
           "<tb id=\"0\" send=\"-1\" recv=\"1\" chan=\"3\">", ACC_ERR_PARSE, 66,
           "gpu 1 tb 4 sends to gpu 0 on channel 0, but no <tb> of gpu 0 has recv=\"1\" "
           "chan=\"0\" with receiving steps");
    broken("<tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"1\">",
           "<tb id=\"1\" send=\"-1\" recv=\"1\" chan=\"0\">", ACC_ERR_PARSE, 0,
           "gpu 0 tb 0 and tb 1 (line 3) both receive from gpu 1 on channel 0");
}

ACC_TEST(wrong_algorithm_fails_verification_at_its_step)
{
    /* gpu 0 receives chunk 4 into out[5] instead: out[5] is written twice, out[4] never */
    size_t len;
    char *text = load(real_files[0], &len), *bad;
    int line;
    bad = edit(text, "dstbuf=\"o\" dstoff=\"4\"", "dstbuf=\"o\" dstoff=\"5\"", &line);
    expect_error(bad, ACC_ERR_VERIFY, 0, "does not verify");
    CHECK_MSG_HAS("broken.xml:");
    CHECK_MSG_HAS("<step s=");
    free(bad);
    acc_mem_free(text);
}

ACC_TEST(malformed_xml_never_crashes)
{
    size_t len, cut;
    char *text = load(real_files[0], &len);
    acc_plan_t *p = NULL;
    int lines = 0;

    expect_error("", ACC_ERR_PARSE, 0, "broken.xml");
    expect_error("<foo/>", ACC_ERR_PARSE, 1, "the root element is <foo>");
    expect_error("<!DOCTYPE algo [<!ENTITY x \"yy\">]><algo name=\"&x;\"/>", ACC_ERR_PARSE, 1,
                 "DOCTYPE");
    expect_error("<algo coll=\"allreduce\" ngpus=\"2\" nchunksperloop=\"2\">\n<gpu id=\"0\" "
                 "i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"0\"/></algo>",
                 ACC_ERR_PARSE, 1, "there is no <gpu id=\"1\">");
    /* truncated at many offsets: each is refused with the file named, none crashes */
    for (cut = 0; cut + 8 < len; cut += 53) {
        char *part = acc_mem_strndup(text, cut);
        CHECK(acc_plan_import_msccl(part, cut, "broken.xml", &p) != ACC_OK);
        CHECK(p == NULL);
        CHECK_MSG_HAS("broken.xml");
        acc_mem_free(part);
        lines++;
    }
    CHECK(lines > 200);
    /* not even text */
    text[100] = '\0';
    CHECK_ERR(acc_plan_import_msccl(text, len, "broken.xml", &p), ACC_ERR_PARSE);
    CHECK_ERR(acc_plan_import_msccl_file(acc_test_tmp("no-such-file.xml"), &p), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no-such-file.xml");
    acc_mem_free(text);
}
