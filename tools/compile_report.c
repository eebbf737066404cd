/* acc-compile's report: the selection sweep of one or every collective, as text or JSON, and
 * its plot. */
#include "compile_cli.h"

#include "acc_select.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A sweep of a cluster takes minutes: find out now, not after it, that the plot cannot be
 * written. */
static int plot_dir_writable(const char *plot)
{
    char *copy;
    const char *dir;
    int ok;

    if (!plot || strcmp(plot, "-") == 0)
        return 1;
    if (!(copy = acc_mem_strdup(plot)))
        return 1; /* the write itself will report it */
    dir = dirname(copy);
    ok = access(dir, W_OK) == 0;
    if (!ok)
        fprintf(stderr, "acc-compile: cannot write the plot '%s': directory '%s': %s\n", plot, dir,
                strerror(errno));
    acc_mem_free(copy);
    return ok;
}

int compile_report_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_select_builder_t *b = NULL;
    acc_select_result_t *res[ACC_COLL_COUNT] = {NULL};
    acc_coll_t colls[ACC_COLL_COUNT];
    size_t n = 0, i;
    acc_buf_t out;
    int rc = EXIT_OK;

    acc_buf_init(&out);
    if (!plot_dir_writable(o->plot))
        return EXIT_OUTPUT;
    if (o->coll) {
        if (acc_coll_parse(o->coll, &colls[0]) != ACC_OK)
            return compile_fail(EXIT_USAGE);
        n = 1;
    } else {
        /* Every collective some generator or NCCL's model covers. */
        const acc_coll_t *all = acc_select_colls(&n);
        for (i = 0; i < n; i++)
            colls[i] = all[i];
    }
    if (acc_select_builder_create(topo, NULL, &b) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    for (i = 0; i < n; i++) {
        if (acc_select_build(b, colls[i], &res[i]) != ACC_OK) {
            rc = compile_fail(EXIT_INPUT);
            goto out;
        }
    }
    /* Every collective's every size is some two hundred lines: without --coll the text is the
     * ranges of each, unless --full asks for all of it. */
    if ((o->json              ? acc_select_report_json
         : o->coll || o->full ? acc_select_report_text
                              : acc_select_report_ranges)((const acc_select_result_t *const *)res,
                                                          n, &out) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    if (!o->json && !o->coll && !o->full)
        acc_buf_puts(&out, "\n(the figures per size: --coll C for one collective, --full for "
                           "every one)\n");
    if ((rc = compile_write(NULL, &out)) != EXIT_OK || !o->plot)
        goto out;
    acc_buf_reset(&out);
    if (acc_select_report_svg((const acc_select_result_t *const *)res, n, &out) != ACC_OK) {
        rc = compile_fail(EXIT_INPUT);
        goto out;
    }
    rc = compile_write(o->plot, &out);
out:
    for (i = 0; i < ACC_COLL_COUNT; i++)
        acc_select_result_destroy(res[i]);
    acc_select_builder_destroy(b);
    acc_buf_free(&out);
    return rc;
}
