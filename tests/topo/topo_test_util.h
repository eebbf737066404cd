/* Helpers shared by the importers' tests. */
#ifndef TOPO_TEST_UTIL_H
#define TOPO_TEST_UTIL_H

#include "acc_test.h"
#include "acc_topo.h"
#include "internal.h"

typedef acc_status_t (*tt_importer_t)(acc_topo_t *t, const char *text, size_t len,
                                      const char *name);

/* Import text with fn and finalize, as acc_topo_load_buffer does; *out is NULL on failure and
 * the status says which step failed. */
static inline acc_status_t tt_import(tt_importer_t fn, const char *text, size_t len,
                                     const char *name, acc_topo_t **out)
{
    acc_topo_t *t = NULL;
    acc_status_t st;

    *out = NULL;
    CHECK_OK(acc_topo_create(&t));
    st = fn(t, text, len, name);
    if (st == ACC_OK)
        st = acc_topo_finalize(t);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

/* Whether an assumption of t holds the fragment a (and b, when given). */
static inline int tt_assumed(const acc_topo_t *t, const char *a, const char *b)
{
    int i;
    for (i = 0; i < acc_topo_assumption_count(t); i++) {
        const char *s = acc_topo_assumption(t, i);
        if (strstr(s, a) && (!b || strstr(s, b)))
            return 1;
    }
    return 0;
}

static inline const acc_topo_vertex_t *tt_gpu(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, id));
}

static inline const acc_topo_vertex_t *tt_nic(const acc_topo_t *t, int id)
{
    return acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_NIC, id));
}

#endif /* TOPO_TEST_UTIL_H */
