/*
 * A plan as a picture (acc_plan_draw_svg): its connections as a graph and its operations on a
 * timeline of rank x lane, with the critical path marked.  The times are the simulator's on the
 * topology given (when its rank count is the plan's), else steps: every operation one step, as
 * soon as what it waits for is done, which is the plan's depth as the verifier sees it.
 */
#include "draw_internal.h"

#include "acc_svg.h"

#include <string.h>

enum { WIDTH = 1100 };

/* Above this many operations the dependency graph would take hundreds of megabytes: the
 * picture shows the connections and says so. */
#define MAX_TIMELINE_OPS 4000000

static void title(acc_buf_t *b, const acc_plan_t *p, const char *how)
{
    acc_svg_text(b, 24, 28, "font-size=\"18\" font-weight=\"bold\"",
                 "%s %s: %d ranks, %d lane%s, %s, %zu operations", acc_coll_name(p->coll), p->algo,
                 p->nranks, p->nlanes, p->nlanes == 1 ? "" : "s", acc_proto_name(p->proto),
                 acc_plan_op_count(p));
    acc_svg_text(b, 24, 48, "font-size=\"12\" fill=\"#555\"", "%s%s%s", p->params,
                 p->params[0] ? "; " : "", how);
}

acc_status_t acc_plan_draw_svg(const acc_plan_t *plan, const acc_topo_t *topo, uint64_t nbytes,
                               acc_buf_t *out)
{
    draw_deps_t d;
    acc_buf_t body;
    acc_sim_t *sim = NULL;
    acc_sim_result_t res;
    char how[256], size[32];
    double y = 64;
    acc_status_t st = ACC_OK;

    if (!plan || !out || plan->nranks < 1 || plan->nlanes < 1)
        return acc_error_set(ACC_ERR_INVALID, "acc_plan_draw_svg: a plan and a buffer needed");
    memset(&d, 0, sizeof(d));
    acc_buf_init(&body);
    acc_size_text(nbytes, size, sizeof(size));
    if (acc_plan_op_count(plan) > MAX_TIMELINE_OPS) {
        snprintf(how, sizeof(how), "no timeline: %zu operations (drawn up to %d)",
                 acc_plan_op_count(plan), MAX_TIMELINE_OPS);
    } else if ((st = draw_deps_build(plan, &d)) != ACC_OK) {
        goto out;
    } else if (topo && acc_topo_ranks(topo) == plan->nranks &&
               acc_sim_create(topo, &sim) == ACC_OK &&
               acc_sim_plan_trace(sim, plan, nbytes, ACC_DT_F32, &res, d.t) == ACC_OK) {
        size_t i;
        d.simulated = 1;
        for (i = 0; i < d.nops; i++)
            if (d.t[2 * i + 1] > d.end)
                d.end = d.t[2 * i + 1];
        snprintf(how, sizeof(how), "simulated on %s for %s bytes of float: %.4g us",
                 acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo), size,
                 res.time_us);
    } else {
        if (topo && acc_topo_ranks(topo) == plan->nranks)
            snprintf(how, sizeof(how), "in steps (the simulator failed: %.160s)",
                     acc_error_message());
        else if (topo)
            snprintf(how, sizeof(how),
                     "in steps: the topology has %d ranks, the plan %d, so nothing simulates it",
                     acc_topo_ranks(topo), plan->nranks);
        else
            snprintf(how, sizeof(how), "in steps: no topology to simulate it on (add --topo)");
        if ((st = draw_deps_steps(&d)) != ACC_OK)
            goto out;
    }
    if (d.nops)
        draw_deps_critical(&d);
    y += draw_plan_graph(&body, plan, y, WIDTH);
    if (d.nops)
        y += draw_plan_timeline(&body, &d, y, WIDTH);
    if ((st = acc_buf_status(&body)) != ACC_OK)
        goto out;
    acc_svg_begin(out, WIDTH, y + 10);
    title(out, plan, how);
    acc_buf_append(out, body.data, body.len);
    acc_svg_end(out);
    st = acc_buf_status(out);
out:
    acc_sim_destroy(sim);
    draw_deps_free(&d);
    acc_buf_free(&body);
    return st;
}
