/* Fuzz target: NCCL topology XML import.  Any bytes must give ACC_OK or an error with a message,
 * never a crash, hang or leak; what imports must also finalize or fail cleanly, and a model that
 * finalizes must export. */
#include "internal.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_topo_t *t = NULL;
    acc_buf_t out;

    if (acc_topo_create(&t) != ACC_OK)
        return 0;
    acc_buf_init(&out);
    if (topo_import_nccl_xml(t, (const char *)data, size, "fuzz.xml") == ACC_OK &&
        acc_topo_finalize(t) == ACC_OK)
        (void)acc_topo_export_nccl_xml(t, &out);
    acc_buf_free(&out);
    acc_topo_destroy(t);
    return 0;
}
