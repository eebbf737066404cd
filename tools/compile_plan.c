/* acc-compile's plan actions: listing algorithms, generating, verifying, importing and
 * exporting plans.  Every plan printed or written has passed the verifier. */
#include "compile_cli.h"

#include "acc_cost.h"

#include <stdio.h>
#include <string.h>

int compile_list_algos(const acc_topo_t *topo)
{
    size_t n, i;
    const acc_algo_t *const *algos = acc_algo_list(&n);
    acc_algo_args_t args;

    memset(&args, 0, sizeof(args));
    printf("Algorithms for %s (%d ranks)\n",
           acc_topo_name(topo)[0] ? acc_topo_name(topo) : acc_topo_source(topo),
           acc_topo_ranks(topo));
    for (i = 0; i < n; i++) {
        const acc_algo_t *a = algos[i];
        acc_status_t st = a->supports(topo, &args);
        printf("  %-15s %-10s %-4s %s\n", acc_coll_name(a->coll), a->name,
               st == ACC_OK ? "yes" : "no", st == ACC_OK ? a->summary : acc_error_message());
    }
    return EXIT_OK;
}

int compile_obtain_plan(const compile_opts_t *o, const acc_topo_t *topo, acc_plan_t **plan)
{
    acc_coll_t coll;
    const acc_algo_t *algo;

    *plan = NULL;
    if (o->verify_file) {
        if (acc_plan_load_file(o->verify_file, plan) != ACC_OK)
            return compile_fail(EXIT_INPUT);
        if (acc_plan_verify(*plan) != ACC_OK) {
            acc_error_prefix(ACC_ERR_VERIFY, "%s: ", o->verify_file);
            acc_plan_destroy(*plan);
            *plan = NULL;
            return compile_fail(EXIT_INPUT);
        }
        return EXIT_OK;
    }
    /* The importer verifies: a file it returns is proven correct. */
    if (o->import_msccl)
        return acc_plan_import_msccl_file(o->import_msccl, plan) == ACC_OK
                   ? EXIT_OK
                   : compile_fail(EXIT_INPUT);
    if (acc_coll_parse(o->coll, &coll) != ACC_OK || !(algo = acc_algo_find(coll, o->algo)))
        return compile_fail(EXIT_USAGE);
    if (acc_algo_generate(algo, topo, &o->args, plan) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    return EXIT_OK;
}

/* The line that says which plan was generated and that it verified. */
static void describe_generated(const compile_opts_t *o, const acc_topo_t *topo, acc_coll_t coll,
                               int nranks, int nlanes, uint64_t ops, int inplace,
                               const char *params)
{
    printf("%s %s on %s: %d ranks, %d lanes%s, %llu operations, verified%s (%s)\n",
           acc_coll_name(coll), o->algo, acc_topo_source(topo), nranks, nlanes,
           o->args.lanes ? ""
                         : " (the generator's default; --lanes N for others: --report "
                           "shows the lanes acc picks per size)",
           (unsigned long long)ops, inplace ? ", in place too" : "", params);
}

/* The line that says where the plan came from and that it verified. */
static void describe(const compile_opts_t *o, const acc_topo_t *topo, const acc_plan_t *p)
{
    if (o->verify_file)
        printf("%s: verified: %s, %d ranks, %d lanes, %zu operations%s\n", o->verify_file,
               acc_coll_name(p->coll), p->nranks, p->nlanes, acc_plan_op_count(p),
               p->inplace ? ", in place too" : "");
    else if (o->import_msccl)
        printf("%s: imported and verified: %s, %d ranks, %d lanes, %zu operations\n",
               o->import_msccl, acc_coll_name(p->coll), p->nranks, p->nlanes, acc_plan_op_count(p));
    else if (!o->emit_plan || strcmp(o->emit_plan, "-") != 0)
        describe_generated(o, topo, p->coll, p->nranks, p->nlanes, acc_plan_op_count(p), p->inplace,
                           p->params);
    if (o->emit_plan && strcmp(o->emit_plan, "-") != 0)
        printf("plan written to %s\n", o->emit_plan);
    if (o->export_msccl && strcmp(o->export_msccl, "-") != 0)
        printf("MSCCL XML written to %s\n", o->export_msccl);
}

/* A generated plan that nothing needs in explicit form (no file, no picture) is made and proven
 * by class where its generator has a class form: that is what lets 8,192 and 131,072 ranks
 * through, whose explicit plans would not fit in memory.  *done is 0 when the plan takes the
 * explicit path instead. */
static int class_actions(const compile_opts_t *o, const acc_topo_t *topo, int *done)
{
    acc_coll_t coll;
    const acc_algo_t *algo;
    acc_cplan_t *cp = NULL;
    acc_cplan_proof_t proof;

    *done = 0;
    if (o->verify_file || o->import_msccl || o->emit_plan || o->export_msccl || o->draw ||
        acc_coll_parse(o->coll, &coll) != ACC_OK || !(algo = acc_algo_find(coll, o->algo)) ||
        algo->supports(topo, &o->args) != ACC_OK || !acc_algo_has_class(algo, topo, &o->args))
        return EXIT_OK;
    *done = 1;
    if (acc_algo_generate_class(algo, topo, &o->args, &cp, &proof) != ACC_OK)
        return compile_fail(EXIT_INPUT);
    describe_generated(o, topo, cp->coll, cp->nranks, cp->nlanes, acc_cplan_op_count(cp),
                       cp->inplace, cp->params);
    acc_cplan_destroy(cp);
    return EXIT_OK;
}

int compile_plan_actions(const compile_opts_t *o, const acc_topo_t *topo)
{
    acc_plan_t *plan = NULL;
    acc_buf_t b;
    int done, rc = class_actions(o, topo, &done);

    if (done)
        return rc;
    if ((rc = compile_obtain_plan(o, topo, &plan)) != EXIT_OK)
        return rc;
    /* The outputs first: a line that says the plan verified must not come before the error that
     * it was not written. */
    acc_buf_init(&b);
    if (o->emit_plan) {
        if (acc_plan_dump_yaml(plan, &b) != ACC_OK)
            rc = compile_fail(EXIT_INPUT);
        else
            rc = compile_write(o->emit_plan, &b);
        acc_buf_reset(&b);
    }
    if (rc == EXIT_OK && o->export_msccl) {
        if (acc_plan_export_msccl(plan, &b) != ACC_OK)
            rc = compile_fail(EXIT_INPUT);
        else
            rc = compile_write(o->export_msccl, &b);
    }
    if (rc == EXIT_OK && o->draw) {
        /* The timeline of 64 MiB: large enough that lanes and links, not latency, shape it. */
        acc_buf_reset(&b);
        if (acc_plan_draw_svg(plan, topo, (uint64_t)64 << 20, &b) != ACC_OK)
            rc = compile_fail(EXIT_INPUT);
        else
            rc = compile_write(o->draw, &b);
    }
    if (rc == EXIT_OK)
        describe(o, topo, plan);
    acc_buf_free(&b);
    acc_plan_destroy(plan);
    return rc;
}
