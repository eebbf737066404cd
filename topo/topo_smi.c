/*
 * Importer of `nvidia-smi topo -m` text: the matrix of GPU and NIC connections.
 *
 * The matrix says, for every pair of devices, how they are joined (NV#: # bonded NVLinks, or the
 * PCIe level PIX, PXB, PHB, NODE, SYS), and for every GPU its CPU and NUMA affinity; a legend
 * names the NICs.  It says nothing of GPU models, bus ids, link speeds, NIC speeds or switches.
 * This file rebuilds the smallest graph that reproduces the matrix under the building conventions
 * of internal.h and records every fact it had to assume (acc_topo_assume).
 *
 * Accepted text (reference/04-topology.md §4): '#' comment lines and free text before the
 * header; a header of column names GPU0..GPUn, then NIC0..NICm or RDMA device names (old
 * drivers), then "CPU Affinity", "NUMA Affinity" and, on newer drivers, "GPU NUMA ID"; one row
 * per column; then the Legend and "NIC Legend:" blocks.  Cells are separated by tabs or, in
 * copies of a terminal, by spaces; no cell value contains a blank, so rows are split on white
 * space and only the multi-word header names are read specially (from the right).  ANSI escape
 * sequences (underlined headers on a TTY) and CR line ends are removed first.
 */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* NCCL_TOPO_MAX_NODES is 576; a matrix that large is already far past any real machine. */
#define MAX_DEVICES 512
#define MAX_TEXT    (64 << 20)
#define NAME_LEN    ACC_TOPO_NAME_MAX

/* Cell codes.  The PCIe levels are ordered from nearest to farthest; NV# is C_NV + #. */
enum { C_NONE = 0, C_X, C_PIX, C_PXB, C_PHB, C_NODE, C_SYS, C_NV = 16 };
#define MAX_NV     99
#define IS_PCIE(c) ((c) >= C_PIX && (c) <= C_SYS)
#define IS_NV(c)   ((c) > C_NV)

/* Trailing (non-device) columns of the header. */
enum { T_CPU, T_NUMA, T_GPU_NUMA, T_COUNT };

typedef struct {
    const char *s;
    int n;
} tok_t;

typedef struct {
    const char *file;
    char *buf;   /* the text without escape sequences; lines NUL-terminated in place */
    char **line; /* line[i] is line number i + 1 */
    int nlines;
    tok_t *tok; /* tokens of the line being read */
    int ntok;
    size_t tok_cap;

    int header_line, ngpu, nnic, ndev;
    char (*col)[NAME_LEN]; /* column (device) names; GPUs first */
    int trail[T_COUNT];    /* position of each trailing column among them, -1 if absent */
    int ntrail;
    unsigned char *cell;                    /* ndev x ndev */
    int *row_line;                          /* per device; 0 while its row is missing */
    int *legend_line;                       /* per device (NICs) */
    int *numa_val;                          /* per GPU, -1 for N/A */
    char (*cpu_aff)[ACC_TOPO_AFFINITY_MAX]; /* per GPU; "" for N/A */
    char (*dev)[NAME_LEN];                  /* NIC device names */
    int last_line;                          /* last non-blank line read */
    int aff_long;                           /* 1 + a GPU whose CPU Affinity did not fit */

    const acc_gpu_model_t *named; /* a GPU model named on some line */
    int named_line;
    char named_text[100];

    /* Model building: per device, its CPU group and PCIe groups (union-find roots). */
    int *grp, *hb, *pxb, *pix, ngrp;
} smi_t;

static acc_status_t perr(const smi_t *p, int line, const char *fmt, ...) ACC_PRINTF(3, 4);

static acc_status_t perr(const smi_t *p, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_PARSE, "%s:%d: %s", p->file, line, msg);
}

static acc_status_t nomem(void)
{
    return acc_error_set(ACC_ERR_NOMEM, "out of memory reading nvidia-smi topo -m text");
}

/* ---- text and tokens ------------------------------------------------------------------- */

/* Copy the text without ANSI escape sequences (ESC [ params final-byte) and a UTF-8 BOM,
 * refusing binary data, then split it into NUL-terminated lines without trailing blanks. */
static acc_status_t prepare(smi_t *p, const char *text, size_t len)
{
    size_t i = 0, n = 0;
    int line = 1, k;
    char *s;

    /* A capture is a few KB; the bound keeps line numbers in an int. */
    if (len > MAX_TEXT)
        return perr(p, 1,
                    "%zu bytes: nvidia-smi topo -m text is far shorter (at most %d bytes "
                    "accepted)",
                    len, MAX_TEXT);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    if (!(p->buf = acc_malloc(len + 1)))
        return nomem();
    for (; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0x1b) {
            size_t j = i + 1;
            if (j < len && text[j] == '[') {
                for (j++; j < len && text[j] >= 0x20 && text[j] <= 0x3f; j++)
                    ;
                if (j < len && text[j] >= 0x40 && text[j] <= 0x7e) {
                    i = j;
                    continue;
                }
            }
            return perr(p, line,
                        "broken escape sequence (ESC without '[' ... letter); expected "
                        "the text printed by `nvidia-smi topo -m`");
        }
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
            return perr(p, line,
                        "binary data (byte 0x%02x); expected the text printed by "
                        "`nvidia-smi topo -m`",
                        c);
        line += c == '\n';
        p->buf[n++] = (char)c;
    }
    p->buf[n] = '\0';
    if (!(p->line = acc_calloc((size_t)line, sizeof(char *))))
        return nomem();
    for (s = p->buf, k = 0; k < line; k++) {
        char *eol = strchr(s, '\n'), *end;
        if (eol)
            *eol = '\0';
        end = s + strlen(s);
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            *--end = '\0';
        p->line[k] = s;
        s = eol ? eol + 1 : end;
    }
    p->nlines = line;
    return ACC_OK;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static acc_status_t tokenize(smi_t *p, const char *s)
{
    p->ntok = 0;
    for (;;) {
        const char *b;
        void *v = p->tok;
        while (is_blank(*s))
            s++;
        if (!*s)
            return ACC_OK;
        for (b = s; *s && !is_blank(*s); s++)
            ;
        if (acc_array_reserve(&v, &p->tok_cap, (size_t)p->ntok + 1, sizeof(tok_t)) != ACC_OK)
            return nomem();
        p->tok = v;
        p->tok[p->ntok].s = b;
        p->tok[p->ntok++].n = (int)(s - b);
    }
}

static int tok_eq(const tok_t *t, const char *s)
{
    return (size_t)t->n == strlen(s) && memcmp(t->s, s, (size_t)t->n) == 0;
}

static int is_comment(const char *s)
{
    while (is_blank(*s))
        s++;
    return *s == '#';
}

/* X, NV#, PIX, PXB, PHB, NODE, SYS and the old SOC (= SYS); -1 for anything else. */
static int parse_cell(const tok_t *t)
{
    static const struct {
        const char *s;
        int c;
    } names[] = {{"X", C_X},       {"PIX", C_PIX}, {"PXB", C_PXB}, {"PHB", C_PHB},
                 {"NODE", C_NODE}, {"SYS", C_SYS}, {"SOC", C_SYS}};
    size_t i;
    if (t->n >= 3 && t->n <= 4 && t->s[0] == 'N' && t->s[1] == 'V' && t->s[2] != '0') {
        int v = 0, k;
        for (k = 2; k < t->n; k++) {
            if (!isdigit((unsigned char)t->s[k]))
                return -1;
            v = v * 10 + (t->s[k] - '0');
        }
        return C_NV + v;
    }
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (tok_eq(t, names[i].s))
            return names[i].c;
    return -1;
}

static const char *cell_str(int c, char buf[8])
{
    static const char *const names[] = {"?", "X", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (IS_NV(c)) {
        snprintf(buf, 8, "NV%d", (c - C_NV) % 100);
        return buf;
    }
    return c >= 0 && c <= C_SYS ? names[c] : "?";
}

/* A column name: 'G' for GPU<k>, 'N' for NIC<k>, 'R' for an RDMA device name (mlx5_0,
 * rdmap79s0: a letter first, a digit somewhere), 0 for anything else. */
static int column_kind(const tok_t *t, int *k)
{
    int i, digit = 0;
    *k = -1;
    if (t->n >= NAME_LEN || !isalpha((unsigned char)t->s[0]) || parse_cell(t) >= 0)
        return 0;
    if (t->n > 3 && (memcmp(t->s, "GPU", 3) == 0 || memcmp(t->s, "NIC", 3) == 0)) {
        int v = 0;
        for (i = 3; i < t->n && isdigit((unsigned char)t->s[i]) && v < 100000; i++)
            v = v * 10 + (t->s[i] - '0');
        if (i == t->n && (t->s[3] != '0' || t->n == 4)) {
            *k = v;
            return t->s[0] == 'G' ? 'G' : 'N';
        }
        if (t->s[0] == 'G')
            return 0;
    }
    for (i = 0; i < t->n; i++) {
        unsigned char c = (unsigned char)t->s[i];
        if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != ':')
            return 0;
        digit |= isdigit(c);
    }
    return digit ? 'R' : 0;
}

static int find_column(const smi_t *p, const tok_t *t)
{
    int d;
    for (d = 0; d < p->ndev; d++)
        if (tok_eq(t, p->col[d]))
            return d;
    return -1;
}

/* ---- a GPU model named in free text ------------------------------------------------------ */

/* Words from .. to-1 joined by single spaces. */
static void join_words(const tok_t *w, int from, int to, char out[100])
{
    int j, n = 0;
    out[0] = '\0';
    for (j = from; j < to; j++)
        n += snprintf(out + n, (size_t)(100 - n), "%s%.*s", j > from ? " " : "", w[j].n, w[j].s);
}

/* Look for a GPU model in a line that is not part of the matrix ("8x A100-SXM-40G", "GPU 0-7:
 * NVIDIA H100 80GB HBM3", "4x L40S PCIe").  Phrases of up to three words are tried, longest
 * first, and a match counts only if it needs the first character of its first word: the "H100"
 * of "NVIDIA H100" is found at "H100", and a fragment such as "A10" inside a word (a commit
 * hash) or in a later word is not credited to the phrase. */
static void sniff_model(smi_t *p, int li)
{
    static const char seps[] = " \t\r,;()[]{}\"'`|/=<>";
    tok_t w[64];
    int nw = 0, i, k;
    const char *s = p->line[li];

    if (p->named)
        return;
    while (*s && nw < 64) {
        const char *b;
        while (*s && strchr(seps, *s))
            s++;
        for (b = s; *s && !strchr(seps, *s); s++)
            ;
        if (s > b && s - b < 32) {
            w[nw].s = b;
            w[nw++].n = (int)(s - b);
        }
    }
    for (i = 0; i < nw; i++) {
        for (k = i + 3 <= nw ? 3 : nw - i; k >= 1; k--) {
            char phrase[100], rest[100];
            const acc_gpu_model_t *m;
            join_words(w, i, i + k, phrase);
            m = acc_topo_gpu_model_by_name(phrase);
            if (!m || acc_topo_gpu_model_by_name(phrase + 1) == m)
                continue;
            /* Quote only the words the match needs ("A100-SXM-40G", not "A100-SXM-40G 2x"). */
            while (--k >= 1) {
                join_words(w, i, i + k, rest);
                if (acc_topo_gpu_model_by_name(rest) != m)
                    break;
                memcpy(phrase, rest, sizeof(phrase));
            }
            p->named = m;
            p->named_line = li + 1;
            memcpy(p->named_text, phrase, sizeof(phrase));
            return;
        }
    }
}

/* ---- header, rows, legend ---------------------------------------------------------------- */

static acc_status_t alloc_tables(smi_t *p)
{
    size_t n = (size_t)p->ndev, g = (size_t)p->ngpu;
    p->cell = acc_calloc(n * n, 1);
    p->row_line = acc_calloc(n, sizeof(int));
    p->legend_line = acc_calloc(n, sizeof(int));
    p->numa_val = acc_calloc(g, sizeof(int));
    p->cpu_aff = acc_calloc(g, sizeof(*p->cpu_aff));
    p->dev = acc_calloc(n, sizeof(*p->dev));
    p->grp = acc_calloc(4 * n, sizeof(int));
    if (!p->cell || !p->row_line || !p->legend_line || !p->numa_val || !p->cpu_aff || !p->dev ||
        !p->grp)
        return nomem();
    p->hb = p->grp + n;
    p->pxb = p->grp + 2 * n;
    p->pix = p->grp + 3 * n;
    return ACC_OK;
}

static acc_status_t parse_header(smi_t *p, int li)
{
    static const char *const trail_names[T_COUNT] = {"CPU Affinity", "NUMA Affinity",
                                                     "GPU NUMA ID"};
    int n = p->ntok, kinds[T_COUNT], nk = 0, i, k, line = li + 1;

    /* The multi-word columns, read from the right. */
    while (n > 0) {
        int kind;
        if (n >= 3 && tok_eq(&p->tok[n - 3], "GPU") && tok_eq(&p->tok[n - 2], "NUMA") &&
            tok_eq(&p->tok[n - 1], "ID")) {
            kind = T_GPU_NUMA;
            n -= 3;
        } else if (n >= 2 && tok_eq(&p->tok[n - 1], "Affinity") &&
                   (tok_eq(&p->tok[n - 2], "CPU") || tok_eq(&p->tok[n - 2], "NUMA"))) {
            kind = tok_eq(&p->tok[n - 2], "CPU") ? T_CPU : T_NUMA;
            n -= 2;
        } else {
            break;
        }
        for (i = 0; i < nk; i++)
            if (kinds[i] == kind)
                return perr(p, line, "header: column '%s' appears twice", trail_names[kind]);
        kinds[nk++] = kind;
    }
    for (i = 0; i < T_COUNT; i++)
        p->trail[i] = -1;
    for (i = 0; i < nk; i++)
        p->trail[kinds[nk - 1 - i]] = i;
    p->ntrail = nk;
    if (n > MAX_DEVICES)
        return perr(p, line, "header: %d device columns; at most %d are supported", n, MAX_DEVICES);
    p->ndev = n;
    if (!(p->col = acc_calloc((size_t)n, sizeof(*p->col))))
        return nomem();
    for (i = 0; i < n; i++) {
        const tok_t *t = &p->tok[i];
        int kind = column_kind(t, &k);
        if (!kind)
            return perr(p, line,
                        "header: '%.*s' is not a column name (expected GPU<k>, NIC<k>, "
                        "an RDMA device name such as mlx5_0, 'CPU Affinity', 'NUMA Affinity' "
                        "or 'GPU NUMA ID')",
                        t->n, t->s);
        if (kind == 'G' && (p->nnic > 0 || k != p->ngpu))
            return perr(p, line,
                        "header: expected %s%d, found %.*s (GPU columns come first, "
                        "numbered from 0)",
                        p->nnic ? "NIC" : "GPU", p->nnic ? p->nnic : p->ngpu, t->n, t->s);
        if (kind == 'N' && k != p->nnic)
            return perr(p, line, "header: expected NIC%d, found %.*s", p->nnic, t->n, t->s);
        if (kind == 'R' && find_column(p, t) >= 0)
            return perr(p, line, "header: column %.*s appears twice", t->n, t->s);
        memcpy(p->col[i], t->s, (size_t)t->n);
        if (kind == 'G')
            p->ngpu++;
        else
            p->nnic++;
    }
    p->header_line = line;
    return alloc_tables(p);
}

static int all_of(const tok_t *t, const char *set)
{
    int i;
    for (i = 0; i < t->n; i++)
        if (!strchr(set, t->s[i]))
            return 0;
    return t->n > 0;
}

/* The affinity columns of a GPU row. */
static acc_status_t parse_affinity(smi_t *p, int d, const tok_t *trail, int line)
{
    if (p->trail[T_CPU] >= 0) {
        const tok_t *t = &trail[p->trail[T_CPU]];
        /* A cpulist ("0-47,96-143") as current drivers print it, or a hex mask. */
        if (!tok_eq(t, "N/A") && !all_of(t, "0123456789abcdefABCDEFx,-"))
            return perr(p, line,
                        "%s: CPU Affinity '%.*s' is neither a CPU list such as 0-47,96-143 nor N/A",
                        p->col[d], t->n, t->s);
        if (!tok_eq(t, "N/A") && t->n < ACC_TOPO_AFFINITY_MAX)
            memcpy(p->cpu_aff[d], t->s, (size_t)t->n);
        else if (!tok_eq(t, "N/A"))
            p->aff_long = d + 1;
    }
    p->numa_val[d] = -1;
    if (p->trail[T_NUMA] >= 0) {
        const tok_t *t = &trail[p->trail[T_NUMA]];
        if (!tok_eq(t, "N/A") && (!all_of(t, "0123456789") || t->n > 4))
            return perr(p, line, "%s: NUMA Affinity '%.*s' is neither a NUMA node number nor N/A",
                        p->col[d], t->n, t->s);
        if (!tok_eq(t, "N/A"))
            p->numa_val[d] = atoi(t->s);
    }
    if (p->trail[T_GPU_NUMA] >= 0) {
        const tok_t *t = &trail[p->trail[T_GPU_NUMA]];
        if (!tok_eq(t, "N/A") && !all_of(t, "0123456789"))
            return perr(p, line, "%s: GPU NUMA ID '%.*s' is neither a number nor N/A", p->col[d],
                        t->n, t->s);
    }
    return ACC_OK;
}

static acc_status_t parse_row(smi_t *p, int d, int line)
{
    int want = 1 + p->ndev + p->ntrail, j;
    /* NIC rows have no affinity columns; tab-separated captures leave them empty. */
    int least = d < p->ngpu ? want : 1 + p->ndev;

    if (p->ntok < least || p->ntok > want)
        return perr(p, line, "row %s has %d cells, expected %d (%d device columns%s)", p->col[d],
                    p->ntok - 1, (d < p->ngpu ? want : least) - 1, p->ndev,
                    d < p->ngpu && p->ntrail ? " and the affinity columns" : "");
    for (j = 0; j < p->ndev; j++) {
        const tok_t *t = &p->tok[1 + j];
        int c = parse_cell(t);
        if (c < 0 || c > C_NV + MAX_NV)
            return perr(p, line,
                        "row %s, column %s: unknown cell '%.*s' (expected X, NV#, PIX, "
                        "PXB, PHB, NODE, SYS or SOC)",
                        p->col[d], p->col[j], t->n, t->s);
        p->cell[(size_t)d * p->ndev + j] = (unsigned char)c;
    }
    p->row_line[d] = line;
    return d < p->ngpu ? parse_affinity(p, d, &p->tok[1 + p->ndev], line) : ACC_OK;
}

/* Lines after the matrix: the legends, and free text that may name the GPU model. */
static acc_status_t parse_tail_line(smi_t *p, int li)
{
    const tok_t *t = p->tok;
    int line = li + 1, d, k;

    if (p->ntok >= 2 && (d = find_column(p, &t[0])) >= 0 && parse_cell(&t[1]) >= 0)
        return perr(p, line, "second row for %s (first on line %d)", p->col[d], p->row_line[d]);
    if (p->ntok >= 1 && t[0].n > 4 && t[0].s[t[0].n - 1] == ':' && memcmp(t[0].s, "NIC", 3) == 0) {
        tok_t name = {t[0].s, t[0].n - 1};
        if (column_kind(&name, &k) != 'N')
            return ACC_OK; /* "NIC Legend:" */
        if ((d = find_column(p, &name)) < 0)
            return perr(p, line, "the NIC Legend names %.*s, but the matrix has %s", name.n, name.s,
                        p->nnic ? "fewer NIC columns" : "no NIC column");
        if (p->legend_line[d])
            return perr(p, line, "the NIC Legend names %s twice (first on line %d)", p->col[d],
                        p->legend_line[d]);
        if (p->ntok != 2 || t[1].n >= NAME_LEN)
            return perr(p, line,
                        "NIC Legend entry for %s: expected '%s: <device name>' such as "
                        "'%s: mlx5_0'",
                        p->col[d], p->col[d], p->col[d]);
        memcpy(p->dev[d], t[1].s, (size_t)t[1].n);
        p->legend_line[d] = line;
        return ACC_OK;
    }
    if (!strstr(p->line[li], " = "))
        sniff_model(p, li);
    return ACC_OK;
}

static acc_status_t parse_text(smi_t *p)
{
    int li, d, rows = 0, legend = 0;
    acc_status_t st;

    for (li = 0; li < p->nlines && !p->header_line; li++) {
        int k;
        if (!p->line[li][0])
            continue;
        if (is_comment(p->line[li])) {
            sniff_model(p, li);
            continue;
        }
        if ((st = tokenize(p, p->line[li])) != ACC_OK)
            return st;
        if (column_kind(&p->tok[0], &k) == 'G' && k == 0) {
            int i, cells = 0;
            for (i = 1; i < p->ntok; i++)
                cells += parse_cell(&p->tok[i]) >= 0;
            if (!cells) {
                if ((st = parse_header(p, li)) != ACC_OK)
                    return st;
                continue;
            }
        }
        if (p->ntok >= 2 && column_kind(&p->tok[0], &k) && parse_cell(&p->tok[1]) >= 0)
            return perr(p, li + 1,
                        "row %.*s comes before any header line (a line of column "
                        "names GPU0 GPU1 ... CPU Affinity NUMA Affinity)",
                        p->tok[0].n, p->tok[0].s);
        sniff_model(p, li);
    }
    if (!p->header_line)
        return perr(p, p->nlines,
                    "no header line (column names GPU0 GPU1 ... CPU Affinity "
                    "NUMA Affinity): this is not the output of `nvidia-smi topo -m`");
    p->last_line = p->header_line;
    for (; li < p->nlines; li++) {
        if (!p->line[li][0])
            continue;
        if (is_comment(p->line[li])) {
            sniff_model(p, li);
            continue;
        }
        if ((st = tokenize(p, p->line[li])) != ACC_OK)
            return st;
        p->last_line = li + 1;
        if (rows == p->ndev) {
            if ((st = parse_tail_line(p, li)) != ACC_OK)
                return st;
            continue;
        }
        if ((d = find_column(p, &p->tok[0])) < 0) {
            for (d = 0; d < p->ndev && p->row_line[d]; d++)
                ;
            return perr(p, li + 1,
                        "expected the row of %s, found '%.*s' (every header column needs a row)",
                        p->col[d], p->tok[0].n, p->tok[0].s);
        }
        if (p->row_line[d])
            return perr(p, li + 1, "second row for %s (first on line %d)", p->col[d],
                        p->row_line[d]);
        if ((st = parse_row(p, d, li + 1)) != ACC_OK)
            return st;
        rows++;
    }
    if (rows < p->ndev) {
        for (d = 0; d < p->ndev && p->row_line[d]; d++)
            ;
        return perr(p, p->last_line,
                    "the text ends before the row of %s (%d of %d rows; a truncated capture?)",
                    p->col[d], rows, p->ndev);
    }
    for (d = p->ngpu; d < p->ndev; d++)
        legend |= p->legend_line[d] != 0;
    for (d = p->ngpu; d < p->ndev && legend; d++)
        if (!p->legend_line[d] && strncmp(p->col[d], "NIC", 3) == 0)
            return perr(p, p->last_line, "the NIC Legend does not name %s (a truncated capture?)",
                        p->col[d]);
    for (d = p->ngpu; d < p->ndev; d++)
        if (!p->dev[d][0] && strncmp(p->col[d], "NIC", 3) != 0)
            snprintf(p->dev[d], NAME_LEN, "%s", p->col[d]); /* old drivers: the column name */
    return ACC_OK;
}

#define CELL(p, a, b) ((p)->cell[(size_t)(a) * (p)->ndev + (b)])

static acc_status_t check_matrix(const smi_t *p)
{
    int a, b;
    char s1[8], s2[8];
    for (a = 0; a < p->ndev; a++) {
        if (CELL(p, a, a) != C_X)
            return perr(p, p->row_line[a], "row %s: the diagonal cell is %s, expected X (self)",
                        p->col[a], cell_str(CELL(p, a, a), s1));
        for (b = 0; b < p->ndev; b++) {
            int c = CELL(p, a, b), r = CELL(p, b, a);
            if (a == b)
                continue;
            if (c == C_X)
                return perr(p, p->row_line[a], "X (self) off the diagonal at %s-%s", p->col[a],
                            p->col[b]);
            if (c != r)
                return perr(p, p->row_line[a > b ? a : b],
                            "asymmetric matrix: %s-%s is %s (line %d) but %s-%s is %s (line %d)",
                            p->col[a], p->col[b], cell_str(c, s1), p->row_line[a], p->col[b],
                            p->col[a], cell_str(r, s2), p->row_line[b]);
            if (IS_NV(c) && (a >= p->ngpu || b >= p->ngpu))
                return perr(p, p->row_line[a], "%s-%s is %s, but NVLinks join GPUs only", p->col[a],
                            p->col[b], cell_str(c, s1));
        }
    }
    return ACC_OK;
}

/* ---- the model --------------------------------------------------------------------------- */

static int uf_find(int *par, int x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* The smaller index becomes the root, so a group is named by its first device. */
static void uf_join(int *par, int a, int b)
{
    a = uf_find(par, a);
    b = uf_find(par, b);
    if (a != b)
        par[a > b ? a : b] = a < b ? a : b;
}

static void uf_flatten(int *par, int n)
{
    int a;
    for (a = 0; a < n; a++)
        par[a] = uf_find(par, a);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* "GPU0, GPU1, NIC0" for the members of one group. */
static void list_members(const smi_t *p, const int *of, int id, acc_buf_t *b)
{
    int d, first = 1;
    for (d = 0; d < p->ndev; d++) {
        if (of[d] != id)
            continue;
        acc_buf_printf(b, "%s%s", first ? "" : ", ", p->col[d]);
        first = 0;
    }
}

/* CPU groups (NUMA nodes).  PIX/PXB/PHB/NODE never leave a NUMA node, so devices joined by them
 * share one; GPUs carry their node in the NUMA Affinity column.  What is left (NICs SYS to every
 * GPU, GPUs with NUMA Affinity N/A) joins the first group it is not SYS to, or opens a group of
 * its own.  Known nodes get CPU ids 0..k-1 in numeric order, the others follow. */
static acc_status_t group_numa(smi_t *p, acc_topo_t *t)
{
    int n = p->ndev, a, b, g, nvals = 0, ngrp;
    int *mem = acc_malloc(5 * (size_t)n * sizeof(int));
    unsigned char *conflict = acc_calloc((size_t)n, 1);
    int *par, *val, *who, *gid, *vals;
    acc_buf_t b1;
    acc_status_t st = ACC_OK;

    acc_buf_init(&b1);
    if (!mem || !conflict) {
        st = nomem();
        goto out;
    }
    par = mem, val = mem + n, who = mem + 2 * n, gid = mem + 3 * n, vals = mem + 4 * n;
    for (a = 0; a < n; a++) {
        par[a] = a;
        val[a] = who[a] = gid[a] = -1;
    }
    for (a = 0; a < n; a++)
        for (b = a + 1; b < n; b++)
            if (CELL(p, a, b) >= C_PIX && CELL(p, a, b) <= C_NODE)
                uf_join(par, a, b);
    uf_flatten(par, n);
    for (a = 0; a < p->ngpu; a++) {
        int r = par[a];
        if (p->numa_val[a] < 0)
            continue;
        if (val[r] >= 0 && val[r] != p->numa_val[a]) {
            st = perr(p, p->row_line[a],
                      "%s (NUMA Affinity %d) and %s (NUMA Affinity %d) are "
                      "joined by PIX/PXB/PHB/NODE cells, which never cross NUMA nodes",
                      p->col[who[r]], val[r], p->col[a], p->numa_val[a]);
            goto out;
        }
        val[r] = p->numa_val[a];
        who[r] = a;
        vals[nvals++] = p->numa_val[a];
    }
    qsort(vals, (size_t)nvals, sizeof(int), cmp_int);
    for (a = 0, b = 0; a < nvals; a++)
        if (a == 0 || vals[a] != vals[b - 1])
            vals[b++] = vals[a];
    nvals = ngrp = b;
    for (a = 0; a < n; a++)
        if (val[par[a]] >= 0)
            for (gid[par[a]] = 0; vals[gid[par[a]]] != val[par[a]]; gid[par[a]]++)
                ;
    for (a = 0; a < n; a++) {
        int r = par[a], m, e;
        if (gid[r] >= 0)
            continue;
        memset(conflict, 0, (size_t)n);
        for (m = 0; m < n; m++) {
            if (par[m] != r)
                continue;
            for (e = 0; e < n; e++)
                if (gid[par[e]] >= 0 && CELL(p, m, e) == C_SYS)
                    conflict[gid[par[e]]] = 1;
        }
        for (g = 0; g < ngrp && conflict[g]; g++)
            ;
        gid[r] = g;
        ngrp += g == ngrp;
    }
    for (a = 0; a < n; a++)
        p->grp[a] = gid[par[a]];
    p->ngrp = ngrp;

    for (a = 0; a < nvals && vals[a] == a; a++)
        ;
    if (a < nvals) {
        for (a = 0; a < nvals; a++)
            acc_buf_printf(&b1, "%sCPU%d = NUMA %d", a ? ", " : "", a, vals[a]);
        if ((st = acc_buf_status(&b1)) != ACC_OK ||
            (st = acc_topo_assume(t,
                                  "CPU vertices from the NUMA Affinity column: %s (NUMA "
                                  "nodes without GPUs do not appear in nvidia-smi topo -m)",
                                  b1.data)) != ACC_OK)
            goto out;
    }
    if (p->aff_long &&
        (st = acc_topo_assume(t,
                              "the CPU Affinity of %s is longer than %d "
                              "characters and was not kept",
                              p->col[p->aff_long - 1], ACC_TOPO_AFFINITY_MAX - 1)) != ACC_OK)
        goto out;
    for (g = nvals; g < ngrp; g++) {
        int gpus = 0;
        for (a = 0; a < p->ngpu; a++)
            gpus += p->grp[a] == g;
        acc_buf_reset(&b1);
        list_members(p, p->grp, g, &b1);
        if ((st = acc_buf_status(&b1)) != ACC_OK)
            goto out;
        st = acc_topo_assume(t, "CPU%d: a NUMA node the input does not number, holding %s (%s)", g,
                             b1.data,
                             gpus ? "NUMA Affinity N/A; devices not SYS to each other are taken "
                                    "to share a NUMA node"
                                  : "SYS to every GPU, so on a node without GPUs");
        if (st != ACC_OK)
            goto out;
    }
out:
    acc_buf_free(&b1);
    acc_free(mem);
    acc_free(conflict);
    return st;
}

/* The most NVLinks any GPU has (NVLink4/5 parts: 18); more per GPU means an NVSwitch. */
#define MOST_NVLINKS 18

typedef struct {
    const acc_gpu_model_t *m; /* table entry, or NULL when only sm is known */
    int sm;
    char model[NAME_LEN];
    int uniform;  /* NV# of every GPU pair when all are equal, else 0 */
    int tmax;     /* most NVLinks of one GPU, summed over its peers */
    int nvswitch; /* links go into one NVSwitch fabric vertex */
} gpu_plan_t;

/* The table's model for a name fragment, or only `sm` and a label for parts not in the table. */
static void use_model(gpu_plan_t *g, const char *fragment, int sm, const char *model)
{
    g->m = fragment ? acc_topo_gpu_model_by_name(fragment) : NULL;
    g->sm = g->m ? g->m->sm : sm;
    snprintf(g->model, sizeof(g->model), "%s", g->m ? g->m->model : model);
}

/* Which GPU: named on some line, else inferred from the NVLink pattern, else refused. */
static acc_status_t choose_model(smi_t *p, acc_topo_t *t, gpu_plan_t *g)
{
    int G = p->ngpu, a, b, min_peers = G, any = 0;
    const acc_gpu_arch_t *arch;
    acc_status_t st;

    memset(g, 0, sizeof(*g));
    g->uniform = -1;
    for (a = 0; a < G; a++) {
        int total = 0, peers = 0;
        for (b = 0; b < G; b++) {
            int c = CELL(p, a, b), nv = IS_NV(c) ? c - C_NV : 0;
            if (a == b)
                continue;
            total += nv;
            peers += nv > 0;
            any |= nv > 0;
            if (b > a)
                g->uniform = g->uniform < 0 || g->uniform == nv ? nv : 0;
        }
        g->tmax = total > g->tmax ? total : g->tmax;
        min_peers = peers < min_peers ? peers : min_peers;
    }
    g->uniform = g->uniform < 0 ? 0 : g->uniform;
    if (p->named) {
        arch = acc_topo_gpu_arch(p->named->sm);
        if (!any || (arch && arch->nvlink_gbs > 0 &&
                     (g->tmax <= arch->max_nvlinks ||
                      (g->uniform && G >= 3 && g->uniform <= arch->max_nvlinks)))) {
            use_model(g, NULL, p->named->sm, p->named->model);
            g->m = p->named;
            return acc_topo_assume(t,
                                   "GPU model %s, named on line %d ('%s'); nvidia-smi topo -m "
                                   "does not print it",
                                   g->model, p->named_line, p->named_text);
        }
        st = acc_topo_assume(t,
                             "line %d names %s, which cannot have the NVLinks of the matrix "
                             "(%d for one GPU); the model is inferred from the NV# cells instead",
                             p->named_line, p->named->model, g->tmax);
        if (st != ACC_OK)
            return st;
    }
    if (!any)
        return perr(p, p->header_line,
                    "the GPU model is unknown: nvidia-smi topo -m does not print it, this matrix "
                    "has no NVLink (NV#) to infer it from, and no line names it; add a comment "
                    "line naming it, such as '# GPU 0-%d: NVIDIA L40S', with the name that "
                    "`nvidia-smi --query-gpu=name --format=csv,noheader` prints",
                    G - 1);
    if (g->uniform && G >= 3 && g->uniform * (G - 1) > MOST_NVLINKS) {
        /* No GPU has that many links: the pairs meet in an NVSwitch fabric. */
        const char *why = "";
        switch (g->uniform) {
        case 18:
            use_model(g, "H100", 90, "");
            why = "HGX/DGX H100; H200 (same links) and B200 (NVLink5, twice the rate) systems "
                  "look the same";
            break;
        case 12:
            use_model(g, "A100-SXM4", 80, "");
            why = "DGX/HGX A100; an 80GB part looks the same";
            break;
        case 8:
            use_model(g, NULL, 80, "A800 SXM4");
            why = "A800 with 8 NVLinks; an H800 (sm_90) looks the same";
            break;
        case 6:
            use_model(g, "V100-SXM3", 70, "");
            why = "DGX-2 with NVSwitch";
            break;
        default:
            return perr(p, p->header_line,
                        "the GPU model is unknown: NV%d between every GPU "
                        "pair matches no known NVSwitch system; add a comment line naming it, "
                        "such as '# GPU 0-%d: NVIDIA H100 80GB HBM3'",
                        g->uniform, G - 1);
        }
        return acc_topo_assume(t,
                               "GPU model %s (sm_%d) inferred from NV%d between every GPU "
                               "pair (%s); name the model in a comment line to be exact",
                               g->model, g->sm, g->uniform, why);
    }
    if (g->tmax > MOST_NVLINKS)
        return perr(p, p->header_line,
                    "the NV# cells give one GPU %d NVLinks, more than any GPU has, yet the GPU "
                    "pairs differ, as they never do behind an NVSwitch: a damaged capture?",
                    g->tmax);
    if (g->uniform || min_peers >= 2) {
        /* A direct mesh: the links per GPU tell the generation. */
        if (g->tmax <= 6)
            use_model(g, "V100-SXM2", 70, "");
        else if (g->tmax <= 12)
            use_model(g, "A100-SXM4", 80, "");
        else
            use_model(g, "H100", 90, "");
        return acc_topo_assume(t,
                               "GPU model %s (sm_%d) inferred from up to %d direct NVLinks "
                               "per GPU (%s); name the model in a comment line to be exact",
                               g->model, g->sm, g->tmax,
                               g->tmax <= 6 ? "a DGX-1 hybrid cube mesh; P100 looks alike"
                                            : "a GPU generation with that many links");
    }
    return perr(p, p->header_line,
                "the GPU model is unknown: nvidia-smi topo -m does not print it, and NVLinks "
                "that join only pairs of GPUs (bridged PCIe cards?) do not tell it; add a comment "
                "line naming it, such as '# GPU 0-%d: NVIDIA A40'",
                G - 1);
}

static acc_status_t add_switch(acc_topo_t *t, int parent, int numa, int host_bridge, int gen,
                               int *out)
{
    acc_topo_vertex_t *v;
    acc_status_t st = acc_topo_add_vertex(t, ACC_VTX_PCISW, out);
    if (st != ACC_OK)
        return st;
    v = acc_topo_vertex_mut(t, *out);
    v->numa = numa;
    v->host_bridge = host_bridge;
    return topo_add_pcie(t, *out, parent, gen, 16);
}

/* The smallest PCIe tree with the matrix's classes: devices PIX to each other share a switch;
 * PIX groups PXB to each other hang from leaf switches under one upper switch; PXB groups PHB to
 * each other share a host bridge; the rest hang from their CPU, so that NODE crosses it.  A
 * lone device hangs directly from the level above, and a host bridge only one subtree uses is
 * folded into its CPU, as NCCL's own topology does. */
static acc_status_t build_pcie(smi_t *p, acc_topo_t *t, const int *vtx, const int *cpu_vtx, int gen,
                               int *nsw, int *nhb)
{
    int n = p->ndev, a, b;
    int *mem = acc_malloc(6 * (size_t)n * sizeof(int));
    int *pxb_in_hb, *pix_in_pxb, *dev_in_pix, *top_hb, *top_pxb, *top_pix;
    acc_status_t st = ACC_OK;

    if (!mem)
        return nomem();
    pxb_in_hb = mem, pix_in_pxb = mem + n, dev_in_pix = mem + 2 * n;
    top_hb = mem + 3 * n, top_pxb = mem + 4 * n, top_pix = mem + 5 * n;
    for (a = 0; a < n; a++) {
        p->hb[a] = p->pxb[a] = p->pix[a] = a;
        pxb_in_hb[a] = pix_in_pxb[a] = dev_in_pix[a] = 0;
        top_hb[a] = top_pxb[a] = top_pix[a] = -1;
    }
    for (a = 0; a < n; a++) {
        for (b = a + 1; b < n; b++) {
            int c = CELL(p, a, b);
            if (p->grp[a] != p->grp[b] || !IS_PCIE(c))
                continue;
            if (c <= C_PHB)
                uf_join(p->hb, a, b);
            if (c <= C_PXB)
                uf_join(p->pxb, a, b);
            if (c == C_PIX)
                uf_join(p->pix, a, b);
        }
    }
    uf_flatten(p->hb, n);
    uf_flatten(p->pxb, n);
    uf_flatten(p->pix, n);
    /* Groups nest (PIX within PXB within PHB), so counting roots counts subgroups. */
    for (a = 0; a < n; a++) {
        pxb_in_hb[p->hb[a]] += p->pxb[a] == a;
        pix_in_pxb[p->pxb[a]] += p->pix[a] == a;
        dev_in_pix[p->pix[a]]++;
    }
    for (a = 0; a < n && st == ACC_OK; a++) {
        int h = p->hb[a], x = p->pxb[a], q = p->pix[a], numa = p->grp[a];
        if (top_hb[h] < 0) {
            top_hb[h] = cpu_vtx[numa];
            if (pxb_in_hb[h] >= 2 &&
                (st = add_switch(t, cpu_vtx[numa], numa, 1, gen, &top_hb[h])) == ACC_OK)
                ++*nhb;
        }
        if (st == ACC_OK && top_pxb[x] < 0) {
            top_pxb[x] = top_hb[h];
            if (pix_in_pxb[x] >= 2 &&
                (st = add_switch(t, top_hb[h], numa, 0, gen, &top_pxb[x])) == ACC_OK)
                ++*nsw;
        }
        if (st == ACC_OK && top_pix[q] < 0) {
            top_pix[q] = top_pxb[x];
            /* Leaf switches for every PIX group under an upper switch: two devices PXB to
             * each other must cross more than one switch. */
            if ((pix_in_pxb[x] >= 2 || dev_in_pix[q] >= 2) &&
                (st = add_switch(t, top_pxb[x], numa, 0, gen, &top_pix[q])) == ACC_OK)
                ++*nsw;
        }
        if (st == ACC_OK)
            st = topo_add_pcie(t, vtx[a], top_pix[q], gen, 16);
    }
    acc_free(mem);
    return st;
}

/* The class the rebuilt tree gives a pair, for comparison with the matrix. */
static int tree_class(const smi_t *p, int a, int b)
{
    if (p->grp[a] != p->grp[b])
        return C_SYS;
    if (p->hb[a] != p->hb[b])
        return C_NODE;
    if (p->pxb[a] != p->pxb[b])
        return C_PHB;
    return p->pix[a] != p->pix[b] ? C_PXB : C_PIX;
}

/* Matrices from NVML always fit a tree, except that some machines report SYS between devices
 * of one NUMA node; the NUMA Affinity column wins there, as it does in hwloc and NCCL's view of
 * the same machine.  Either way the pairs whose class changes are reported. */
static acc_status_t report_tree(const smi_t *p, acc_topo_t *t)
{
    int a, b, nsys = 0, nother = 0, sa = -1, sb = -1, oa = -1, ob = -1;
    char s1[8], s2[8];
    acc_status_t st = ACC_OK;

    for (a = 0; a < p->ndev; a++) {
        for (b = a + 1; b < p->ndev; b++) {
            int c = CELL(p, a, b), tc = tree_class(p, a, b);
            if (!IS_PCIE(c) || c == tc)
                continue;
            if (c == C_SYS) {
                sa = nsys++ ? sa : a;
                sb = nsys > 1 ? sb : b;
            } else {
                oa = nother++ ? oa : a;
                ob = nother > 1 ? ob : b;
            }
        }
    }
    if (nsys)
        st = acc_topo_assume(t,
                             "%d device pairs on one NUMA node are SYS in the matrix (first "
                             "%s-%s); the NUMA Affinity column puts them under one CPU, so their "
                             "path class is %s",
                             nsys, p->col[sa], p->col[sb], cell_str(tree_class(p, sa, sb), s1));
    if (st == ACC_OK && nother)
        st = acc_topo_assume(t,
                             "the matrix fits no PCIe tree at %d device pairs (first %s-%s: "
                             "%s in the matrix, %s in the rebuilt tree)",
                             nother, p->col[oa], p->col[ob], cell_str(CELL(p, oa, ob), s1),
                             cell_str(tree_class(p, oa, ob), s2));
    return st;
}

static acc_status_t add_devices(smi_t *p, acc_topo_t *t, const gpu_plan_t *g, int *vtx)
{
    int d, e, named = 1;
    double speed = g->sm >= 90 ? 400 : g->sm == 80 ? 200 : 100;
    acc_status_t st;

    for (d = 0; d < p->ndev; d++) {
        acc_topo_vertex_t *v;
        int gpu = d < p->ngpu;
        if ((st = acc_topo_add_vertex(t, gpu ? ACC_VTX_GPU : ACC_VTX_NIC, &vtx[d])) != ACC_OK)
            return st;
        v = acc_topo_vertex_mut(t, vtx[d]);
        v->numa = p->grp[d];
        if (gpu) {
            snprintf(v->model, sizeof(v->model), "%s", g->model);
            v->sm = g->sm;
            if ((st = topo_fill_gpu_defaults(t, vtx[d])) != ACC_OK)
                return acc_error_prefix(st, "%s: ", p->file);
            continue;
        }
        snprintf(v->dev_name, sizeof(v->dev_name), "%s", p->dev[d]);
        named &= p->dev[d][0] != 0;
        v->speed_gbps = speed;
        for (e = 0; e < p->ngpu; e++)
            v->gdr |= CELL(p, d, e) == C_PIX || CELL(p, d, e) == C_PXB;
    }
    if (p->nnic && (st = acc_topo_assume(
                        t,
                        "NIC speed %.0f Gb/s: nvidia-smi topo -m gives none (default for %s); "
                        "GPUDirect RDMA taken as usable for NICs PIX or PXB to a GPU",
                        speed,
                        g->sm >= 90   ? "an H100-generation system's ConnectX-7"
                        : g->sm == 80 ? "an A100-generation system's ConnectX-6"
                                      : "other systems")) != ACC_OK)
        return st;
    if (!named)
        return acc_topo_assume(t, "NIC device names unknown: the text has no NIC Legend");
    return ACC_OK;
}

static acc_status_t add_nvlinks(const smi_t *p, acc_topo_t *t, gpu_plan_t *g, const int *vtx)
{
    const acc_gpu_arch_t *arch = acc_topo_gpu_arch(g->sm);
    int a, b, nvs, G = p->ngpu;
    acc_status_t st = ACC_OK;

    if (!g->tmax)
        return ACC_OK;
    g->nvswitch = g->uniform && G >= 3 && arch && g->uniform * (G - 1) > arch->max_nvlinks;
    if (g->nvswitch) {
        if ((st = topo_nvswitch(t, &nvs)) != ACC_OK)
            return st;
        for (a = 0; a < G && st == ACC_OK; a++)
            st = topo_add_nvlinks(t, vtx[a], nvs, g->uniform);
        if (st == ACC_OK)
            st = acc_topo_assume(t,
                                 "NV%d between every pair of the %d GPUs: an NVSwitch "
                                 "fabric, %d NVLinks from each GPU into it (nvidia-smi shows no "
                                 "switches)",
                                 g->uniform, G, g->uniform);
        return st;
    }
    for (a = 0; a < G && st == ACC_OK; a++)
        for (b = a + 1; b < G && st == ACC_OK; b++)
            if (IS_NV(CELL(p, a, b)))
                st = topo_add_nvlinks(t, vtx[a], vtx[b], CELL(p, a, b) - C_NV);
    if (st == ACC_OK)
        st = acc_topo_assume(t, "NV# cells taken as direct GPU-GPU NVLinks (no NVSwitch: the "
                                "pairs differ, or a full mesh fits the GPU's links)");
    return st;
}

static acc_status_t build(smi_t *p, acc_topo_t *t)
{
    gpu_plan_t g;
    int *vtx = acc_calloc((size_t)p->ndev + (size_t)p->ndev, sizeof(int)), *cpu_vtx, c;
    int gen, nsw = 0, nhb = 0;
    acc_status_t st;

    if (!vtx)
        return nomem();
    cpu_vtx = vtx + p->ndev;
    if ((st = choose_model(p, t, &g)) != ACC_OK || (st = group_numa(p, t)) != ACC_OK)
        goto out;
    for (c = 0; c < p->ngrp; c++) {
        int d;
        if ((st = acc_topo_add_vertex(t, ACC_VTX_CPU, &cpu_vtx[c])) != ACC_OK)
            goto out;
        for (d = 0; d < p->ngpu; d++) {
            if (p->grp[d] == c && p->cpu_aff[d][0]) {
                snprintf(acc_topo_vertex_mut(t, cpu_vtx[c])->affinity, ACC_TOPO_AFFINITY_MAX, "%s",
                         p->cpu_aff[d]);
                break;
            }
        }
    }
    gen = topo_default_pcie_gen(g.sm);
    if ((st = topo_connect_cpus(t)) != ACC_OK || (st = add_devices(p, t, &g, vtx)) != ACC_OK ||
        (st = add_nvlinks(p, t, &g, vtx)) != ACC_OK ||
        (st = build_pcie(p, t, vtx, cpu_vtx, gen, &nsw, &nhb)) != ACC_OK ||
        (st = report_tree(p, t)) != ACC_OK)
        goto out;
    if ((st = acc_topo_assume(t,
                              "PCIe tree rebuilt from the matrix classes (PCIe switches: "
                              "%d, host bridges: %d); no bus ids (nvidia-smi topo -m prints none)",
                              nsw, nhb)) != ACC_OK)
        goto out;
    st = acc_topo_assume(t,
                         "PCIe Gen%d x16 on every PCIe link: nvidia-smi topo -m gives no link "
                         "speeds (default for sm_%d GPUs)",
                         gen, g.sm);
out:
    acc_free(vtx);
    return st;
}

acc_status_t topo_import_nvidia_smi(acc_topo_t *t, const char *text, size_t len, const char *name)
{
    smi_t p;
    acc_status_t st;

    memset(&p, 0, sizeof(p));
    p.file = name && *name ? name : "<nvidia-smi topo -m text>";
    if (!t || (!text && len))
        return acc_error_set(ACC_ERR_INVALID, "topo_import_nvidia_smi: no topology or text");
    if ((st = prepare(&p, text ? text : "", len)) == ACC_OK && (st = parse_text(&p)) == ACC_OK &&
        (st = check_matrix(&p)) == ACC_OK)
        st = build(&p, t);
    acc_free(p.buf);
    acc_free(p.line);
    acc_free(p.tok);
    acc_free(p.col);
    acc_free(p.cell);
    acc_free(p.row_line);
    acc_free(p.legend_line);
    acc_free(p.numa_val);
    acc_free(p.cpu_aff);
    acc_free(p.dev);
    acc_free(p.grp);
    return st;
}
