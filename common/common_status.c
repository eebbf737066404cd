/* Status names and strings, and the per-thread error message. */
#include "acc_common.h"

#include <stdio.h>
#include <string.h>

const char *acc_status_name(acc_status_t st)
{
    switch (st) {
#define ACC_STATUS_NAME(name, value, desc)                                                         \
    case ACC_##name:                                                                               \
        return "ACC_" #name;
        ACC_STATUS_MAP(ACC_STATUS_NAME)
#undef ACC_STATUS_NAME
    }
    return "ACC_UNKNOWN";
}

const char *acc_status_string(acc_status_t st)
{
    switch (st) {
#define ACC_STATUS_DESC(name, value, desc)                                                         \
    case ACC_##name:                                                                               \
        return desc;
        ACC_STATUS_MAP(ACC_STATUS_DESC)
#undef ACC_STATUS_DESC
    }
    return "unknown status";
}

/* One message slot per thread; long enough for a path, a line number and an explanation. */
#define ERROR_MESSAGE_MAX 2048
static _Thread_local char error_message[ERROR_MESSAGE_MAX];

acc_status_t acc_error_set(acc_status_t st, const char *fmt, ...)
{
    /* Formatted aside first: the arguments may be the message itself (a caller that rewords
     * acc_error_message()), which vsnprintf must not write over while it reads it. */
    char text[ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    memcpy(error_message, text, sizeof(error_message));
    return st;
}

acc_status_t acc_error_prefix(acc_status_t st, const char *fmt, ...)
{
    char prefix[ERROR_MESSAGE_MAX];
    char old[ERROR_MESSAGE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, error_message, sizeof(old));
    /* Truncation of an over-long message is acceptable: the prefix matters most. */
    {
        const char *rest = old[0] ? old : acc_status_string(st);
        size_t np = strlen(prefix), nr = strlen(rest);
        if (np > ERROR_MESSAGE_MAX - 1)
            np = ERROR_MESSAGE_MAX - 1;
        if (nr > ERROR_MESSAGE_MAX - 1 - np)
            nr = ERROR_MESSAGE_MAX - 1 - np;
        memcpy(error_message, prefix, np);
        memcpy(error_message + np, rest, nr);
        error_message[np + nr] = '\0';
    }
    return st;
}

const char *acc_error_message(void)
{
    return error_message;
}

void acc_error_clear(void)
{
    error_message[0] = '\0';
}

const char *acc_version(void)
{
    return ACC_VERSION_STRING;
}
