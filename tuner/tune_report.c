/*
 * tune_report.c - what a search found, for people (a table), for tools (CSV) and for a page
 * (an SVG heatmap of iteration time over fusion size x streams).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acc_tune.h"

#include "acc_svg.h"

void acc_tune_point_from_eval(const acc_tune_eval_t *e, const char *label, acc_tune_point_t *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->label, sizeof(out->label), "%s", label ? label : "");
    out->config = e->config;
    out->fidelity = e->fidelity;
    out->iteration_ms = e->result.iteration_ms;
    out->compute_ms = e->result.compute_ms;
    out->buffers = e->result.buffers;
}

const char *acc_tune_baseline_label(acc_fusion_policy_t p)
{
    switch (p) {
    case ACC_FUSION_DDP:
        return "DDP defaults";
    case ACC_FUSION_HOROVOD:
        return "Horovod defaults";
    case ACC_FUSION_NONE:
        return "no fusion";
    default:
        return acc_fusion_policy_name(p);
    }
}

static void config_text(const acc_tune_config_t *c, char *buf, size_t n)
{
    if (acc_tune_config_format(c, buf, n) != ACC_OK)
        snprintf(buf, n, "(invalid configuration)");
}

static void row(acc_buf_t *b, const char *label, const acc_tune_point_t *p, double best_ms)
{
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX];
    config_text(&p->config, cfg, sizeof(cfg));
    acc_buf_printf(b, "%-18s %-58s %12.3f", label, cfg, p->iteration_ms);
    if (p->compute_ms > 0)
        acc_buf_printf(b, " %11.3f %9.2f%%", p->iteration_ms - p->compute_ms,
                       100.0 * p->compute_ms / p->iteration_ms);
    else
        acc_buf_printf(b, " %11s %10s", "-", "-");
    if (best_ms > 0)
        acc_buf_printf(b, " %8.4fx", p->iteration_ms / best_ms);
    acc_buf_puts(b, "\n");
}

static int by_ms(const void *a, const void *b)
{
    const acc_tune_point_t *x = *(const acc_tune_point_t *const *)a;
    const acc_tune_point_t *y = *(const acc_tune_point_t *const *)b;
    return x->iteration_ms < y->iteration_ms ? -1 : x->iteration_ms > y->iteration_ms;
}

acc_status_t acc_tune_report_text(const acc_tune_report_t *r, size_t top, acc_buf_t *out)
{
    const acc_tune_point_t **sorted = NULL;
    double best = r->best ? r->best->iteration_ms : 0;
    size_t i, n = 0;

    if (r->title)
        acc_buf_printf(out, "%s\n\n", r->title);
    acc_buf_printf(out, "%-18s %-58s %12s %11s %10s %9s\n", "", "configuration", "iteration ms",
                   "exposed ms", "efficiency", best > 0 ? "speedup" : "");
    if (r->best) {
        char label[48];
        snprintf(label, sizeof(label), "optimum (%s)", r->best->label);
        row(out, label, r->best, 0);
    }
    for (i = 0; i < r->nbaselines; i++)
        row(out,
            r->baselines[i].label[0] ? r->baselines[i].label
                                     : acc_tune_baseline_label(r->baselines[i].config.policy),
            &r->baselines[i], best);
    if (best > 0 && r->nbaselines)
        acc_buf_puts(out, "(speedup: each baseline's iteration time / the optimum's; below 1 the "
                          "baseline is faster than anything in the space searched)\n");
    if (top && r->npoints) {
        if (!(sorted = acc_mem_calloc(r->npoints, sizeof(*sorted))))
            return acc_error_set(ACC_ERR_NOMEM, "out of memory for the report");
        for (i = 0; i < r->npoints; i++)
            if (r->points[i].fidelity >= 1.0)
                sorted[n++] = &r->points[i];
        qsort(sorted, n, sizeof(*sorted), by_ms);
        acc_buf_printf(out, "\nbest %zu of %zu evaluated configurations (full fidelity):\n",
                       n < top ? n : top, n);
        for (i = 0; i < n && i < top; i++) {
            char label[64];
            snprintf(label, sizeof(label), "%zu. %s", i + 1, sorted[i]->label);
            row(out, label, sorted[i], best);
        }
        acc_mem_free(sorted);
    }
    return acc_buf_status(out);
}

static void csv_row(acc_buf_t *b, const acc_tune_point_t *p)
{
    const acc_tune_config_t *c = &p->config;
    acc_buf_printf(b, "%s,%s,%llu,%llu,%g,%d,%s,%s,%g,%.6f,", p->label,
                   acc_fusion_policy_name(c->policy), (unsigned long long)c->fusion_bytes,
                   (unsigned long long)c->first_bytes, c->cycle_ms, c->streams,
                   c->assign == ACC_STREAMS_ROUND_ROBIN ? "rr" : "least",
                   acc_tune_algo_name(c->algo), p->fidelity, p->iteration_ms);
    if (p->compute_ms > 0)
        acc_buf_printf(b, "%.6f,%.6f,%.6f,", p->compute_ms, p->iteration_ms - p->compute_ms,
                       p->compute_ms / p->iteration_ms);
    else
        acc_buf_puts(b, ",,,");
    if (p->buffers)
        acc_buf_printf(b, "%zu", p->buffers);
    acc_buf_puts(b, "\n");
}

acc_status_t acc_tune_report_csv(const acc_tune_report_t *r, acc_buf_t *out)
{
    size_t i;
    acc_buf_puts(out, "label,policy,fusion_bytes,first_bytes,cycle_ms,streams,assign,algo,"
                      "fidelity,iteration_ms,compute_ms,exposed_ms,efficiency,buffers\n");
    for (i = 0; i < r->nbaselines; i++)
        csv_row(out, &r->baselines[i]);
    for (i = 0; i < r->npoints; i++)
        csv_row(out, &r->points[i]);
    return acc_buf_status(out);
}

/* ---- the heatmap ---- */

#define CELL_W 58
#define CELL_H 34
#define LEFT   70
#define TOP    64

static void size_label(uint64_t v, char *out, size_t n)
{
    if (v >= (1ull << 30) && v % (1ull << 30) == 0)
        snprintf(out, n, "%lluG", (unsigned long long)(v >> 30));
    else if (v >= (1ull << 20) && v % (1ull << 20) == 0)
        snprintf(out, n, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(out, n, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(out, n, "%llu", (unsigned long long)v);
}

/* Colour of t in 0..1 (0 best): green through yellow to red, readable in print and for the
 * commonest colour-vision deficiency thanks to the change in lightness. */
static void colour(double t, char *out, size_t n)
{
    static const double stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
    int i;
    double u;

    t = t >= 0 ? (t <= 1 ? t : 1) : 0;
    i = t < 0.5 ? 0 : 1;
    u = i ? (t - 0.5) * 2 : t * 2;
    snprintf(out, n, "#%02x%02x%02x",
             (int)lround(stops[i][0] + u * (stops[i + 1][0] - stops[i][0])),
             (int)lround(stops[i][1] + u * (stops[i + 1][1] - stops[i][1])),
             (int)lround(stops[i][2] + u * (stops[i + 1][2] - stops[i][2])));
}

typedef struct {
    uint64_t fmin, fmax;
    int smin, smax, nf, ns;
    double *cell; /* nf x ns: best ms, NAN when none */
    double lo, hi;
} grid_t;

static int fusion_col(const grid_t *g, uint64_t f)
{
    int c = 0;
    uint64_t v = g->fmin;
    while (v < f && c < g->nf - 1) {
        v <<= 1;
        c++;
    }
    return v == f ? c : -1;
}

static acc_status_t make_grid(const acc_tune_report_t *r, acc_fusion_policy_t pol, grid_t *g)
{
    size_t i;
    int first = 1;

    memset(g, 0, sizeof(*g));
    for (i = 0; i < r->npoints; i++) {
        const acc_tune_point_t *p = &r->points[i];
        uint64_t f = p->config.fusion_bytes;
        if (p->fidelity < 1.0 || p->config.policy != pol || !f || (f & (f - 1)))
            continue;
        if (first || f < g->fmin)
            g->fmin = f;
        if (first || f > g->fmax)
            g->fmax = f;
        if (first || p->config.streams < g->smin)
            g->smin = p->config.streams;
        if (first || p->config.streams > g->smax)
            g->smax = p->config.streams;
        first = 0;
    }
    if (first)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "heatmap: no full-fidelity %s configuration with "
                             "a power-of-two fusion size to draw",
                             acc_fusion_policy_name(pol));
    for (g->nf = 1; (g->fmin << (g->nf - 1)) < g->fmax; g->nf++)
        ;
    g->ns = g->smax - g->smin + 1;
    if (!(g->cell = acc_mem_calloc((size_t)g->nf * (size_t)g->ns, sizeof(double))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for the heatmap");
    for (i = 0; i < (size_t)g->nf * (size_t)g->ns; i++)
        g->cell[i] = NAN;
    g->lo = INFINITY;
    g->hi = -INFINITY;
    for (i = 0; i < r->npoints; i++) {
        const acc_tune_point_t *p = &r->points[i];
        int c = fusion_col(g, p->config.fusion_bytes);
        double *v;
        if (p->fidelity < 1.0 || p->config.policy != pol || c < 0)
            continue;
        v = &g->cell[(size_t)(p->config.streams - g->smin) * (size_t)g->nf + (size_t)c];
        if (isnan(*v) || p->iteration_ms < *v)
            *v = p->iteration_ms;
        g->lo = fmin(g->lo, p->iteration_ms);
        g->hi = fmax(g->hi, p->iteration_ms);
    }
    return ACC_OK;
}

static void draw_cells(acc_buf_t *b, const grid_t *g, const acc_tune_point_t *best)
{
    char col[16], lab[32];
    int x, y;

    for (y = 0; y < g->ns; y++) {
        for (x = 0; x < g->nf; x++) {
            double v = g->cell[(size_t)y * (size_t)g->nf + (size_t)x];
            int px = LEFT + x * CELL_W, py = TOP + y * CELL_H;
            if (isnan(v)) {
                acc_buf_printf(b,
                               "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                               "fill=\"#eeeeee\" stroke=\"#ffffff\"/>\n",
                               px, py, CELL_W, CELL_H);
                continue;
            }
            /* Log scale between the best and the worst cell: the interesting differences are
             * a few percent, the worst cells several times slower. */
            colour(g->hi > g->lo ? log(v / g->lo) / log(g->hi / g->lo) : 0, col, sizeof(col));
            acc_buf_printf(b,
                           "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                           "stroke=\"#ffffff\"><title>%.3f ms</title></rect>\n",
                           px, py, CELL_W, CELL_H, col, v);
            acc_buf_printf(b,
                           "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">"
                           "%.4g</text>\n",
                           px + CELL_W / 2, py + CELL_H / 2 + 4, v);
        }
        acc_buf_printf(b,
                       "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%d</text>\n",
                       LEFT - 8, TOP + y * CELL_H + CELL_H / 2 + 4, g->smin + y);
    }
    for (x = 0; x < g->nf; x++) {
        size_label(g->fmin << x, lab, sizeof(lab));
        acc_buf_printf(b,
                       "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s"
                       "</text>\n",
                       LEFT + x * CELL_W + CELL_W / 2, TOP + g->ns * CELL_H + 16, lab);
    }
    if (best) {
        int c = fusion_col(g, best->config.fusion_bytes), s = best->config.streams - g->smin;
        if (c >= 0 && s >= 0 && s < g->ns)
            acc_buf_printf(b,
                           "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                           "stroke=\"#000000\" stroke-width=\"3\"><title>optimum</title>"
                           "</rect>\n",
                           LEFT + c * CELL_W + 2, TOP + s * CELL_H + 2, CELL_W - 4, CELL_H - 4);
    }
}

acc_status_t acc_tune_report_svg(const acc_tune_report_t *r, acc_buf_t *out)
{
    acc_fusion_policy_t pol = r->best ? r->best->config.policy : ACC_FUSION_ACC;
    char cfg[ACC_TUNE_CONFIG_TEXT_MAX];
    grid_t g;
    acc_status_t st;
    size_t i;
    int w, h, y;

    if ((st = make_grid(r, pol, &g)) != ACC_OK)
        return st;
    w = LEFT + g.nf * CELL_W + 40;
    if (w < 640)
        w = 640;
    h = TOP + g.ns * CELL_H + 60 + 18 * (int)(r->nbaselines + 4);
    acc_svg_begin(out, w, h);
    acc_buf_printf(out, "<text x=\"%d\" y=\"22\" font-size=\"15\">", LEFT);
    acc_buf_put_xml(out, r->title ? r->title : "simulated iteration time");
    acc_buf_printf(out,
                   "</text>\n<text x=\"%d\" y=\"42\" font-size=\"11\">iteration time (ms) "
                   "by fusion size (across) and streams (down); each cell the best "
                   "collective choice; policy %s</text>\n",
                   LEFT, acc_fusion_policy_name(pol));
    acc_buf_printf(out,
                   "<text x=\"16\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 16 %d)\" "
                   "text-anchor=\"middle\">streams</text>\n",
                   TOP + g.ns * CELL_H / 2, TOP + g.ns * CELL_H / 2);
    draw_cells(out, &g, r->best);
    y = TOP + g.ns * CELL_H + 40;
    acc_buf_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\">fusion size</text>\n",
                   LEFT + g.nf * CELL_W / 2 - 30, y - 6);
    acc_buf_printf(out,
                   "<text x=\"%d\" y=\"%d\" font-size=\"12\">green %.3f ms (fastest) to "
                   "red %.3f ms (slowest), log scale; grey: not evaluated</text>\n",
                   LEFT, y += 18, g.lo, g.hi);
    if (r->best) {
        config_text(&r->best->config, cfg, sizeof(cfg));
        acc_buf_printf(
            out, "<text x=\"%d\" y=\"%d\" font-size=\"12\">optimum (black frame): ", LEFT, y += 18);
        acc_buf_put_xml(out, cfg);
        acc_buf_printf(out, ", %.3f ms</text>\n", r->best->iteration_ms);
    }
    for (i = 0; i < r->nbaselines; i++) {
        const acc_tune_point_t *p = &r->baselines[i];
        config_text(&p->config, cfg, sizeof(cfg));
        acc_buf_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", LEFT, y += 18);
        acc_buf_put_xml(out, p->label[0] ? p->label : acc_tune_baseline_label(p->config.policy));
        acc_buf_printf(out, ": %.3f ms", p->iteration_ms);
        if (r->best && r->best->iteration_ms > 0)
            acc_buf_printf(out, " (speedup of the optimum %.4fx)",
                           p->iteration_ms / r->best->iteration_ms);
        acc_buf_puts(out, " - ");
        acc_buf_put_xml(out, cfg);
        acc_buf_puts(out, "</text>\n");
    }
    acc_svg_end(out);
    acc_mem_free(g.cell);
    return acc_buf_status(out);
}
