/* acc-compile's topology: loading it, and the actions on it (the summary, JSON, and exports). */
#include "compile_cli.h"

#include <string.h>
#include <sys/stat.h>

/* A value that names no file, platform or description is a mistake on the command line (2); a
 * file or description that cannot be used is unusable input (1). */
static int names_nothing(const char *src)
{
    struct stat sb;
    return src && stat(src, &sb) != 0 && !strchr(src, '=') && strcmp(src, "auto") != 0;
}

int compile_topo_load(const compile_opts_t *o, acc_topo_t **out)
{
    acc_status_t st = acc_topo_load_with_nvlinks(o->topo, o->nvlink_from, out);
    if (st == ACC_OK)
        return EXIT_OK;
    return compile_fail(st == ACC_ERR_NOT_FOUND &&
                                (names_nothing(o->topo) || names_nothing(o->nvlink_from))
                            ? EXIT_USAGE
                            : EXIT_INPUT);
}

int compile_topo_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_buf_t b;
    acc_status_t st = ACC_OK;
    int rc = EXIT_OK;

    acc_buf_init(&b);
    if (o->print_topo) {
        st = o->json ? acc_topo_summary_json(topo, &b) : acc_topo_summary(topo, &b);
        if (st == ACC_OK)
            rc = compile_write(NULL, &b);
        acc_buf_reset(&b);
    }
    if (st == ACC_OK && rc == EXIT_OK && o->export_fmt) {
        st = strcmp(o->export_fmt, "yaml") == 0 ? acc_topo_export_yaml(topo, &b)
                                                : acc_topo_export_nccl_xml(topo, &b);
        if (st == ACC_OK)
            rc = compile_write(o->output, &b);
    }
    /* --draw with a plan draws the plan (compile_plan.c). */
    if (st == ACC_OK && rc == EXIT_OK && o->draw && !o->algo && !o->verify_file &&
        !o->import_msccl) {
        acc_buf_reset(&b);
        if ((st = acc_topo_draw_svg(topo, &b)) == ACC_OK)
            rc = compile_write(o->draw, &b);
    }
    acc_buf_free(&b);
    return st != ACC_OK ? compile_fail(EXIT_INPUT) : rc;
}
