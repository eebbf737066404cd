/*
 * acc_common.h - status codes, errors, logging, settings, allocation, hashing, text buffers and
 * YAML reading helpers shared by every part of acc.
 *
 * Conventions for the whole library (stated once here, as hwloc.h does):
 *
 * Errors.  Every function that can fail returns an acc_status_t: ACC_OK (0) on success, a negative
 *   ACC_ERR_* on failure.  The one positive code, ACC_NO_DATA, is not a failure: the runtime's
 *   "nothing usable here, carry on with plain NCCL".  The failing function also records a message
 * for the calling thread with acc_error_set(); acc_error_message() returns it.  Messages name the
 * file, line, variable or peer involved and say what to do next.  Foreign errors (libyaml, libxml2,
 * hwloc, SQLite, CUDA, NVRTC, NCCL) are mapped to the closest acc code and their original code and
 * text are kept in the message.
 *
 * Ownership.  acc_x_create(..., acc_x_t **out) hands the caller a new object it must release with
 *   acc_x_destroy(); destroy(NULL) does nothing.  Pointer parameters are borrowed unless the
 *   documentation says "taken".  Strings returned as const char * live as long as their owner.
 *
 * Threads.  Objects are not internally locked: one object, one thread at a time.  The logger,
 *   the settings table and the error message slot are safe to use from any thread.
 */
#ifndef ACC_COMMON_H
#define ACC_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one definition of acc's version: CMakeLists.txt reads it from this line. */
#define ACC_VERSION_STRING "0.1.0"
/* The version of the library loaded (ACC_VERSION_STRING when it was built), for programs that
 * load it at run time (the Python package). */
const char *acc_version(void);

#if defined(__GNUC__)
#define ACC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ACC_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes: one list, so that the enum and its strings cannot drift apart.
 * X(name, value, description)
 */
#define ACC_STATUS_MAP(X)                                                                          \
    X(OK, 0, "success")                                                                            \
    X(NO_DATA, 1, "no usable data; carrying on without it")                                        \
    X(ERR_INVALID, -1, "invalid argument")                                                         \
    X(ERR_NOMEM, -2, "out of memory")                                                              \
    X(ERR_IO, -3, "input/output error")                                                            \
    X(ERR_PARSE, -4, "malformed input")                                                            \
    X(ERR_UNSUPPORTED, -5, "unsupported input or operation")                                       \
    X(ERR_NOT_FOUND, -6, "not found")                                                              \
    X(ERR_TOPO, -7, "inconsistent topology")                                                       \
    X(ERR_NO_DEVICE, -8, "no GPU available")                                                       \
    X(ERR_VERIFY, -9, "plan verification failed")                                                  \
    X(ERR_RANGE, -10, "value out of range")                                                        \
    X(ERR_EXISTS, -11, "already exists")                                                           \
    X(ERR_BUSY, -12, "resource busy")                                                              \
    X(ERR_TIMEOUT, -13, "timed out waiting for a peer")                                            \
    X(ERR_ABORTED, -14, "aborted")                                                                 \
    X(ERR_SYSTEM, -15, "operating system error")                                                   \
    X(ERR_HWLOC, -20, "hwloc error")                                                               \
    X(ERR_YAML, -21, "libyaml error")                                                              \
    X(ERR_XML, -22, "libxml2 error")                                                               \
    X(ERR_SQLITE, -23, "SQLite error")                                                             \
    X(ERR_CUDA, -24, "CUDA driver error")                                                          \
    X(ERR_NVRTC, -25, "NVRTC error")                                                               \
    X(ERR_NCCL, -26, "NCCL error")                                                                 \
    X(ERR_NVML, -27, "NVML error")                                                                 \
    X(ERR_CRYPTO, -28, "libcrypto error")                                                          \
    X(ERR_INTERNAL, -99, "internal error")

typedef enum {
#define ACC_STATUS_ENUM(name, value, desc) ACC_##name = value,
    ACC_STATUS_MAP(ACC_STATUS_ENUM)
#undef ACC_STATUS_ENUM
} acc_status_t;

/* "ACC_ERR_PARSE" style name, and its one-line description. Unknown values give "ACC_UNKNOWN". */
const char *acc_status_name(acc_status_t st);
const char *acc_status_string(acc_status_t st);

/* Record a message for the calling thread and return st, so that failures read
 *     return acc_error_set(ACC_ERR_PARSE, "%s:%d: expected a number", file, line);
 * The message replaces the previous one.  acc_error_prefix() puts context in front of the
 * current message ("loading topo.xml: " + message) and also returns st. */
acc_status_t acc_error_set(acc_status_t st, const char *fmt, ...) ACC_PRINTF(2, 3);
acc_status_t acc_error_prefix(acc_status_t st, const char *fmt, ...) ACC_PRINTF(2, 3);
/* The calling thread's last message; "" when none.  Valid until the next acc call on the thread. */
const char *acc_error_message(void);
void acc_error_clear(void);

/* ---------------------------------------------------------------------------------------------
 * Logging.  One logger with levels and subsystems, configured by ACC_LOG_LEVEL and ACC_LOG_SUBSYS.
 * Lines go to stderr as "acc <LEVEL> <subsys>: message".
 */
typedef enum {
    ACC_LOG_ERROR = 0,
    ACC_LOG_WARN = 1,
    ACC_LOG_INFO = 2,
    ACC_LOG_DEBUG = 3,
    ACC_LOG_TRACE = 4,
} acc_log_level_t;

#define ACC_SUBSYS_MAP(X)                                                                          \
    X(COMMON, "common")                                                                            \
    X(TOPO, "topo")                                                                                \
    X(COMPILER, "compiler")                                                                        \
    X(DB, "db")                                                                                    \
    X(RUNTIME, "runtime")                                                                          \
    X(TUNER, "tuner")                                                                              \
    X(CLI, "cli")

typedef enum {
#define ACC_SUBSYS_ENUM(name, str) ACC_SUBSYS_##name,
    ACC_SUBSYS_MAP(ACC_SUBSYS_ENUM)
#undef ACC_SUBSYS_ENUM
        ACC_SUBSYS_COUNT
} acc_subsys_t;

/* True when a message of this level and subsystem would be printed (for costly messages). */
int acc_log_enabled(acc_log_level_t level, acc_subsys_t subsys);
void acc_log(acc_log_level_t level, acc_subsys_t subsys, const char *fmt, ...) ACC_PRINTF(3, 4);
/* Send log lines to a stream instead of stderr (NULL restores stderr).  For tests and CLIs. */
void acc_log_set_stream(FILE *stream);

#define ACC_ERROR(sub, ...) acc_log(ACC_LOG_ERROR, ACC_SUBSYS_##sub, __VA_ARGS__)
#define ACC_WARN(sub, ...)  acc_log(ACC_LOG_WARN, ACC_SUBSYS_##sub, __VA_ARGS__)
#define ACC_INFO(sub, ...)  acc_log(ACC_LOG_INFO, ACC_SUBSYS_##sub, __VA_ARGS__)
#define ACC_DEBUG(sub, ...) acc_log(ACC_LOG_DEBUG, ACC_SUBSYS_##sub, __VA_ARGS__)

/* ---------------------------------------------------------------------------------------------
 * Settings.  Every ACC_* environment variable is a row of ACC_SETTINGS_MAP; this table is the only
 * place in acc that reads the environment.  X(id, type, default, doc).
 */
typedef enum {
    ACC_SETTING_STRING,
    ACC_SETTING_INT,
    ACC_SETTING_SIZE, /* bytes, with optional K/M/G suffix (powers of 1024) */
    ACC_SETTING_PATH,
    ACC_SETTING_LEVEL, /* a log level name */
} acc_setting_type_t;

#define ACC_SETTINGS_MAP(X)                                                                        \
    X(LOG_LEVEL, ACC_SETTING_LEVEL, "warn",                                                        \
      "Least severe log level printed: error, warn, info, debug or trace.")                        \
    X(LOG_SUBSYS, ACC_SETTING_STRING, "all",                                                       \
      "Comma-separated subsystems to log (common, topo, compiler, db, runtime, tuner, cli), "      \
      "'all', or a list prefixed with ^ to exclude.")                                              \
    X(PLATFORM_DIR, ACC_SETTING_PATH, "",                                                          \
      "Directory of shipped platform descriptions; empty means the installed default.")            \
    X(MODEL_DIR, ACC_SETTING_PATH, "",                                                             \
      "Directory of model profiles; empty means the installed default.")                           \
    X(CACHE_DIR, ACC_SETTING_PATH, "",                                                             \
      "Directory of compiled kernels (CUBINs), which must belong to the user; empty means "        \
      "$XDG_CACHE_HOME/acc, else ~/.cache/acc.")                                                   \
    X(DB, ACC_SETTING_PATH, "",                                                                    \
      "The database a training job reads its tuned schedules from; empty means the first of "      \
      "/etc/acc/acc.db and share/acc/acc.db of the prefix acc runs from that exists.")             \
    X(TOPO, ACC_SETTING_STRING, "auto",                                                            \
      "The machine a communicator runs on, as acc-compile --topo takes it (a file, a shipped "     \
      "platform, a synthetic description); 'auto' discovers it.")                                  \
    X(TIMEOUT_MS, ACC_SETTING_INT, "60000",                                                        \
      "Milliseconds a rank waits for a peer inside a collective before the call fails, naming "    \
      "the peer and the step; 0 waits for ever.")                                                  \
    X(SOCKET_IFNAME, ACC_SETTING_STRING, "",                                                       \
      "The network interfaces acc uses, as NCCL_SOCKET_IFNAME names them: a comma-separated list " \
      "of name prefixes (eth0,eth1), '=' first for exact names, '^' first for all but those. A "   \
      "new id's rendezvous listens at the first (acc_get_unique_id, a communicator made from "     \
      "NCCL's); with several, the host backend opens a socket per interface on every connection "  \
      "between nodes and stripes each message across them. Empty means the host name's address "   \
      "unless it is a loopback, else the first interface that is up and not a loopback.")          \
    X(DISABLE, ACC_SETTING_INT, "0",                                                               \
      "1: acc runs none of its own schedules; every call goes to NCCL (on the host backend, to "   \
      "the ring fallback).")                                                                       \
    X(BACKEND, ACC_SETTING_STRING, "auto",                                                         \
      "Where a communicator runs plans: 'cuda' (one GPU per process), 'host' (one process per "    \
      "rank, shared memory and TCP, no GPU), or 'auto' (cuda when a GPU is usable, else host).")   \
    X(NCCL_LIBRARY, ACC_SETTING_PATH, "",                                                          \
      "The NCCL library acc opens for its fallback and transport; empty means the one the "        \
      "program uses (linked, or loaded), else libnccl.so.2 from the library path.")                \
    X(FUSION_BYTES, ACC_SETTING_SIZE, "0",                                                         \
      "Gradient bytes the fusion engine fuses into one allreduce; 0 means the stored optimum of "  \
      "the job's key (ACC_MODEL, topology, ACC_NETWORK), else 25M.")                               \
    X(STREAMS, ACC_SETTING_INT, "0",                                                               \
      "Streams the fusion engine runs its allreduces on, 1 to 16; 0 means the stored optimum, "    \
      "else 1.")                                                                                   \
    X(COMPRESSION, ACC_SETTING_STRING, "auto",                                                     \
      "How the fusion engine sends fp32 gradients: none, fp16 or bf16 (cast in the pack, back in " \
      "the unpack); auto means the stored optimum's, else none.")                                  \
    X(MODEL, ACC_SETTING_STRING, "",                                                               \
      "The model a job trains, as acc-tune --model names it: the key of the stored optimum the "   \
      "fusion engine starts from; empty means a fingerprint of the registered gradients.")         \
    X(NETWORK, ACC_SETTING_STRING, "",                                                             \
      "The network of the job's key, as acc-tune --network takes it (a stored network's name or "  \
      "parameters); empty means the topology's own.")                                              \
    X(TUNE_ONLINE, ACC_SETTING_INT, "0",                                                           \
      "1: the fusion engine measures its iterations, searches fusion size x streams x "            \
      "compression from where it started and stores what it measured for the next job.")           \
    X(TUNE_BUDGET, ACC_SETTING_INT, "0",                                                           \
      "Iterations online tuning may spend measuring; 0 means a quarter of those a full grid "      \
      "would need.")                                                                               \
    X(TUNE_COMPRESSION, ACC_SETTING_STRING, "none",                                                \
      "Comma-separated compressions online tuning may try (none, fp16, bf16); compression "        \
      "changes the numerics, so it is tried only where allowed.")                                  \
    X(RECORD, ACC_SETTING_INT, "0",                                                                \
      "1: the fusion engine records the job's gradient timeline (each gradient's or DDP "          \
      "bucket's size, type and ready time, the compute time) for a few iterations after warm-up "  \
      "and rank 0 stores it in the database as the profile of ACC_MODEL, for acc-tune.")           \
    X(MEMORY_BUDGET, ACC_SETTING_SIZE, "0",                                                        \
      "Memory acc's programs may use (e.g. 64G); a request estimated to need more is refused "     \
      "with a message before it allocates.  0 means what the machine and the process's cgroup "    \
      "and limits leave available.")                                                               \
    X(LIBRARY, ACC_SETTING_PATH, "",                                                               \
      "The libacc.so the Python package (python/acc) loads; empty means the one the dynamic "      \
      "loader finds.  Read by the package before the library is loaded.")

typedef enum {
#define ACC_SETTING_ENUM(id, type, def, doc) ACC_SETTING_##id,
    ACC_SETTINGS_MAP(ACC_SETTING_ENUM)
#undef ACC_SETTING_ENUM
        ACC_SETTING_COUNT
} acc_setting_id_t;

typedef struct {
    const char *name; /* "ACC_LOG_LEVEL" */
    acc_setting_type_t type;
    const char *default_value;
    const char *doc;
} acc_setting_info_t;

const acc_setting_info_t *acc_setting_info(acc_setting_id_t id);
/* The value in effect: the environment's if set and non-empty, else the default.  Borrowed. */
const char *acc_setting_str(acc_setting_id_t id);
/* Parsed forms.  An invalid value is an error naming the variable; never a silent clamp. */
acc_status_t acc_setting_int(acc_setting_id_t id, int64_t *out);
acc_status_t acc_setting_size(acc_setting_id_t id, uint64_t *out);
acc_status_t acc_setting_level(acc_setting_id_t id, acc_log_level_t *out);
/* Check every setting; returns the first error. */
acc_status_t acc_settings_validate(void);
/* Print the table (name, type, default, value in effect, doc) for acc-info and --help. */
void acc_settings_print(FILE *out);

/* The kernel cache directory in effect: ACC_CACHE_DIR, else $XDG_CACHE_HOME/acc (an absolute
 * XDG_CACHE_HOME only, as the XDG specification asks), else $HOME/.cache/acc, else the home
 * directory of the user database.  *out is taken by the caller (acc_mem_free).  The directory is
 * not created here. */
acc_status_t acc_cache_dir(char **out);
/* The data directories of the installation acc runs from, most specific first:
 * <prefix>/share/acc of the prefix whose library or program holds this code (found from the
 * file it was loaded from, so that a moved installation finds its own), then the one the build
 * was configured with when that is another.  Borrowed; *n is 1 or 2.  Listed whether or not
 * they exist. */
const char *const *acc_install_data_dirs(size_t *n);
/* The build directory this code was built in, when it runs from there (libacc.so, a plugin or a
 * program under it), else NULL: a build tree stands in for an installation, and the database
 * the README's set-up makes lies in it (build/acc.db).  Borrowed. */
const char *acc_build_tree_dir(void);
/* A shipped data directory: the setting when set, else subdir ("platforms", "models") of the
 * first installation data directory that has it, else the source tree this build came from (so
 * that a build directory works without installing).  Borrowed. */
const char *acc_data_dir(acc_setting_id_t setting, const char *subdir, const char *source);
/* The stems of dir's *.yaml files, sorted (free with acc_strv_free).  Errors name what the
 * directory holds ("platform") and the setting that chooses it. */
acc_status_t acc_yaml_names(const char *dir, const char *what, acc_setting_id_t setting,
                            char ***names, size_t *count);
void acc_strv_free(char **v, size_t n);

/* Parse "64K", "25M", "1G", "4096" into bytes (powers of 1024). */
acc_status_t acc_parse_size(const char *text, uint64_t *out);
/* The inverse: "1G", "25M", "256K" where exact, else the bytes ("1000"): the sizes of tables,
 * plots and tuning configurations, which acc_parse_size reads back. */
void acc_size_text(uint64_t bytes, char *out, size_t cap);

/* ---------------------------------------------------------------------------------------------
 * Allocation.  Thin wrappers that check size arithmetic for overflow and return NULL on failure;
 * the caller turns NULL into ACC_ERR_NOMEM.  acc_mem_free(NULL) does nothing.
 */
void *acc_mem_alloc(size_t size);
void *acc_mem_calloc(size_t count, size_t size);
void *acc_mem_realloc_array(void *ptr, size_t count, size_t size);
char *acc_mem_strdup(const char *s);
char *acc_mem_strndup(const char *s, size_t n);
void acc_mem_free(void *ptr);
/* Make room for at least `need` elements of `elem` bytes in *array of capacity *cap, growing
 * geometrically.  On failure *array is unchanged. */
acc_status_t acc_array_reserve(void **array, size_t *cap, size_t need, size_t elem);

/* Memory.  What a process may use: the smallest of the machine's available memory
 * (MemAvailable), what its cgroup still allows (a container's limit less its usage) and its
 * address-space and data limits; ACC_MEMORY_BUDGET replaces it. */
typedef struct {
    uint64_t bytes;
    char source[96]; /* where the figure comes from, for messages */
} acc_mem_limit_t;

acc_status_t acc_mem_available(acc_mem_limit_t *out); /* the machine's, without the setting */
acc_status_t acc_mem_limit(acc_mem_limit_t *out);     /* ACC_MEMORY_BUDGET, else the above */
/* A request estimated to need `need` bytes, checked before anything is allocated for it:
 * ACC_OK when it fits what is left (of the budget when one is set, else acc_mem_limit), else
 * ACC_ERR_NOMEM with the message "WHAT needs about N GiB, more than the M GiB it may use
 * (SOURCE); ADVICE, or set ACC_MEMORY_BUDGET ...". */
acc_status_t acc_mem_check(uint64_t need, const char *what, const char *advice);
/* A budget for every allocation through acc_mem_* of the process: once set (bytes > 0) they
 * are counted, and one that would pass it fails (NULL, and the caller's ACC_ERR_NOMEM) instead
 * of growing until the kernel kills the process.  The command-line programs set it to
 * acc_mem_limit(); 0 turns it off (the default: nothing is counted).  Not for use while other
 * threads allocate. */
void acc_mem_budget_set(uint64_t bytes);
uint64_t acc_mem_budget(void);
/* Whether an allocation failed for the budget since it was set. */
int acc_mem_budget_refused(void);
/* "1.5 GiB", "512 bytes": sizes in powers of 1024 for messages. */
void acc_mem_size_text(uint64_t bytes, char *out, size_t cap);

/* ---------------------------------------------------------------------------------------------
 * Text buffer: a growable NUL-terminated string for building output.
 * A failed append marks the buffer as failed; acc_buf_status() reports it once at the end.
 */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    int failed;
} acc_buf_t;

void acc_buf_init(acc_buf_t *b);
void acc_buf_free(acc_buf_t *b);
void acc_buf_reset(acc_buf_t *b);
void acc_buf_append(acc_buf_t *b, const char *s, size_t n);
void acc_buf_puts(acc_buf_t *b, const char *s);
void acc_buf_printf(acc_buf_t *b, const char *fmt, ...) ACC_PRINTF(2, 3);
void acc_buf_vprintf(acc_buf_t *b, const char *fmt, va_list ap);
acc_status_t acc_buf_status(const acc_buf_t *b);
/* Hand the string to the caller (to free with acc_mem_free) and reset the buffer. */
char *acc_buf_take(acc_buf_t *b);
/* s as XML text or attribute value: & < > " escaped, control characters XML 1.0 forbids
 * dropped. */
void acc_buf_put_xml(acc_buf_t *b, const char *s);
/* s as a JSON string, quotes included. */
void acc_buf_put_json(acc_buf_t *b, const char *s);

/* Read a whole file into a NUL-terminated buffer (taken by the caller).  Errors name the path. */
acc_status_t acc_read_file(const char *path, char **out, size_t *len);
/* Write data to path atomically (temporary file + rename); errors name the path. */
acc_status_t acc_write_file(const char *path, const void *data, size_t len);

/* ---------------------------------------------------------------------------------------------
 * Hashing.  SHA-256 (libcrypto) for fingerprints and cache keys; FNV-1a for hash tables.
 */
#define ACC_SHA256_LEN     32
#define ACC_SHA256_HEX_LEN 64

typedef struct acc_sha256 acc_sha256_t;

acc_status_t acc_sha256_create(acc_sha256_t **out);
void acc_sha256_update(acc_sha256_t *h, const void *data, size_t len);
/* Finish into out; the hasher may then be destroyed or reused after acc_sha256_reset(). */
acc_status_t acc_sha256_final(acc_sha256_t *h, uint8_t out[ACC_SHA256_LEN]);
void acc_sha256_reset(acc_sha256_t *h);
void acc_sha256_destroy(acc_sha256_t *h);
/* One call: digest of data as 64 lowercase hex characters plus NUL. */
acc_status_t acc_sha256_hex(const void *data, size_t len, char out[ACC_SHA256_HEX_LEN + 1]);
void acc_hex_encode(const uint8_t *bytes, size_t n, char *out);

uint64_t acc_fnv1a64(const void *data, size_t len);

/* ---------------------------------------------------------------------------------------------
 * Time.
 */
/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals, never for dates. */
double acc_now_s(void);
/* Sleep until acc_now_s() reaches t (at once when it has). */
void acc_sleep_until(double t);
/* The median of n > 0 measurements (v is sorted in place): what timings are reported by, since
 * one slow outlier on a shared machine moves it less than a mean. */
double acc_median(double *v, size_t n);

/* ---------------------------------------------------------------------------------------------
 * Small string helpers used by every parser.
 */
/* Strict number parsing: the whole string must be the number (leading/trailing blanks allowed). */
acc_status_t acc_parse_int64(const char *s, int64_t *out);
acc_status_t acc_parse_double(const char *s, double *out);
/* Case-insensitive equality of two NUL-terminated strings. */
int acc_str_ieq(const char *a, const char *b);
/* Duplicate s without leading and trailing white space. */
char *acc_str_trim_dup(const char *s);

#ifdef __cplusplus
}
#endif
#endif /* ACC_COMMON_H */
