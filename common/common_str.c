/* Strict number parsing and small string helpers shared by the parsers. */
#include "acc_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_blanks(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

acc_status_t acc_parse_int64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    if (!s)
        return ACC_ERR_INVALID;
    s = skip_blanks(s);
    if (!*s)
        return ACC_ERR_INVALID;
    errno = 0;
    v = strtoll(s, &end, 0);
    if (errno == ERANGE)
        return ACC_ERR_RANGE;
    if (end == s || *skip_blanks(end) != '\0')
        return ACC_ERR_INVALID;
    *out = v;
    return ACC_OK;
}

acc_status_t acc_parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (!s)
        return ACC_ERR_INVALID;
    s = skip_blanks(s);
    if (!*s)
        return ACC_ERR_INVALID;
    errno = 0;
    v = strtod(s, &end);
    if (errno == ERANGE || !isfinite(v))
        return ACC_ERR_RANGE;
    if (end == s || *skip_blanks(end) != '\0')
        return ACC_ERR_INVALID;
    *out = v;
    return ACC_OK;
}

int acc_str_ieq(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    while (*a && *b) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
        a++;
        b++;
    }
    return *a == *b;
}

char *acc_str_trim_dup(const char *s)
{
    size_t n;
    s = skip_blanks(s);
    n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return acc_strndup(s, n);
}
