/* Fuzz target: the synthetic topology parser.  Any bytes either build a topology (which is
 * then finalized and exported) or are refused with a message. */
#include "acc_topo.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *desc;
    acc_topo_t *t = NULL;
    acc_buf_t out;

    if (size > 4096)
        return 0; /* a description is one line */
    desc = acc_mem_strndup((const char *)data, size);
    if (!desc)
        return 0;
    acc_buf_init(&out);
    if (acc_topo_load_synthetic(desc, &t) == ACC_OK) {
        if (acc_topo_export_yaml(t, &out) != ACC_OK)
            abort();
    } else if (!acc_error_message()[0]) {
        abort();
    }
    acc_topo_destroy(t);
    acc_buf_free(&out);
    acc_mem_free(desc);
    return 0;
}
