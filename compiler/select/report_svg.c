/*
 * The report's plot: bus bandwidth against message size for acc's best plan, NCCL's choice (its
 * model) and the bound, one panel per collective, as plain SVG text (no library: any browser or
 * rsvg-convert renders it).
 *
 * Both axes are logarithmic: sizes span 1 KiB to 4 GiB, and busbw spans four or five decades
 * between latency-bound small messages (where acc's one-shot kernels differ most from NCCL) and
 * bandwidth-bound large ones; a linear y axis would flatten everything below 1 MiB to zero.
 */
#include "select_internal.h"

#include "acc_svg.h"

#include <math.h>
#include <string.h>

enum { PANEL_W = 820, PANEL_H = 470, LEFT = 84, RIGHT = 24, TOP = 56, BOTTOM = 64 };

static double px(const acc_svg_axes_t *a, double bytes)
{
    return acc_svg_x(a, bytes);
}

static double py(const acc_svg_axes_t *a, double gbs)
{
    return acc_svg_y(a, gbs);
}

/* The three series of a row: 0 acc, 1 NCCL, 2 bound; 0 when absent. */
static double series(const acc_select_row_t *row, int s)
{
    if (s == 0)
        return row->plan >= 0 ? row->acc_busbw : 0;
    if (s == 1)
        return row->nccl_ok ? row->nccl.busbw : 0;
    return row->bound_ok ? row->bound.busbw : 0;
}

static void y_range(const acc_select_result_t *r, acc_svg_axes_t *a)
{
    double lo = INFINITY, hi = 0;
    size_t i;
    int s;

    for (i = 0; i < r->nrows; i++)
        for (s = 0; s < 3; s++) {
            double v = series(&r->rows[i], s);
            if (v > 0 && isfinite(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    if (hi <= 0) { /* nothing to draw: an empty decade keeps the axes sane */
        lo = 1;
        hi = 10;
    }
    a->y0 = floor(log10(lo));
    a->y1 = ceil(log10(hi));
    if (a->y1 <= a->y0)
        a->y1 = a->y0 + 1;
}

static void draw_axes(acc_buf_t *b, const acc_select_result_t *r, const acc_svg_axes_t *a,
                      double top)
{
    double xl = a->left, xr = a->right;

    acc_svg_size_axis(b, a);
    acc_svg_value_axis(b, a, "busbw (GB/s, log scale)");
    acc_buf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"17\" "
                   "font-weight=\"bold\">%s busbw on ",
                   (xl + xr) / 2, top + 24, acc_coll_name(r->coll));
    acc_buf_put_xml(b, r->topo_name);
    acc_buf_printf(b, " (%d ranks, %s)</text>\n", r->nranks, acc_dtype_name(r->dtype));
    acc_buf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
                   "fill=\"#555\">predicted: acc's simulator, NCCL 2.28's tuning model, the "
                   "topology's lower bound</text>\n",
                   (xl + xr) / 2, top + 42);
}

static const struct {
    const char *name, *colour, *dash;
    double width;
} styles[3] = {
    {"acc (best plan)", "#1f5fbf", "", 2.5},
    {"NCCL 2.28 (model)", "#e07000", "9 5", 2.2},
    {"bound (topology limit)", "#444444", "2 4", 1.8},
};

static void draw_series(acc_buf_t *b, const acc_select_result_t *r, const acc_svg_axes_t *a, int s)
{
    size_t i;
    int pen = 0;

    acc_buf_printf(b,
                   "<path class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
                   "stroke-width=\"%.1f\"%s%s%s d=\"",
                   s == 0   ? "acc"
                   : s == 1 ? "nccl"
                            : "bound",
                   styles[s].colour, styles[s].width,
                   styles[s].dash[0] ? " stroke-dasharray=\"" : "", styles[s].dash,
                   styles[s].dash[0] ? "\"" : "");
    for (i = 0; i < r->nrows; i++) {
        double v = series(&r->rows[i], s);
        if (!(v > 0) || !isfinite(v)) {
            pen = 0; /* a gap: no point at this size */
            continue;
        }
        acc_buf_printf(b, "%s%.1f %.1f ", pen ? "L" : "M", px(a, (double)r->rows[i].nbytes),
                       py(a, v));
        pen = 1;
    }
    acc_buf_puts(b, "\"/>\n");
    if (s != 0)
        return;
    /* Markers on acc's points: filled where the table chooses acc, hollow where NCCL keeps the
     * size. */
    for (i = 0; i < r->nrows; i++) {
        double v = series(&r->rows[i], 0);
        if (!(v > 0) || !isfinite(v))
            continue;
        acc_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" stroke=\"%s\" fill=\"%s\"/>\n",
                       px(a, (double)r->rows[i].nbytes), py(a, v), styles[0].colour,
                       r->rows[i].use_nccl ? "white" : styles[0].colour);
    }
}

/* Has the series a point anywhere? */
static int has_series(const acc_select_result_t *r, int s)
{
    size_t i;
    for (i = 0; i < r->nrows; i++)
        if (series(&r->rows[i], s) > 0)
            return 1;
    return 0;
}

static void draw_legend(acc_buf_t *b, const acc_select_result_t *r, const acc_svg_axes_t *a)
{
    double x = a->right - 14 - 258, y = a->bottom - 12 - 92;
    int s;

    /* Bottom right: busbw rises with the size, so that corner is empty on every plot. */
    acc_buf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"258\" height=\"92\" fill=\"white\" "
                   "stroke=\"#999\"/>\n",
                   x, y);
    for (s = 0; s < 3; s++) {
        double yy = y + 18 + s * 20;
        if (!has_series(r, s)) {
            /* Say why a series is missing rather than draw a key for nothing. */
            acc_buf_printf(b,
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\">%s: "
                           "none for %s</text>\n",
                           x + 10, yy + 4, styles[s].name, acc_coll_name(r->coll));
            continue;
        }
        acc_buf_printf(b,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-width=\"%.1f\"%s%s%s/>\n",
                       x + 10, yy, x + 50, yy, styles[s].colour, styles[s].width,
                       styles[s].dash[0] ? " stroke-dasharray=\"" : "", styles[s].dash,
                       styles[s].dash[0] ? "\"" : "");
        acc_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 58, yy + 4,
                       styles[s].name);
    }
    acc_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" stroke=\"%s\" fill=\"white\"/>\n",
                   x + 30, y + 78, styles[0].colour);
    acc_buf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">hollow: NCCL kept the size"
                   "</text>\n",
                   x + 58, y + 82);
}

acc_status_t acc_select_report_svg(const acc_select_result_t *const *res, size_t n, acc_buf_t *out)
{
    size_t i;
    int s;

    if (!res || n == 0)
        return acc_error_set(ACC_ERR_INVALID, "a plot needs at least one selection sweep");
    for (i = 0; i < n; i++)
        if (res[i]->nrows < 2 || res[i]->rows[0].nbytes == 0)
            return acc_error_set(ACC_ERR_INVALID,
                                 "a plot of %s needs a sweep of at least two sizes from 1 byte",
                                 acc_coll_name(res[i]->coll));
    acc_svg_begin(out, PANEL_W, (double)(n * PANEL_H));
    for (i = 0; i < n; i++) {
        const acc_select_result_t *r = res[i];
        double top = (double)(i * PANEL_H);
        acc_svg_axes_t a = {LEFT, PANEL_W - RIGHT, top + TOP, top + PANEL_H - BOTTOM, 0, 0, 0, 0,
                            1};
        a.x0 = log2((double)r->rows[0].nbytes);
        a.x1 = log2((double)r->rows[r->nrows - 1].nbytes);
        if (a.x1 <= a.x0)
            a.x1 = a.x0 + 1;
        y_range(r, &a);
        acc_buf_printf(out, "<g class=\"panel\" data-collective=\"%s\">\n", acc_coll_name(r->coll));
        draw_axes(out, r, &a, top);
        for (s = 2; s >= 0; s--) /* acc last: on top */
            if (has_series(r, s))
                draw_series(out, r, &a, s);
        draw_legend(out, r, &a);
        acc_buf_puts(out, "</g>\n");
    }
    acc_svg_end(out);
    return acc_buf_status(out);
}
