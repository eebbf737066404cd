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
