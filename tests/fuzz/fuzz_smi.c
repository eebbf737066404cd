/* Fuzz target for the `nvidia-smi topo -m` importer: any bytes give ACC_OK or an error with a
 * message, never a crash, hang or leak, and every matrix the importer accepts must also pass
 * acc_topo_finalize() (a graph it builds is always valid). */
#include "acc_topo.h"
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_topo_t *t;
    acc_status_t st;
    char fp[ACC_SHA256_HEX_LEN + 1];

    if (acc_topo_create(&t) != ACC_OK)
        return 0;
    st = topo_import_nvidia_smi(t, (const char *)data, size, "fuzz.txt");
    if (st != ACC_OK && !acc_error_message()[0])
        abort(); /* an error without a message */
    if (st == ACC_OK) {
        if (acc_topo_finalize(t) != ACC_OK || acc_topo_fingerprint(t, fp) != ACC_OK)
            abort(); /* the importer built a graph the model rejects */
    }
    acc_topo_destroy(t);
    return 0;
}
