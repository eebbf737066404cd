/* The plan's text form (schedules/FORMAT.md, version 1): a header of scalar keys, then one entry
 * per non-empty lane with its operations as flow mappings, one per line.  The dump writes every
 * field that differs from its "unused" value (acc_op_init), so that load(dump(p)) equals p for
 * any plan, verified or not, and a dump of a loaded dump is byte-identical. */
#include "acc_plan.h"
#include "acc_yaml.h"

#include <inttypes.h>
#include <string.h>

#define PLAN_YAML_VERSION 1
/* Sizes a file may declare.  They keep a malformed or hostile file from making the loader (or
 * the verifier after it) allocate gigabytes; real plans are far below them. */
#define MAX_RANKS  (1 << 20)
#define MAX_LANES  1024
#define MAX_PROGS  (1 << 22)
#define MAX_CHUNKS (1u << 26)

/* ---- dump ----------------------------------------------------------------------------------- */

static void put_ref(acc_buf_t *b, const char *key, acc_ref_t r)
{
    /* Quoted: '[' and ']' are YAML flow indicators, not allowed in a plain scalar inside {}. */
    if (r.cnt == 1)
        acc_buf_printf(b, ", %s: \"%s[%" PRIu32 "]\"", key, acc_buf_name((acc_bufid_t)r.buf),
                       r.off);
    else
        acc_buf_printf(b, ", %s: \"%s[%" PRIu32 ":%" PRIu64 "]\"", key,
                       acc_buf_name((acc_bufid_t)r.buf), r.off, (uint64_t)r.off + r.cnt);
}

static int ref_unused(acc_ref_t r)
{
    return r.buf == 0 && r.off == 0 && r.cnt == 0;
}

static acc_status_t dump_op(const acc_plan_t *p, int rank, int lane, uint32_t i, acc_buf_t *b)
{
    const acc_op_t *o = &p->progs[(size_t)rank * p->nlanes + lane].ops[i];
    uint32_t k;

    if (o->code >= ACC_OP_COUNT || o->src.buf >= ACC_BUF_COUNT || o->dst.buf >= ACC_BUF_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "rank %d lane %d op %u: operation code %u or a "
                             "buffer id cannot be written as a plan file",
                             rank, lane, i, o->code);
    if (o->npeers && (uint64_t)o->peers_off + o->npeers > p->npeer_pool)
        return acc_error_set(ACC_ERR_INVALID,
                             "rank %d lane %d op %u: peer list outside the "
                             "plan's pool",
                             rank, lane, i);
    acc_buf_printf(b, "      - {op: %s", acc_op_name((acc_opcode_t)o->code));
    if (o->peer != -1)
        acc_buf_printf(b, ", peer: %" PRId32, o->peer);
    if (o->peer2 != -1)
        acc_buf_printf(b, ", peer2: %" PRId32, o->peer2);
    if (o->slot)
        acc_buf_printf(b, ", slot: %u", (unsigned)o->slot);
    if (o->value)
        acc_buf_printf(b, ", value: %" PRIu32, o->value);
    if (!ref_unused(o->src))
        put_ref(b, "src", o->src);
    if (!ref_unused(o->dst))
        put_ref(b, "dst", o->dst);
    if (o->npeers) {
        acc_buf_puts(b, ", peers: [");
        for (k = 0; k < o->npeers; k++)
            acc_buf_printf(b, "%s%" PRIu32, k ? ", " : "", p->peer_pool[o->peers_off + k]);
        acc_buf_puts(b, "]");
    }
    if (o->dep_lane != -1 || o->dep_op != -1)
        acc_buf_printf(b, ", dep: [%" PRId32 ", %" PRId32 "]", o->dep_lane, o->dep_op);
    acc_buf_puts(b, "}\n");
    return ACC_OK;
}

acc_status_t acc_plan_dump_yaml(const acc_plan_t *plan, acc_buf_t *out)
{
    acc_status_t st;
    int r, l, any = 0;
    uint32_t i;

    if (plan->view)
        return acc_error_set(ACC_ERR_INVALID,
                             "rank %d's view of %s holds one rank's programs: it has no text form",
                             plan->view->rank, plan->algo);
    if (plan->period)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s lists %d of its %d ranks' programs (a quotient for the "
                             "simulator): it has no text form",
                             plan->algo, plan->period, plan->nranks);
    if (plan->coll < 0 || plan->coll >= ACC_COLL_COUNT || plan->proto < 0 ||
        plan->proto >= ACC_PROTO_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "plan with collective %d / protocol %d cannot be "
                             "written",
                             (int)plan->coll, (int)plan->proto);
    acc_buf_puts(out, "# acc collective plan; the format is described in schedules/FORMAT.md\n");
    acc_buf_printf(out, "version: %d\n", PLAN_YAML_VERSION);
    acc_buf_printf(out, "collective: %s\n", acc_coll_name(plan->coll));
    acc_buf_printf(out, "nranks: %d\n", plan->nranks);
    acc_buf_printf(out, "nlanes: %d\n", plan->nlanes);
    if (plan->root != -1)
        acc_buf_printf(out, "root: %d\n", plan->root);
    if (plan->algo[0]) {
        acc_buf_puts(out, "algo: ");
        acc_yaml_put_scalar(out, plan->algo);
        acc_buf_puts(out, "\n");
    }
    if (plan->params[0]) {
        acc_buf_puts(out, "params: ");
        acc_yaml_put_scalar(out, plan->params);
        acc_buf_puts(out, "\n");
    }
    acc_buf_printf(out, "chunks: {in: %" PRIu32 ", out: %" PRIu32 ", scratch: %" PRIu32 "}\n",
                   plan->in_chunks, plan->out_chunks, plan->scratch_chunks);
    acc_buf_printf(out, "slots: %d\n", plan->slots);
    acc_buf_printf(out, "proto: %s\n", acc_proto_name(plan->proto));
    acc_buf_printf(out, "inplace: %s\n", plan->inplace ? "true" : "false");
    for (r = 0; r < plan->nranks; r++)
        for (l = 0; l < plan->nlanes; l++) {
            const acc_lane_prog_t *prog = &plan->progs[(size_t)r * plan->nlanes + l];
            if (!prog->nops)
                continue;
            if (!any++)
                acc_buf_puts(out, "programs:\n");
            acc_buf_printf(out, "  - rank: %d\n    lane: %d\n    ops:\n", r, l);
            for (i = 0; i < prog->nops; i++)
                if ((st = dump_op(plan, r, l, i, out)) != ACC_OK)
                    return st;
        }
    if (!any)
        acc_buf_puts(out, "programs: []\n");
    if (acc_buf_status(out) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory writing a plan of %zu operations",
                             acc_plan_op_count(plan));
    return ACC_OK;
}

acc_status_t acc_plan_dump_yaml_hash(const acc_plan_t *plan, acc_buf_t *yaml,
                                     char hex[ACC_SHA256_HEX_LEN + 1])
{
    acc_status_t st;
    acc_buf_reset(yaml);
    if ((st = acc_plan_dump_yaml(plan, yaml)) != ACC_OK)
        return st;
    return acc_sha256_hex(yaml->data, yaml->len, hex);
}

acc_status_t acc_plan_hash(const acc_plan_t *plan, char hex[ACC_SHA256_HEX_LEN + 1])
{
    acc_buf_t yaml;
    acc_status_t st;
    acc_buf_init(&yaml);
    st = acc_plan_dump_yaml_hash(plan, &yaml, hex);
    acc_buf_free(&yaml);
    return st;
}

/* ---- load ----------------------------------------------------------------------------------- */

typedef struct {
    acc_yaml_doc_t *doc;
    acc_plan_t *plan;
} loader_t;

/* "in[3]" or "out[0:4]" (chunks first .. end-1). */
static acc_status_t parse_ref(loader_t *ld, acc_yaml_node_t *n, const char *key, acc_ref_t *out)
{
    const char *s = acc_yaml_scalar(n), *br, *colon, *end;
    char bufname[16], num[32];
    int64_t a, e;
    size_t len;
    int b;

    if (!s)
        goto bad;
    br = strchr(s, '[');
    end = s + strlen(s);
    if (!br || end == br + 1 || end[-1] != ']' || (size_t)(br - s) >= sizeof(bufname))
        goto bad;
    memcpy(bufname, s, (size_t)(br - s));
    bufname[br - s] = '\0';
    for (b = 0; b < ACC_BUF_COUNT; b++)
        if (strcmp(bufname, acc_buf_name((acc_bufid_t)b)) == 0)
            break;
    if (b == ACC_BUF_COUNT)
        goto bad;
    colon = memchr(br + 1, ':', (size_t)(end - 1 - (br + 1)));
    len = (size_t)((colon ? colon : end - 1) - (br + 1));
    if (!len || len >= sizeof(num))
        goto bad;
    memcpy(num, br + 1, len);
    num[len] = '\0';
    if (acc_parse_int64(num, &a) != ACC_OK || a < 0 || a > UINT32_MAX)
        goto bad;
    e = a + 1;
    if (colon) {
        len = (size_t)(end - 1 - (colon + 1));
        if (!len || len >= sizeof(num))
            goto bad;
        memcpy(num, colon + 1, len);
        num[len] = '\0';
        if (acc_parse_int64(num, &e) != ACC_OK || e < a || e - a > UINT32_MAX)
            goto bad;
    }
    out->buf = (uint8_t)b;
    out->off = (uint32_t)a;
    out->cnt = (uint32_t)(e - a);
    return ACC_OK;
bad:
    return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                          "'%s' must be a chunk range such as "
                          "\"in[3]\" or \"out[0:4]\" (buffer in, out or scratch; first:end), "
                          "not '%s'",
                          key, s ? s : "(not a scalar)");
}

static acc_status_t load_peers(loader_t *ld, acc_yaml_node_t *n, acc_op_t *op)
{
    size_t i, cnt = acc_yaml_seq_len(n);
    uint32_t *ranks = NULL;
    acc_status_t st = ACC_OK;

    if (!acc_yaml_is_seq(n) || cnt == 0)
        return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                              "'peers' must be a non-empty list of "
                              "ranks");
    if (cnt > MAX_RANKS)
        return acc_yaml_error(ld->doc, n, ACC_ERR_RANGE, "'peers' lists %zu ranks, more than %d",
                              cnt, MAX_RANKS);
    if (!(ranks = acc_mem_alloc(cnt * sizeof(uint32_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory loading a plan");
    for (i = 0; i < cnt && st == ACC_OK; i++) {
        acc_yaml_node_t *item = acc_yaml_seq_at(ld->doc, n, i);
        int64_t v;
        st = acc_yaml_node_int(ld->doc, item, "peers", &v);
        if (st == ACC_OK && (v < 0 || v > UINT32_MAX))
            st = acc_yaml_error(ld->doc, item, ACC_ERR_RANGE, "peer %" PRId64 " is not a rank", v);
        ranks[i] = (uint32_t)v;
    }
    if (st == ACC_OK)
        st = acc_plan_add_peers(ld->plan, ranks, (uint32_t)cnt, &op->peers_off);
    op->npeers = (uint32_t)cnt;
    acc_mem_free(ranks);
    return st;
}

static acc_status_t load_op(loader_t *ld, acc_yaml_node_t *n, acc_op_t *op)
{
    static const char *const keys[] = {"op",  "peer", "peer2", "slot", "value",
                                       "src", "dst",  "peers", "dep",  NULL};
    acc_yaml_node_t *x;
    const char *name = NULL;
    acc_opcode_t code;
    acc_status_t st;
    int64_t v;

    if (!acc_yaml_is_map(n))
        return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                              "an operation must be a mapping such as "
                              "{op: send, peer: 1, src: \"in[0]\"}");
    if ((st = acc_yaml_check_keys(ld->doc, n, keys, "an operation")) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, n, "op", 1, &name)) != ACC_OK)
        return st;
    if (acc_op_parse(name, &code) != ACC_OK) {
        acc_buf_t b;
        int c;
        acc_buf_init(&b);
        for (c = 0; c < ACC_OP_COUNT; c++)
            acc_buf_printf(&b, "%s%s", c ? ", " : "", acc_op_name((acc_opcode_t)c));
        st = acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, n, "op"), ACC_ERR_PARSE,
                            "unknown operation '%s' (known: %s)", name, b.data ? b.data : "");
        acc_buf_free(&b);
        return st;
    }
    *op = acc_op_init(code);
    v = -1;
    if ((st = acc_yaml_get_range(ld->doc, n, "peer", 0, INT32_MIN, INT32_MAX, &v)) != ACC_OK)
        return st;
    op->peer = (int32_t)v;
    v = -1;
    if ((st = acc_yaml_get_range(ld->doc, n, "peer2", 0, INT32_MIN, INT32_MAX, &v)) != ACC_OK)
        return st;
    op->peer2 = (int32_t)v;
    v = 0;
    if ((st = acc_yaml_get_range(ld->doc, n, "slot", 0, 0, UINT16_MAX, &v)) != ACC_OK)
        return st;
    op->slot = (uint16_t)v;
    v = 0;
    if ((st = acc_yaml_get_range(ld->doc, n, "value", 0, 0, UINT32_MAX, &v)) != ACC_OK)
        return st;
    op->value = (uint32_t)v;
    if ((x = acc_yaml_get(ld->doc, n, "src")) && (st = parse_ref(ld, x, "src", &op->src)))
        return st;
    if ((x = acc_yaml_get(ld->doc, n, "dst")) && (st = parse_ref(ld, x, "dst", &op->dst)))
        return st;
    if ((x = acc_yaml_get(ld->doc, n, "peers")) && (st = load_peers(ld, x, op)) != ACC_OK)
        return st;
    if ((x = acc_yaml_get(ld->doc, n, "dep"))) {
        int64_t d[2];
        int k;
        if (acc_yaml_seq_len(x) != 2)
            return acc_yaml_error(ld->doc, x, ACC_ERR_PARSE, "'dep' must be [lane, op]");
        for (k = 0; k < 2; k++) {
            acc_yaml_node_t *item = acc_yaml_seq_at(ld->doc, x, (size_t)k);
            if ((st = acc_yaml_node_int(ld->doc, item, "dep", &d[k])) != ACC_OK)
                return st;
            if (d[k] < INT32_MIN || d[k] > INT32_MAX)
                return acc_yaml_error(ld->doc, item, ACC_ERR_RANGE,
                                      "'dep' entry %" PRId64 " is out of range", d[k]);
        }
        op->dep_lane = (int32_t)d[0];
        op->dep_op = (int32_t)d[1];
    }
    return ACC_OK;
}

/* Put "rank R lane L op I: " after the "FILE:LINE: " of the current message, so that the file
 * position still leads. */
static acc_status_t in_op(loader_t *ld, acc_status_t st, int64_t r, int64_t l, size_t i)
{
    const char *msg = acc_error_message(), *name = acc_yaml_name(ld->doc), *p;
    size_t n = strlen(name);
    char *copy;
    if (strncmp(msg, name, n) != 0 || msg[n] != ':')
        return acc_error_prefix(st, "rank %" PRId64 " lane %" PRId64 " op %zu: ", r, l, i);
    p = msg + n + 1;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p[0] != ':' || p[1] != ' ' || !(copy = acc_mem_strdup(msg)))
        return st;
    p = copy + (p - msg) + 2;
    st = acc_error_set(st, "%.*srank %" PRId64 " lane %" PRId64 " op %zu: %s", (int)(p - copy),
                       copy, r, l, i, p);
    acc_mem_free(copy);
    return st;
}

static acc_status_t load_program(loader_t *ld, acc_yaml_node_t *n, uint8_t *seen)
{
    static const char *const keys[] = {"rank", "lane", "ops", NULL};
    acc_plan_t *p = ld->plan;
    acc_yaml_node_t *ops;
    acc_lane_prog_t *prog;
    acc_status_t st;
    int64_t r = 0, l = 0;
    size_t i, nops;

    if (!acc_yaml_is_map(n))
        return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                              "each entry of 'programs' must be a "
                              "mapping with rank, lane and ops");
    if ((st = acc_yaml_check_keys(ld->doc, n, keys, "a program")) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, n, "rank", 1, 0, p->nranks - 1, &r)) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, n, "lane", 1, 0, p->nlanes - 1, &l)) != ACC_OK)
        return st;
    if (seen[r * p->nlanes + l]++)
        return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                              "rank %" PRId64 " lane %" PRId64 " has a second program", r, l);
    ops = acc_yaml_get(ld->doc, n, "ops");
    if (!acc_yaml_is_seq(ops))
        return acc_yaml_error(ld->doc, ops ? ops : n, ACC_ERR_PARSE,
                              "'ops' must be a list of "
                              "operations");
    nops = acc_yaml_seq_len(ops);
    prog = acc_plan_prog(p, (int)r, (int)l);
    if (nops >= UINT32_MAX || !(prog->ops = acc_mem_calloc(nops ? nops : 1, sizeof(acc_op_t))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory loading %zu operations", nops);
    prog->cap = (uint32_t)(nops ? nops : 1);
    for (i = 0; i < nops; i++) {
        acc_yaml_node_t *o = acc_yaml_seq_at(ld->doc, ops, i);
        if ((st = load_op(ld, o, &prog->ops[i])) != ACC_OK)
            return in_op(ld, st, r, l, i);
        prog->nops++;
    }
    return ACC_OK;
}

static acc_status_t load_header(loader_t *ld, acc_yaml_node_t *root)
{
    static const char *const keys[] = {"version", "collective", "nranks", "nlanes", "root",
                                       "algo",    "params",     "chunks", "slots",  "proto",
                                       "inplace", "programs",   NULL};
    static const char *const chunk_keys[] = {"in", "out", "scratch", NULL};
    acc_yaml_doc_t *doc = ld->doc;
    acc_yaml_node_t *chunks;
    const char *coll_s = NULL, *proto_s = NULL, *algo = "", *params = "";
    int64_t version = 0, nranks = 0, nlanes = 1, root_rank = -1, slots = 8, in = 0, out = 0,
            scratch = 0;
    int inplace = 0;
    acc_coll_t coll;
    acc_proto_t proto = ACC_PROTO_SIMPLE;
    acc_status_t st;

    if (!acc_yaml_is_map(root))
        return acc_yaml_error(doc, root, ACC_ERR_PARSE,
                              "a plan file must be a mapping "
                              "starting with 'version: 1'");
    if ((st = acc_yaml_check_keys(doc, root, keys, "a plan")) != ACC_OK ||
        (st = acc_yaml_get_int(doc, root, "version", 1, &version)) != ACC_OK)
        return st;
    if (version != PLAN_YAML_VERSION)
        return acc_yaml_error(doc, acc_yaml_get(doc, root, "version"), ACC_ERR_UNSUPPORTED,
                              "plan format version %" PRId64 " is not supported (this build "
                              "reads version %d)",
                              version, PLAN_YAML_VERSION);
    if ((st = acc_yaml_get_str(doc, root, "collective", 1, &coll_s)) != ACC_OK)
        return st;
    if (acc_coll_parse(coll_s, &coll) != ACC_OK)
        return acc_yaml_error(doc, acc_yaml_get(doc, root, "collective"), ACC_ERR_PARSE, "%s",
                              acc_error_message());
    if ((st = acc_yaml_get_range(ld->doc, root, "nranks", 1, 1, MAX_RANKS, &nranks)) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, root, "nlanes", 0, 1, MAX_LANES, &nlanes)) != ACC_OK)
        return st;
    if (nranks * nlanes > MAX_PROGS)
        return acc_yaml_error(doc, acc_yaml_get(doc, root, "nlanes"), ACC_ERR_RANGE,
                              "%" PRId64 " ranks x %" PRId64 " lanes is more than %d lanes in "
                              "all",
                              nranks, nlanes, MAX_PROGS);
    if ((st = acc_yaml_get_range(ld->doc, root, "root", 0, -1, nranks - 1, &root_rank)) != ACC_OK ||
        (st = acc_yaml_get_str(doc, root, "algo", 0, &algo)) != ACC_OK ||
        (st = acc_yaml_get_str(doc, root, "params", 0, &params)) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, root, "slots", 0, 1, INT32_MAX, &slots)) != ACC_OK ||
        (st = acc_yaml_get_str(doc, root, "proto", 0, &proto_s)) != ACC_OK ||
        (st = acc_yaml_get_bool(doc, root, "inplace", 0, &inplace)) != ACC_OK)
        return st;
    if (strlen(algo) >= ACC_PLAN_NAME_MAX || strlen(params) >= ACC_PLAN_PARAMS_MAX)
        return acc_yaml_error(
            doc, acc_yaml_get(doc, root, strlen(algo) >= ACC_PLAN_NAME_MAX ? "algo" : "params"),
            ACC_ERR_RANGE, "'%s' is longer than %d characters",
            strlen(algo) >= ACC_PLAN_NAME_MAX ? "algo" : "params",
            strlen(algo) >= ACC_PLAN_NAME_MAX ? ACC_PLAN_NAME_MAX - 1 : ACC_PLAN_PARAMS_MAX - 1);
    if (proto_s && acc_proto_parse(proto_s, &proto) != ACC_OK)
        return acc_yaml_error(doc, acc_yaml_get(doc, root, "proto"), ACC_ERR_PARSE, "%s",
                              acc_error_message());
    chunks = acc_yaml_get(doc, root, "chunks");
    if (!acc_yaml_is_map(chunks))
        return acc_yaml_error(doc, chunks ? chunks : root, ACC_ERR_PARSE,
                              "'chunks' must be a "
                              "mapping {in: N, out: N, scratch: N}");
    if ((st = acc_yaml_check_keys(doc, chunks, chunk_keys, "'chunks'")) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, chunks, "in", 1, 0, MAX_CHUNKS, &in)) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, chunks, "out", 1, 0, MAX_CHUNKS, &out)) != ACC_OK ||
        (st = acc_yaml_get_range(ld->doc, chunks, "scratch", 0, 0, MAX_CHUNKS, &scratch)) != ACC_OK)
        return st;
    if ((st = acc_plan_create(coll, (int)nranks, (int)nlanes, (uint32_t)in, (uint32_t)out,
                              (uint32_t)scratch, &ld->plan)) != ACC_OK)
        return acc_yaml_error(doc, root, st, "%s", acc_error_message());
    ld->plan->root = (int)root_rank;
    memcpy(ld->plan->algo, algo, strlen(algo) + 1);
    memcpy(ld->plan->params, params, strlen(params) + 1);
    ld->plan->slots = (int)slots;
    ld->plan->proto = proto;
    ld->plan->inplace = inplace;
    return ACC_OK;
}

/* A file of only comments and blank lines is no plan; say so with a line like every other error
 * (the YAML parser reports an empty document without one). */
static acc_status_t check_not_empty(const char *text, size_t len, const char *name)
{
    size_t i = 0;
    int line = 1;
    while (i < len) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
            i++;
        if (i < len && text[i] != '#' && text[i] != '\n')
            return ACC_OK;
        while (i < len && text[i] != '\n')
            i++;
        if (i < len) {
            i++;
            line++;
        }
    }
    return acc_error_set(ACC_ERR_PARSE,
                         "%s:%d: no plan in the file (expected 'version: 1' and "
                         "the keys of schedules/FORMAT.md)",
                         name ? name : "<string>", line);
}

acc_status_t acc_plan_load_yaml(const char *text, size_t len, const char *name, acc_plan_t **out)
{
    loader_t ld = {NULL, NULL};
    acc_yaml_node_t *root, *progs;
    uint8_t *seen = NULL;
    acc_status_t st;
    size_t i, n;

    if ((st = check_not_empty(text, len, name)) != ACC_OK ||
        (st = acc_yaml_parse(text, len, name, &ld.doc)) != ACC_OK)
        return st;
    root = acc_yaml_root(ld.doc);
    if ((st = load_header(&ld, root)) != ACC_OK)
        goto out;
    progs = acc_yaml_get(ld.doc, root, "programs");
    if (!acc_yaml_is_seq(progs)) {
        st = acc_yaml_error(ld.doc, progs ? progs : root, ACC_ERR_PARSE,
                            "'programs' must be a "
                            "list (programs: [] for a plan without operations)");
        goto out;
    }
    seen = acc_mem_calloc((size_t)ld.plan->nranks * ld.plan->nlanes, 1);
    if (!seen) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory loading a plan");
        goto out;
    }
    n = acc_yaml_seq_len(progs);
    for (i = 0; i < n && st == ACC_OK; i++)
        st = load_program(&ld, acc_yaml_seq_at(ld.doc, progs, i), seen);
out:
    acc_mem_free(seen);
    acc_yaml_destroy(ld.doc);
    if (st != ACC_OK) {
        acc_plan_destroy(ld.plan);
        return st;
    }
    *out = ld.plan;
    return ACC_OK;
}

acc_status_t acc_plan_load_file(const char *path, acc_plan_t **out)
{
    char *text = NULL;
    size_t len = 0;
    acc_status_t st = acc_read_file(path, &text, &len);
    if (st != ACC_OK)
        return st;
    st = acc_plan_load_yaml(text, len, path, out);
    acc_mem_free(text);
    return st;
}
