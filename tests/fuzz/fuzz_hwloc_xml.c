/* Fuzz target: hwloc XML import (the libxml2 checks, hwloc's own reader, the conversion).  Any
 * bytes must give ACC_OK or an error with a message, never a crash, hang or leak; what imports
 * must also finalize or fail cleanly, and a finalized model must fingerprint.
 * Seeds: tests/fuzz/corpus/hwloc_xml, small hand-cut captures (an NVSwitch machine, POWER8
 * NVLinks to the CPU, a T4 with EFA and ENA). */
#include "internal.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acc_topo_t *t = NULL;
    char fp[ACC_SHA256_HEX_LEN + 1];
    acc_status_t st;

    if (acc_topo_create(&t) != ACC_OK)
        return 0;
    st = topo_import_hwloc_xml(t, (const char *)data, size, "fuzz.xml");
    if (st == ACC_OK && acc_topo_finalize(t) == ACC_OK)
        (void)acc_topo_fingerprint(t, fp);
    if (st != ACC_OK && !acc_error_message()[0])
        __builtin_trap(); /* every failure must say why */
    acc_topo_destroy(t);
    return 0;
}
