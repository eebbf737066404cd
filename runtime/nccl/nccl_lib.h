/*
 * nccl_lib.h - the NCCL library acc falls back to and bootstraps through, opened at run time so
 * that libacc neither links NCCL nor needs its headers.  The few types and values used are
 * NCCL's ABI, stable since 2.x (nccl.h: ncclResult_t, ncclDataType_t, ncclRedOp_t,
 * ncclUniqueId).  Internal to runtime/.
 *
 * Which NCCL: the one the process would use anyway, so that a process never holds two.
 * ACC_NCCL_LIBRARY when it is set; else the next definition of NCCL's API after acc's own in the
 * dynamic linker's order (dlsym(RTLD_NEXT): the NCCL a program linked, behind a preloaded
 * drop-in); else an NCCL the process has already loaded privately (dlopen with RTLD_LOCAL, as
 * Python loads PyTorch's); else libnccl.so.2 from the library search path.  When the process
 * holds another NCCL than the one opened, one warning names both.
 */
#ifndef ACC_NCCL_LIB_H
#define ACC_NCCL_LIB_H

#include "acc_runtime.h"

#include <stdint.h>

typedef int nccl_result_t;   /* ncclResult_t: 0 success */
typedef void *nccl_comm_t;   /* ncclComm_t */
typedef void *nccl_stream_t; /* cudaStream_t */

#define NCCL_ID_BYTES 128
typedef struct {
    char internal[NCCL_ID_BYTES];
} nccl_id_t;

/* ncclDataType_t and ncclRedOp_t values. */
enum {
    NCCL_INT8 = 0,
    NCCL_INT32 = 2,
    NCCL_FLOAT16 = 6,
    NCCL_FLOAT32 = 7,
    NCCL_FLOAT64 = 8,
    NCCL_BFLOAT16 = 9
};
enum { NCCL_SUM = 0, NCCL_PROD = 1, NCCL_MAX = 2, NCCL_MIN = 3, NCCL_AVG = 4 };

typedef struct {
    void *handle;
    char path[512];
    const char *how; /* how it was found, for messages */
    int version;     /* 22809 for 2.28.9 */
    /* Where its code lies in this process: calls whose return address falls here are NCCL's
     * own (nccl_lib_is_caller). */
    uintptr_t text_lo, text_hi;
    nccl_result_t (*get_version)(int *);
    const char *(*get_error_string)(nccl_result_t);
    nccl_result_t (*get_unique_id)(nccl_id_t *);
    nccl_result_t (*comm_init_rank)(nccl_comm_t *, int, nccl_id_t, int);
    nccl_result_t (*comm_destroy)(nccl_comm_t);
    nccl_result_t (*comm_abort)(nccl_comm_t);
    nccl_result_t (*comm_count)(nccl_comm_t, int *);
    nccl_result_t (*comm_user_rank)(nccl_comm_t, int *);
    nccl_result_t (*comm_cu_device)(nccl_comm_t, int *);
    nccl_result_t (*comm_get_async_error)(nccl_comm_t, nccl_result_t *);
    nccl_result_t (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm_t, nccl_stream_t);
    nccl_result_t (*all_gather)(const void *, void *, size_t, int, nccl_comm_t, nccl_stream_t);
    nccl_result_t (*reduce_scatter)(const void *, void *, size_t, int, int, nccl_comm_t,
                                    nccl_stream_t);
    nccl_result_t (*broadcast)(const void *, void *, size_t, int, int, nccl_comm_t, nccl_stream_t);
    nccl_result_t (*reduce)(const void *, void *, size_t, int, int, int, nccl_comm_t,
                            nccl_stream_t);
    nccl_result_t (*group_start)(void);
    nccl_result_t (*group_end)(void);
    /* Optional (NULL in an NCCL without them): device memory NCCL allocates (2.19). */
    nccl_result_t (*mem_alloc)(void **, size_t);
    nccl_result_t (*mem_free)(void *);
} nccl_lib_t;

/* The library, opened once per process (later calls return the same one, or the same
 * failure); ACC_ERR_NOT_FOUND naming what was tried and how to point acc at NCCL. */
acc_status_t nccl_lib_open(const nccl_lib_t **out);
/* The library if it has been opened already, else NULL; never opens it.  Lock-free. */
const nccl_lib_t *nccl_lib_opened(void);
/* Is ret_addr (a caller's return address) inside the opened NCCL's code?  O(1), lock-free;
 * 0 before NCCL is opened. */
int nccl_lib_is_caller(const void *ret_addr);
/* Say once, as a warning, when the process holds an NCCL other than the opened one (the
 * program loaded one after acc opened its own); cheap after the first warning. */
void nccl_lib_check_single(void);
/* ACC_ERR_NCCL with NCCL's code and its text, prefixed by what was being done. */
acc_status_t nccl_fail(const nccl_lib_t *lib, nccl_result_t rc, const char *what);
/* Any other entry point of the library: pnccl<Name> where it has one, else ncclName; NULL when
 * it has neither (an older NCCL). */
void *nccl_lib_sym(const nccl_lib_t *lib, const char *name);
/* acc's data types and reductions as NCCL's (every acc type and reduction has one). */
int nccl_dtype(acc_dtype_t dt);
int nccl_redop(acc_redop_t op);
/* NCCL's as acc's: 1, or 0 where acc has none (int8, int64, fp8, PreMulSum handles, ...). */
int nccl_dtype_to_acc(int nccl_type, acc_dtype_t *out);
int nccl_redop_to_acc(int nccl_op, acc_redop_t *out);

#endif
