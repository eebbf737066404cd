/*
 * topo_yaml.h - what the YAML importer's files share (topo_yaml.c, topo_yaml_nics.c).
 */
#ifndef ACC_TOPO_YAML_H
#define ACC_TOPO_YAML_H

#include "acc_yaml.h"
#include "internal.h"

/* The GPUs' `nics: N` of the node mapping `node` of d, read after its links: each declared count
 * must be the number of NICs the node's tree gives that GPU (acc_topo_gpu_nics), else an error
 * naming the file and line.  t is the node built so far, not finalized. */
acc_status_t topo_yaml_gpu_nics(acc_topo_t *t, acc_yaml_doc_t *d, acc_yaml_node_t *node);

#endif
