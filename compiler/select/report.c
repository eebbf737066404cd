/*
 * The report of a selection sweep as a text table and as JSON (acc_select.h).  Every figure is
 * a prediction: acc's simulator for acc's plans, the NCCL 2.28 replica for NCCL, and the bound.
 */
#include "select_internal.h"

#include <math.h>
#include <string.h>

static void nccl_name(const acc_nccl_choice_t *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s/%dch", acc_nccl_algo_name(c->algo), acc_nccl_proto_name(c->proto),
             c->nchannels);
}

static void table_text(const acc_select_result_t *r, acc_buf_t *out);

/* The generators (or variants) a sweep left out, indented, each with why. */
static void left_out_text(const acc_select_result_t *r, acc_buf_t *out)
{
    if (!r->nleft_out)
        return;
    if (acc_select_by_class(r->nranks))
        acc_buf_printf(out, "left out at %d ranks (plans by class above %d):\n", r->nranks,
                       ACC_SELECT_CLASS_RANKS);
    else
        acc_buf_printf(out, "left out at %d ranks:\n", r->nranks);
    for (size_t i = 0; i < r->nleft_out; i++)
        acc_buf_printf(out, "  %s\n", r->left_out[i]);
}

static void text_one(const acc_select_result_t *r, acc_buf_t *out)
{
    char size[32], plan[ACC_PLAN_NAME_MAX + ACC_PLAN_PARAMS_MAX], params[ACC_PLAN_PARAMS_MAX];
    char nccl[48];
    size_t i;
    int modelled = 0, in_switch = 0, measured = 0;

    for (i = 0; i < r->nrows; i++) {
        modelled |= r->rows[i].nccl_ok;
        in_switch |= r->rows[i].bound_ok && r->rows[i].bound.in_switch;
        measured |= r->rows[i].plan >= 0 && r->rows[i].acc_measured;
    }
    acc_buf_printf(out,
                   "%s on %s: %d ranks (%d node%s x %d GPUs), %s; predicted: acc's simulator "
                   "for its plans (%zu variants verified), %s\n",
                   acc_coll_name(r->coll), r->topo_name, r->nranks, r->nodes,
                   r->nodes == 1 ? "" : "s", r->gpus_per_node, acc_dtype_name(r->dtype),
                   r->variants,
                   modelled ? "NCCL 2.28's model for NCCL" : "no NCCL model for this collective");
    left_out_text(r, out);
    acc_buf_printf(out, "%6s  %-54s %10s  %-20s %10s %8s  %-6s %9s %9s %10s %6s\n", "size",
                   "acc's best plan", "acc_us", "NCCL's choice", "nccl_us", "speedup", "choice",
                   "algbw", "busbw", "bound_us", "bound");
    for (i = 0; i < r->nrows; i++) {
        const acc_select_row_t *row = &r->rows[i];
        double algbw = row->use_nccl ? row->nccl.algbw : row->acc_algbw;
        double busbw = row->use_nccl ? row->nccl.busbw : row->acc_busbw;

        select_size_name(row->nbytes, size, sizeof(size));
        if (row->plan >= 0) {
            const acc_select_plan_t *sp = &r->plans[row->plan];
            select_short_params(sp->params, params, sizeof(params));
            snprintf(plan, sizeof(plan), "%s %s", sp->plan->algo, params);
        } else {
            snprintf(plan, sizeof(plan), "-");
        }
        if (row->nccl_ok)
            nccl_name(&row->nccl, nccl, sizeof(nccl));
        else
            snprintf(nccl, sizeof(nccl), "-");
        acc_buf_printf(out, "%6s  %-54s ", size, plan);
        if (row->plan >= 0)
            acc_buf_printf(out, row->acc_measured ? "%9.2fm  " : "%10.2f  ", row->acc_us);
        else
            acc_buf_printf(out, "%10s  ", "-");
        acc_buf_printf(out, "%-20s ", nccl);
        if (row->nccl_ok)
            acc_buf_printf(out, "%10.2f ", row->nccl.time_us);
        else
            acc_buf_printf(out, "%10s ", "-");
        if (row->speedup > 0)
            acc_buf_printf(out, "%7.2fx  ", row->speedup);
        else
            acc_buf_printf(out, "%8s  ", "-");
        acc_buf_printf(out, "%-6s %9.3f %9.3f ", row->use_nccl ? "NCCL" : "acc", algbw, busbw);
        if (row->bound_ok)
            acc_buf_printf(out, "%10.2f %6.2f\n", row->bound.us, row->bound_fraction);
        else
            acc_buf_printf(out, "%10s %6s\n", "-", "-");
    }
    acc_buf_printf(out,
                   "(times in us, bandwidths in GB/s; speedup = NCCL's time / acc's best; "
                   "bound = the bound's time / the chosen time, the bound of any schedule%s%s)\n",
                   in_switch ? " with reduction in the NVSwitches (NVLS)" : "",
                   measured ? "; m: measured, not predicted" : "");
    acc_buf_printf(out, "\nSelection table for %s (%zu range%s):\n", acc_coll_name(r->coll),
                   r->table->n, r->table->n == 1 ? "" : "s");
    table_text(r, out);
}

void acc_select_gpu_rule(const acc_select_entry_t *e, const acc_plan_t *plan, int ranks_per_node,
                         char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    if (e->use_nccl || acc_select_entry_runs_on(e, ACC_BACKEND_CUDA))
        return;
    if (!plan)
        snprintf(out, cap, "the cuda backend runs no plan it cannot read");
    else if (acc_plan_runs_on_nodes(plan, ACC_BACKEND_CUDA, ranks_per_node) != ACC_OK)
        acc_plan_backend_rule(acc_error_message(), out, cap);
    else
        snprintf(out, cap, "the table was built for other nodes than this plan's");
}

static const acc_plan_t *plan_of(const acc_select_result_t *r, const acc_select_entry_t *e)
{
    for (size_t i = 0; !e->use_nccl && i < r->nplans; i++)
        if (strcmp(r->plans[i].hash, e->plan_hash) == 0)
            return r->plans[i].plan;
    return NULL;
}

void acc_select_notes_init(acc_select_notes_t *n)
{
    memset(n, 0, sizeof(*n));
}

int acc_select_note(acc_select_notes_t *n, const char *rule)
{
    for (int i = 0; i < n->count; i++)
        if (strcmp(n->rules[i], rule) == 0)
            return i + 1;
    if (n->count == ACC_SELECT_NOTES_MAX)
        return 0;
    snprintf(n->rules[n->count], sizeof(n->rules[0]), "%s", rule);
    return ++n->count;
}

void acc_select_backends_text(const acc_select_entry_t *e, acc_select_notes_t *n, const char *rule,
                              char *out, size_t cap)
{
    char set[32];
    int note;

    if (e->use_nccl) {
        snprintf(out, cap, "GPUs: NCCL; host backend: acc's ring");
        return;
    }
    acc_backends_format(e->backends, set, sizeof(set));
    if (acc_select_entry_runs_on(e, ACC_BACKEND_CUDA) || !rule[0]) {
        snprintf(out, cap, "runs on: %s", set[0] ? set : "no backend");
        return;
    }
    note = acc_select_note(n, rule);
    snprintf(out, cap, "runs on: %s; GPUs: NCCL", set[0] ? set : "no backend");
    if (note)
        snprintf(out + strlen(out), cap - strlen(out), " (%d)", note);
}

void acc_select_notes_text(const acc_select_notes_t *n, acc_buf_t *out)
{
    for (int i = 0; i < n->count; i++)
        acc_buf_printf(out, "  (%d) %s\n", i + 1, n->rules[i]);
}

/* The merged table's ranges, one a line, each with the backends that run it, then why GPUs
 * get NCCL where they do. */
static void table_text(const acc_select_result_t *r, acc_buf_t *out)
{
    char size[32], hi[32], rule[256], runs[128];
    acc_select_notes_t notes;
    size_t i;

    acc_select_notes_init(&notes);
    for (i = 0; i < r->table->n; i++) {
        const acc_select_entry_t *e = &r->table->entries[i];
        char range[80];
        select_size_name(e->min_bytes, size, sizeof(size));
        if (e->max_bytes == UINT64_MAX || i + 1 == r->table->n) {
            select_size_name(e->max_bytes, hi, sizeof(hi));
            snprintf(range, sizeof(range), "[%s, %s]", size, hi);
        } else {
            select_size_name(e->max_bytes + 1, hi, sizeof(hi));
            snprintf(range, sizeof(range), "[%s, %s)", size, hi);
        }
        acc_buf_printf(out, "  %-14s %-4s %s %s", range, e->use_nccl ? "NCCL" : "acc", e->algo,
                       e->params);
        if (!e->use_nccl)
            acc_buf_printf(out, "  plan %.12s", e->plan_hash);
        acc_select_gpu_rule(e, plan_of(r, e), r->gpus_per_node, rule, sizeof(rule));
        acc_select_backends_text(e, &notes, rule, runs, sizeof(runs));
        acc_buf_printf(out, "  %s\n", runs);
    }
    acc_select_notes_text(&notes, out);
}

acc_status_t acc_select_report_text(const acc_select_result_t *const *res, size_t n, acc_buf_t *out)
{
    size_t i;
    if (!res || n == 0)
        return acc_error_set(ACC_ERR_INVALID, "a report needs at least one selection sweep");
    for (i = 0; i < n; i++) {
        if (i)
            acc_buf_puts(out, "\n");
        text_one(res[i], out);
    }
    return acc_buf_status(out);
}

acc_status_t acc_select_report_ranges(const acc_select_result_t *const *res, size_t n,
                                      acc_buf_t *out)
{
    size_t i;
    if (!res || n == 0)
        return acc_error_set(ACC_ERR_INVALID, "a report needs at least one selection sweep");
    for (i = 0; i < n; i++) {
        const acc_select_result_t *r = res[i];
        acc_buf_printf(out, "%s%s on %s: %d ranks (%d node%s x %d GPUs), %s: %zu range%s\n",
                       i ? "\n" : "", acc_coll_name(r->coll), r->topo_name, r->nranks, r->nodes,
                       r->nodes == 1 ? "" : "s", r->gpus_per_node, acc_dtype_name(r->dtype),
                       r->table->n, r->table->n == 1 ? "" : "s");
        left_out_text(r, out);
        table_text(r, out);
    }
    return acc_buf_status(out);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* JSON has no infinities or NaN: an unknown figure is null. */
static void json_num(acc_buf_t *b, double v)
{
    if (isfinite(v))
        acc_buf_printf(b, "%.6g", v);
    else
        acc_buf_puts(b, "null");
}

static void json_key(acc_buf_t *b, const char *key, double v)
{
    acc_buf_printf(b, "\"%s\": ", key);
    json_num(b, v);
}

static void json_row(acc_buf_t *b, const acc_select_result_t *r, const acc_select_row_t *row)
{
    acc_buf_printf(b, "{\"bytes\": %llu, \"choice\": \"%s\", \"acc\": ",
                   (unsigned long long)row->nbytes, row->use_nccl ? "nccl" : "acc");
    if (row->plan >= 0) {
        const acc_select_plan_t *sp = &r->plans[row->plan];
        acc_buf_puts(b, "{\"algo\": ");
        acc_buf_put_json(b, sp->plan->algo);
        acc_buf_puts(b, ", \"params\": ");
        acc_buf_put_json(b, sp->params);
        acc_buf_printf(b, ", \"plan_hash\": \"%s\", ", sp->hash);
        json_key(b, "time_us", row->acc_us);
        acc_buf_puts(b, ", ");
        json_key(b, "algbw", row->acc_algbw);
        acc_buf_puts(b, ", ");
        json_key(b, "busbw", row->acc_busbw);
        acc_buf_printf(b, ", \"measured\": %s, ", row->acc_measured ? "true" : "false");
        json_key(b, "predicted_us", row->acc_predicted_us);
        acc_buf_puts(b, "}");
    } else {
        acc_buf_puts(b, "null");
    }
    acc_buf_puts(b, ", \"nccl\": ");
    if (row->nccl_ok) {
        acc_buf_printf(b, "{\"algo\": \"%s\", \"proto\": \"%s\", \"channels\": %d, ",
                       acc_nccl_algo_name(row->nccl.algo), acc_nccl_proto_name(row->nccl.proto),
                       row->nccl.nchannels);
        json_key(b, "time_us", row->nccl.time_us);
        acc_buf_puts(b, ", ");
        json_key(b, "algbw", row->nccl.algbw);
        acc_buf_puts(b, ", ");
        json_key(b, "busbw", row->nccl.busbw);
        acc_buf_puts(b, "}, ");
        json_key(b, "speedup", row->speedup > 0 ? row->speedup : NAN);
    } else {
        acc_buf_puts(b, "null, \"speedup\": null");
    }
    acc_buf_puts(b, ", \"bound\": ");
    if (row->bound_ok) {
        acc_buf_puts(b, "{");
        json_key(b, "us", row->bound.us);
        acc_buf_puts(b, ", ");
        json_key(b, "bw_us", row->bound.bw_us);
        acc_buf_puts(b, ", ");
        json_key(b, "lat_us", row->bound.lat_us);
        acc_buf_puts(b, ", ");
        json_key(b, "busbw", row->bound.busbw);
        acc_buf_printf(b, ", \"in_switch\": %s}, ", row->bound.in_switch ? "true" : "false");
        json_key(b, "bound_fraction", row->bound_fraction);
    } else {
        acc_buf_puts(b, "null, \"bound_fraction\": null");
    }
    acc_buf_puts(b, "}");
}

static void json_entry(acc_buf_t *b, const acc_select_result_t *r, const acc_select_entry_t *e)
{
    char rule[256];
    acc_buf_printf(b, "{\"min_bytes\": %llu, \"max_bytes\": %llu, \"use_nccl\": %s, \"algo\": ",
                   (unsigned long long)e->min_bytes, (unsigned long long)e->max_bytes,
                   e->use_nccl ? "true" : "false");
    acc_buf_put_json(b, e->algo);
    acc_buf_puts(b, ", \"params\": ");
    acc_buf_put_json(b, e->params);
    acc_buf_puts(b, ", \"plan_hash\": ");
    acc_buf_put_json(b, e->plan_hash);
    acc_buf_printf(b, ", \"source\": \"%s\", ", acc_select_source_name(e->source));
    json_key(b, "predicted_us", e->predicted_us);
    acc_buf_puts(b, ", \"backends\": [");
    for (int k = ACC_BACKEND_HOST, n = 0; k <= ACC_BACKEND_CUDA; k++)
        if (e->backends & (1u << k))
            acc_buf_printf(b, "%s\"%s\"", n++ ? ", " : "", acc_backend_name((acc_backend_t)k));
    acc_select_gpu_rule(e, plan_of(r, e), r->gpus_per_node, rule, sizeof(rule));
    acc_buf_printf(b, "], \"gpus\": \"%s\", \"gpus_why\": ",
                   acc_select_entry_runs_on(e, ACC_BACKEND_CUDA) ? "acc" : "nccl");
    acc_buf_put_json(b, rule);
    acc_buf_puts(b, "}");
}

acc_status_t acc_select_report_json(const acc_select_result_t *const *res, size_t n, acc_buf_t *out)
{
    size_t i, j;

    if (!res || n == 0)
        return acc_error_set(ACC_ERR_INVALID, "a report needs at least one selection sweep");
    acc_buf_puts(out, "{\n  \"topology\": ");
    acc_buf_put_json(out, res[0]->topo_name);
    acc_buf_printf(out,
                   ",\n  \"fingerprint\": \"%s\",\n  \"ranks\": %d,\n  \"nodes\": %d,\n"
                   "  \"gpus_per_node\": %d,\n  \"dtype\": \"%s\",\n  \"collectives\": [",
                   res[0]->table->topo_fingerprint, res[0]->nranks, res[0]->nodes,
                   res[0]->gpus_per_node, acc_dtype_name(res[0]->dtype));
    for (i = 0; i < n; i++) {
        const acc_select_result_t *r = res[i];
        acc_buf_printf(out,
                       "%s\n    {\"collective\": \"%s\", \"variants\": %zu,"
                       "\n     \"sizes\": [",
                       i ? "," : "", acc_coll_name(r->coll), r->variants);
        for (j = 0; j < r->nrows; j++) {
            acc_buf_puts(out, j ? ",\n       " : "\n       ");
            json_row(out, r, &r->rows[j]);
        }
        acc_buf_puts(out, "],\n     \"selection\": [");
        for (j = 0; j < r->table->n; j++) {
            acc_buf_puts(out, j ? ",\n       " : "\n       ");
            json_entry(out, r, &r->table->entries[j]);
        }
        acc_buf_puts(out, "],\n     \"left_out\": [");
        for (j = 0; j < r->nleft_out; j++) {
            acc_buf_puts(out, j ? ", " : "");
            acc_buf_put_json(out, r->left_out[j]);
        }
        acc_buf_puts(out, "]}");
    }
    acc_buf_puts(out, "\n  ]\n}\n");
    return acc_buf_status(out);
}
