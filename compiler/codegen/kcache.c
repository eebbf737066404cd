/*
 * The kernel cache: CUBINs by a SHA-256 key over everything that decides the bytes NVRTC
 * produces - the generated source (which names the code generator's version on its first
 * line), NVRTC's options, the architecture and NVRTC's version - first in memory, then in a
 * directory, else compiled (CuPy and PyTorch cache the same way; reference/05 §3.5).
 *
 * A file is <dir>/<key>.cubin: a short text header (magic, key, payload size, payload
 * SHA-256) and the CUBIN.  A file whose header, size or digest does not match is ignored and
 * rewritten: a torn write, a foreign file or a flipped bit costs a compile, never a wrong
 * kernel.  Files are written to a temporary name and renamed, so readers never see half a
 * file.  The directory must belong to the user and be writable by nobody else, since what it
 * holds runs on the GPU.
 */
#include "acc_kernels.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "acc-cubin 1\n"

typedef struct entry {
    char key[ACC_SHA256_HEX_LEN + 1];
    void *cubin;
    size_t size;
    struct entry *next;
} entry_t;

struct acc_kcache {
    char *dir; /* "" for memory only */
    entry_t **table;
    size_t cap, n;
    acc_kcache_stats_t stats;
};

/* The key of source compiled with options (a linked module: its whole source and the options
 * of its parts, marked as linked) for arch. */
static acc_status_t key_of(const char *source, const char *kind, const char *options,
                           const char *arch, char hex[ACC_SHA256_HEX_LEN + 1])
{
    acc_sha256_t *h = NULL;
    uint8_t digest[ACC_SHA256_LEN];
    char version[32];
    int major = 0, minor = 0;
    acc_status_t st;

    if (acc_nvrtc_available() && acc_nvrtc_version(&major, &minor) != ACC_OK)
        return acc_error_prefix(ACC_ERR_NVRTC, "kernel cache key: ");
    snprintf(version, sizeof(version), "nvrtc %d.%d", major, minor);
    if ((st = acc_sha256_create(&h)) != ACC_OK)
        return st;
    /* Fields separated by NULs, which none of them contains. */
    acc_sha256_update(h, "acc-kcache-1", 13);
    acc_sha256_update(h, kind, strlen(kind) + 1);
    acc_sha256_update(h, source, strlen(source) + 1);
    acc_sha256_update(h, options, strlen(options) + 1);
    acc_sha256_update(h, arch, strlen(arch) + 1);
    acc_sha256_update(h, version, strlen(version) + 1);
    st = acc_sha256_final(h, digest);
    acc_sha256_destroy(h);
    if (st == ACC_OK)
        acc_hex_encode(digest, ACC_SHA256_LEN, hex);
    return st;
}

acc_status_t acc_kcache_key(const char *source, const char *arch, char hex[ACC_SHA256_HEX_LEN + 1])
{
    return key_of(source, "program", acc_nvrtc_options(0), arch, hex);
}

/* ---- the directory ---------------------------------------------------------------------- */

/* mkdir -p, new directories private to the user. */
static acc_status_t make_dirs(const char *dir)
{
    char *path = acc_mem_strdup(dir), *p;
    acc_status_t st = ACC_OK;
    if (!path)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                st = acc_error_set(ACC_ERR_IO, "kernel cache: cannot create '%s': %s", path,
                                   strerror(errno));
                break;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    acc_mem_free(path);
    return st;
}

static acc_status_t check_dir(const char *dir)
{
    struct stat sb;
    acc_status_t st = make_dirs(dir);
    if (st != ACC_OK)
        return st;
    if (stat(dir, &sb) != 0)
        return acc_error_set(ACC_ERR_IO, "kernel cache: cannot use '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return acc_error_set(ACC_ERR_IO, "kernel cache: '%s' is not a directory", dir);
    if (sb.st_uid != geteuid())
        return acc_error_set(ACC_ERR_IO,
                             "kernel cache: '%s' belongs to user %ld, not to you (%ld); kernels "
                             "from it would run on your GPU, so it is not used: set "
                             "ACC_CACHE_DIR to a directory of your own",
                             dir, (long)sb.st_uid, (long)geteuid());
    if (sb.st_mode & (S_IWGRP | S_IWOTH))
        return acc_error_set(ACC_ERR_IO,
                             "kernel cache: '%s' is writable by others (mode %03o); kernels "
                             "from it would run on your GPU, so it is not used: chmod go-w it",
                             dir, (unsigned)(sb.st_mode & 0777));
    if (access(dir, W_OK | X_OK) != 0)
        return acc_error_set(ACC_ERR_IO, "kernel cache: cannot write into '%s': %s", dir,
                             strerror(errno));
    return ACC_OK;
}

static char *file_of(const acc_kcache_t *c, const char *key)
{
    acc_buf_t b;
    acc_buf_init(&b);
    acc_buf_printf(&b, "%s/%s.cubin", c->dir, key);
    if (acc_buf_status(&b) != ACC_OK) {
        acc_buf_free(&b);
        return NULL;
    }
    return acc_buf_take(&b);
}

/* Read the CUBIN of key from the directory: 1 found, 0 absent or unusable (then rewritten). */
static int disk_read(acc_kcache_t *c, const char *key, void **cubin, size_t *size)
{
    char *path = file_of(c, key), *text = NULL, *p, want_key[ACC_SHA256_HEX_LEN + 1];
    char digest[ACC_SHA256_HEX_LEN + 1], have[ACC_SHA256_HEX_LEN + 1];
    size_t len = 0, hdr;
    unsigned long long n = 0;
    int ok = 0;

    if (!path || access(path, F_OK) != 0)
        goto out;
    if (acc_read_file(path, &text, &len) != ACC_OK)
        goto bad;
    p = strstr(text, "\n\n");
    if (strncmp(text, MAGIC, strlen(MAGIC)) != 0 || !p ||
        sscanf(text + strlen(MAGIC), "key %64s\nsize %llu\nsha256 %64s\n", want_key, &n, digest) !=
            3)
        goto bad;
    hdr = (size_t)(p + 2 - text);
    if (strcmp(want_key, key) != 0 || n != len - hdr || n == 0)
        goto bad;
    if (acc_sha256_hex(text + hdr, (size_t)n, have) != ACC_OK || strcmp(have, digest) != 0)
        goto bad;
    if (!(*cubin = acc_mem_alloc((size_t)n)))
        goto out;
    memcpy(*cubin, text + hdr, (size_t)n);
    *size = (size_t)n;
    ok = 1;
    goto out;
bad:
    c->stats.disk_errors++;
    ACC_WARN(COMPILER, "kernel cache: ignoring '%s' (damaged or not an acc CUBIN); recompiling",
             path);
out:
    acc_mem_free(text);
    acc_mem_free(path);
    return ok;
}

static void disk_write(acc_kcache_t *c, const char *key, const void *cubin, size_t size)
{
    char *path = file_of(c, key), digest[ACC_SHA256_HEX_LEN + 1];
    acc_buf_t b;

    acc_buf_init(&b);
    if (!path || acc_sha256_hex(cubin, size, digest) != ACC_OK)
        goto out;
    acc_buf_printf(&b, MAGIC "key %s\nsize %zu\nsha256 %s\n\n", key, size, digest);
    acc_buf_append(&b, cubin, size);
    if (acc_buf_status(&b) != ACC_OK || acc_write_file(path, b.data, b.len) != ACC_OK) {
        /* The cache is an optimisation: a full disk costs compiles, not correctness. */
        c->stats.disk_errors++;
        ACC_WARN(COMPILER, "kernel cache: %s", acc_error_message());
    }
out:
    acc_buf_free(&b);
    acc_mem_free(path);
}

/* ---- memory ------------------------------------------------------------------------------ */

static entry_t *mem_find(const acc_kcache_t *c, const char *key)
{
    entry_t *e = c->table[acc_fnv1a64(key, ACC_SHA256_HEX_LEN) & (c->cap - 1)];
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    return e;
}

static acc_status_t mem_add(acc_kcache_t *c, const char *key, void *cubin, size_t size)
{
    entry_t *e;
    size_t i;
    if (c->n + 1 > c->cap) {
        size_t cap = c->cap * 2;
        entry_t **t = acc_mem_calloc(cap, sizeof(entry_t *));
        if (!t)
            return acc_error_set(ACC_ERR_NOMEM, "kernel cache: out of memory");
        for (i = 0; i < c->cap; i++)
            while (c->table[i]) {
                entry_t *x = c->table[i];
                size_t h = acc_fnv1a64(x->key, ACC_SHA256_HEX_LEN) & (cap - 1);
                c->table[i] = x->next;
                x->next = t[h];
                t[h] = x;
            }
        acc_mem_free(c->table);
        c->table = t;
        c->cap = cap;
    }
    if (!(e = acc_mem_calloc(1, sizeof(*e))))
        return acc_error_set(ACC_ERR_NOMEM, "kernel cache: out of memory");
    memcpy(e->key, key, sizeof(e->key));
    e->cubin = cubin;
    e->size = size;
    i = acc_fnv1a64(key, ACC_SHA256_HEX_LEN) & (c->cap - 1);
    e->next = c->table[i];
    c->table[i] = e;
    c->n++;
    return ACC_OK;
}

/* ---- the cache ------------------------------------------------------------------------- */

acc_status_t acc_kcache_create(const char *dir, acc_kcache_t **out)
{
    acc_kcache_t *c;
    char *def = NULL;
    acc_status_t st = ACC_OK;

    *out = NULL;
    if (!(c = acc_mem_calloc(1, sizeof(*c))) || !(c->table = acc_mem_calloc(64, sizeof(entry_t *)))) {
        acc_mem_free(c);
        return acc_error_set(ACC_ERR_NOMEM, "kernel cache: out of memory");
    }
    c->cap = 64;
    if (dir) {
        if (dir[0] && (st = check_dir(dir)) != ACC_OK)
            goto out;
        c->dir = acc_mem_strdup(dir);
    } else if (acc_cache_dir(&def) == ACC_OK && check_dir(def) == ACC_OK) {
        c->dir = def;
        def = NULL;
    } else {
        ACC_WARN(COMPILER, "%s; compiled kernels are kept in memory only", acc_error_message());
        c->dir = acc_mem_strdup("");
    }
    if (!c->dir)
        st = acc_error_set(ACC_ERR_NOMEM, "kernel cache: out of memory");
out:
    acc_mem_free(def);
    if (st != ACC_OK) {
        acc_kcache_destroy(c);
        return st;
    }
    *out = c;
    return ACC_OK;
}

void acc_kcache_destroy(acc_kcache_t *c)
{
    size_t i;
    if (!c)
        return;
    for (i = 0; c->table && i < c->cap; i++)
        while (c->table[i]) {
            entry_t *e = c->table[i];
            c->table[i] = e->next;
            acc_mem_free(e->cubin);
            acc_mem_free(e);
        }
    acc_mem_free(c->table);
    acc_mem_free(c->dir);
    acc_mem_free(c);
}

/* The entry of key from memory or the directory; NULL when neither has it. */
static entry_t *lookup(acc_kcache_t *c, const char *key)
{
    entry_t *e = mem_find(c, key);
    void *bin = NULL;
    size_t n = 0;

    if (e) {
        c->stats.mem_hits++;
        return e;
    }
    if (!c->dir[0] || !disk_read(c, key, &bin, &n))
        return NULL;
    if (mem_add(c, key, bin, n) != ACC_OK) {
        acc_mem_free(bin);
        return NULL; /* out of memory: compiled again, and the error said */
    }
    c->stats.disk_hits++;
    return mem_find(c, key);
}

/* Keep a fresh CUBIN (taken) under key, in the directory and in memory. */
static acc_status_t keep(acc_kcache_t *c, const char *key, void *bin, size_t n, entry_t **out)
{
    acc_status_t st;
    if (c->dir[0])
        disk_write(c, key, bin, n);
    if ((st = mem_add(c, key, bin, n)) != ACC_OK) {
        acc_mem_free(bin);
        return st;
    }
    *out = mem_find(c, key);
    return ACC_OK;
}

/* source compiled with flags, through the cache. */
static acc_status_t cached(acc_kcache_t *c, const char *source, const char *name, const char *arch,
                           int flags, const void **cubin, size_t *size)
{
    char key[ACC_SHA256_HEX_LEN + 1];
    entry_t *e;
    void *bin = NULL;
    size_t n = 0;
    double t0;
    acc_status_t st;

    if ((st = key_of(source, "program", acc_nvrtc_options(flags), arch, key)) != ACC_OK)
        return st;
    if (!(e = lookup(c, key))) {
        t0 = (acc_now_s() * 1e3);
        st = acc_nvrtc_compile_ex(source, name, arch, flags, &bin, &n, NULL);
        c->stats.compile_ms += (acc_now_s() * 1e3) - t0;
        if (st != ACC_OK)
            return st;
        c->stats.compiles++;
        if ((st = keep(c, key, bin, n, &e)) != ACC_OK)
            return st;
    }
    *cubin = e->cubin;
    *size = e->size;
    return ACC_OK;
}

acc_status_t acc_kcache_cubin(acc_kcache_t *c, const char *source, const char *name,
                              const char *arch, const void **cubin, size_t *size)
{
    *cubin = NULL;
    *size = 0;
    if (!c || !source || !arch)
        return acc_error_set(ACC_ERR_INVALID, "kernel cache: no cache, source or architecture");
    return cached(c, source, name, arch, 0, cubin, size);
}

acc_status_t acc_kcache_kernel(acc_kcache_t *c, const acc_kernel_t *k, const char *arch,
                               const void **cubin, size_t *size)
{
    char key[ACC_SHA256_HEX_LEN + 1];
    const void *parts[2];
    size_t sizes[2];
    void *plan = NULL, *bin = NULL;
    size_t n = 0;
    entry_t *e;
    double t0;
    acc_status_t st;

    *cubin = NULL;
    *size = 0;
    if (!c || !k || !arch)
        return acc_error_set(ACC_ERR_INVALID, "kernel cache: no cache, kernel or architecture");
    if ((st = key_of(acc_kernel_source(k, NULL), "linked", acc_nvrtc_options(ACC_NVRTC_RELOCATABLE),
                     arch, key)) != ACC_OK)
        return st;
    if ((e = lookup(c, key)))
        goto found;
    if ((st = cached(c, acc_kernel_library_source(k), acc_kernel_library_name(k), arch,
                     ACC_NVRTC_RELOCATABLE, &parts[0], &sizes[0])) != ACC_OK)
        return st;
    t0 = (acc_now_s() * 1e3);
    st = acc_nvrtc_compile_ex(acc_kernel_plan_source(k), acc_kernel_name(k), arch,
                              ACC_NVRTC_RELOCATABLE, &plan, &sizes[1], NULL);
    if (st == ACC_OK) {
        c->stats.compiles++;
        parts[1] = plan;
        st = acc_nvrtc_link(parts, sizes, 2, arch, acc_kernel_name(k), &bin, &n);
        if (st == ACC_OK)
            c->stats.links++;
    }
    c->stats.compile_ms += (acc_now_s() * 1e3) - t0;
    acc_mem_free(plan);
    if (st != ACC_OK || (st = keep(c, key, bin, n, &e)) != ACC_OK)
        return st;
found:
    *cubin = e->cubin;
    *size = e->size;
    return ACC_OK;
}

void acc_kcache_stats(const acc_kcache_t *c, acc_kcache_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (c)
        *out = c->stats;
}

const char *acc_kcache_dir(const acc_kcache_t *c)
{
    return c ? c->dir : "";
}
