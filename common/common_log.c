/* The logger: levels and subsystems, configured once from the settings table. */
#include "acc_common.h"

#include <pthread.h>
#include <string.h>

static const char *const subsys_names[ACC_SUBSYS_COUNT] = {
#define ACC_SUBSYS_NAME(name, str) str,
    ACC_SUBSYS_MAP(ACC_SUBSYS_NAME)
#undef ACC_SUBSYS_NAME
};

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static acc_log_level_t log_level = ACC_LOG_WARN;
static int subsys_on[ACC_SUBSYS_COUNT];
static FILE *log_stream;

/* Parse ACC_LOG_SUBSYS: "all", "topo,db", or "^compiler" (everything but the listed ones).
 * Unknown names are reported once and ignored so that a typo cannot silence errors. */
static void parse_subsys(const char *spec)
{
    int exclude = spec[0] == '^';
    int i;
    char *copy, *tok, *save = NULL;

    if (exclude)
        spec++;
    if (!exclude && (spec[0] == '\0' || acc_str_ieq(spec, "all"))) {
        for (i = 0; i < ACC_SUBSYS_COUNT; i++)
            subsys_on[i] = 1;
        return;
    }
    for (i = 0; i < ACC_SUBSYS_COUNT; i++)
        subsys_on[i] = exclude;
    copy = acc_mem_strdup(spec);
    if (!copy)
        return;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (i = 0; i < ACC_SUBSYS_COUNT; i++) {
            if (acc_str_ieq(tok, subsys_names[i])) {
                subsys_on[i] = !exclude;
                found = 1;
            }
        }
        if (!found)
            fprintf(stderr, "acc WARN common: ACC_LOG_SUBSYS names unknown subsystem '%s'\n", tok);
    }
    acc_mem_free(copy);
}

static void log_init(void)
{
    acc_log_level_t level;

    if (acc_setting_level(ACC_SETTING_LOG_LEVEL, &level) == ACC_OK)
        log_level = level;
    else
        fprintf(stderr, "acc WARN common: %s; using 'warn'\n", acc_error_message());
    parse_subsys(acc_setting_str(ACC_SETTING_LOG_SUBSYS));
}

int acc_log_enabled(acc_log_level_t level, acc_subsys_t subsys)
{
    pthread_once(&log_once, log_init);
    if (subsys < 0 || subsys >= ACC_SUBSYS_COUNT)
        return 0;
    /* Errors are always shown: a subsystem filter must never hide a failure. */
    return level <= log_level && (level == ACC_LOG_ERROR || subsys_on[subsys]);
}

void acc_log_set_stream(FILE *stream)
{
    pthread_mutex_lock(&log_lock);
    log_stream = stream;
    pthread_mutex_unlock(&log_lock);
}

void acc_log(acc_log_level_t level, acc_subsys_t subsys, const char *fmt, ...)
{
    /* Room for a whole error message (2048) and what a line says around it. */
    char line[4096];
    va_list ap;
    FILE *out;

    if (!acc_log_enabled(level, subsys))
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_lock);
    out = log_stream ? log_stream : stderr;
    fprintf(out, "acc %s %s: %s\n", level_names[level], subsys_names[subsys], line);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
}
