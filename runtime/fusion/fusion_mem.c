/*
 * The fusion engine's memory on the host backend: buffers in host memory, their bytes moved
 * by the CPU of the calling thread, so every call has done its work when it returns and there
 * is nothing to queue, wait for or prepare.  fusion_device.c is the same on a GPU.
 */
#include "fusion_internal.h"

#include <string.h>

static acc_status_t host_open(acc_fusion_t *f)
{
    f->dev = NULL;
    f->q = NULL;
    return ACC_OK;
}

static void host_close(acc_fusion_t *f)
{
    (void)f;
}

static acc_status_t host_prepare(acc_fusion_t *f)
{
    (void)f;
    return ACC_OK;
}

static acc_status_t host_enter(const acc_fusion_t *f)
{
    (void)f;
    return ACC_OK;
}

static acc_status_t host_queue_create(acc_cuda_stream_t *q)
{
    *q = NULL;
    return ACC_OK;
}

static void host_queue_destroy(acc_cuda_stream_t q)
{
    (void)q;
}

/* Zeroed pages the kernel maps when first touched: a replayed model's gradients cost
 * nothing until used. */
static acc_status_t host_alloc(size_t bytes, void **out)
{
    if (!(*out = acc_mem_calloc(bytes ? bytes : 1, 1)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    return ACC_OK;
}

static void host_free(void *p)
{
    acc_mem_free(p);
}

static acc_status_t host_zero(void *dst, size_t bytes, acc_cuda_stream_t q)
{
    (void)q;
    memset(dst, 0, bytes);
    return ACC_OK;
}

static acc_status_t host_convert(const acc_fusion_t *f, void *dst, acc_dtype_t to, const void *src,
                                 acc_dtype_t from, uint64_t n, double scale, acc_cuda_stream_t q)
{
    (void)f;
    (void)q;
    return acc_host_convert(dst, to, src, from, (size_t)n, scale);
}

static acc_status_t host_sync(acc_cuda_stream_t q)
{
    (void)q;
    return ACC_OK;
}

const fu_mem_t fu_host_mem = {
    .open = host_open,
    .close = host_close,
    .prepare = host_prepare,
    .enter = host_enter,
    .queue_create = host_queue_create,
    .queue_destroy = host_queue_destroy,
    .alloc = host_alloc,
    .free = host_free,
    .zero = host_zero,
    .convert = host_convert,
    .sync = host_sync,
};
