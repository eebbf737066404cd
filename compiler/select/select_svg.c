/*
 * The selection tables as a picture (acc_select_bands_svg): per collective a row of bands on a
 * logarithmic size axis, one band per range of the table, coloured by what serves it - acc's
 * algorithms in colours, NCCL's in greys - and labelled where the band is wide enough (every
 * band also carries its range and full choice as a tooltip).
 */
#include "select_internal.h"

#include "acc_svg.h"

#include <math.h>
#include <string.h>

enum { WIDTH = 1100, LEFT = 130, RIGHT = 30, TOP = 70, ROW_H = 44, ROW_GAP = 14 };

#define MAX_CHOICES 32

typedef struct {
    int nccl;
    char algo[ACC_PLAN_NAME_MAX];
} choice_t;

typedef struct {
    choice_t c[MAX_CHOICES];
    int n, nacc, nnccl;
    int index[MAX_CHOICES]; /* within acc's or NCCL's */
} choices_t;

static int choice_of(choices_t *cs, const acc_select_entry_t *e)
{
    int i;
    for (i = 0; i < cs->n; i++)
        if (cs->c[i].nccl == e->use_nccl && strcmp(cs->c[i].algo, e->algo) == 0)
            return i;
    if (cs->n == MAX_CHOICES)
        return MAX_CHOICES - 1; /* more algorithms than any table has: share the last colour */
    cs->c[cs->n].nccl = e->use_nccl;
    snprintf(cs->c[cs->n].algo, sizeof(cs->c[cs->n].algo), "%s", e->algo);
    cs->index[cs->n] = e->use_nccl ? cs->nnccl++ : cs->nacc++;
    return cs->n++;
}

static const char *fill_of(const choices_t *cs, int i)
{
    static const char *const greys[] = {"#bbbbbb", "#8c8c8c", "#d9d9d9", "#666666"};
    return cs->c[i].nccl ? greys[cs->index[i] % 4] : acc_svg_colour((size_t)cs->index[i]);
}

/* The end of a range on the axis: a table's last range is open (to UINT64_MAX). */
static double range_end(const acc_select_entry_t *e, double axis_end)
{
    return e->max_bytes == UINT64_MAX ? axis_end : (double)e->max_bytes + 1;
}

static void band(acc_buf_t *b, const acc_svg_axes_t *a, const acc_select_table_t *t,
                 const acc_select_entry_t *e, double y, const char *fill)
{
    double x0 = acc_svg_x(a, fmax((double)e->min_bytes, pow(2, a->x0)));
    double x1 = acc_svg_x(a, fmin(range_end(e, pow(2, a->x1)), pow(2, a->x1)));
    char lo[32], hi[32], params[ACC_PLAN_PARAMS_MAX], label[96];

    acc_size_text(e->min_bytes, lo, sizeof(lo));
    if (e->max_bytes == UINT64_MAX)
        snprintf(hi, sizeof(hi), "up");
    else
        acc_size_text(e->max_bytes + 1, hi, sizeof(hi));
    select_short_params(e->params, params, sizeof(params));
    acc_buf_printf(b,
                   "<rect class=\"band\" data-collective=\"%s\" data-choice=\"%s\" x=\"%.1f\" "
                   "y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" stroke=\"white\">"
                   "<title>",
                   acc_coll_name(t->coll), e->use_nccl ? "nccl" : "acc", x0, y, fmax(x1 - x0, 1),
                   ROW_H, fill);
    acc_buf_printf(b, "[%s, %s): %s ", lo, hi, e->use_nccl ? "NCCL" : "acc");
    acc_buf_put_xml(b, e->algo);
    acc_buf_puts(b, " ");
    acc_buf_put_xml(b, e->params);
    acc_buf_puts(b, "</title></rect>\n");
    /* The label when it fits: the choice, and acc's lanes and protocol. */
    snprintf(label, sizeof(label), "%s%s", e->use_nccl ? "NCCL " : "", e->algo);
    if (6.6 * (double)strlen(label) + 6 < x1 - x0)
        acc_svg_text(b, (x0 + x1) / 2, y + 18, "text-anchor=\"middle\" font-size=\"11\"", "%s",
                     label);
    if (params[0] && 5.6 * (double)strlen(params) + 6 < x1 - x0)
        acc_svg_text(b, (x0 + x1) / 2, y + 33, "text-anchor=\"middle\" font-size=\"9\"", "%s",
                     params);
}

static void legend(acc_buf_t *b, const choices_t *cs, double y)
{
    double x = LEFT;
    int i, k;

    for (k = 0; k < 2; k++) {
        acc_svg_text(b, 24, y + 4, "font-size=\"12\" font-weight=\"bold\"", "%s",
                     k ? "NCCL keeps:" : "acc chooses:");
        for (i = 0, x = LEFT; i < cs->n; i++) {
            char attrs[64];
            if (cs->c[i].nccl != k)
                continue;
            snprintf(attrs, sizeof(attrs), "fill=\"%s\"", fill_of(cs, i));
            acc_svg_rect(b, x, y - 8, 16, 14, attrs);
            acc_svg_text(b, x + 22, y + 4, "font-size=\"12\"", "%s", cs->c[i].algo);
            x += 40 + 7.2 * (double)strlen(cs->c[i].algo);
        }
        y += 22;
    }
}

acc_status_t acc_select_bands_svg(const acc_select_table_t *const *tables, size_t n,
                                  const char *topo_name, acc_buf_t *out)
{
    acc_svg_axes_t a;
    choices_t cs;
    double lo = INFINITY, hi = 0, height;
    size_t i, k;

    if (!tables || n == 0 || !out)
        return acc_error_set(ACC_ERR_INVALID, "a picture of selection tables needs a table");
    memset(&cs, 0, sizeof(cs));
    for (i = 0; i < n; i++) {
        const acc_select_table_t *t = tables[i];
        if (!t->n)
            return acc_error_set(ACC_ERR_INVALID, "the %s table has no range to draw",
                                 acc_coll_name(t->coll));
        lo = fmin(lo, fmax(1, (double)t->entries[0].min_bytes));
        /* The last range is open: draw it up to twice its start, at least to 4 GiB. */
        hi = fmax(hi, fmax((double)t->entries[t->n - 1].min_bytes * 2, 4294967296.0));
        for (k = 0; k < t->n; k++)
            if (t->entries[k].max_bytes != UINT64_MAX)
                hi = fmax(hi, (double)t->entries[k].max_bytes + 1);
        for (k = 0; k < t->n; k++)
            choice_of(&cs, &t->entries[k]);
    }
    memset(&a, 0, sizeof(a));
    a.left = LEFT;
    a.right = WIDTH - RIGHT;
    a.top = TOP;
    a.bottom = TOP + (double)n * (ROW_H + ROW_GAP) + ROW_GAP;
    a.x0 = floor(log2(lo));
    a.x1 = ceil(log2(hi));
    a.y_log = 0;
    height = a.bottom + 60 + 2 * 22 + 20;
    acc_svg_begin(out, WIDTH, height);
    acc_svg_text(out, 24, 28, "font-size=\"18\" font-weight=\"bold\"",
                 "Selection on %s: who serves each message size", topo_name);
    acc_svg_text(out, 24, 48, "font-size=\"12\" fill=\"#555\"",
                 "each band a range of the stored table: acc's plan (colours) or NCCL's own "
                 "choice (greys); hover a band for its range and parameters");
    acc_svg_size_axis(out, &a);
    for (i = 0; i < n; i++) {
        const acc_select_table_t *t = tables[i];
        double y = TOP + ROW_GAP + (double)i * (ROW_H + ROW_GAP);
        acc_buf_printf(out, "<g class=\"table\" data-collective=\"%s\">\n", acc_coll_name(t->coll));
        acc_svg_text(out, LEFT - 8, y + ROW_H / 2.0 + 5, "text-anchor=\"end\" font-weight=\"bold\"",
                     "%s", acc_coll_name(t->coll));
        for (k = 0; k < t->n; k++)
            band(out, &a, t, &t->entries[k], y, fill_of(&cs, choice_of(&cs, &t->entries[k])));
        acc_buf_puts(out, "</g>\n");
    }
    legend(out, &cs, a.bottom + 66);
    acc_svg_end(out);
    return acc_buf_status(out);
}
