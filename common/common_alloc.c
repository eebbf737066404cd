/* Allocation wrappers, the growable text buffer, and whole-file reads and atomic writes. */
#include "acc_common.h"
#include "common_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Without a memory budget the wrappers are the C library's calls; with one (common_memory.c)
 * every allocation is counted, and one that would pass it fails as if memory had run out. */
void *acc_mem_alloc(size_t size)
{
    size_t n = size ? size : 1;
    void *p;

    if (!acc_mem_budget())
        return malloc(n);
    if (!common_mem_reserve(n))
        return NULL;
    p = malloc(n);
    common_mem_account(p, n);
    return p;
}

void *acc_mem_calloc(size_t count, size_t size)
{
    size_t n;
    void *p;

    if (!acc_mem_budget())
        return calloc(count ? count : 1, size ? size : 1);
    if (size && count > SIZE_MAX / size)
        return NULL;
    n = (count && size) ? count * size : 1;
    if (!common_mem_reserve(n))
        return NULL;
    p = calloc(1, n);
    common_mem_account(p, n);
    return p;
}

void *acc_mem_realloc_array(void *ptr, size_t count, size_t size)
{
    size_t n, old;
    void *p;

    if (size && count > SIZE_MAX / size)
        return NULL;
    n = (count && size) ? count * size : 1;
    if (!acc_mem_budget())
        return realloc(ptr, n);
    old = ptr ? malloc_usable_size(ptr) : 0;
    /* The new block is counted whole while the old one still is: realloc may need both. */
    if (!common_mem_reserve(n))
        return NULL;
    p = realloc(ptr, n);
    common_mem_account(p, n);
    if (p)
        common_mem_release(old);
    return p;
}

char *acc_mem_strdup(const char *s)
{
    return s ? acc_mem_strndup(s, strlen(s)) : NULL;
}

char *acc_mem_strndup(const char *s, size_t n)
{
    char *d;
    if (!s)
        return NULL;
    d = acc_mem_alloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void acc_mem_free(void *ptr)
{
    if (ptr && acc_mem_budget())
        common_mem_release(malloc_usable_size(ptr));
    free(ptr);
}

acc_status_t acc_array_reserve(void **array, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;

    if (need <= *cap)
        return ACC_OK;
    ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return ACC_ERR_NOMEM;
        ncap *= 2;
    }
    p = acc_mem_realloc_array(*array, ncap, elem);
    if (!p)
        return ACC_ERR_NOMEM;
    *array = p;
    *cap = ncap;
    return ACC_OK;
}

void acc_buf_init(acc_buf_t *b)
{
    memset(b, 0, sizeof(*b));
}

void acc_buf_free(acc_buf_t *b)
{
    acc_mem_free(b->data);
    acc_buf_init(b);
}

void acc_buf_reset(acc_buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int buf_room(acc_buf_t *b, size_t extra)
{
    void *p = b->data;
    if (b->failed)
        return 0;
    if (acc_array_reserve(&p, &b->cap, b->len + extra + 1, 1) != ACC_OK) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    return 1;
}

void acc_buf_append(acc_buf_t *b, const char *s, size_t n)
{
    if (!buf_room(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void acc_buf_puts(acc_buf_t *b, const char *s)
{
    acc_buf_append(b, s, strlen(s));
}

void acc_buf_vprintf(acc_buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;

    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if (!buf_room(b, (size_t)n))
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void acc_buf_printf(acc_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

acc_status_t acc_buf_status(const acc_buf_t *b)
{
    return b->failed ? acc_error_set(ACC_ERR_NOMEM, "out of memory while building text")
                     : ACC_OK;
}

char *acc_buf_take(acc_buf_t *b)
{
    char *s;
    if (b->failed) {
        acc_buf_free(b);
        return NULL;
    }
    if (!b->data) {
        if (!buf_room(b, 0))
            return NULL;
        b->data[0] = '\0'; /* an empty buffer is an empty string too */
    }
    s = b->data;
    acc_buf_init(b);
    return s;
}

acc_status_t acc_read_file(const char *path, char **out, size_t *len)
{
    FILE *f;
    acc_buf_t b;
    char chunk[65536];
    size_t n;
    acc_status_t st = ACC_OK;

    f = fopen(path, "rb");
    if (!f)
        return acc_error_set(errno == ENOENT ? ACC_ERR_NOT_FOUND : ACC_ERR_IO,
                             "cannot open '%s': %s", path, strerror(errno));
    acc_buf_init(&b);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        acc_buf_append(&b, chunk, n);
    if (ferror(f))
        st = acc_error_set(ACC_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    fclose(f);
    if (st == ACC_OK && b.failed)
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory reading '%s'", path);
    if (st != ACC_OK) {
        acc_buf_free(&b);
        return st;
    }
    if (len)
        *len = b.len;
    *out = acc_buf_take(&b);
    if (!*out)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading '%s'", path);
    return ACC_OK;
}

/* Write data to an open stream and close it; errors name path. */
static acc_status_t write_and_close(FILE *f, const char *path, const void *data, size_t len)
{
    int failed = (len && fwrite(data, 1, len, f) != len) || fflush(f) != 0;
    int err = errno;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (failed)
        return acc_error_set(ACC_ERR_IO, "cannot write '%s': %s", path, strerror(err));
    return ACC_OK;
}

acc_status_t acc_write_file(const char *path, const void *data, size_t len)
{
    acc_buf_t tmp;
    struct stat sb;
    char *real = NULL;
    FILE *f = NULL;
    acc_status_t st = ACC_OK;

    /* What is not a regular file (a device such as /dev/null or /dev/full, a named pipe) is
     * written in place: renaming over it would replace it.  A directory fails to open. */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (!(f = fopen(path, "wb")))
            return acc_error_set(ACC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return write_and_close(f, path, data, len);
    }
    /* Through a symbolic link, the file it names is replaced, not the link. */
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) && (real = realpath(path, NULL)) != NULL)
        path = real;
    /* A whole new file beside the old one, renamed over it once complete: a failure or a kill
     * half way never leaves a partial file under the name. */
    acc_buf_init(&tmp);
    acc_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    if (tmp.failed) {
        st = acc_error_set(ACC_ERR_NOMEM, "out of memory writing '%s'", path);
        goto out;
    }
    if (!(f = fopen(tmp.data, "wb"))) {
        st = acc_error_set(ACC_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
        goto out;
    }
    if ((st = write_and_close(f, path, data, len)) != ACC_OK) {
        remove(tmp.data);
        goto out;
    }
    if (rename(tmp.data, path) != 0) {
        st = acc_error_set(ACC_ERR_IO, "cannot replace '%s': %s", path, strerror(errno));
        remove(tmp.data);
    }
out:
    acc_buf_free(&tmp);
    free(real);
    return st;
}
