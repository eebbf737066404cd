/*
 * cuda_runtime.h as far as NCCL's headers need it, so that the drop-in's ABI check compiles
 * against a copy of nccl.h (tests/data/nccl/) without a CUDA toolkit: the two handle types
 * NCCL's API passes, as CUDA defines them, and the runtime version nccl.h tests.
 */
#ifndef ACC_CUDA_SHIM_RUNTIME_H
#define ACC_CUDA_SHIM_RUNTIME_H
#include <stddef.h>
#define CUDART_VERSION 12020
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#endif
