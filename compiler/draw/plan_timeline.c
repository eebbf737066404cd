/*
 * The timeline panel of a plan's picture: a row per rank and lane, each operation a bar from
 * its start to its end (the simulator's microseconds, or steps), coloured by what it does, and
 * the critical path outlined and joined.
 *
 * Rows are capped at 48 (4 lanes of the first ranks) and bars at about 24,000, so that a
 * 1024-rank plan stays a picture a browser opens; the panel says what it left out.
 */
#include "draw_internal.h"

#include "acc_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ROWS = 48, MAX_LANES = 4, MAX_BARS = 24000, ROW_H = 16, BAR_H = 12, LEFT = 90 };

static const struct {
    const char *name, *colour;
} kinds[] = {
    {"send", "#4477aa"},
    {"receive (and reduce, copy, forward)", "#ee6677"},
    {"local copy or reduce", "#bbbbbb"},
    {"peer memory (put, get, reduce from peers)", "#228833"},
    {"signal, wait", "#aa3377"},
};

static int kind_of(const acc_op_t *op)
{
    if (acc_op_recv_peer(op) >= 0)
        return 1;
    if (acc_op_send_peer(op) >= 0)
        return 0;
    switch ((acc_opcode_t)op->code) {
    case ACC_OP_COPY:
    case ACC_OP_REDUCE:
        return 2;
    case ACC_OP_PUT:
    case ACC_OP_GET:
    case ACC_OP_REDUCE_PEERS:
        return 3;
    default:
        return 4;
    }
}

typedef struct {
    const draw_deps_t *d;
    int ranks, lanes;
    double y0, x0, x1;
} tl_t;

static double tx(const tl_t *t, double v)
{
    return t->x0 + (t->d->end > 0 ? v / t->d->end : 0) * (t->x1 - t->x0);
}

/* The row of thread th, or -1 when it is not drawn. */
static int row_of(const tl_t *t, size_t th)
{
    int nl = t->d->plan->nlanes, rank = (int)(th / (size_t)nl), lane = (int)(th % (size_t)nl);
    return rank < t->ranks && lane < t->lanes ? rank * t->lanes + lane : -1;
}

static void axis(acc_buf_t *b, const tl_t *t, int rows)
{
    double yb = t->y0 + rows * ROW_H + 4;
    int i;

    acc_svg_line(b, t->x0, yb, t->x1, yb, "stroke=\"#333\"");
    for (i = 0; i <= 5; i++) {
        double v = t->d->end * i / 5, x = tx(t, v);
        acc_svg_line(b, x, t->y0 - 2, x, yb + 4, "stroke=\"#ddd\"");
        if (t->d->simulated)
            acc_svg_text(b, x, yb + 18, "text-anchor=\"middle\" font-size=\"11\"", "%.4g us", v);
        else
            acc_svg_text(b, x, yb + 18, "text-anchor=\"middle\" font-size=\"11\"", "step %.0f", v);
    }
}

static void bars(acc_buf_t *b, const tl_t *t, size_t per_row, size_t *left_out)
{
    const draw_deps_t *d = t->d;
    size_t th, k;

    acc_buf_puts(b, "<g class=\"timeline\">\n");
    for (th = 0; th < d->nth; th++) {
        int row = row_of(t, th);
        const acc_lane_prog_t *pg = &d->plan->progs[th];
        if (row < 0)
            continue;
        acc_svg_text(b, LEFT - 8, t->y0 + row * ROW_H + BAR_H - 1,
                     "text-anchor=\"end\" font-size=\"10\"", "rank %d lane %d",
                     (int)(th / (size_t)d->plan->nlanes), (int)(th % (size_t)d->plan->nlanes));
        for (k = 0; k < pg->nops; k++) {
            size_t i = d->off[th] + k;
            double xa = tx(t, d->t[2 * i]), xb = tx(t, d->t[2 * i + 1]);
            if (k >= per_row) {
                *left_out += pg->nops - k;
                break;
            }
            acc_buf_printf(b,
                           "<rect class=\"op%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
                           "height=\"%d\" fill=\"%s\"%s/>\n",
                           d->crit[i] ? " critical" : "", xa, t->y0 + row * ROW_H,
                           fmax(xb - xa, 0.6), BAR_H, kinds[kind_of(&pg->ops[k])].colour,
                           d->crit[i] ? " stroke=\"#000\" stroke-width=\"1.5\""
                                      : " stroke=\"white\" stroke-width=\"0.5\"");
        }
    }
    acc_buf_puts(b, "</g>\n");
}

typedef struct {
    double start, end;
    int row;
} mark_t;

static int cmp_mark(const void *pa, const void *pb)
{
    const mark_t *a = pa, *b = pb;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* The critical path over the drawn rows: a red line through its bars in time order. */
static void critical_line(acc_buf_t *b, const tl_t *t)
{
    const draw_deps_t *d = t->d;
    mark_t *m = acc_mem_calloc(d->ncrit + 1, sizeof(mark_t));
    size_t th, k, n = 0;

    if (!m)
        return; /* the bars carry the marks already */
    for (th = 0; th < d->nth; th++) {
        int row = row_of(t, th);
        for (k = 0; row >= 0 && k < d->plan->progs[th].nops && n < d->ncrit; k++) {
            size_t i = d->off[th] + k;
            if (d->crit[i])
                m[n++] = (mark_t){d->t[2 * i], d->t[2 * i + 1], row};
        }
    }
    qsort(m, n, sizeof(mark_t), cmp_mark);
    acc_buf_puts(b, "<path class=\"critical-path\" fill=\"none\" stroke=\"#d00000\" "
                    "stroke-width=\"2\" d=\"");
    for (k = 0; k < n; k++) {
        double yy = t->y0 + m[k].row * ROW_H + BAR_H / 2.0;
        acc_buf_printf(b, "%s%.1f %.1f L%.1f %.1f ", k ? "L" : "M", tx(t, m[k].start), yy,
                       tx(t, m[k].end), yy);
    }
    acc_buf_puts(b, "\"/>\n");
    acc_mem_free(m);
}

static void legend(acc_buf_t *b, double x, double y)
{
    size_t k;
    for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        char attrs[64];
        snprintf(attrs, sizeof(attrs), "fill=\"%s\"", kinds[k].colour);
        acc_svg_rect(b, x, y - 10, 14, 12, attrs);
        acc_svg_text(b, x + 20, y, "font-size=\"12\"", "%s", kinds[k].name);
        x += 40 + 6.8 * (double)strlen(kinds[k].name);
    }
    acc_svg_rect(b, x, y - 10, 14, 12, "fill=\"white\" stroke=\"#000\" stroke-width=\"1.5\"");
    acc_svg_line(b, x - 4, y - 4, x + 18, y - 4, "stroke=\"#d00000\" stroke-width=\"2\"");
    acc_svg_text(b, x + 24, y, "font-size=\"12\"", "critical path");
}

double draw_plan_timeline(acc_buf_t *b, const draw_deps_t *d, double y, double w)
{
    const acc_plan_t *p = d->plan;
    tl_t t;
    int rows;
    size_t per_row, left_out = 0;

    t.d = d;
    t.lanes = p->nlanes < MAX_LANES ? p->nlanes : MAX_LANES;
    t.ranks = p->nranks < MAX_ROWS / t.lanes ? p->nranks : MAX_ROWS / t.lanes;
    rows = t.ranks * t.lanes;
    per_row = MAX_BARS / (size_t)rows;
    t.y0 = y + 70;
    t.x0 = LEFT;
    t.x1 = w - 30;
    acc_svg_text(b, 24, y + 20, "font-size=\"15\" font-weight=\"bold\"",
                 "Timeline: rank x lane x %s, %zu operations on the critical path",
                 d->simulated ? "time" : "step", d->ncrit);
    legend(b, 24, y + 44);
    axis(b, &t, rows);
    bars(b, &t, per_row, &left_out);
    critical_line(b, &t);
    y = t.y0 + rows * ROW_H + 40;
    if (t.ranks < p->nranks || t.lanes < p->nlanes) {
        acc_svg_text(b, 24, y, "font-size=\"12\" fill=\"#a00\"",
                     "showing ranks 0-%d of %d and lanes 0-%d of %d; the critical path is marked "
                     "where it passes through them",
                     t.ranks - 1, p->nranks, t.lanes - 1, p->nlanes);
        y += 18;
    }
    if (left_out) {
        acc_svg_text(b, 24, y, "font-size=\"12\" fill=\"#a00\"",
                     "the first %zu operations of each row drawn, %zu left out", per_row, left_out);
        y += 18;
    }
    return y - (t.y0 - 70) + 10;
}
