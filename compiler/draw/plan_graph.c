/*
 * The graph panel of a plan's picture: ranks on a circle, and every connection of a lane - a
 * rank sending to another (send and the forwarding receives), putting into or getting from its
 * memory - as one arrow in the lane's colour.  A ring is a cycle of arrows, a tree its edges,
 * each lane on a curve of its own (bent by its index, to the left of its direction, so that the
 * two directions of a pair and the lanes of one pair stay apart).
 *
 * A circle stays readable to about 64 ranks and 4 lanes' connections; beyond, the panel says
 * what it leaves out rather than draw a black disc.
 */
#include "draw_internal.h"

#include "acc_svg.h"

#include <math.h>
#include <string.h>

enum { MAX_RANKS = 64, MAX_LANES = 4, NODE_R = 15 };

/* The ranks an operation moves data from and to (a message, a put, a get); -1 when none. */
static void ends(const acc_op_t *op, int rank, int *from, int *to)
{
    *from = *to = -1;
    if ((*to = acc_op_send_peer(op)) >= 0) {
        *from = rank;
    } else if (op->code == ACC_OP_PUT) {
        *from = rank;
        *to = op->peer;
    } else if (op->code == ACC_OP_GET) {
        *from = op->peer;
        *to = rank;
    }
}

static double node_x(double cx, double r, int i, int n)
{
    return cx + r * sin(2 * M_PI * i / n);
}

static double node_y(double cy, double r, int i, int n)
{
    return cy - r * cos(2 * M_PI * i / n);
}

static void arrow(acc_buf_t *b, double x0, double y0, double x1, double y1, int lane)
{
    double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy), ux, uy, bend;
    if (len < 1)
        return;
    ux = dx / len;
    uy = dy / len;
    /* Leave the circles; bend to the left of the direction, more for each lane. */
    x0 += ux * NODE_R;
    y0 += uy * NODE_R;
    x1 -= ux * (NODE_R + 2);
    y1 -= uy * (NODE_R + 2);
    bend = 10 + 9 * lane;
    acc_buf_printf(b,
                   "<path class=\"hop\" data-lane=\"%d\" d=\"M%.1f %.1f Q%.1f %.1f %.1f %.1f\" "
                   "fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                   "marker-end=\"url(#arrow-lane%d)\"/>\n",
                   lane, x0, y0, (x0 + x1) / 2 + uy * bend, (y0 + y1) / 2 - ux * bend, x1, y1,
                   acc_svg_colour((size_t)lane), lane);
}

double draw_plan_graph(acc_buf_t *b, const acc_plan_t *plan, double y, double w)
{
    int n = plan->nranks, lanes = plan->nlanes < MAX_LANES ? plan->nlanes : MAX_LANES;
    double r = fmax(110, n * 9.0), cx = w / 2, cy = y + 50 + r, h = 2 * r + 110;
    uint8_t *seen;
    int i, l, rank;
    char name[32];

    acc_svg_text(b, 24, y + 20, "font-size=\"15\" font-weight=\"bold\"",
                 "Connections: ranks as nodes, an arrow per rank a lane moves data to");
    if (n > MAX_RANKS) {
        acc_svg_text(b, 24, y + 42, "fill=\"#a00\"",
                     "%d ranks: the graph is drawn up to %d ranks; see the timeline below", n,
                     MAX_RANKS);
        return 60;
    }
    if (!(seen = acc_mem_calloc((size_t)n * (size_t)n * (size_t)lanes, 1))) {
        acc_svg_text(b, 24, y + 42, "fill=\"#a00\"", "graph left out: out of memory");
        return 60;
    }
    acc_buf_puts(b, "<defs>\n");
    for (l = 0; l < lanes; l++) {
        snprintf(name, sizeof(name), "lane%d", l);
        acc_svg_arrow_marker(b, name, acc_svg_colour((size_t)l));
    }
    acc_buf_puts(b, "</defs>\n<g class=\"graph\">\n");
    for (rank = 0; rank < n; rank++)
        for (l = 0; l < lanes; l++) {
            const acc_lane_prog_t *pg = &plan->progs[rank * plan->nlanes + l];
            uint32_t k;
            for (k = 0; k < pg->nops; k++) {
                int from, to;
                size_t key;
                ends(&pg->ops[k], rank, &from, &to);
                if (from < 0 || to < 0 || from >= n || to >= n || from == to)
                    continue;
                key = ((size_t)l * (size_t)n + (size_t)from) * (size_t)n + (size_t)to;
                if (seen[key])
                    continue;
                seen[key] = 1;
                arrow(b, node_x(cx, r, from, n), node_y(cy, r, from, n), node_x(cx, r, to, n),
                      node_y(cy, r, to, n), l);
            }
        }
    for (i = 0; i < n; i++) {
        double x = node_x(cx, r, i, n), yy = node_y(cy, r, i, n);
        acc_buf_printf(b, "<g class=\"rank\" data-rank=\"%d\">", i);
        acc_buf_printf(b,
                       "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"#f4f4f4\" "
                       "stroke=\"#333\"/>",
                       x, yy, NODE_R);
        acc_svg_text(b, x, yy + 4, "text-anchor=\"middle\" font-size=\"11\"", "%d", i);
        acc_buf_puts(b, "</g>\n");
    }
    acc_buf_puts(b, "</g>\n");
    /* The key: a line per lane drawn. */
    for (l = 0; l < lanes; l++) {
        char attrs[96];
        double ly = y + 44 + l * 18;
        snprintf(attrs, sizeof(attrs), "stroke=\"%s\" stroke-width=\"2\"",
                 acc_svg_colour((size_t)l));
        acc_svg_line(b, 24, ly, 54, ly, attrs);
        acc_svg_text(b, 60, ly + 4, "font-size=\"12\"", "lane %d", l);
    }
    if (plan->nlanes > lanes)
        acc_svg_text(b, 24, y + 44 + lanes * 18 + 4, "font-size=\"12\" fill=\"#a00\"",
                     "lanes %d-%d not drawn (of %d)", lanes, plan->nlanes - 1, plan->nlanes);
    acc_mem_free(seen);
    return h;
}
