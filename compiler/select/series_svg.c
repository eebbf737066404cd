/*
 * Bus bandwidth against message size for any named series (acc_select_series_svg): what
 * acc-bench --plot draws, its measurements beside the simulator's prediction, on the same
 * log-log axes as the report's plot (report_svg.c).
 */
#include "select_internal.h"

#include "acc_svg.h"

#include <math.h>
#include <string.h>

enum { WIDTH = 820, HEIGHT = 500, LEFT = 84, RIGHT = 24, TOP = 70, BOTTOM = 64 };

static const char *const dashes[] = {"", "9 5", "2 4", "12 4 2 4"};

acc_status_t acc_select_series_svg(const char *title, const char *subtitle,
                                   const acc_select_series_t *s, size_t n, acc_buf_t *out)
{
    acc_svg_axes_t a;
    double lo = INFINITY, hi = 0, xlo = INFINITY, xhi = 0;
    size_t i, k;

    if (!s || n == 0 || !out)
        return acc_error_set(ACC_ERR_INVALID, "a plot needs at least one series");
    for (i = 0; i < n; i++)
        for (k = 0; k < s[i].n; k++) {
            if (s[i].bytes[k] == 0 || !(s[i].busbw[k] > 0) || !isfinite(s[i].busbw[k]))
                continue;
            xlo = fmin(xlo, (double)s[i].bytes[k]);
            xhi = fmax(xhi, (double)s[i].bytes[k]);
            lo = fmin(lo, s[i].busbw[k]);
            hi = fmax(hi, s[i].busbw[k]);
        }
    if (!(hi > 0))
        return acc_error_set(ACC_ERR_INVALID,
                             "a plot needs a positive busbw at a size of at least 1 byte; "
                             "measure more than one iteration (-n)");
    memset(&a, 0, sizeof(a));
    a.left = LEFT;
    a.right = WIDTH - RIGHT;
    a.top = TOP;
    a.bottom = HEIGHT - BOTTOM;
    a.x0 = floor(log2(xlo));
    a.x1 = ceil(log2(xhi));
    if (a.x1 <= a.x0)
        a.x1 = a.x0 + 1;
    a.y0 = floor(log10(lo));
    a.y1 = ceil(log10(hi));
    if (a.y1 <= a.y0)
        a.y1 = a.y0 + 1;
    a.y_log = 1;
    acc_svg_begin(out, WIDTH, HEIGHT + 24 * (double)n);
    acc_svg_text(out, WIDTH / 2.0, 26,
                 "text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\"", "%s",
                 title ? title : "busbw by message size");
    if (subtitle)
        acc_svg_text(out, WIDTH / 2.0, 46, "text-anchor=\"middle\" font-size=\"12\" fill=\"#555\"",
                     "%s", subtitle);
    acc_svg_size_axis(out, &a);
    acc_svg_value_axis(out, &a, "busbw (GB/s, log scale)");
    for (i = 0; i < n; i++) {
        const char *colour = acc_svg_colour(i), *dash = dashes[i % 4];
        int pen = 0;
        acc_buf_puts(out, "<path class=\"series\" data-series=\"");
        acc_buf_put_xml(out, s[i].name);
        acc_buf_printf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.2\"%s%s%s d=\"",
                       colour, dash[0] ? " stroke-dasharray=\"" : "", dash, dash[0] ? "\"" : "");
        for (k = 0; k < s[i].n; k++) {
            if (s[i].bytes[k] == 0 || !(s[i].busbw[k] > 0) || !isfinite(s[i].busbw[k])) {
                pen = 0;
                continue;
            }
            acc_buf_printf(out, "%s%.1f %.1f ", pen ? "L" : "M",
                           acc_svg_x(&a, (double)s[i].bytes[k]), acc_svg_y(&a, s[i].busbw[k]));
            pen = 1;
        }
        acc_buf_puts(out, "\"/>\n");
        for (k = 0; k < s[i].n; k++)
            if (s[i].bytes[k] && s[i].busbw[k] > 0 && isfinite(s[i].busbw[k]))
                acc_buf_printf(out,
                               "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
                               "fill=\"%s\"/>\n",
                               acc_svg_x(&a, (double)s[i].bytes[k]), acc_svg_y(&a, s[i].busbw[k]),
                               colour);
        /* The key, below the plot: one line per series. */
        {
            char attrs[128];
            double y = HEIGHT + 24 * (double)i;
            snprintf(attrs, sizeof(attrs), "stroke=\"%s\" stroke-width=\"2.2\"%s%s%s", colour,
                     dash[0] ? " stroke-dasharray=\"" : "", dash, dash[0] ? "\"" : "");
            acc_svg_line(out, LEFT, y, LEFT + 40, y, attrs);
            acc_svg_text(out, LEFT + 48, y + 4, "", "%s", s[i].name);
        }
    }
    acc_svg_end(out);
    return acc_buf_status(out);
}
