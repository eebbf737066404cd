/*
 * class_forms.h - what the tests of plans by rank class share: the generators with a class
 * form, the arguments each class form covers, and loading a topology.  Header-only: each test
 * program that includes it gets its own static copy.
 */
#ifndef CLASS_FORMS_H
#define CLASS_FORMS_H

#include "acc_compiler.h"
#include "acc_test.h"
#include "algos/algo_util.h"

#include <string.h>

static inline acc_topo_t *cf_load(const char *src)
{
    acc_topo_t *t = NULL;
    CHECK_MSG(acc_topo_load(src, &t) == ACC_OK, "%s: %s", src, acc_error_message());
    return t;
}

static const algo_class_form_t *const cf_forms[] = {
    &algo_allreduce_ring_class,
    &algo_allgather_ring_class,
    &algo_reduce_scatter_ring_class,
    &algo_allreduce_hier_class,
};
#define CF_NFORMS (sizeof(cf_forms) / sizeof(cf_forms[0]))

/* The arguments the class form of cf_forms[f] covers: hier's with rings inside and between
 * nodes. */
static inline acc_algo_args_t cf_args(size_t f, int lanes, int chunks)
{
    acc_algo_args_t args;
    memset(&args, 0, sizeof(args));
    args.lanes = lanes;
    args.chunks = chunks;
    if (cf_forms[f] == &algo_allreduce_hier_class)
        args.inner = args.outer = "ring";
    return args;
}

#endif /* CLASS_FORMS_H */
