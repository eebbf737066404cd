/*
 * The report of a selection sweep: the text table, JSON a program can read back, an SVG plot
 * that is well-formed XML with its three series and labelled axes, and acc-compile --report's
 * command line (exit codes and messages).
 */
#include "acc_test.h"
#include "acc_select.h"

#include <ctype.h>
#include <sys/wait.h>
#include <unistd.h>

/* libxml2, declared here as the test has no libxml2 headers (acc_compiler links it). */
void *xmlReadMemory(const char *buffer, int size, const char *url, const char *encoding,
                    int options);
void xmlFreeDoc(void *doc);
#define XML_NOERROR_NOWARNING (1 << 5 | 1 << 6)

/* ---- a strict JSON reader (RFC 8259 grammar), enough to say "this parses" ---------------- */

typedef struct {
    const char *p, *end;
    int depth;
} json_t;

static void ws(json_t *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
}

static int lit(json_t *j, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || strncmp(j->p, s, n) != 0)
        return 0;
    j->p += n;
    return 1;
}

static int string(json_t *j)
{
    if (j->p >= j->end || *j->p != '"')
        return 0;
    for (j->p++; j->p < j->end; j->p++) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            j->p++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            j->p++;
            if (j->p >= j->end || !strchr("\"\\/bfnrtu", *j->p))
                return 0;
            if (*j->p == 'u') {
                int k;
                for (k = 0; k < 4; k++)
                    if (++j->p >= j->end || !isxdigit((unsigned char)*j->p))
                        return 0;
            }
        }
    }
    return 0;
}

static int number(json_t *j)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || !isdigit((unsigned char)*j->p))
        return 0;
    if (*j->p == '0')
        j->p++;
    else
        while (j->p < j->end && isdigit((unsigned char)*j->p))
            j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || !isdigit((unsigned char)*j->p))
            return 0;
        while (j->p < j->end && isdigit((unsigned char)*j->p))
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || !isdigit((unsigned char)*j->p))
            return 0;
        while (j->p < j->end && isdigit((unsigned char)*j->p))
            j->p++;
    }
    return j->p > s;
}

static int value(json_t *j);

static int members(json_t *j, char close, int keyed)
{
    j->p++;
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 1;
    }
    for (;;) {
        ws(j);
        if (keyed) {
            if (!string(j))
                return 0;
            ws(j);
            if (!lit(j, ":"))
                return 0;
        }
        if (!value(j))
            return 0;
        ws(j);
        if (lit(j, ","))
            continue;
        return j->p < j->end && *j->p++ == close;
    }
}

static int value(json_t *j)
{
    int ok;
    ws(j);
    if (j->p >= j->end || ++j->depth > 64)
        return 0;
    switch (*j->p) {
    case '{':
        ok = members(j, '}', 1);
        break;
    case '[':
        ok = members(j, ']', 0);
        break;
    case '"':
        ok = string(j);
        break;
    case 't':
        ok = lit(j, "true");
        break;
    case 'f':
        ok = lit(j, "false");
        break;
    case 'n':
        ok = lit(j, "null");
        break;
    default:
        ok = number(j);
    }
    j->depth--;
    return ok;
}

static int json_parses(const char *text, size_t len)
{
    json_t j = {text, text + len, 0};
    if (!value(&j))
        return 0;
    ws(&j);
    return j.p == j.end;
}

ACC_TEST(json_reader_refuses_broken_json)
{
    static const char *const good = "{\"a\": [1, -2.5e3, null, true, \"x\\u00e9\\n\"], \"b\": {}}";
    static const char *const bad[] = {
        "{\"a\": [1, 2}", "{\"a\": inf}", "{\"a\": 1,}", "{\"a\": 1} x",
        "{\"a\": nan}",   "{a: 1}",       "[01]",        ""};
    size_t i;

    CHECK(json_parses(good, strlen(good)));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(!json_parses(bad[i], strlen(bad[i])), "accepted %s", bad[i]);
}

/* ---- the report of a real sweep ------------------------------------------------------------ */

static acc_select_result_t *sweep(const char *topo_src, acc_coll_t coll, acc_topo_t **topo)
{
    acc_select_build_opts_t opts;
    acc_select_builder_t *b = NULL;
    acc_select_result_t *r = NULL;

    CHECK_OK(acc_topo_load(topo_src, topo));
    acc_select_build_opts_init(&opts);
    CHECK_OK(acc_select_builder_create(*topo, &opts, &b));
    CHECK_OK(acc_select_build(b, coll, &r));
    acc_select_builder_destroy(b);
    return r;
}

ACC_TEST(text_lists_every_size_and_the_table)
{
    acc_topo_t *t = NULL;
    acc_select_result_t *r = sweep("dgx-h100", ACC_COLL_ALLREDUCE, &t);
    const acc_select_result_t *res[1] = {r};
    acc_buf_t b;
    static const char *const want[] = {"allreduce on dgx-h100: 8 ranks (1 node x 8 GPUs)",
                                       "\n    1K ",
                                       "\n    8K ",
                                       "\n  128K ",
                                       "\n    4M ",
                                       "\n  256M ",
                                       "\n    4G ",
                                       "speedup",
                                       "busbw",
                                       "Selection table for allreduce",
                                       "[1K, ",
                                       ", 4G]"};
    size_t i;

    acc_buf_init(&b);
    CHECK_OK(acc_select_report_text(res, 1, &b));
    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_MSG(strstr(b.data, want[i]) != NULL, "text report lacks \"%s\":\n%s", want[i],
                  b.data);
    /* One line per size, one per range. */
    for (i = 0; i < r->table->n; i++) {
        char line[64];
        snprintf(line, sizeof(line), "  %s ", r->table->entries[i].use_nccl ? "NCCL" : "acc ");
        CHECK(strstr(b.data, line) != NULL);
    }
    acc_buf_free(&b);
    CHECK_ERR(acc_select_report_text(res, 0, &b), ACC_ERR_INVALID);
    acc_select_result_destroy(r);
    acc_topo_destroy(t);
}

ACC_TEST(json_parses_and_has_the_figures)
{
    acc_topo_t *t = NULL;
    acc_select_result_t *r[2];
    acc_buf_t b;
    static const char *const keys[] = {"\"topology\": \"dgx-h100\"",
                                       "\"ranks\": 8",
                                       "\"collectives\"",
                                       "\"collective\": "
                                       "\"allreduce\"",
                                       "\"collective\": \"broadcast\"",
                                       "\"sizes\"",
                                       "\"bytes\": 1024",
                                       "\"bytes\": 4294967296",
                                       "\"nccl\": {\"algo\"",
                                       "\"speedup\"",
                                       "\"bound_fraction\"",
                                       "\"selection\"",
                                       "\"min_bytes\": 1024",
                                       "\"max_bytes\": 4294967296",
                                       "\"plan_hash\"",
                                       "\"nccl\": null"};
    size_t i;

    r[0] = sweep("dgx-h100", ACC_COLL_ALLREDUCE, &t);
    acc_topo_destroy(t);
    r[1] = sweep("dgx-h100", ACC_COLL_BROADCAST, &t);
    acc_buf_init(&b);
    CHECK_OK(acc_select_report_json((const acc_select_result_t *const *)r, 2, &b));
    CHECK_MSG(json_parses(b.data, b.len), "report JSON does not parse:\n%s", b.data);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        CHECK_MSG(strstr(b.data, keys[i]) != NULL, "JSON report lacks %s", keys[i]);
    acc_buf_free(&b);
    acc_select_result_destroy(r[0]);
    acc_select_result_destroy(r[1]);
    acc_topo_destroy(t);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    while ((s = strstr(s, what)) != NULL) {
        n++;
        s += strlen(what);
    }
    return n;
}

static void check_svg(const char *svg, size_t len, size_t panels)
{
    void *doc = xmlReadMemory(svg, (int)len, "report.svg", NULL, XML_NOERROR_NOWARNING);
    CHECK_MSG(doc != NULL, "the plot is not well-formed XML");
    xmlFreeDoc(doc);
    CHECK(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL);
    CHECK_INT(count(svg, "data-series=\"acc\""), panels);
    CHECK_INT(count(svg, "data-series=\"nccl\""), panels);
    CHECK_INT(count(svg, "data-series=\"bound\""), panels);
    CHECK_INT(count(svg, "message size (bytes"), panels);
    CHECK_INT(count(svg, "busbw (GB/s"), panels);
    CHECK_INT(count(svg, "NCCL 2.28 (model)"), panels); /* the legend */
    CHECK_INT(count(svg, ">1K</text>"), panels);
    CHECK_INT(count(svg, ">64K</text>"), panels);
    CHECK_INT(count(svg, ">1M</text>"), panels);
    CHECK_INT(count(svg, ">4G</text>"), panels);
}

ACC_TEST(svg_is_wellformed_with_series_axes_and_legend)
{
    acc_topo_t *t = NULL;
    acc_select_result_t *r[2];
    acc_buf_t b;

    r[0] = sweep("dgx-h100", ACC_COLL_ALLREDUCE, &t);
    acc_topo_destroy(t);
    r[1] = sweep("dgx-h100", ACC_COLL_REDUCE_SCATTER, &t);
    acc_buf_init(&b);
    CHECK_OK(acc_select_report_svg((const acc_select_result_t *const *)r, 1, &b));
    check_svg(b.data, b.len, 1);
    CHECK(strstr(b.data, "allreduce busbw on dgx-h100 (8 ranks, float)") != NULL);
    acc_buf_reset(&b);
    CHECK_OK(acc_select_report_svg((const acc_select_result_t *const *)r, 2, &b));
    check_svg(b.data, b.len, 2);
    CHECK(strstr(b.data, "reduce_scatter busbw on") != NULL);
    acc_buf_free(&b);
    acc_select_result_destroy(r[0]);
    acc_select_result_destroy(r[1]);
    acc_topo_destroy(t);
}

/* ---- acc-compile --report ------------------------------------------------------------------ */

/* Run this build's acc-compile with args; its stdout and stderr land in files. */
static int run_cli(const char *args, char **out, char **err)
{
    char cmd[2048], *o_path, *e_path;
    const char *exe = ACC_COMPILE_EXE;
    size_t len;
    int rc;
    FILE *f = fopen(exe, "rb");

    CHECK_MSG(f != NULL, "acc-compile is not built at %s", exe);
    fclose(f);
    o_path = acc_mem_strdup(acc_test_tmp("report_cli.out"));
    e_path = acc_mem_strdup(acc_test_tmp("report_cli.err"));
    snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", exe, args, o_path, e_path);
    rc = system(cmd);
    CHECK(rc != -1 && WIFEXITED(rc));
    /* acc_read_file leaves an empty file's buffer unterminated (common_alloc.c's
     * acc_buf_take): terminate it here. */
    CHECK_OK(acc_read_file(o_path, out, &len));
    (*out)[len] = '\0';
    CHECK_OK(acc_read_file(e_path, err, &len));
    (*err)[len] = '\0';
    acc_mem_free(o_path);
    acc_mem_free(e_path);
    return WEXITSTATUS(rc);
}

ACC_TEST(cli_report_json_and_plot)
{
    char args[1024], *out, *err, *svg;
    const char *plot = acc_test_tmp("cli_report.svg");
    size_t len;

    remove(plot);
    snprintf(args, sizeof(args), "--topo dgx-h100 --report --coll allreduce --json --plot '%s'",
             plot);
    CHECK_INT(run_cli(args, &out, &err), 0);
    CHECK_MSG(json_parses(out, strlen(out)), "stdout is not JSON:\n%s", out);
    CHECK(strstr(out, "\"collective\": \"allreduce\"") != NULL);
    CHECK(strstr(out, "\"collective\": \"allgather\"") == NULL);
    CHECK(strstr(out, "\"left_out\": []") != NULL); /* nothing at 8 ranks */
    CHECK_STR(err, "");
    CHECK_OK(acc_read_file(plot, &svg, &len));
    check_svg(svg, len, 1);
    acc_mem_free(svg);
    acc_mem_free(out);
    acc_mem_free(err);

    CHECK_INT(run_cli("--topo dgx-h100 --report --coll reduce-scatter", &out, &err), 0);
    CHECK(strstr(out, "reduce_scatter on dgx-h100") != NULL);
    CHECK(strstr(out, "Selection table for reduce_scatter") != NULL);
    CHECK(strstr(out, "GPUs, path matrix") == NULL); /* no topology summary with --report */
    acc_mem_free(out);
    acc_mem_free(err);
}

/* Above 4,096 ranks the JSON lists the generators the sweep by class left out, and parses. */
ACC_TEST(cli_report_json_by_class)
{
    char *out, *err;
    CHECK_INT(run_cli("--topo 'nodes=520 gpus=8 nvlink=18 nic=8x400' --report --coll allreduce "
                      "--json",
                      &out, &err),
              0);
    CHECK_MSG(json_parses(out, strlen(out)), "stdout is not JSON:\n%s", out);
    CHECK_MSG(strstr(out, "\"left_out\": [\"allreduce rhd: its proof rank by rank would track") !=
                  NULL,
              "%s", out);
    CHECK(strstr(out, "\"ranks\": 4160") != NULL);
    acc_mem_free(out);
    acc_mem_free(err);
}

ACC_TEST(cli_errors_say_what_is_wrong)
{
    char args[1024], *out, *err;

    CHECK_INT(run_cli("--topo dgx-h100 --report --coll allsum", &out, &err), 2);
    CHECK_MSG(strstr(err, "allsum") != NULL, "stderr: %s", err);
    acc_mem_free(out);
    acc_mem_free(err);

    CHECK_INT(run_cli("--topo dgx-h100 --plot x.svg", &out, &err), 2);
    CHECK_MSG(strstr(err, "--plot FILE.svg goes with --report") != NULL, "stderr: %s", err);
    acc_mem_free(out);
    acc_mem_free(err);

    CHECK_INT(run_cli("--report --coll allreduce", &out, &err), 2);
    CHECK_MSG(strstr(err, "--report needs --topo") != NULL, "stderr: %s", err);
    acc_mem_free(out);
    acc_mem_free(err);

    snprintf(args, sizeof(args), "--topo dgx-h100 --report --coll allgather --plot '%s'",
             acc_test_tmp("no/such/dir/plot.svg"));
    CHECK_INT(run_cli(args, &out, &err), 3);
    CHECK_MSG(strstr(err, "no/such/dir/plot.svg") != NULL, "stderr: %s", err);
    CHECK_STR(out, ""); /* refused before the sweep, not after it */
    acc_mem_free(out);
    acc_mem_free(err);

    CHECK_INT(run_cli("--topo dgx-h100 --report --coll alltoall", &out, &err), 1);
    CHECK_MSG(strstr(err, "alltoall") != NULL, "stderr: %s", err);
    acc_mem_free(out);
    acc_mem_free(err);
}
