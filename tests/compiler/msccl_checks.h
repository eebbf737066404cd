/*
 * msccl_checks.h - what every plan imported from MSCCL XML must do, shared by the MSCCL tests:
 * compute the collective on the host executor, and come back unchanged through
 * export -> import; and edit a fixture in one place.  Header-only: each test program that includes
 * it gets its own static copy.
 */
#ifndef MSCCL_CHECKS_H
#define MSCCL_CHECKS_H

#include "acc_plan.h"
#include "acc_runtime.h"
#include "acc_test.h"

#include <stdlib.h>

typedef struct {
    acc_dtype_t dt;
    acc_redop_t op;
    acc_fill_t mode;
} msccl_case_t;

/* A copy of text with the first `from` replaced by `to`; *line (optional) gets the line it was
 * on. */
static inline char *edit(const char *text, const char *from, const char *to, int *line)
{
    const char *at = strstr(text, from), *p;
    size_t n = strlen(text), fl = strlen(from), tl = strlen(to);
    char *out;
    CHECK_MSG(at != NULL, "fixture lacks \"%s\"", from);
    if (line)
        for (*line = 1, p = text; p < at; p++)
            *line += *p == '\n';
    out = malloc(n - fl + tl + 1);
    CHECK(out != NULL);
    memcpy(out, text, (size_t)(at - text));
    memcpy(out + (at - text), to, tl);
    memcpy(out + (at - text) + tl, at + fl, n - (size_t)(at - text) - fl + 1);
    return out;
}

/* Run the plan on the host for each case and count, in both buffer modes where it has both, and
 * check every output element. */
static inline void run_cases(const acc_plan_t *p, const msccl_case_t *cases, size_t ncases,
                             const uint64_t *counts, size_t ncounts)
{
    void **in = calloc((size_t)p->nranks, sizeof(void *));
    void **out = calloc((size_t)p->nranks, sizeof(void *));
    size_t c, k;
    int ip, r;

    CHECK(in && out);
    for (c = 0; c < ncases; c++)
        for (k = 0; k < ncounts; k++)
            for (ip = 0; ip <= p->inplace; ip++) {
                size_t es = acc_dtype_size(cases[c].dt);
                uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, counts[k]);
                uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, counts[k]), wrong;
                for (r = 0; r < p->nranks; r++) {
                    in[r] = ip ? NULL : malloc(ein * es + 1);
                    out[r] = malloc((ein > eout ? ein : eout) * es + 1);
                }
                acc_host_prepare(p, cases[c].dt, cases[c].op, cases[c].mode, 11, counts[k], in, out,
                                 ip);
                CHECK_OK(acc_host_exec(p, cases[c].dt, cases[c].op, counts[k], in, out, ip));
                wrong = acc_host_check(p, cases[c].dt, cases[c].op, cases[c].mode, 11, counts[k],
                                       out, ip, NULL);
                CHECK_MSG(wrong == 0, "%s: %llu wrong elements, %s %s count %llu %s", p->params,
                          (unsigned long long)wrong, acc_dtype_name(cases[c].dt),
                          acc_redop_name(cases[c].op), (unsigned long long)counts[k],
                          ip ? "in place" : "out of place");
                for (r = 0; r < p->nranks; r++) {
                    free(in[r]);
                    free(out[r]);
                }
            }
    free(in);
    free(out);
}

/* A few types and reductions, every kind of count (none, fewer elements than chunks, odd). */
static inline void run_plan(const acc_plan_t *p)
{
    static const msccl_case_t cases[] = {
        {ACC_DT_F32, ACC_RED_SUM, ACC_FILL_EXACT},   {ACC_DT_F16, ACC_RED_MAX, ACC_FILL_EXACT},
        {ACC_DT_BF16, ACC_RED_SUM, ACC_FILL_RANDOM}, {ACC_DT_F64, ACC_RED_AVG, ACC_FILL_RANDOM},
        {ACC_DT_I32, ACC_RED_PROD, ACC_FILL_EXACT},  {ACC_DT_F32, ACC_RED_MIN, ACC_FILL_EXACT},
    };
    static const uint64_t counts[] = {0, 1, 7, 1000, 4099};
    run_cases(p, cases, sizeof(cases) / sizeof(cases[0]), counts,
              sizeof(counts) / sizeof(counts[0]));
}

/* export -> import is the identity, and exporting again gives the same text. */
static inline void round_trip(const acc_plan_t *p)
{
    acc_buf_t a, b;
    acc_plan_t *q = NULL;
    acc_buf_init(&a);
    acc_buf_init(&b);
    CHECK_OK(acc_plan_export_msccl(p, &a));
    CHECK_OK(acc_plan_import_msccl(a.data, a.len, "exported.xml", &q));
    CHECK_MSG(acc_plan_equal(p, q), "import(export(plan)) differs from the plan %s", p->algo);
    CHECK_OK(acc_plan_export_msccl(q, &b));
    CHECK_STR(a.data, b.data);
    acc_plan_destroy(q);
    acc_buf_free(&a);
    acc_buf_free(&b);
}

#endif
