/* Fuzz target: the model profile loader, then the dumper and a second load that must give the
 * same text.  Any input must give a profile or an error, never a crash, a hang or a leak. */
#include "acc_tune.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_profile_t *p = NULL, *q = NULL;
    acc_buf_t a, b;

    if (acc_profile_load_yaml((const char *)data, size, "fuzz.yaml", &p) != ACC_OK)
        return 0;
    acc_buf_init(&a);
    acc_buf_init(&b);
    /* A loaded profile satisfies the invariants, so it can always be written; and what is
     * written must read back to the same text (load(dump(p)) == p). */
    if (acc_profile_dump_yaml(p, &a) != ACC_OK ||
        acc_profile_load_yaml(a.data, a.len, "dump.yaml", &q) != ACC_OK ||
        acc_profile_dump_yaml(q, &b) != ACC_OK || a.len != b.len ||
        memcmp(a.data, b.data, a.len) != 0)
        abort();
    acc_buf_free(&a);
    acc_buf_free(&b);
    acc_profile_destroy(q);
    acc_profile_destroy(p);
    return 0;
}
