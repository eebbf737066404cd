/* Strict number parsing and small string helpers shared by the parsers, and the escaping of
 * strings for the XML and JSON that acc writes. */
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
    return acc_mem_strndup(s, n);
}

void acc_buf_put_xml(acc_buf_t *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            acc_buf_puts(b, "&amp;");
            break;
        case '<':
            acc_buf_puts(b, "&lt;");
            break;
        case '>':
            acc_buf_puts(b, "&gt;");
            break;
        case '"':
            acc_buf_puts(b, "&quot;");
            break;
        default:
            /* XML 1.0 allows no control character but tab, newline and carriage return. */
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n' || *s == '\r')
                acc_buf_append(b, s, 1);
        }
    }
}

void acc_buf_put_json(acc_buf_t *b, const char *s)
{
    acc_buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            acc_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            acc_buf_printf(b, "\\u%04x", c);
        else
            acc_buf_append(b, s, 1);
    }
    acc_buf_puts(b, "\"");
}
