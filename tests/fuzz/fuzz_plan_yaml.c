/* Fuzz target: the plan YAML loader, then (for plans of modest size) the verifier, the dumper and
 * a second load that must give the same plan.  Any input must give a plan or an error, never a
 * crash, a hang or a leak. */
#include "acc_plan.h"

#include <stdlib.h>
#include <string.h>

/* Verification time and memory grow with ranks x lanes (vector clocks) and with the chunks the
 * operations touch; the loader's own limits allow far more than a fuzzer should spend on one
 * input. */
static int small_enough(const acc_plan_t *p)
{
    uint64_t work = 0;
    size_t t;
    if ((uint64_t)p->nranks * p->nlanes > 256 ||
        (uint64_t)p->nranks * ((uint64_t)p->in_chunks + p->out_chunks + p->scratch_chunks) >
            (1u << 16))
        return 0;
    for (t = 0; t < (size_t)p->nranks * p->nlanes; t++) {
        uint32_t i;
        for (i = 0; i < p->progs[t].nops; i++) {
            const acc_op_t *o = &p->progs[t].ops[i];
            work += (uint64_t)o->src.cnt * (1 + o->npeers) + o->dst.cnt + 1;
        }
    }
    return work <= (1u << 18);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_plan_t *p = NULL, *q = NULL;
    acc_buf_t b;

    if (acc_plan_load_yaml((const char *)data, size, "fuzz.yaml", &p) != ACC_OK)
        return 0;
    if (small_enough(p))
        (void)acc_plan_verify(p);
    acc_buf_init(&b);
    if (acc_plan_dump_yaml(p, &b) == ACC_OK) {
        if (acc_plan_load_yaml(b.data, b.len, "dump.yaml", &q) != ACC_OK || !acc_plan_equal(p, q))
            abort(); /* load(dump(p)) must be p */
        acc_plan_destroy(q);
    }
    acc_buf_free(&b);
    acc_plan_destroy(p);
    return 0;
}
