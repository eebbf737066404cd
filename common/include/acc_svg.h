/*
 * acc_svg.h - the small SVG writer every picture of acc shares (the report's plot, the
 * topology, plans, selection bands, acc-bench's plot, the tuner's heatmap).
 *
 * Pictures are plain SVG 1.1 text appended to an acc_buf_t: no script, no stylesheet, no
 * external font; every label is a <text> element, so that any browser, rsvg-convert or an XML
 * parser reads them.  Strings passed as text are escaped here; `attrs` arguments are attribute
 * text written by acc's own code (never user input) and go out as they are.  Errors: none here;
 * a failed append marks the buffer, reported by acc_buf_status() at the end.
 */
#ifndef ACC_SVG_H
#define ACC_SVG_H

#include "acc_common.h"

/* The project's drawing helpers, not part of the installed API (this header is not installed):
 * hidden, so that libacc.so keeps them to itself. */
#pragma GCC visibility push(hidden)

/* The document's start: XML declaration, the <svg> root of w x h pixels with the house font,
 * a white background; and its end. */
void acc_svg_begin(acc_buf_t *b, double w, double h);
void acc_svg_end(acc_buf_t *b);

/* <text x y attrs>escaped(printf(fmt, ...))</text>. */
void acc_svg_text(acc_buf_t *b, double x, double y, const char *attrs, const char *fmt, ...)
    ACC_PRINTF(5, 6);
/* Text on a white box, for labels drawn over lines; size is the font size in pixels. */
void acc_svg_label(acc_buf_t *b, double x, double y, double size, const char *text);
void acc_svg_rect(acc_buf_t *b, double x, double y, double w, double h, const char *attrs);
void acc_svg_line(acc_buf_t *b, double x1, double y1, double x2, double y2, const char *attrs);

/* An arrowhead marker with id "arrow-<name>" filled in colour (SVG 1.1 markers do not take the
 * line's colour), for marker-end="url(#arrow-<name>)".  Goes inside <defs>. */
void acc_svg_arrow_marker(acc_buf_t *b, const char *name, const char *colour);

/* The i-th colour of the categorical palette (10 colours that stay apart in print and for
 * the common colour blindnesses, then repeating). */
const char *acc_svg_colour(size_t i);

/* A plot area with a logarithmic size axis (x, log2 of bytes) and a value axis (y, log10, or
 * linear when y_log is 0), in pixels left..right, top..bottom. */
typedef struct {
    double left, right, top, bottom;
    double x0, x1; /* log2 of the first and last size */
    double y0, y1; /* log10 of the range when y_log, else the range */
    int y_log;
} acc_svg_axes_t;

double acc_svg_x(const acc_svg_axes_t *a, double bytes);
double acc_svg_y(const acc_svg_axes_t *a, double v);
/* The frame, a tick per octave and a labelled grid line every octave or two, and the caption
 * "message size (bytes, log scale)" below. */
void acc_svg_size_axis(acc_buf_t *b, const acc_svg_axes_t *a);
/* Grid lines and labels of the y axis (every decade, light lines at 2 and 5, when log; five
 * steps when linear) and its caption, rotated, at the left. */
void acc_svg_value_axis(acc_buf_t *b, const acc_svg_axes_t *a, const char *caption);

#pragma GCC visibility pop

#endif
