/* Recognising a topology format from its content, never from a file name. */
#include "internal.h"

#include <ctype.h>
#include <string.h>

static const char *skip_space_and_comments_xml(const char *p, const char *end)
{
    for (;;) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
            const char *q = p + 4;
            while (q + 3 <= end && memcmp(q, "-->", 3) != 0)
                q++;
            if (q + 3 > end)
                return end;
            p = q + 3;
        } else if (end - p >= 2 && (memcmp(p, "<?", 2) == 0 || memcmp(p, "<!", 2) == 0)) {
            while (p < end && *p != '>')
                p++;
            if (p < end)
                p++;
        } else {
            return p;
        }
    }
}

static int root_is(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    return end - p > (long)n && p[0] == '<' && memcmp(p + 1, name, n) == 0 &&
           (p + 1 + n == end || isspace((unsigned char)p[1 + n]) || p[1 + n] == '>' ||
            p[1 + n] == '/');
}

/* A line, after ANSI escapes and blanks, that starts with "GPU0" and holds an "X" cell. */
static int looks_like_smi(const char *p, const char *end)
{
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        char line[512];
        size_t n = 0;
        const char *q;
        if (!eol)
            eol = end;
        for (q = p; q < eol && n + 1 < sizeof(line); q++) {
            if (*q == '\x1b') { /* skip ESC [ ... letter */
                while (q < eol && !isalpha((unsigned char)*q))
                    q++;
                continue;
            }
            line[n++] = *q;
        }
        line[n] = '\0';
        q = line;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "GPU0", 4) == 0 && (q[4] == ' ' || q[4] == '\t') &&
            (strstr(q + 4, " X") || strstr(q + 4, "\tX")))
            return 1;
        p = eol + 1;
    }
    return 0;
}

static int looks_like_yaml(const char *p, const char *end)
{
    static const char *const keys[] = {"version:", "node:", "network:", "name:", NULL};
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *const *k;
        if (!eol)
            eol = end;
        if (*p != '#' && *p != '\n' && *p != '\r' && strncmp(p, "---", 3) != 0) {
            for (k = keys; *k; k++)
                if ((size_t)(eol - p) >= strlen(*k) && memcmp(p, *k, strlen(*k)) == 0)
                    return 1;
        }
        p = eol + 1;
    }
    return 0;
}

acc_topo_format_t acc_topo_detect_format(const char *text, size_t len)
{
    const char *p = text, *end = text + len;

    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end && isspace((unsigned char)*p))
        p++;
    if (p < end && *p == '<') {
        p = skip_space_and_comments_xml(p, end);
        if (root_is(p, end, "topology"))
            return ACC_TOPO_FMT_HWLOC_XML;
        if (root_is(p, end, "system"))
            return ACC_TOPO_FMT_NCCL_XML;
        if (root_is(p, end, "graphs") || root_is(p, end, "graph"))
            return ACC_TOPO_FMT_NCCL_GRAPH;
        return ACC_TOPO_FMT_UNKNOWN;
    }
    if (looks_like_smi(p, end))
        return ACC_TOPO_FMT_NVIDIA_SMI;
    if (looks_like_yaml(p, end))
        return ACC_TOPO_FMT_YAML;
    return ACC_TOPO_FMT_UNKNOWN;
}
