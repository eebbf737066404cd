/*
 * The SVG writer every picture shares (acc_svg.h): the document, text, boxes, lines, arrow
 * markers, a palette, and log-scale axes of message size.
 *
 * Sizes span 1 KiB to 4 GiB and bandwidths four or five decades between latency-bound small
 * messages and bandwidth-bound large ones, so the size axis is logarithmic (one tick per
 * octave) and the value axis usually too: a linear one flattens everything below 1 MiB.
 */
#include "acc_svg.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void acc_svg_begin(acc_buf_t *b, double w, double h)
{
    acc_buf_printf(b,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
                   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, "
                   "Helvetica, Arial, sans-serif\" font-size=\"13\">\n",
                   w, h, w, h);
    acc_buf_puts(b, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
}

void acc_svg_end(acc_buf_t *b)
{
    acc_buf_puts(b, "</svg>\n");
}

void acc_svg_text(acc_buf_t *b, double x, double y, const char *attrs, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    acc_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y, attrs && *attrs ? " " : "",
                   attrs ? attrs : "");
    acc_buf_put_xml(b, text);
    acc_buf_puts(b, "</text>\n");
}

void acc_svg_label(acc_buf_t *b, double x, double y, double size, const char *text)
{
    /* DejaVu Sans averages about 0.6 em per character: the box is sized from that, so that no
     * font metrics are needed. */
    double w = 0.6 * size * (double)strlen(text) + 4, h = size + 3;
    char attrs[64];

    acc_buf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"white\" "
                   "fill-opacity=\"0.9\"/>\n",
                   x - w / 2, y - size + 1, w, h);
    snprintf(attrs, sizeof(attrs), "text-anchor=\"middle\" font-size=\"%.0f\"", size);
    acc_svg_text(b, x, y, attrs, "%s", text);
}

void acc_svg_rect(acc_buf_t *b, double x, double y, double w, double h, const char *attrs)
{
    acc_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" %s/>\n", x, y, w,
                   h, attrs);
}

void acc_svg_line(acc_buf_t *b, double x1, double y1, double x2, double y2, const char *attrs)
{
    acc_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x1, y1, x2,
                   y2, attrs);
}

void acc_svg_arrow_marker(acc_buf_t *b, const char *name, const char *colour)
{
    acc_buf_printf(b,
                   "<marker id=\"arrow-%s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                   "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
                   "<path d=\"M0 0 L10 5 L0 10 z\" fill=\"%s\"/></marker>\n",
                   name, colour);
}

const char *acc_svg_colour(size_t i)
{
    /* Paul Tol's "bright" and "muted" qualitative schemes (personal.sron.nl/~pault/), chosen
     * to stay distinct for colour-blind readers. */
    static const char *const palette[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee",
                                          "#aa3377", "#ddcc77", "#999933", "#cc6677", "#44aa99"};
    return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

double acc_svg_x(const acc_svg_axes_t *a, double bytes)
{
    return a->left + (log2(bytes) - a->x0) / (a->x1 - a->x0) * (a->right - a->left);
}

double acc_svg_y(const acc_svg_axes_t *a, double v)
{
    double f = a->y_log ? (a->y1 - log10(v)) / (a->y1 - a->y0) : (a->y1 - v) / (a->y1 - a->y0);
    return a->top + f * (a->bottom - a->top);
}

void acc_svg_size_axis(acc_buf_t *b, const acc_svg_axes_t *a)
{
    int k, first = (int)ceil(a->x0), last = (int)floor(a->x1), step = last - first > 12 ? 2 : 1;
    char label[32];

    acc_buf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fbfbfb\" "
                   "stroke=\"#333\"/>\n",
                   a->left, a->top, a->right - a->left, a->bottom - a->top);
    /* Every octave a tick, every `step` octaves a label and a grid line. */
    for (k = first; k <= last; k++) {
        double x = acc_svg_x(a, ldexp(1, k));
        int major = (k - first) % step == 0 || k == last;
        acc_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                       x, major ? a->top : a->bottom - 4, x, a->bottom + (major ? 5 : 0),
                       major ? "#ddd" : "#333");
        if (major) {
            acc_size_text((uint64_t)1 << k, label, sizeof(label));
            acc_svg_text(b, x, a->bottom + 20, "text-anchor=\"middle\"", "%s", label);
        }
    }
    acc_svg_text(b, (a->left + a->right) / 2, a->bottom + 44, "text-anchor=\"middle\"",
                 "message size (bytes, log scale)");
}

static void decade_label(double e, char *out, size_t cap)
{
    double v = pow(10, e);
    if (e < 0)
        snprintf(out, cap, "%.*f", (int)-e, v);
    else
        snprintf(out, cap, "%.0f", v);
}

void acc_svg_value_axis(acc_buf_t *b, const acc_svg_axes_t *a, const char *caption)
{
    char label[32], attrs[96];
    double mid = (a->top + a->bottom) / 2;
    int e, i;

    if (a->y_log) {
        /* A labelled grid line every decade, light ones at 2 and 5. */
        for (e = (int)a->y0; e <= (int)a->y1; e++) {
            double y = acc_svg_y(a, pow(10, e)), m;
            acc_svg_line(b, a->left - 5, y, a->right, y, "stroke=\"#ccc\"");
            decade_label(e, label, sizeof(label));
            acc_svg_text(b, a->left - 8, y + 4, "text-anchor=\"end\"", "%s", label);
            for (m = 2; m < 10 && e < (int)a->y1; m *= 2.5) {
                double ym = acc_svg_y(a, m * pow(10, e));
                acc_svg_line(b, a->left, ym, a->right, ym, "stroke=\"#eee\"");
            }
        }
    } else {
        for (i = 0; i <= 5; i++) {
            double v = a->y0 + (a->y1 - a->y0) * i / 5, y = acc_svg_y(a, v);
            acc_svg_line(b, a->left - 5, y, a->right, y, "stroke=\"#ccc\"");
            acc_svg_text(b, a->left - 8, y + 4, "text-anchor=\"end\"", "%.3g", v);
        }
    }
    snprintf(attrs, sizeof(attrs), "text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\"",
             a->left - 56, mid);
    acc_svg_text(b, a->left - 56, mid, attrs, "%s", caption);
}
