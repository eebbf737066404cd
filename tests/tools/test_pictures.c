/*
 * The pictures (acc-compile --draw, --print-selection --plot, acc-bench --plot) as a user makes
 * them: each file parses as SVG (libxml2, errors and warnings fatal), has the elements it must
 * have, counted with XPath, and carries no script; bad arguments exit 2 naming the option, an
 * output that cannot be written exits 3.
 */
#include "tool_run.h"

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

typedef struct {
    xmlDocPtr doc;
    xmlXPathContextPtr ctx;
} svg_t;

/* Run line, which writes the picture to {svg}, and parse what it wrote. */
static void draw(svg_t *s, const char *pattern)
{
    char line[2048], path[1024];
    snprintf(path, sizeof(path), "%s", acc_test_tmp("picture.svg"));
    tr_fill(line, sizeof(line), pattern, "svg", path);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    s->doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    CHECK_MSG(s->doc != NULL, "%s: the picture is not well-formed XML", line);
    s->ctx = xmlXPathNewContext(s->doc);
    CHECK(s->ctx != NULL);
    CHECK(xmlXPathRegisterNs(s->ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg") == 0);
}

static void done(svg_t *s)
{
    xmlXPathFreeContext(s->ctx);
    xmlFreeDoc(s->doc);
}

static int count(const svg_t *s, const char *xpath)
{
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, s->ctx);
    int n;
    CHECK_MSG(o != NULL, "bad XPath %s", xpath);
    n = o->nodesetval ? o->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(o);
    return n;
}

#define COUNT(s, xpath, n)                                                                         \
    CHECK_MSG(count((s), (xpath)) == (n), "%s: %d, not %d", (xpath), count((s), (xpath)), (n))

/* Plain SVG: the root, its size, and nothing a browser would have to run or fetch. */
static void check_plain(const svg_t *s)
{
    COUNT(s, "/s:svg[@width and @height]", 1);
    COUNT(s, "//s:script | //s:style | //s:image | //s:foreignObject", 0);
    CHECK(count(s, "//s:text") > 0);
}

ACC_TEST(topology_of_dgx_h100_has_every_device_and_link)
{
    svg_t s;
    draw(&s, "acc-compile --topo dgx-h100 --draw {svg}");
    check_plain(&s);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='gpu']", 8);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='nic']", 8);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='nvswitch']", 1);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='pcisw']", 8);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='cpu']", 2);
    /* Each GPU's NVLinks to the fabric; GPU, NIC and switch uplinks; the sockets' link. */
    COUNT(&s, "//s:g[@class='link' and @data-kind='nvlink']", 8);
    COUNT(&s, "//s:g[@class='link' and @data-kind='pcie']", 24);
    COUNT(&s, "//s:g[@class='link' and @data-kind='smp']", 1);
    COUNT(&s, "//s:g[@class='vertex' and @data-name='GPU7']//s:text[.='H100 SXM5 80GB']", 1);
    COUNT(&s, "//s:g[@class='link' and @data-kind='nvlink']//s:text[.='18 NVLink']", 8);
    COUNT(&s, "//s:g[@class='link' and @data-from='NIC0' and @data-to='PCI0']", 1);
    done(&s);
}

ACC_TEST(topology_with_32_nics_and_a_cluster)
{
    svg_t s;
    draw(&s, "acc-compile --topo aws-p5 --draw {svg}");
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='nic']", 32);
    COUNT(&s, "//s:g[@class='vertex' and @data-kind='gpu']", 8);
    done(&s);
    draw(&s, "acc-compile --topo dgx-h100-2node --draw {svg}");
    COUNT(&s, "//s:text[contains(., 'one node of 2') and contains(., 'ib-ndr')]", 1);
    done(&s);
    /* Direct NVLinks between GPUs (V100's hybrid cube mesh): one arc per pair. */
    draw(&s, "acc-compile --topo dawnbench-v100-16node --draw {svg}");
    COUNT(&s, "//s:g[@class='link' and @data-kind='nvlink']", 16);
    COUNT(&s, "//s:text[contains(., 'one node of 16')]", 1);
    done(&s);
}

ACC_TEST(bad_draw_arguments_exit_2_and_unwritable_files_3)
{
    static const struct {
        const char *line, *says;
    } bad[] = {
        {"acc-compile --draw x.svg", "--draw FILE.svg draws a topology"},
        {"acc-compile --topo dgx-h100 --report --draw x.svg", "use --plot FILE.svg"},
        {"acc-compile --topo dgx-h100 --draw", "needs a value"},
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_MSG(tr_run(bad[i].line, NULL, 0) == 2, "%s: status not 2: %s", bad[i].line, tr_err);
        TR_HAS(tr_err, bad[i].says, bad[i].line);
    }
    CHECK_INT(tr_run("acc-compile --topo dgx-h100 --draw /nonexistent/dir/topo.svg", NULL, 0), 3);
    TR_HAS(tr_err, "/nonexistent/dir/topo.svg", "--draw /nonexistent/dir/topo.svg");
}

ACC_TEST(plan_ring_has_an_arrow_per_hop_and_lane_and_a_critical_path)
{
    char line[2048], yaml[1024];
    svg_t s;

    draw(&s, "acc-compile --topo dgx-h100 --coll allreduce --algo ring --lanes 2 --draw {svg}");
    check_plain(&s);
    /* 8 ranks, each lane a ring: 8 hops per lane. */
    COUNT(&s, "//s:path[@class='hop']", 16);
    COUNT(&s, "//s:path[@class='hop' and @data-lane='1']", 8);
    COUNT(&s, "//s:g[@class='rank']", 8);
    /* Every operation a bar (240: 8 ranks x 2 lanes x 15), the critical path marked. */
    COUNT(&s, "//s:rect[starts-with(@class, 'op')]", 240);
    CHECK(count(&s, "//s:rect[@class='op critical']") > 0);
    COUNT(&s, "//s:path[@class='critical-path']", 1);
    COUNT(&s, "//s:text[contains(., 'simulated on dgx-h100')]", 1);
    done(&s);

    /* From a plan file, without a topology: the same graph, the timeline in steps. */
    snprintf(yaml, sizeof(yaml), "%s", acc_test_tmp("ring.yaml"));
    snprintf(line, sizeof(line),
             "acc-compile --topo dgx-h100 --coll allreduce --algo ring --lanes 2 --emit-plan %s",
             yaml);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    snprintf(line, sizeof(line), "acc-compile --verify %s --draw {svg}", yaml);
    draw(&s, line);
    COUNT(&s, "//s:path[@class='hop']", 16);
    COUNT(&s, "//s:text[contains(., 'in steps: no topology')]", 1);
    CHECK(count(&s, "//s:rect[@class='op critical']") > 0);
    done(&s);
}

ACC_TEST(plan_tree_and_peer_memory_plans_draw)
{
    svg_t s;
    /* A double binary tree on 8 ranks over 2 lanes: each lane one of the two trees, 7 edges
     * used both ways (reduce up, broadcast down). */
    draw(&s, "acc-compile --topo dgx-h100 --coll allreduce --algo tree --lanes 2 --draw {svg}");
    COUNT(&s, "//s:path[@class='hop' and @data-lane='0']", 14);
    COUNT(&s, "//s:path[@class='hop' and @data-lane='1']", 14);
    CHECK(count(&s, "//s:rect[@class='op critical']") > 0);
    done(&s);
    /* One-shot: every rank reads every other's memory. */
    draw(&s, "acc-compile --topo dgx-h100 --coll allreduce --algo oneshot --draw {svg}");
    CHECK(count(&s, "//s:rect[@class='op critical']") > 0);
    done(&s);
}

ACC_TEST(large_plan_is_capped_and_says_so)
{
    svg_t s;
    draw(&s, "acc-compile --topo 'nodes=16 gpus=8 nvlink=18 nic=8x400' --coll allreduce "
             "--algo ring --lanes 8 --draw {svg}");
    check_plain(&s);
    COUNT(&s, "//s:path[@class='hop']", 0);
    COUNT(&s, "//s:text[contains(., 'the graph is drawn up to 64 ranks')]", 1);
    COUNT(&s, "//s:text[contains(., 'showing ranks 0-11 of 128 and lanes 0-3 of 8')]", 1);
    COUNT(&s, "//s:text[starts-with(., 'rank ')]", 48);
    CHECK(count(&s, "//s:rect[@class='op critical']") > 0);
    done(&s);
}

/* The number in "allreduce on FINGERPRINT: N ranges" of --print-selection's text, and the
 * count of its lines by NCCL. */
static void ranges_of(const char *text, const char *coll, int *n, int *nccl)
{
    char head[64];
    const char *p, *line;
    snprintf(head, sizeof(head), "%s on ", coll);
    p = strstr(text, head);
    CHECK_MSG(p != NULL, "no table of %s in:\n%s", coll, text);
    CHECK(sscanf(strchr(p, ':') + 1, "%d ranges", n) == 1);
    *nccl = 0;
    for (line = strchr(p, '\n'); line && *line; line = strchr(line + 1, '\n')) {
        char by[16];
        unsigned long long lo, hi;
        if (sscanf(line + 1, "%llu %llu %15s", &lo, &hi, by) != 3)
            break;
        *nccl += strcmp(by, "NCCL") == 0;
    }
}

ACC_TEST(selection_bands_one_per_range)
{
    char db[1024], line[2048];
    int n, nccl;
    svg_t s;

    snprintf(db, sizeof(db), "%s", acc_test_tmp("sel.db"));
    snprintf(line, sizeof(line), "acc-compile --topo 'gpus=4 nvlink=18' --db %s --coll allreduce",
             db);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    snprintf(line, sizeof(line),
             "acc-compile --topo 'gpus=4 nvlink=18' --db %s --print-selection --plot {svg}", db);
    draw(&s, line); /* its standard output is the tables' text */
    ranges_of(tr_out, "allreduce", &n, &nccl);
    CHECK(n >= 1);
    check_plain(&s);
    COUNT(&s, "//s:rect[@class='band' and @data-collective='allreduce']", n);
    COUNT(&s, "//s:rect[@class='band' and @data-choice='nccl']", nccl);
    COUNT(&s, "//s:text[.='message size (bytes, log scale)']", 1);
    COUNT(&s, "//s:text[.='acc chooses:']", 1);
    done(&s);
    CHECK_INT(tr_run("acc-compile --topo dgx-h100 --plot x.svg", NULL, 0), 2);
    TR_HAS(tr_err, "--plot FILE.svg goes with --report or --print-selection", "--plot alone");
}

ACC_TEST(bench_plot_has_measured_and_predicted_series)
{
    char line[2048], yaml[1024];
    svg_t s;

    /* 1K, 4K, 16K, 64K: four points per series. */
    draw(&s, "acc-bench --backend host --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring "
             "-b 1K -e 64K -f 4 -n 1 -w 0 -c 0 --plot {svg}");
    check_plain(&s);
    COUNT(&s, "//s:path[@class='series']", 2);
    COUNT(&s, "//s:path[@class='series' and starts-with(@data-series, 'measured')]", 1);
    COUNT(&s, "//s:path[@class='series' and starts-with(@data-series, 'predicted')]", 1);
    COUNT(&s, "//s:circle[@class='point']", 8);
    COUNT(&s, "//s:text[.='64K']", 1);
    done(&s);

    /* A plan file, with --topo naming only the machine predicted for. */
    snprintf(yaml, sizeof(yaml), "%s", acc_test_tmp("ring.yaml"));
    snprintf(line, sizeof(line),
             "acc-compile --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring --emit-plan %s",
             yaml);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    snprintf(line, sizeof(line),
             "acc-bench --backend host --plan %s --topo 'gpus=4 nvlink=18' -b 4K -e 4K -n 1 -c 0 "
             "--plot {svg}",
             yaml);
    draw(&s, line);
    COUNT(&s, "//s:circle[@class='point']", 2);
    done(&s);
}

ACC_TEST(bad_bench_plot_arguments_exit_2_and_unwritable_files_3)
{
    static const struct {
        const char *line, *says;
    } bad[] = {
        {"acc-bench --backend host --plan x.yaml --plot x.svg", "add --topo T"},
        {"acc-bench --backend host --plan x.yaml --topo dgx-h100", "add --plot or drop --topo"},
        {"acc-bench --runtime host --nranks 2 --plot x.svg", "it goes with --backend host"},
        {"acc-bench --backend host --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring "
         "--plot",
         "needs a value"},
    };
    const char *unwritable =
        "acc-bench --backend host --topo 'gpus=4 nvlink=18' --coll "
        "allreduce --algo ring -b 1K -e 1K -n 1 -c 0 --plot /nonexistent/b.svg";
    char line[4096], yaml[1024], svg[1024];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_MSG(tr_run(bad[i].line, NULL, 0) == 2, "%s: status not 2: %s", bad[i].line, tr_err);
        TR_HAS(tr_err, bad[i].says, bad[i].line);
    }
    CHECK_INT(tr_run(unwritable, NULL, 0), 3);
    TR_HAS(tr_err, "/nonexistent/b.svg", unwritable);
    /* The topology predicted for must have the plan's rank count. */
    snprintf(yaml, sizeof(yaml), "%s", acc_test_tmp("ring4.yaml"));
    snprintf(svg, sizeof(svg), "%s", acc_test_tmp("b.svg"));
    snprintf(line, sizeof(line),
             "acc-compile --topo 'gpus=4 nvlink=18' --coll allreduce --algo ring --emit-plan %s",
             yaml);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    snprintf(line, sizeof(line),
             "acc-bench --backend host --plan %s --topo dgx-h100 -b 1K -e 1K -n 1 -c 0 --plot %s",
             yaml, svg);
    CHECK_INT(tr_run(line, NULL, 0), 2);
    TR_HAS(tr_err, "has 8 ranks and the plan 4", line);
}

ACC_TEST(tune_plot_is_svg_with_the_optimum_framed)
{
    char db[1024], line[2048];
    svg_t s;

    snprintf(db, sizeof(db), "%s", acc_test_tmp("tune.db"));
    snprintf(line, sizeof(line), "acc-tune --model resnet50 --topo gpus=4 --db %s", db);
    CHECK_MSG(tr_run(line, NULL, 0) == 0, "%s: %s", line, tr_err);
    snprintf(line, sizeof(line), "acc-tune plot {svg} --db %s --model resnet50 --topo gpus=4", db);
    draw(&s, line);
    check_plain(&s);
    COUNT(&s, "//s:rect[s:title='optimum']", 1);
    CHECK(count(&s, "//s:rect[s:title]") > 10);
    done(&s);
}
