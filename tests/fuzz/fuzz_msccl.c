/*
 * Fuzz target for the MSCCL algorithm XML importer.  Any bytes must be refused with a message or
 * give a verified plan; and a plan that comes out must keep three promises, each checked here
 * with a trap so that libFuzzer reports a broken one as a crash:
 *   - its MSCCL export imports back to an equal plan (or the export is refused as unsupported);
 *   - on small plans, the host executor runs it without deadlock or error (the verifier said so);
 *   - and computes what the collective's postcondition says (exact int32 sums).
 */
#include "acc_plan.h"
#include "acc_runtime.h"

#include <stdlib.h>

/* Host execution only where it stays quick: a few threads, a few elements. */
#define EXEC_MAX_THREADS 32

static void check_round_trip(const acc_plan_t *p)
{
    acc_buf_t b;
    acc_plan_t *q = NULL;
    acc_status_t st;
    acc_buf_init(&b);
    st = acc_plan_export_msccl(p, &b);
    if (st == ACC_OK) {
        if (acc_plan_import_msccl(b.data, b.len, "exported.xml", &q) != ACC_OK ||
            !acc_plan_equal(p, q))
            __builtin_trap();
        acc_plan_destroy(q);
    } else if (st != ACC_ERR_UNSUPPORTED) {
        __builtin_trap();
    }
    acc_buf_free(&b);
}

static void check_exec(const acc_plan_t *p)
{
    const uint64_t count = 5;
    uint64_t ein = acc_plan_buf_elems(p, ACC_BUF_IN, count);
    uint64_t eout = acc_plan_buf_elems(p, ACC_BUF_OUT, count), big = ein > eout ? ein : eout;
    void **in = calloc((size_t)p->nranks, sizeof(void *));
    void **out = calloc((size_t)p->nranks, sizeof(void *));
    int r, ip;

    if (!in || !out)
        goto out;
    for (r = 0; r < p->nranks; r++) {
        in[r] = malloc(big * sizeof(int32_t) + 1);
        out[r] = malloc(big * sizeof(int32_t) + 1);
        if (!in[r] || !out[r])
            goto out;
    }
    for (ip = 0; ip <= p->inplace; ip++) {
        acc_host_prepare(p, ACC_DT_I32, ACC_RED_SUM, ACC_FILL_EXACT, 5, count, in, out, ip);
        if (acc_host_exec(p, ACC_DT_I32, ACC_RED_SUM, count, ip ? NULL : in, out, ip) != ACC_OK)
            __builtin_trap();
        if (acc_host_check(p, ACC_DT_I32, ACC_RED_SUM, ACC_FILL_EXACT, 5, count, out, ip, NULL))
            __builtin_trap();
    }
out:
    for (r = 0; in && out && r < p->nranks; r++) {
        free(in[r]);
        free(out[r]);
    }
    free(in);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_plan_t *p = NULL;
    if (acc_plan_import_msccl((const char *)data, size, "fuzz.xml", &p) != ACC_OK) {
        if (p || !acc_error_message()[0])
            __builtin_trap(); /* a refusal leaves no plan and always says why */
        return 0;
    }
    check_round_trip(p);
    if ((long)p->nranks * p->nlanes <= EXEC_MAX_THREADS)
        check_exec(p);
    acc_plan_destroy(p);
    return 0;
}
