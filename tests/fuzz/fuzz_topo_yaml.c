/* Fuzz target: acc's topology YAML importer, then finalisation and the exporter on whatever it
 * accepts, and a reload of that export, which must succeed: the exporter writes only what the
 * importer reads. */
#include "acc_topo.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_topo_t *t = NULL, *back = NULL;
    acc_buf_t out;

    if (acc_topo_create(&t) != ACC_OK)
        return 0;
    acc_buf_init(&out);
    /* The name is not a file, so relative includes resolve against the working directory and
     * platform names against the platform directory, as for a buffer loaded by a program. */
    if (topo_import_yaml(t, (const char *)data, size, "<fuzz>") != ACC_OK ||
        acc_topo_finalize(t) != ACC_OK)
        goto out;
    if (acc_topo_export_yaml(t, &out) != ACC_OK)
        abort();
    if (acc_topo_load_buffer(out.data, out.len, "<fuzz-export>", &back) != ACC_OK)
        abort();
out:
    acc_topo_destroy(back);
    acc_topo_destroy(t);
    acc_buf_free(&out);
    return 0;
}
