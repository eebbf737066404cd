/* The plan's YAML form: load(dump(p)) equals p, a second dump is byte-identical, files go through
 * acc_plan_load_file, and malformed files (truncated anywhere, wrong types, unknown keys, bad
 * chunk ranges, absurd sizes) fail with FILE:LINE and the key, never a crash. */
#include "plan_fixtures.h"

#include "acc_yaml.h"

static char *dump(const acc_plan_t *p)
{
    acc_buf_t b;
    acc_buf_init(&b);
    FX(acc_plan_dump_yaml(p, &b));
    return acc_buf_take(&b);
}

/* load(dump(p)) == p and dump(load(dump(p))) == dump(p). */
static void round_trip(const acc_plan_t *p)
{
    char *a = dump(p), *b;
    acc_plan_t *q = NULL;
    CHECK_OK(acc_plan_load_yaml(a, strlen(a), "rt.yaml", &q));
    CHECK(acc_plan_equal(p, q));
    b = dump(q);
    CHECK_STR(b, a);
    acc_plan_destroy(q);
    acc_mem_free(a);
    acc_mem_free(b);
}

ACC_TEST(fixtures_round_trip)
{
    acc_plan_t *ps[8];
    int i;
    ps[0] = fx_ring_allreduce(4, 2);
    ps[1] = fx_ring_allgather(5, 2);
    ps[2] = fx_ring_reduce_scatter(3);
    ps[3] = fx_oneshot_allreduce(4, 3);
    ps[4] = fx_chain_broadcast(4, 3, 2);
    ps[5] = fx_tree_reduce(5, 2);
    ps[6] = fx_alltoall(3);
    ps[7] = fx_hier_allreduce(2, 3);
    for (i = 0; i < 8; i++) {
        round_trip(ps[i]);
        acc_plan_destroy(ps[i]);
    }
}

/* A plan's hash is the SHA-256 of its text, so a plan loaded from its own dump has the same one;
 * the variant that keeps the text hands back exactly what it hashed, whatever the buffer held. */
ACC_TEST(hash_is_sha256_of_the_text)
{
    acc_plan_t *p = fx_ring_allreduce(4, 2), *q = NULL, *other = fx_ring_allreduce(4, 3);
    char *text = dump(p);
    char want[ACC_SHA256_HEX_LEN + 1], hash[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t kept;

    CHECK_OK(acc_sha256_hex(text, strlen(text), want));
    CHECK_OK(acc_plan_hash(p, hash));
    CHECK_STR(hash, want);
    CHECK_OK(acc_plan_load_yaml(text, strlen(text), "h.yaml", &q));
    CHECK_OK(acc_plan_hash(q, hash));
    CHECK_STR(hash, want);
    acc_buf_init(&kept);
    acc_buf_puts(&kept, "left over from before\n");
    CHECK_OK(acc_plan_dump_yaml_hash(p, &kept, hash));
    CHECK_STR(kept.data, text);
    CHECK_STR(hash, want);
    CHECK_OK(acc_plan_hash(other, hash));
    CHECK(strcmp(hash, want) != 0);
    acc_buf_free(&kept);
    acc_mem_free(text);
    acc_plan_destroy(p);
    acc_plan_destroy(q);
    acc_plan_destroy(other);
}

ACC_TEST(every_field_round_trips)
{
    /* Fields an operation does not use, odd values and an empty program: the text form keeps
     * them all, verified or not. */
    acc_plan_t *p = fx_create(ACC_COLL_REDUCE, 3, 3, 4, 4, 2, "odd \"name\": x");
    uint32_t peers[3] = {2, 0, 7}, off;
    acc_op_t o = acc_op_init(ACC_OP_NOP);
    p->root = 2;
    p->slots = 1;
    p->proto = ACC_PROTO_LL128;
    p->inplace = 1;
    FX(acc_plan_set_params(p, "order=0,2,1 # not a comment"));
    o.peer = -5;
    o.peer2 = 1 << 30;
    o.slot = 65535;
    o.value = UINT32_MAX;
    o.src = acc_ref(ACC_BUF_SCRATCH, UINT32_MAX, 0);
    o.dst = acc_ref(ACC_BUF_OUT, UINT32_MAX - 1, UINT32_MAX);
    o.dep_lane = -1;
    o.dep_op = 9;
    FX(acc_plan_add_peers(p, peers, 3, &off));
    o.peers_off = off;
    o.npeers = 3;
    fx_add(p, 1, 2, o);
    fx_add(p, 0, 0, acc_op_init(ACC_OP_SIGNAL));
    round_trip(p);
    acc_plan_destroy(p);
    p = fx_create(ACC_COLL_ALLTOALL, 1, 1, 1, 1, 0, "");
    round_trip(p);
    acc_plan_destroy(p);
}

ACC_TEST(dump_reads_as_documented)
{
    acc_plan_t *p = fx_ring_allreduce(2, 1);
    char *t = dump(p);
    CHECK(strstr(t, "version: 1\ncollective: allreduce\nnranks: 2\nnlanes: 1\nalgo: ring\n"
                    "params: lanes=1\nchunks: {in: 2, out: 2, scratch: 0}\nslots: 8\n"
                    "proto: Simple\ninplace: true\nprograms:\n  - rank: 0\n    lane: 0\n"
                    "    ops:\n      - {op: send, peer: 1, src: \"in[0]\"}\n"
                    "      - {op: rrcs, peer: 1, peer2: 1, src: \"in[1]\", dst: \"out[1]\"}\n") !=
          NULL);
    acc_mem_free(t);
    acc_plan_destroy(p);
}

ACC_TEST(file_round_trip_and_verify)
{
    acc_plan_t *p = fx_oneshot_allreduce(3, 2), *q = NULL;
    char *t = dump(p);
    const char *path = acc_test_tmp("oneshot.yaml");
    CHECK_OK(acc_write_file(path, t, strlen(t)));
    CHECK_OK(acc_plan_load_file(path, &q));
    CHECK(acc_plan_equal(p, q));
    CHECK_OK(acc_plan_verify(q));
    acc_plan_destroy(q);
    CHECK_ERR(acc_plan_load_file(acc_test_tmp("no-such-plan.yaml"), &q), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS("no-such-plan.yaml");
    acc_mem_free(t);
    acc_plan_destroy(p);
}

static const char *const good =
    "version: 1\n"                                                   /* 1 */
    "collective: allreduce\n"                                        /* 2 */
    "nranks: 2\n"                                                    /* 3 */
    "nlanes: 1\n"                                                    /* 4 */
    "chunks: {in: 1, out: 1}\n"                                      /* 5 */
    "programs:\n"                                                    /* 6 */
    "  - rank: 0\n"                                                  /* 7 */
    "    lane: 0\n"                                                  /* 8 */
    "    ops:\n"                                                     /* 9 */
    "      - {op: send, peer: 1, src: \"in[0]\"}\n"                  /* 10 */
    "      - {op: rrc, peer: 1, src: \"in[0]\", dst: \"out[0]\"}\n"; /* 11 */

static acc_status_t load_text(const char *text)
{
    acc_plan_t *p = NULL;
    acc_status_t st = acc_plan_load_yaml(text, strlen(text), "bad.yaml", &p);
    acc_plan_destroy(p);
    return st;
}

/* The good text with line `line` (1-based) replaced. */
static acc_status_t load_with(int line, const char *replacement)
{
    char text[2048] = "";
    const char *s = good;
    int i;
    for (i = 1; *s; i++) {
        const char *e = strchr(s, '\n');
        size_t n = (size_t)(e - s) + 1;
        if (i == line)
            strcat(text, replacement);
        else
            strncat(text, s, n);
        s += n;
    }
    return load_text(text);
}

ACC_TEST(malformed_fields_name_file_line_and_key)
{
    CHECK_OK(load_text(good));
    /* Refs must be quoted inside a flow mapping: the plain form is a YAML syntax error. */
    CHECK_ERR(load_with(11, "      - {op: rrc, peer: 1, src: in[0], dst: out[0]}\n"),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:11:");
    CHECK_ERR(load_with(3, "nranks: two\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:3: 'nranks' must be an integer, not 'two'");
    CHECK_ERR(load_with(2, "colective: allreduce\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:2: unknown key 'colective' in a plan");
    CHECK_ERR(load_with(2, "collective: allsum\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:2: unknown collective 'allsum'");
    CHECK_ERR(load_with(1, "version: 2\n"), ACC_ERR_UNSUPPORTED);
    CHECK_MSG_HAS("bad.yaml:1: plan format version 2 is not supported");
    CHECK_ERR(load_with(10, "      - {op: send, pear: 1, src: \"in[0]\"}\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:10: rank 0 lane 0 op 0: unknown key 'pear' in an operation");
    CHECK_ERR(load_with(10, "      - {op: sned, peer: 1}\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:10: rank 0 lane 0 op 0: unknown operation 'sned' (known: send, recv");
    CHECK_ERR(load_with(10, "      - {op: send, peer: one}\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:10: rank 0 lane 0 op 0: 'peer' must be an integer, not 'one'");
    CHECK_ERR(load_with(10, "      - [send, 1]\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:10: rank 0 lane 0 op 0: an operation must be a mapping");
    CHECK_ERR(load_with(5, "chunks: {in: 1, out: -1}\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("bad.yaml:5: 'out' is -1, outside 0..");
    CHECK_ERR(load_with(5, "chunks: 4\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:5: 'chunks' must be a mapping");
    CHECK_ERR(load_with(8, "    lane: 3\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("bad.yaml:8: 'lane' is 3, outside 0..0");
    CHECK_ERR(load_text("version: 1\ncollective: allreduce\nnranks: 2\nchunks: {in: 1, out: 1}\n"
                        "programs: {a: 1}\n"),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:5: 'programs' must be a list");
    CHECK_ERR(load_text("version: 1\ncollective: allreduce\nnranks: 2\nchunks: {in: 1, out: 1}\n"),
              ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:1: 'programs' must be a list");
    CHECK_ERR(load_text("# nothing\n\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:3: no plan in the file");
    CHECK_ERR(load_with(4, "nlanes: 1\ninplace: maybe\n"), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:5: 'inplace' must be true or false, not 'maybe'");
}

ACC_TEST(bad_chunk_ranges_rejected)
{
    static const char *const bad[] = {
        "\"in[3\"",   "\"foo[1]\"", "\"in[5:2]\"", "\"in[]\"",           "\"in[-1]\"",
        "\"in[1:]\"", "\"in\"",     "\"in[x]\"",   "\"in[4294967296]\"", "[1, 2]"};
    char line[128];
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(line, sizeof(line), "      - {op: send, peer: 1, src: %s}\n", bad[i]);
        CHECK_ERR(load_with(10, line), ACC_ERR_PARSE);
        CHECK_MSG_HAS("bad.yaml:10: rank 0 lane 0 op 0: 'src' must be a chunk range such as");
    }
    CHECK_OK(load_with(10, "      - {op: send, peer: 1, src: \"scratch[0:0]\"}\n"));
}

ACC_TEST(absurd_sizes_rejected)
{
    CHECK_ERR(load_with(3, "nranks: 100000000\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("bad.yaml:3: 'nranks' is 100000000, outside 1..1048576");
    CHECK_ERR(load_with(4, "nlanes: 1025\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("bad.yaml:4: 'nlanes' is 1025, outside 1..1024");
    CHECK_ERR(load_with(3, "nranks: 1000000\nnlanes: 1000\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("1000000 ranks x 1000 lanes is more than");
    CHECK_ERR(load_with(5, "chunks: {in: 1, out: 1, scratch: 99999999999}\n"), ACC_ERR_RANGE);
    CHECK_MSG_HAS("bad.yaml:5: 'scratch' is 99999999999, outside 0..");
}

ACC_TEST(duplicate_program_rejected)
{
    char text[2048];
    snprintf(text, sizeof(text), "%.*s  - rank: 0\n    lane: 0\n    ops: []\n",
             (int)(strstr(good, "      - {op: rrc") - good), good);
    CHECK_ERR(load_text(text), ACC_ERR_PARSE);
    CHECK_MSG_HAS("bad.yaml:11: rank 0 lane 0 has a second program");
}

/* Every prefix of a real dump either loads (a cut at a line end can leave a valid, shorter plan)
 * or fails naming the file and a line; none crashes. */
ACC_TEST(truncated_everywhere)
{
    acc_plan_t *p = fx_oneshot_allreduce(3, 2);
    char *t = dump(p);
    size_t len = strlen(t), cut, failed = 0;
    for (cut = 0; cut < len; cut++) {
        acc_plan_t *q = NULL;
        acc_status_t st = acc_plan_load_yaml(t, cut, "cut.yaml", &q);
        if (st == ACC_OK) {
            acc_plan_destroy(q);
            continue;
        }
        failed++;
        CHECK_MSG(strncmp(acc_error_message(), "cut.yaml:", 9) == 0 &&
                      acc_error_message()[9] >= '0' && acc_error_message()[9] <= '9',
                  "cut at %zu: message without FILE:LINE: %s", cut, acc_error_message());
    }
    CHECK(failed > len / 2);
    acc_mem_free(t);
    acc_plan_destroy(p);
}

/* The example in schedules/FORMAT.md loads, verifies, and is exactly what the dumper writes. */
ACC_TEST(format_md_example)
{
    char *doc = NULL, *start, *end, *again;
    size_t len;
    acc_plan_t *p = NULL, *q;
    CHECK_OK(acc_read_file(acc_test_src("schedules/FORMAT.md"), &doc, &len));
    start = strstr(doc, "```yaml\n");
    CHECK(start != NULL);
    start += 8;
    end = strstr(start, "```");
    CHECK(end != NULL);
    *end = '\0';
    CHECK_OK(acc_plan_load_yaml(start, strlen(start), "FORMAT.md", &p));
    CHECK_OK(acc_plan_verify(p));
    q = fx_ring_allreduce(2, 1);
    CHECK(acc_plan_equal(p, q));
    again = dump(p);
    CHECK_STR(again, start);
    acc_mem_free(again);
    acc_plan_destroy(q);
    acc_plan_destroy(p);
    acc_mem_free(doc);
}
