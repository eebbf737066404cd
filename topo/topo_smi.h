/*
 * topo/topo_smi.h - what the two stages of the `nvidia-smi topo -m` importer share:
 * topo_smi.c reads the text into a checked matrix of cells (with affinities, NIC names and any
 * GPU model a line names), topo_smi_model.c turns that matrix into vertices and links.
 * Private to those two files.
 */
#ifndef ACC_TOPO_SMI_H
#define ACC_TOPO_SMI_H

#include "internal.h"

#define SMI_NAME_LEN ACC_TOPO_NAME_MAX

/* Cell codes.  The PCIe levels are ordered from nearest to farthest; NV# is SMI_C_NV + #. */
enum {
    SMI_C_NONE = 0,
    SMI_C_X,
    SMI_C_PIX,
    SMI_C_PXB,
    SMI_C_PHB,
    SMI_C_NODE,
    SMI_C_SYS,
    SMI_C_NV = 16
};
#define SMI_IS_PCIE(c) ((c) >= SMI_C_PIX && (c) <= SMI_C_SYS)
#define SMI_IS_NV(c)   ((c) > SMI_C_NV)
/* The cell of row a, column b. */
#define SMI_CELL(p, a, b) ((p)->cell[(size_t)(a) * (p)->ndev + (b)])

/* Trailing (non-device) columns of the header. */
enum { SMI_T_CPU, SMI_T_NUMA, SMI_T_GPU_NUMA, SMI_T_COUNT };

/* A blank-separated word of a line, not NUL-terminated. */
typedef struct {
    const char *s;
    int n;
} smi_tok_t;

/* One import.  topo_smi.c fills everything above the model-building fields and frees it all. */
typedef struct {
    const char *file;
    char *buf;   /* the text without escape sequences; lines NUL-terminated in place */
    char **line; /* line[i] is line number i + 1 */
    int nlines;
    smi_tok_t *tok; /* tokens of the line being read */
    int ntok;
    size_t tok_cap;

    int header_line, ngpu, nnic, ndev;
    char (*col)[SMI_NAME_LEN]; /* column (device) names; GPUs first */
    int trail[SMI_T_COUNT];    /* position of each trailing column among them, -1 if absent */
    int ntrail;
    unsigned char *cell;                    /* ndev x ndev */
    int *row_line;                          /* per device; 0 while its row is missing */
    int *legend_line;                       /* per device (NICs) */
    int *numa_val;                          /* per GPU, -1 for N/A */
    char (*cpu_aff)[ACC_TOPO_AFFINITY_MAX]; /* per GPU; "" for N/A */
    char (*dev)[SMI_NAME_LEN];              /* NIC device names */
    int last_line;                          /* last non-blank line read */
    int aff_long;                           /* 1 + a GPU whose CPU Affinity did not fit */

    const acc_gpu_model_t *named; /* a GPU model named on some line */
    int named_line;
    char named_text[100];

    /* Model building: per device, its CPU group and PCIe groups (union-find roots).  Allocated
     * with the matrix, filled by topo_smi_build(). */
    int *grp, *hb, *pxb, *pix, ngrp;
} smi_t;

/* Set an ACC_ERR_PARSE error "file:line: message" and return it (topo_smi.c). */
acc_status_t topo_smi_error(const smi_t *p, int line, const char *fmt, ...) ACC_PRINTF(3, 4);
acc_status_t topo_smi_nomem(void);
/* A cell as nvidia-smi prints it ("PXB", "NV12"); buf holds NV# names. */
const char *topo_smi_cell_str(int c, char buf[8]);

/* Fill t from a checked matrix: CPUs, GPUs, NICs, NVLinks and a PCIe tree that reproduces the
 * matrix, each assumed fact recorded (topo_smi_model.c). */
acc_status_t topo_smi_build(smi_t *p, acc_topo_t *t);

#endif
