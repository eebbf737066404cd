/* Nothing of it is needed by nccl.h in C (see cuda_runtime.h beside it). */
