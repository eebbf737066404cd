/*
 * MSCCL algorithm XML -> plan: reading and checking the elements.
 *
 * Every dialect of reference/01-collective-compilers.md §1.2 is read: the old runtime's
 * (reduce_scatter, optional minBytes/maxBytes/nthreads, chan -1 for thread blocks without
 * peers) and the new executor's (reducescatter, outofplace, required size ranges), with the
 * optional redop, maxcount and nthreadblocks of MSCCLang and TACCL; <copy> elements, which carry
 * nothing the steps do not, are skipped.  Unknown attributes are ignored as MSCCL ignores them;
 * unknown elements inside <algo> are reported in the log, because a misspelt <step> would
 * otherwise vanish silently.
 *
 * The top complaint of MSCCL users is an algorithm ignored without a word, so nothing here is
 * silent: a file that cannot be used fails with the file, the line, the element and the
 * attribute, and what was expected.  Steps are taken exactly as MSCCL defines them: a thread
 * block sends to at most one peer (send=) and receives from at most one (recv=), on channel
 * chan; a step waits for step `deps` of thread block `depid` of the same GPU, which must say
 * hasdep="1" (MSCCL signals nothing otherwise, and the waiting block would hang).
 *
 * libxml2 reads the text with the network off, no entity substitution, and no DTD at all (a
 * DOCTYPE is refused: entity expansion has no business in an algorithm file).
 */
#include "msccl_internal.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* Step types (msccl_struct.h of the executor; `ra` of the old runtime has no acc meaning). */
static const struct {
    const char *name;
    acc_opcode_t code;
    uint8_t uses;
} step_types[] = {
    {"s", ACC_OP_SEND, MS_SRC | MS_SENDS},
    {"r", ACC_OP_RECV, MS_DST | MS_RECVS},
    {"rcs", ACC_OP_RECV_COPY_SEND, MS_DST | MS_RECVS | MS_SENDS},
    {"rrs", ACC_OP_RECV_REDUCE_SEND, MS_SRC | MS_RECVS | MS_SENDS},
    {"rrc", ACC_OP_RECV_REDUCE_COPY, MS_SRC | MS_DST | MS_RECVS},
    {"rrcs", ACC_OP_RECV_REDUCE_COPY_SEND, MS_SRC | MS_DST | MS_RECVS | MS_SENDS},
    {"cpy", ACC_OP_COPY, MS_SRC | MS_DST},
    {"re", ACC_OP_REDUCE, MS_SRC | MS_DST},
    {"nop", ACC_OP_NOP, 0},
};

#define MAX_GPUS 4096
#define MAX_CHAN 1023

static int line_of(const xmlNode *n)
{
    long l = xmlGetLineNo(n);
    return l > 0 && l < INT_MAX ? (int)l : 0;
}

acc_status_t ms_fail(const ms_algo_t *a, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_PARSE, "%s:%d: %s", a->file, line, msg);
}

/* An attribute value fit for a message: at most 40 characters, control bytes shown as '?'. */
static const char *shown(const xmlChar *v, char buf[48])
{
    size_t i;
    for (i = 0; v[i] && i < 40; i++)
        buf[i] = (v[i] < 0x20 || v[i] == 0x7f) ? '?' : (char)v[i];
    if (v[i])
        memcpy(buf + i, "...", 4);
    else
        buf[i] = '\0';
    return buf;
}

/* Integer attribute in [lo, hi]; absent: an error when required, else *out is left as is. */
static acc_status_t attr_int(const ms_algo_t *a, const xmlNode *n, const char *attr, int required,
                             long long lo, long long hi, long long *out)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    char buf[48];
    int64_t x;
    acc_status_t st = ACC_OK;

    if (!v) {
        if (required)
            return ms_fail(a, line_of(n),
                           "<%s> lacks the attribute %s (an integer from %lld to "
                           "%lld)",
                           (const char *)n->name, attr, lo, hi);
        return ACC_OK;
    }
    if (acc_parse_int64((const char *)v, &x) != ACC_OK || x < lo || x > hi)
        st = ms_fail(a, line_of(n), "<%s %s=\"%s\">: expected an integer from %lld to %lld",
                     (const char *)n->name, attr, shown(v, buf), lo, hi);
    else
        *out = x;
    xmlFree(v);
    return st;
}

static acc_status_t attr_int32(const ms_algo_t *a, const xmlNode *n, const char *attr, int required,
                               long long lo, long long hi, int *out)
{
    long long v = *out;
    acc_status_t st = attr_int(a, n, attr, required, lo, hi, &v);
    *out = (int)v;
    return st;
}

/* String attribute copied into buf (absent: left as is; *found says which). */
static acc_status_t attr_str(const ms_algo_t *a, const xmlNode *n, const char *attr, char *buf,
                             size_t len, int *found)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    char show[48];
    acc_status_t st = ACC_OK;
    if (found)
        *found = v != NULL;
    if (!v)
        return ACC_OK;
    if (strlen((const char *)v) >= len)
        st = ms_fail(a, line_of(n), "<%s %s=\"%s\">: longer than %zu characters",
                     (const char *)n->name, attr, shown(v, show), len - 1);
    else
        memcpy(buf, v, strlen((const char *)v) + 1);
    xmlFree(v);
    return st;
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static int count_children(const xmlNode *n, const char *name)
{
    int k = 0;
    for (n = n->children; n; n = n->next)
        k += is_elem(n, name);
    return k;
}

/* A child element we do not know: <copy> is skipped quietly (it repeats what the steps say),
 * anything else is logged, since a misspelt element would otherwise vanish. */
static void skip_unknown(const ms_algo_t *a, const xmlNode *c, const char *parent)
{
    if (c->type != XML_ELEMENT_NODE || is_elem(c, "copy"))
        return;
    ACC_WARN(COMPILER, "%s:%d: ignoring unknown element <%s> inside <%s>", a->file, line_of(c),
             (const char *)c->name, parent);
}

static acc_status_t buffer(const ms_algo_t *a, const xmlNode *n, const char *attr, uint8_t *buf)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
    const char *s = (const char *)v;
    char show[48];
    acc_status_t st = ACC_OK;
    if (!v)
        return ms_fail(a, line_of(n), "<step> lacks the attribute %s (i, o or s)", attr);
    if (!strcmp(s, "i") || !strcmp(s, "input"))
        *buf = ACC_BUF_IN;
    else if (!strcmp(s, "o") || !strcmp(s, "output"))
        *buf = ACC_BUF_OUT;
    else if (!strcmp(s, "s") || !strcmp(s, "scratch"))
        *buf = ACC_BUF_SCRATCH;
    else
        st = ms_fail(a, line_of(n),
                     "<step %s=\"%s\">: expected i (input), o (output) or s "
                     "(scratch)",
                     attr, shown(v, show));
    xmlFree(v);
    return st;
}

static acc_status_t read_step(const ms_algo_t *a, const ms_gpu_t *g, const ms_tb_t *tb,
                              const xmlNode *n, int pos, ms_step_t *st_out)
{
    xmlChar *type = xmlGetProp(n, (const xmlChar *)"type");
    int s = -1, found = -1;
    size_t i;
    long long off = 0, cnt = 0;
    char show[48];
    acc_status_t st;
    ms_step_t *p = st_out;

    p->line = line_of(n);
    p->depid = p->deps = -1;
    p->keep = 1;
    if ((st = attr_int32(a, n, "s", 1, 0, INT_MAX, &s)) != ACC_OK)
        goto out;
    if (s != pos) {
        st = ms_fail(a, p->line,
                     "<step s=\"%d\"> is step %d of gpu %d tb %d: steps are numbered "
                     "0, 1, 2, ... in order",
                     s, pos, g->id, tb->id);
        goto out;
    }
    if (!type) {
        st = ms_fail(a, p->line,
                     "<step> lacks the attribute type (s, r, rcs, rrs, rrc, rrcs, cpy, "
                     "re or nop)");
        goto out;
    }
    for (i = 0; i < sizeof(step_types) / sizeof(step_types[0]); i++)
        if (!strcmp((const char *)type, step_types[i].name))
            found = (int)i;
    if (found < 0) {
        st = ms_fail(a, p->line,
                     "<step type=\"%s\">: unknown step type (s, r, rcs, rrs, rrc, "
                     "rrcs, cpy, re or nop%s)",
                     shown(type, show),
                     !strcmp((const char *)type, "ra") ? "; 'ra' of the old runtime has no acc "
                                                         "equivalent"
                                                       : "");
        goto out;
    }
    p->code = (uint8_t)step_types[found].code;
    p->uses = step_types[found].uses;
    if ((p->uses & MS_SENDS) && tb->send < 0) {
        st = ms_fail(a, p->line,
                     "<step type=\"%s\"> sends, but its <tb id=\"%d\"> (line %d) has "
                     "send=\"-1\"",
                     step_types[found].name, tb->id, tb->line);
        goto out;
    }
    if ((p->uses & MS_RECVS) && tb->recv < 0) {
        st = ms_fail(a, p->line,
                     "<step type=\"%s\"> receives, but its <tb id=\"%d\"> (line %d) "
                     "has recv=\"-1\"",
                     step_types[found].name, tb->id, tb->line);
        goto out;
    }
    if (p->uses & (MS_SRC | MS_DST)) {
        if ((st = attr_int(a, n, "cnt", 1, 1, INT32_MAX, &cnt)) != ACC_OK)
            goto out;
    }
    if (p->uses & MS_SRC) {
        if ((st = buffer(a, n, "srcbuf", &p->src.buf)) != ACC_OK ||
            (st = attr_int(a, n, "srcoff", 1, 0, INT32_MAX, &off)) != ACC_OK)
            goto out;
        p->src.off = (uint32_t)off;
        p->src.cnt = (uint32_t)cnt;
    }
    if (p->uses & MS_DST) {
        if ((st = buffer(a, n, "dstbuf", &p->dst.buf)) != ACC_OK ||
            (st = attr_int(a, n, "dstoff", 1, 0, INT32_MAX, &off)) != ACC_OK)
            goto out;
        p->dst.off = (uint32_t)off;
        p->dst.cnt = (uint32_t)cnt;
    }
    if ((st = attr_int32(a, n, "depid", 0, -1, g->ntbs - 1, &p->depid)) != ACC_OK ||
        (st = attr_int32(a, n, "deps", 0, -1, INT_MAX, &p->deps)) != ACC_OK ||
        (st = attr_int32(a, n, "hasdep", 0, 0, 1, &p->hasdep)) != ACC_OK)
        goto out;
    if ((p->depid >= 0) != (p->deps >= 0))
        st = ms_fail(a, p->line,
                     "<step depid=\"%d\" deps=\"%d\">: give both (the thread block "
                     "and the step waited for) or neither",
                     p->depid, p->deps);
out:
    xmlFree(type);
    return st;
}

static acc_status_t read_tb(const ms_algo_t *a, ms_gpu_t *g, const xmlNode *n)
{
    ms_tb_t tb;
    const xmlNode *c;
    int pos = 0;
    acc_status_t st;

    memset(&tb, 0, sizeof(tb));
    tb.id = -1;
    tb.hint_lane = -1;
    tb.line = line_of(n);
    if ((st = attr_int32(a, n, "id", 1, 0, INT_MAX, &tb.id)) != ACC_OK)
        return st;
    if (tb.id >= g->ntbs)
        return ms_fail(a, tb.line,
                       "<tb id=\"%d\">: gpu %d has %d <tb> elements, so their ids are "
                       "0 to %d without gaps",
                       tb.id, g->id, g->ntbs, g->ntbs - 1);
    if (g->tbs[tb.id].steps)
        return ms_fail(a, tb.line, "<tb id=\"%d\"> of gpu %d is defined twice (first at line %d)",
                       tb.id, g->id, g->tbs[tb.id].line);
    if ((st = attr_int32(a, n, "send", 1, -1, a->ngpus - 1, &tb.send)) != ACC_OK ||
        (st = attr_int32(a, n, "recv", 1, -1, a->ngpus - 1, &tb.recv)) != ACC_OK ||
        (st = attr_int32(a, n, "chan", 1, -1, MAX_CHAN, &tb.chan)) != ACC_OK ||
        (st = attr_int32(a, n, "acc_lane", 0, 0, 1023, &tb.hint_lane)) != ACC_OK)
        return st;
    if (tb.send == g->id || tb.recv == g->id)
        return ms_fail(a, tb.line,
                       "<tb id=\"%d\" send=\"%d\" recv=\"%d\"> of gpu %d: a thread "
                       "block may not send to or receive from its own gpu",
                       tb.id, tb.send, tb.recv, g->id);
    if (tb.chan < 0 && (tb.send >= 0 || tb.recv >= 0))
        return ms_fail(a, tb.line,
                       "<tb id=\"%d\" chan=\"-1\">: a thread block with a peer needs a "
                       "channel from 0 to %d",
                       tb.id, a->nchannels > 0 ? a->nchannels - 1 : MAX_CHAN);
    if (a->nchannels > 0 && tb.chan >= a->nchannels)
        return ms_fail(a, tb.line,
                       "<tb id=\"%d\" chan=\"%d\">: the algorithm declares "
                       "nchannels=\"%d\" (channels 0 to %d)",
                       tb.id, tb.chan, a->nchannels, a->nchannels - 1);
    tb.nsteps = count_children(n, "step");
    tb.steps = acc_mem_calloc((size_t)tb.nsteps + 1, sizeof(ms_step_t));
    if (!tb.steps)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", a->file);
    g->tbs[tb.id] = tb; /* owned by g from here on */
    for (c = n->children; c; c = c->next) {
        if (!is_elem(c, "step")) {
            skip_unknown(a, c, "tb");
            continue;
        }
        if ((st = read_step(a, g, &g->tbs[tb.id], c, pos, &g->tbs[tb.id].steps[pos])) != ACC_OK)
            return st;
        pos++;
    }
    return ACC_OK;
}

/* Dependencies name a thread block and step of the same gpu that exist, that signal (hasdep),
 * and that are not later in the waiting block itself. */
static acc_status_t check_deps(const ms_algo_t *a, ms_gpu_t *g)
{
    int t, k;
    for (t = 0; t < g->ntbs; t++) {
        for (k = 0; k < g->tbs[t].nsteps; k++) {
            ms_step_t *s = &g->tbs[t].steps[k];
            const ms_tb_t *d;
            if (s->depid < 0)
                continue;
            d = &g->tbs[s->depid];
            if (s->deps >= d->nsteps)
                return ms_fail(a, s->line,
                               "gpu %d tb %d step %d waits for step %d of tb %d, which "
                               "has %d steps",
                               g->id, t, k, s->deps, s->depid, d->nsteps);
            if (s->depid == t) {
                if (s->deps >= k)
                    return ms_fail(a, s->line,
                                   "gpu %d tb %d step %d waits for its own step %d, "
                                   "which comes later: it can never start",
                                   g->id, t, k, s->deps);
                s->depid = s->deps = -1; /* already ordered by the block itself */
                continue;
            }
            if (!d->steps[s->deps].hasdep)
                return ms_fail(a, d->steps[s->deps].line,
                               "gpu %d tb %d step %d is waited for by tb "
                               "%d step %d (line %d) but says hasdep=\"0\": MSCCL would never "
                               "signal it and tb %d would hang; set hasdep=\"1\"",
                               g->id, s->depid, s->deps, t, k, s->line, t);
        }
    }
    return ACC_OK;
}

static acc_status_t read_gpu(ms_algo_t *a, const xmlNode *n)
{
    const xmlNode *c;
    int id = -1, t;
    long long v;
    ms_gpu_t *g;
    acc_status_t st;

    if ((st = attr_int32(a, n, "id", 1, 0, a->ngpus - 1, &id)) != ACC_OK)
        return st;
    g = &a->gpus[id];
    if (g->tbs)
        return ms_fail(a, line_of(n), "<gpu id=\"%d\"> is defined twice (first at line %d)", id,
                       g->line);
    g->id = id;
    g->line = line_of(n);
    if ((st = attr_int(a, n, "i_chunks", 1, 0, INT32_MAX, &v)) != ACC_OK)
        return st;
    g->i_chunks = (uint32_t)v;
    if ((st = attr_int(a, n, "o_chunks", 1, 0, INT32_MAX, &v)) != ACC_OK)
        return st;
    g->o_chunks = (uint32_t)v;
    if ((st = attr_int(a, n, "s_chunks", 1, 0, INT32_MAX, &v)) != ACC_OK)
        return st;
    g->s_chunks = (uint32_t)v;
    g->ntbs = count_children(n, "tb");
    g->tbs = acc_mem_calloc((size_t)g->ntbs + 1, sizeof(ms_tb_t));
    if (!g->tbs)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", a->file);
    for (c = n->children; c; c = c->next) {
        if (!is_elem(c, "tb")) {
            skip_unknown(a, c, "gpu");
            continue;
        }
        if ((st = read_tb(a, g, c)) != ACC_OK)
            return st;
    }
    for (t = 0; t < g->ntbs; t++)
        if (!g->tbs[t].steps)
            return ms_fail(a, g->line,
                           "gpu %d has %d <tb> elements but none with id=\"%d\": "
                           "thread block ids are 0 to %d without gaps",
                           id, g->ntbs, t, g->ntbs - 1);
    return check_deps(a, g);
}

/* Optional attributes recorded in the plan's parameters as they were written. */
static void record_extra(ms_algo_t *a, const xmlNode *n)
{
    static const char *const names[] = {"nthreads", "redop", "maxcount", "nthreadblocks"};
    size_t i, len = 0;
    char show[48];
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        xmlChar *v = xmlGetProp(n, (const xmlChar *)names[i]);
        if (!v)
            continue;
        shown(v, show);
        if (!strpbrk(show, " \t\"=") && len < sizeof(a->extra))
            len +=
                (size_t)snprintf(a->extra + len, sizeof(a->extra) - len, " %s=%s", names[i], show);
        xmlFree(v);
    }
}

static acc_status_t read_algo(ms_algo_t *a, const xmlNode *n)
{
    char coll[32] = "", proto[16] = "Simple";
    const xmlNode *c;
    int found, g;
    acc_status_t st;

    a->line = line_of(n);
    if (!is_elem(n, "algo"))
        return ms_fail(a, a->line, "the root element is <%s>; an MSCCL algorithm file has <algo>",
                       (const char *)n->name);
    a->nchannels = -1;
    a->inplace = 0;
    a->outofplace = -1;
    a->root = -1;
    a->acc_slots = -1;
    a->acc_nlanes = -1;
    if ((st = attr_str(a, n, "name", a->name, sizeof(a->name), NULL)) != ACC_OK ||
        (st = attr_str(a, n, "coll", coll, sizeof(coll), &found)) != ACC_OK)
        return st;
    if (!found)
        return ms_fail(a, a->line,
                       "<algo> lacks the attribute coll (allreduce, allgather, "
                       "reducescatter, alltoall, broadcast or reduce)");
    if (acc_coll_parse(coll, &a->coll) != ACC_OK)
        return ms_fail(a, a->line,
                       "<algo coll=\"%s\">: not a collective acc can run (allreduce, "
                       "allgather, reducescatter / reduce_scatter, alltoall, broadcast, reduce)",
                       coll);
    if ((st = attr_str(a, n, "proto", proto, sizeof(proto), NULL)) != ACC_OK)
        return st;
    if (acc_proto_parse(proto, &a->proto) != ACC_OK)
        return ms_fail(a, a->line, "<algo proto=\"%s\">: expected Simple, LL or LL128", proto);
    if ((st = attr_int32(a, n, "ngpus", 1, 1, MAX_GPUS, &a->ngpus)) != ACC_OK ||
        (st = attr_int32(a, n, "nchunksperloop", 1, 1, INT32_MAX, &a->nchunksperloop)) != ACC_OK ||
        (st = attr_int32(a, n, "nchannels", 0, 1, MAX_CHAN + 1, &a->nchannels)) != ACC_OK ||
        (st = attr_int32(a, n, "inplace", 0, 0, 1, &a->inplace)) != ACC_OK ||
        (st = attr_int32(a, n, "outofplace", 0, 0, 1, &a->outofplace)) != ACC_OK ||
        (st = attr_int(a, n, "minBytes", 0, 0, LLONG_MAX, &a->min_bytes)) != ACC_OK ||
        (st = attr_int(a, n, "maxBytes", 0, 0, LLONG_MAX, &a->max_bytes)) != ACC_OK ||
        (st = attr_int32(a, n, "root", 0, 0, MAX_GPUS - 1, &a->root)) != ACC_OK ||
        (st = attr_int32(a, n, "acc_root", 0, 0, MAX_GPUS - 1, &a->root)) != ACC_OK ||
        (st = attr_int32(a, n, "acc_slots", 0, 1, 1 << 20, &a->acc_slots)) != ACC_OK ||
        (st = attr_int32(a, n, "acc_nlanes", 0, 1, 1024, &a->acc_nlanes)) != ACC_OK ||
        (st = attr_str(a, n, "acc_algo", a->acc_algo, sizeof(a->acc_algo), &a->has_acc_algo)) !=
            ACC_OK ||
        (st = attr_str(a, n, "acc_params", a->acc_params, sizeof(a->acc_params),
                       &a->has_acc_params)) != ACC_OK)
        return st;
    /* The old runtime has no outofplace: an algorithm is for the mode its inplace names. */
    if (a->outofplace < 0)
        a->outofplace = !a->inplace;
    if (!a->inplace && !a->outofplace)
        return ms_fail(a, a->line,
                       "<algo inplace=\"0\" outofplace=\"0\">: the algorithm applies to "
                       "no call");
    if (a->root >= a->ngpus)
        return ms_fail(a, a->line, "<algo root=\"%d\">: outside the %d gpus", a->root, a->ngpus);
    record_extra(a, n);
    a->gpus = acc_mem_calloc((size_t)a->ngpus, sizeof(ms_gpu_t));
    if (!a->gpus)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %s", a->file);
    for (c = n->children; c; c = c->next) {
        if (!is_elem(c, "gpu")) {
            skip_unknown(a, c, "algo");
            continue;
        }
        if ((st = read_gpu(a, c)) != ACC_OK)
            return st;
    }
    for (g = 0; g < a->ngpus; g++)
        if (!a->gpus[g].tbs)
            return ms_fail(a, a->line,
                           "<algo ngpus=\"%d\"> but there is no <gpu id=\"%d\">: acc "
                           "needs the program of every rank",
                           a->ngpus, g);
    return ACC_OK;
}

void ms_algo_free(ms_algo_t *a)
{
    int g, t;
    for (g = 0; a->gpus && g < a->ngpus; g++) {
        for (t = 0; t < a->gpus[g].ntbs; t++)
            acc_mem_free(a->gpus[g].tbs[t].steps);
        acc_mem_free(a->gpus[g].tbs);
    }
    acc_mem_free(a->gpus);
    a->gpus = NULL;
}

acc_status_t acc_plan_import_msccl(const char *text, size_t len, const char *name, acc_plan_t **out)
{
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    const xmlNode *root;
    ms_algo_t a;
    acc_status_t st;

    *out = NULL;
    memset(&a, 0, sizeof(a));
    a.file = name ? name : "<msccl xml>";
    if (!text || len > INT_MAX)
        return acc_error_set(ACC_ERR_INVALID, "%s: no text, or more than 2 GiB of it", a.file);
    xmlInitParser();
    ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory parsing %s", a.file);
    doc = xmlCtxtReadMemory(ctxt, text, (int)len, a.file, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                XML_PARSE_BIG_LINES);
    if (!doc || !ctxt->wellFormed) {
        xmlErrorPtr e = xmlCtxtGetLastError(ctxt);
        char msg[200] = "malformed";
        if (e && e->message) {
            snprintf(msg, sizeof(msg), "%s", e->message);
            msg[strcspn(msg, "\n")] = '\0';
        }
        st = acc_error_set(ACC_ERR_PARSE, "%s:%d: not well-formed XML: %s (libxml2 error %d)",
                           a.file, e ? e->line : 0, msg, e ? e->code : -1);
        goto out;
    }
    root = xmlDocGetRootElement(doc);
    if (doc->intSubset) {
        /* libxml2 keeps no line for the DTD; the root element follows it */
        int line = line_of((const xmlNode *)doc->intSubset);
        st = ms_fail(&a,
                     line   ? line
                     : root ? line_of(root)
                            : 1,
                     "a DOCTYPE declaration; MSCCL algorithm files have none, and acc does not "
                     "expand entities");
        goto out;
    }
    if (!root) {
        st = ms_fail(&a, 1, "no <algo> element");
        goto out;
    }
    st = read_algo(&a, root);
    if (st == ACC_OK)
        st = ms_build_plan(&a, out);
out:
    ms_algo_free(&a);
    if (doc)
        xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return st;
}

acc_status_t acc_plan_import_msccl_file(const char *path, acc_plan_t **out)
{
    char *text = NULL;
    size_t len = 0;
    acc_status_t st;
    *out = NULL;
    st = acc_read_file(path, &text, &len);
    if (st == ACC_OK)
        st = acc_plan_import_msccl(text, len, path, out);
    acc_mem_free(text);
    return st;
}
