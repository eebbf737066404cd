/*
 * How much memory a process may use, and the budget acc's allocations keep to.
 *
 * The limit is the smallest of what the machine has available (MemAvailable: free memory plus
 * what the kernel can reclaim), what the process's cgroup still allows (a container's memory
 * limit less its usage; cgroup v2, else v1), and the process's own address-space and data
 * limits; ACC_MEMORY_BUDGET replaces it.  A request whose estimate exceeds it is refused before
 * anything is allocated (acc_mem_check), and with a budget set (acc_mem_budget_set, as the
 * command-line programs do) every allocation through acc_mem_* is counted and one that would
 * pass the budget fails, so that a request too large for the machine ends with a message
 * instead of growing until the kernel's out-of-memory killer ends it.  Without a budget
 * (libraries inside someone else's process) nothing is counted.
 */
#include "acc_common.h"
#include "common_internal.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static _Atomic uint64_t budget; /* 0: off */
static _Atomic int64_t in_use;  /* bytes allocated through acc_mem_* while counted */
static atomic_int refused;      /* an allocation failed for the budget */

/* ---- what the machine allows ------------------------------------------------------------ */

/* The first number in a file ("max" reads as none), or 0 when it cannot be read. */
static uint64_t read_number(const char *path)
{
    char text[64];
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;

    if (!f)
        return 0;
    if (fgets(text, sizeof(text), f) && strncmp(text, "max", 3) != 0)
        v = strtoull(text, NULL, 10);
    fclose(f);
    return v;
}

/* A field of /proc/meminfo, in bytes; 0 when absent. */
static uint64_t meminfo(const char *field)
{
    char line[256];
    size_t len = strlen(field);
    FILE *f = fopen("/proc/meminfo", "r");
    uint64_t v = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = (uint64_t)strtoull(line + len + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

static void take(acc_mem_limit_t *out, uint64_t bytes, const char *source)
{
    if (bytes && (!out->bytes || bytes < out->bytes)) {
        out->bytes = bytes;
        snprintf(out->source, sizeof(out->source), "%s", source);
    }
}

static void take_cgroup(acc_mem_limit_t *out, const char *limit_path, const char *usage_path,
                        const char *source)
{
    uint64_t limit = read_number(limit_path), usage = read_number(usage_path);
    /* v1 reports "no limit" as a huge number near 2^63. */
    if (limit && limit < (UINT64_C(1) << 60))
        take(out, limit > usage ? limit - usage : 1, source);
}

static void take_rlimit(acc_mem_limit_t *out, int resource, const char *source)
{
    struct rlimit r;
    if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        take(out, (uint64_t)r.rlim_cur, source);
}

acc_status_t acc_mem_available(acc_mem_limit_t *out)
{
    memset(out, 0, sizeof(*out));
    take(out, meminfo("MemAvailable"), "the machine's available memory (MemAvailable)");
    if (!out->bytes) {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0)
            take(out, (uint64_t)pages * (uint64_t)page, "the machine's free memory");
    }
    take_cgroup(out, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current",
                "the cgroup's memory.max less its usage");
    take_cgroup(out, "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                "the cgroup's memory limit less its usage");
    take_rlimit(out, RLIMIT_AS, "the address-space limit (ulimit -v)");
    take_rlimit(out, RLIMIT_DATA, "the data-segment limit (ulimit -d)");
    if (!out->bytes)
        return acc_error_set(ACC_ERR_SYSTEM, "cannot tell how much memory this machine has "
                                             "(/proc/meminfo unreadable); set ACC_MEMORY_BUDGET");
    return ACC_OK;
}

acc_status_t acc_mem_limit(acc_mem_limit_t *out)
{
    uint64_t set = 0;
    acc_status_t st;

    memset(out, 0, sizeof(*out));
    if ((st = acc_setting_size(ACC_SETTING_MEMORY_BUDGET, &set)) != ACC_OK)
        return st;
    if (set) {
        out->bytes = set;
        snprintf(out->source, sizeof(out->source), "ACC_MEMORY_BUDGET");
        return ACC_OK;
    }
    return acc_mem_available(out);
}

void acc_mem_size_text(uint64_t bytes, char *out, size_t cap)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;

    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%" PRIu64 " bytes", bytes);
    else
        snprintf(out, cap, "%.*f %s", v < 10 ? 1 : 0, v, units[u]);
}

acc_status_t acc_mem_check(uint64_t need, const char *what, const char *advice)
{
    acc_mem_limit_t lim;
    char need_text[32], lim_text[32];
    uint64_t have;
    acc_status_t st;

    if (acc_mem_budget()) {
        int64_t used = atomic_load(&in_use);
        have = acc_mem_budget() - (used > 0 ? (uint64_t)used : 0);
        memset(&lim, 0, sizeof(lim));
        snprintf(lim.source, sizeof(lim.source), "left of this program's memory budget");
    } else {
        if ((st = acc_mem_limit(&lim)) != ACC_OK)
            return st;
        have = lim.bytes;
    }
    if (need <= have)
        return ACC_OK;
    acc_mem_size_text(need, need_text, sizeof(need_text));
    acc_mem_size_text(have, lim_text, sizeof(lim_text));
    return acc_error_set(ACC_ERR_NOMEM,
                         "%s needs about %s, more than the %s it may use (%s); %s, or set "
                         "ACC_MEMORY_BUDGET on a machine with more memory",
                         what, need_text, lim_text, lim.source, advice);
}

/* ---- the budget ------------------------------------------------------------------------- */

void acc_mem_budget_set(uint64_t bytes)
{
    atomic_store(&in_use, 0);
    atomic_store(&refused, 0);
    atomic_store(&budget, bytes);
}

uint64_t acc_mem_budget(void)
{
    return atomic_load_explicit(&budget, memory_order_relaxed);
}

int acc_mem_budget_refused(void)
{
    return atomic_load(&refused);
}

/* Called by the allocation wrappers (common_alloc.c), only while a budget is set. */
int common_mem_reserve(size_t bytes)
{
    uint64_t b = acc_mem_budget();
    int64_t now = atomic_fetch_add(&in_use, (int64_t)bytes) + (int64_t)bytes;
    if (b && now > 0 && (uint64_t)now > b) {
        atomic_fetch_sub(&in_use, (int64_t)bytes);
        atomic_store(&refused, 1);
        return 0;
    }
    return 1;
}

void common_mem_release(size_t bytes)
{
    atomic_fetch_sub(&in_use, (int64_t)bytes);
}

void common_mem_account(void *ptr, size_t reserved)
{
    /* The allocator rounds up; count what it gave. */
    atomic_fetch_add(&in_use, (ptr ? (int64_t)malloc_usable_size(ptr) : 0) - (int64_t)reserved);
}
