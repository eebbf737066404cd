/* Kernels: CUBINs by (plan hash, architecture, data type, reduction, compiler version), handed
 * out only to a caller whose freshly generated source has the hash they were built from. */
#include "db_internal.h"

#include <ctype.h>
#include <string.h>

/* The reduction column of collectives that do not reduce: their module is the same for every
 * reduction, so one row per type serves them all. */
#define NO_REDOP "none"

/* "sm_" then the compute capability digits, optionally one letter ("sm_90a"). */
static int valid_arch(const char *arch)
{
    const char *p = arch + 3;
    if (strncmp(arch, "sm_", 3) != 0 || !isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p >= 'a' && *p <= 'z')
        p++;
    return *p == '\0';
}

static acc_status_t check_key(const acc_db_t *db, const char *plan_hash, const char *arch,
                              acc_dtype_t dtype, acc_redop_t redop, const char *compiler_version)
{
    acc_status_t s;
    if ((s = db_check_hash(db, plan_hash, "kernel plan hash")) != ACC_OK ||
        (s = db_check_field(db, arch, 16, 1, "kernel architecture")) != ACC_OK ||
        (s = db_check_field(db, compiler_version, ACC_DB_NAME_MAX, 1, "kernel compiler version")) !=
            ACC_OK)
        return s;
    if (!valid_arch(arch))
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: kernel architecture \"%s\" is not of the form sm_90 or sm_90a",
                             db->path, arch);
    /* The enums come from callers' arithmetic as often as from parsing: an out-of-range value
     * would be stored as "?" and never found again. */
    if ((int)dtype < 0 || dtype >= ACC_DT_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: kernel data type %d is not one of float, half, bfloat16, "
                             "double, int32",
                             db->path, (int)dtype);
    if ((int)redop < 0 || redop >= ACC_RED_COUNT)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s: kernel reduction %d is not one of sum, prod, min, max, avg",
                             db->path, (int)redop);
    return ACC_OK;
}

/* Inside a transaction: does the stored plan's collective reduce?  ACC_ERR_NOT_FOUND when the
 * plan is not stored (the caller says what that means for it). */
static acc_status_t plan_reduces(acc_db_t *db, const char *plan_hash, int *reduces)
{
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    acc_coll_t coll;
    char name[32], sh[16];
    int r;

    if ((s = db_prepare(db, "SELECT coll FROM plans WHERE hash = ?1", &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, plan_hash);
    r = db_step_row(db, st, "looking up the plan of a kernel");
    if (r == 1)
        s = db_column_text(db, st, 0, name, sizeof(name), "plan collective");
    sqlite3_finalize(st);
    if (r <= 0)
        return r < 0 ? (acc_status_t)r : ACC_ERR_NOT_FOUND;
    if (s != ACC_OK)
        return s;
    if (acc_coll_parse(name, &coll) != ACC_OK)
        return acc_error_set(ACC_ERR_PARSE,
                             "%s: stored plan %s has the unknown collective \"%s\"; the file was "
                             "not written by this acc: rebuild it with acc-compile --db",
                             db->path, db_short(plan_hash, sh), name);
    *reduces = acc_coll_reduces(coll);
    return ACC_OK;
}

static const char *redop_key(int reduces, acc_redop_t redop)
{
    return reduces ? acc_redop_name(redop) : NO_REDOP;
}

static acc_status_t put_kernel(acc_db_t *db, void *ctx)
{
    const acc_db_kernel_t *k = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int reduces = 0;
    char sh[16];

    s = plan_reduces(db, k->plan_hash, &reduces);
    if (s == ACC_ERR_NOT_FOUND)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "%s: the kernel for %s is built from plan %s, which is not stored; "
                             "store the plan first",
                             db->path, k->arch, db_short(k->plan_hash, sh));
    if (s != ACC_OK)
        return s;
    /* The WHERE clause leaves an identical row untouched, so that storing twice changes nothing
     * in the file. */
    if ((s = db_prepare(db,
                        "INSERT INTO kernels (plan_hash, arch, dtype, redop, compiler_version, "
                        "source_hash, cubin, log) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                        "ON CONFLICT (plan_hash, arch, dtype, redop, compiler_version) DO UPDATE "
                        "SET source_hash = excluded.source_hash, cubin = excluded.cubin, log = "
                        "excluded.log WHERE source_hash IS NOT excluded.source_hash OR cubin IS "
                        "NOT excluded.cubin OR log IS NOT excluded.log",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, k->plan_hash);
    db_bind_text(st, 2, k->arch);
    db_bind_text(st, 3, acc_dtype_name(k->dtype));
    db_bind_text(st, 4, redop_key(reduces, k->redop));
    db_bind_text(st, 5, k->compiler_version);
    db_bind_text(st, 6, k->source_hash);
    sqlite3_bind_blob64(st, 7, k->cubin, k->cubin_size, SQLITE_STATIC);
    db_bind_text(st, 8, k->log ? k->log : "");
    s = db_step_done(db, st, "storing a kernel");
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_put_kernel(acc_db_t *db, const acc_db_kernel_t *kernel)
{
    char what[160], sh[16];
    acc_status_t s;

    if ((s = check_key(db, kernel->plan_hash, kernel->arch, kernel->dtype, kernel->redop,
                       kernel->compiler_version)) != ACC_OK ||
        (s = db_check_hash(db, kernel->source_hash, "kernel source hash")) != ACC_OK)
        return s;
    if (!kernel->cubin || kernel->cubin_size == 0)
        return acc_error_set(ACC_ERR_INVALID, "%s: the %s %s kernel of plan %s has no CUBIN",
                             db->path, kernel->arch, acc_dtype_name(kernel->dtype),
                             db_short(kernel->plan_hash, sh));
    snprintf(what, sizeof(what), "storing the %s %s kernel of plan %s", kernel->arch,
             acc_dtype_name(kernel->dtype), db_short(kernel->plan_hash, sh));
    return db_txn(db, 1, what, put_kernel, (void *)kernel);
}

typedef struct {
    const char *plan_hash, *arch, *compiler_version;
    acc_dtype_t dtype;
    acc_redop_t redop;
    acc_db_kernel_t *k;
} get_kernel_t;

/* The message of a kernel that is not there names the command that builds it. */
static acc_status_t not_stored(acc_db_t *db, const get_kernel_t *g, int reduces)
{
    char sh[16];
    return acc_error_set(ACC_ERR_NOT_FOUND,
                         "%s: no %s kernel of plan %s for %s%s%s built by %s; build it with "
                         "acc-compile --topo SRC --db %s --arch %s --types %s%s%s",
                         db->path, g->arch, db_short(g->plan_hash, sh), acc_dtype_name(g->dtype),
                         reduces ? " " : "", reduces ? acc_redop_name(g->redop) : "",
                         g->compiler_version, db->path, g->arch, acc_dtype_name(g->dtype),
                         reduces ? " --ops " : "", reduces ? acc_redop_name(g->redop) : "");
}

static acc_status_t get_kernel(acc_db_t *db, void *ctx)
{
    get_kernel_t *g = ctx;
    acc_db_kernel_t *k = g->k;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r, reduces = 0;
    char sh[16];

    acc_db_kernel_clear(k);
    s = plan_reduces(db, g->plan_hash, &reduces);
    if (s == ACC_ERR_NOT_FOUND)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "%s: plan %s is not stored, nor any kernel of it; store the plan "
                             "with acc-compile --topo SRC --db %s",
                             db->path, db_short(g->plan_hash, sh), db->path);
    if (s != ACC_OK)
        return s;
    if ((s = db_prepare(db,
                        "SELECT source_hash, cubin, log FROM kernels WHERE plan_hash = ?1 AND "
                        "arch = ?2 AND dtype = ?3 AND redop = ?4 AND compiler_version = ?5",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, g->plan_hash);
    db_bind_text(st, 2, g->arch);
    db_bind_text(st, 3, acc_dtype_name(g->dtype));
    db_bind_text(st, 4, redop_key(reduces, g->redop));
    db_bind_text(st, 5, g->compiler_version);
    r = db_step_row(db, st, "loading a kernel");
    if (r == 0) {
        s = not_stored(db, g, reduces);
    } else if (r < 0) {
        s = (acc_status_t)r;
    } else {
        const void *blob = sqlite3_column_blob(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        const unsigned char *log = sqlite3_column_text(st, 2);
        if ((s = db_column_text(db, st, 0, k->source_hash, sizeof(k->source_hash),
                                "kernel source hash")) != ACC_OK)
            goto out;
        if (n == 0 || !(k->cubin = acc_mem_alloc(n)) ||
            !(k->log = acc_mem_strdup(log ? (const char *)log : ""))) {
            s = n == 0 ? acc_error_set(ACC_ERR_PARSE, "%s: stored kernel of plan %s is empty",
                                       db->path, db_short(g->plan_hash, sh))
                       : acc_error_set(ACC_ERR_NOMEM, "out of memory loading a kernel");
            goto out;
        }
        memcpy(k->cubin, blob, n);
        k->cubin_size = n;
    }
out:
    sqlite3_finalize(st);
    return s;
}

acc_status_t acc_db_get_kernel(acc_db_t *db, const char *plan_hash, const char *arch,
                               acc_dtype_t dtype, acc_redop_t redop, const char *compiler_version,
                               const char *source_hash, acc_db_kernel_t *out)
{
    get_kernel_t g;
    acc_status_t s;
    char sh[16];

    memset(out, 0, sizeof(*out));
    if ((s = check_key(db, plan_hash, arch, dtype, redop, compiler_version)) != ACC_OK ||
        (s = db_check_hash(db, source_hash, "kernel source hash")) != ACC_OK)
        return s;
    g.plan_hash = plan_hash;
    g.arch = arch;
    g.dtype = dtype;
    g.redop = redop;
    g.compiler_version = compiler_version;
    g.k = out;
    if ((s = db_txn(db, 0, "loading a kernel", get_kernel, &g)) != ACC_OK)
        goto out;
    /* A CUBIN is only as trustworthy as the source it came from: one built from other source
     * (an older code generator, or an altered row) is stale and must be rebuilt. */
    if (strcmp(out->source_hash, source_hash) != 0) {
        s = acc_error_set(ACC_ERR_NOT_FOUND,
                          "%s: the stored %s %s kernel of plan %s was built from other source "
                          "(hash %.12s, expected %.12s); it is stale: rebuild it with "
                          "acc-compile --topo SRC --db %s --arch %s",
                          db->path, arch, acc_dtype_name(dtype), db_short(plan_hash, sh),
                          out->source_hash, source_hash, db->path, arch);
        goto out;
    }
    snprintf(out->plan_hash, sizeof(out->plan_hash), "%s", plan_hash);
    snprintf(out->arch, sizeof(out->arch), "%s", arch);
    snprintf(out->compiler_version, sizeof(out->compiler_version), "%s", compiler_version);
    out->dtype = dtype;
    out->redop = redop;
    return ACC_OK;
out:
    acc_db_kernel_clear(out);
    return s;
}

void acc_db_kernel_clear(acc_db_kernel_t *kernel)
{
    if (!kernel)
        return;
    acc_mem_free(kernel->cubin);
    acc_mem_free(kernel->log);
    memset(kernel, 0, sizeof(*kernel));
}

typedef struct {
    const char *plan_hash, *arch;
    uint64_t *count;
} count_kernels_t;

static acc_status_t count_kernels(acc_db_t *db, void *ctx)
{
    count_kernels_t *c = ctx;
    sqlite3_stmt *st = NULL;
    acc_status_t s;
    int r;

    if ((s = db_prepare(db,
                        "SELECT count(*) FROM kernels WHERE (?1 IS NULL OR plan_hash = ?1) AND "
                        "(?2 IS NULL OR arch = ?2)",
                        &st)) != ACC_OK)
        return s;
    db_bind_text(st, 1, c->plan_hash);
    db_bind_text(st, 2, c->arch);
    r = db_step_row(db, st, "counting kernels");
    if (r == 1)
        *c->count = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return r < 0 ? (acc_status_t)r : ACC_OK;
}

acc_status_t acc_db_count_kernels(acc_db_t *db, const char *plan_hash, const char *arch,
                                  uint64_t *count)
{
    count_kernels_t c = {plan_hash, arch, count};
    acc_status_t s = ACC_OK;

    *count = 0;
    if ((plan_hash && (s = db_check_hash(db, plan_hash, "kernel plan hash")) != ACC_OK) ||
        (arch && (s = db_check_field(db, arch, 16, 1, "kernel architecture")) != ACC_OK))
        return s;
    return db_txn(db, 0, "counting kernels", count_kernels, &c);
}
