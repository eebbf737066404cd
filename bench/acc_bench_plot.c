/*
 * acc-bench --plot: the sweep's measured busbw beside acc's simulator's prediction for the same
 * plan and sizes on a topology, as one SVG (acc_select_series_svg).  On the host backend the
 * measurement is the CPU's and the prediction the GPUs' of the topology: the picture says so,
 * and the gap between the two lines is the point (on a GPU machine, with the plan's kernels,
 * the lines should meet).
 */
#include "acc_bench.h"
#include "acc_cost.h"
#include "acc_select.h"

#include <stdlib.h>
#include <string.h>

int bench_plot(const acc_plan_t *plan, const char *topo_src, acc_dtype_t dt,
               const bench_points_t *pts, const char *path)
{
    acc_topo_t *topo = NULL;
    acc_sim_t *sim = NULL;
    double *pred = NULL;
    acc_select_series_t s[2];
    char title[160], sub[256];
    acc_buf_t b;
    size_t i;
    int rc = EXIT_OK;

    acc_buf_init(&b);
    if (acc_topo_load(topo_src, &topo) != ACC_OK || acc_sim_create(topo, &sim) != ACC_OK) {
        fprintf(stderr, "acc-bench: --plot: %s\n", acc_error_message());
        rc = EXIT_INPUT;
        goto out;
    }
    if (acc_topo_ranks(topo) != plan->nranks) {
        fprintf(stderr,
                "acc-bench: --plot: %s has %d ranks and the plan %d; give the topology the plan "
                "was made for\n",
                topo_src, acc_topo_ranks(topo), plan->nranks);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!(pred = calloc(pts->n + 1, sizeof(double)))) {
        fprintf(stderr, "acc-bench: out of memory for the plot\n");
        rc = EXIT_INPUT;
        goto out;
    }
    for (i = 0; i < pts->n; i++) {
        acc_sim_result_t r;
        if (acc_sim_plan(sim, plan, pts->bytes[i], dt, &r) != ACC_OK) {
            fprintf(stderr, "acc-bench: --plot: %s\n", acc_error_message());
            rc = EXIT_INPUT;
            goto out;
        }
        pred[i] = r.busbw;
    }
    s[0] = (acc_select_series_t){"measured: host executor (CPU threads)", pts->bytes, pts->busbw,
                                 pts->n};
    s[1] = (acc_select_series_t){"predicted: acc's simulator on the topology's GPUs", pts->bytes,
                                 pred, pts->n};
    snprintf(title, sizeof(title), "%s %s on %d ranks x %d lanes: measured and predicted",
             acc_coll_name(plan->coll), plan->algo, plan->nranks, plan->nlanes);
    snprintf(sub, sizeof(sub), "acc-bench --backend host, %s, out of place; prediction on %s",
             acc_dtype_name(dt), acc_topo_name(topo)[0] ? acc_topo_name(topo) : topo_src);
    if (acc_select_series_svg(title, sub, s, 2, &b) != ACC_OK) {
        fprintf(stderr, "acc-bench: --plot: %s\n", acc_error_message());
        rc = EXIT_INPUT;
    } else if (acc_write_file(path, b.data, b.len) != ACC_OK) {
        fprintf(stderr, "acc-bench: %s\n", acc_error_message());
        rc = EXIT_OUTPUT;
    }
out:
    free(pred);
    acc_buf_free(&b);
    acc_sim_destroy(sim);
    acc_topo_destroy(topo);
    return rc;
}
