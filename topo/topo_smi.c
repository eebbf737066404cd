/*
 * Importer of `nvidia-smi topo -m` text: the matrix of GPU and NIC connections.
 *
 * The matrix says, for every pair of devices, how they are joined (NV#: # bonded NVLinks, or the
 * PCIe level PIX, PXB, PHB, NODE, SYS), and for every GPU its CPU and NUMA affinity; a legend
 * names the NICs.  It says nothing of GPU models, bus ids, link speeds, NIC speeds or switches.
 * topo_smi.c reads the text into a checked matrix; topo_smi_model.c rebuilds from it the smallest
 * graph that reproduces the matrix under the building conventions of internal.h, recording every
 * fact it had to assume (acc_topo_assume).
 *
 * Accepted text (reference/04-topology.md §4): '#' comment lines and free text before the
 * header; a header of column names GPU0..GPUn, then NIC0..NICm or RDMA device names (old
 * drivers), then "CPU Affinity", "NUMA Affinity" and, on newer drivers, "GPU NUMA ID"; one row
 * per column; then the Legend and "NIC Legend:" blocks.  Cells are separated by tabs or, in
 * copies of a terminal, by spaces; no cell value contains a blank, so rows are split on white
 * space and only the multi-word header names are read specially (from the right).  ANSI escape
 * sequences (underlined headers on a TTY) and CR line ends are removed first.
 */
#include "topo_smi.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* NCCL_TOPO_MAX_NODES is 576; a matrix that large is already far past any real machine. */
#define MAX_DEVICES 512
#define MAX_TEXT    (64 << 20)
/* NV# cells have one or two digits (parse_cell), so every cell code fits an unsigned char. */
#define MAX_NV 99

acc_status_t topo_smi_error(const smi_t *p, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(ACC_ERR_PARSE, "%s:%d: %s", p->file, line, msg);
}

acc_status_t topo_smi_nomem(void)
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
        return topo_smi_error(p, 1,
                              "%zu bytes: nvidia-smi topo -m text is far shorter (at most %d bytes "
                              "accepted)",
                              len, MAX_TEXT);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    if (!(p->buf = acc_mem_alloc(len + 1)))
        return topo_smi_nomem();
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
            return topo_smi_error(p, line,
                                  "broken escape sequence (ESC without '[' ... letter); expected "
                                  "the text printed by `nvidia-smi topo -m`");
        }
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
            return topo_smi_error(p, line,
                                  "binary data (byte 0x%02x); expected the text printed by "
                                  "`nvidia-smi topo -m`",
                                  c);
        line += c == '\n';
        p->buf[n++] = (char)c;
    }
    p->buf[n] = '\0';
    if (!(p->line = acc_mem_calloc((size_t)line, sizeof(char *))))
        return topo_smi_nomem();
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
        if (acc_array_reserve(&v, &p->tok_cap, (size_t)p->ntok + 1, sizeof(smi_tok_t)) != ACC_OK)
            return topo_smi_nomem();
        p->tok = v;
        p->tok[p->ntok].s = b;
        p->tok[p->ntok++].n = (int)(s - b);
    }
}

static int tok_eq(const smi_tok_t *t, const char *s)
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
static int parse_cell(const smi_tok_t *t)
{
    static const struct {
        const char *s;
        int c;
    } names[] = {{"X", SMI_C_X},       {"PIX", SMI_C_PIX}, {"PXB", SMI_C_PXB}, {"PHB", SMI_C_PHB},
                 {"NODE", SMI_C_NODE}, {"SYS", SMI_C_SYS}, {"SOC", SMI_C_SYS}};
    size_t i;
    if (t->n >= 3 && t->n <= 4 && t->s[0] == 'N' && t->s[1] == 'V' && t->s[2] != '0') {
        int v = 0, k;
        for (k = 2; k < t->n; k++) {
            if (!isdigit((unsigned char)t->s[k]))
                return -1;
            v = v * 10 + (t->s[k] - '0');
        }
        return SMI_C_NV + v;
    }
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (tok_eq(t, names[i].s))
            return names[i].c;
    return -1;
}

const char *topo_smi_cell_str(int c, char buf[8])
{
    static const char *const names[] = {"?", "X", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (SMI_IS_NV(c)) {
        snprintf(buf, 8, "NV%d", (c - SMI_C_NV) % 100);
        return buf;
    }
    return c >= 0 && c <= SMI_C_SYS ? names[c] : "?";
}

/* A column name: 'G' for GPU<k>, 'N' for NIC<k>, 'R' for an RDMA device name (mlx5_0,
 * rdmap79s0: a letter first, a digit somewhere), 0 for anything else. */
static int column_kind(const smi_tok_t *t, int *k)
{
    int i, digit = 0;
    *k = -1;
    if (t->n >= SMI_NAME_LEN || !isalpha((unsigned char)t->s[0]) || parse_cell(t) >= 0)
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

static int find_column(const smi_t *p, const smi_tok_t *t)
{
    int d;
    for (d = 0; d < p->ndev; d++)
        if (tok_eq(t, p->col[d]))
            return d;
    return -1;
}

/* ---- a GPU model named in free text ------------------------------------------------------ */

/* Words from .. to-1 joined by single spaces. */
static void join_words(const smi_tok_t *w, int from, int to, char out[100])
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
    smi_tok_t w[64];
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
    p->cell = acc_mem_calloc(n * n, 1);
    p->row_line = acc_mem_calloc(n, sizeof(int));
    p->legend_line = acc_mem_calloc(n, sizeof(int));
    p->numa_val = acc_mem_calloc(g, sizeof(int));
    p->cpu_aff = acc_mem_calloc(g, sizeof(*p->cpu_aff));
    p->dev = acc_mem_calloc(n, sizeof(*p->dev));
    p->grp = acc_mem_calloc(4 * n, sizeof(int));
    if (!p->cell || !p->row_line || !p->legend_line || !p->numa_val || !p->cpu_aff || !p->dev ||
        !p->grp)
        return topo_smi_nomem();
    p->hb = p->grp + n;
    p->pxb = p->grp + 2 * n;
    p->pix = p->grp + 3 * n;
    return ACC_OK;
}

static acc_status_t parse_header(smi_t *p, int li)
{
    static const char *const trail_names[SMI_T_COUNT] = {"CPU Affinity", "NUMA Affinity",
                                                         "GPU NUMA ID"};
    int n = p->ntok, kinds[SMI_T_COUNT], nk = 0, i, k, line = li + 1;

    /* The multi-word columns, read from the right. */
    while (n > 0) {
        int kind;
        if (n >= 3 && tok_eq(&p->tok[n - 3], "GPU") && tok_eq(&p->tok[n - 2], "NUMA") &&
            tok_eq(&p->tok[n - 1], "ID")) {
            kind = SMI_T_GPU_NUMA;
            n -= 3;
        } else if (n >= 2 && tok_eq(&p->tok[n - 1], "Affinity") &&
                   (tok_eq(&p->tok[n - 2], "CPU") || tok_eq(&p->tok[n - 2], "NUMA"))) {
            kind = tok_eq(&p->tok[n - 2], "CPU") ? SMI_T_CPU : SMI_T_NUMA;
            n -= 2;
        } else {
            break;
        }
        for (i = 0; i < nk; i++)
            if (kinds[i] == kind)
                return topo_smi_error(p, line, "header: column '%s' appears twice",
                                      trail_names[kind]);
        kinds[nk++] = kind;
    }
    for (i = 0; i < SMI_T_COUNT; i++)
        p->trail[i] = -1;
    for (i = 0; i < nk; i++)
        p->trail[kinds[nk - 1 - i]] = i;
    p->ntrail = nk;
    if (n > MAX_DEVICES)
        return topo_smi_error(p, line, "header: %d device columns; at most %d are supported", n,
                              MAX_DEVICES);
    p->ndev = n;
    if (!(p->col = acc_mem_calloc((size_t)n, sizeof(*p->col))))
        return topo_smi_nomem();
    for (i = 0; i < n; i++) {
        const smi_tok_t *t = &p->tok[i];
        int kind = column_kind(t, &k);
        if (!kind)
            return topo_smi_error(
                p, line,
                "header: '%.*s' is not a column name (expected GPU<k>, NIC<k>, "
                "an RDMA device name such as mlx5_0, 'CPU Affinity', 'NUMA Affinity' "
                "or 'GPU NUMA ID')",
                t->n, t->s);
        if (kind == 'G' && (p->nnic > 0 || k != p->ngpu))
            return topo_smi_error(p, line,
                                  "header: expected %s%d, found %.*s (GPU columns come first, "
                                  "numbered from 0)",
                                  p->nnic ? "NIC" : "GPU", p->nnic ? p->nnic : p->ngpu, t->n, t->s);
        if (kind == 'N' && k != p->nnic)
            return topo_smi_error(p, line, "header: expected NIC%d, found %.*s", p->nnic, t->n,
                                  t->s);
        if (kind == 'R' && find_column(p, t) >= 0)
            return topo_smi_error(p, line, "header: column %.*s appears twice", t->n, t->s);
        memcpy(p->col[i], t->s, (size_t)t->n);
        if (kind == 'G')
            p->ngpu++;
        else
            p->nnic++;
    }
    p->header_line = line;
    return alloc_tables(p);
}

static int all_of(const smi_tok_t *t, const char *set)
{
    int i;
    for (i = 0; i < t->n; i++)
        if (!strchr(set, t->s[i]))
            return 0;
    return t->n > 0;
}

/* The affinity columns of a GPU row. */
static acc_status_t parse_affinity(smi_t *p, int d, const smi_tok_t *trail, int line)
{
    if (p->trail[SMI_T_CPU] >= 0) {
        const smi_tok_t *t = &trail[p->trail[SMI_T_CPU]];
        /* A cpulist ("0-47,96-143") as current drivers print it, or a hex mask. */
        if (!tok_eq(t, "N/A") && !all_of(t, "0123456789abcdefABCDEFx,-"))
            return topo_smi_error(
                p, line,
                "%s: CPU Affinity '%.*s' is neither a CPU list such as 0-47,96-143 nor N/A",
                p->col[d], t->n, t->s);
        if (!tok_eq(t, "N/A") && t->n < ACC_TOPO_AFFINITY_MAX)
            memcpy(p->cpu_aff[d], t->s, (size_t)t->n);
        else if (!tok_eq(t, "N/A"))
            p->aff_long = d + 1;
    }
    p->numa_val[d] = -1;
    if (p->trail[SMI_T_NUMA] >= 0) {
        const smi_tok_t *t = &trail[p->trail[SMI_T_NUMA]];
        if (!tok_eq(t, "N/A") && (!all_of(t, "0123456789") || t->n > 4))
            return topo_smi_error(p, line,
                                  "%s: NUMA Affinity '%.*s' is neither a NUMA node number nor N/A",
                                  p->col[d], t->n, t->s);
        if (!tok_eq(t, "N/A"))
            p->numa_val[d] = atoi(t->s);
    }
    if (p->trail[SMI_T_GPU_NUMA] >= 0) {
        const smi_tok_t *t = &trail[p->trail[SMI_T_GPU_NUMA]];
        if (!tok_eq(t, "N/A") && !all_of(t, "0123456789"))
            return topo_smi_error(p, line, "%s: GPU NUMA ID '%.*s' is neither a number nor N/A",
                                  p->col[d], t->n, t->s);
    }
    return ACC_OK;
}

static acc_status_t parse_row(smi_t *p, int d, int line)
{
    int want = 1 + p->ndev + p->ntrail, j;
    /* NIC rows have no affinity columns; tab-separated captures leave them empty. */
    int least = d < p->ngpu ? want : 1 + p->ndev;

    if (p->ntok < least || p->ntok > want)
        return topo_smi_error(p, line, "row %s has %d cells, expected %d (%d device columns%s)",
                              p->col[d], p->ntok - 1, (d < p->ngpu ? want : least) - 1, p->ndev,
                              d < p->ngpu && p->ntrail ? " and the affinity columns" : "");
    for (j = 0; j < p->ndev; j++) {
        const smi_tok_t *t = &p->tok[1 + j];
        int c = parse_cell(t);
        if (c < 0 || c > SMI_C_NV + MAX_NV)
            return topo_smi_error(p, line,
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
    const smi_tok_t *t = p->tok;
    int line = li + 1, d, k;

    if (p->ntok >= 2 && (d = find_column(p, &t[0])) >= 0 && parse_cell(&t[1]) >= 0)
        return topo_smi_error(p, line, "second row for %s (first on line %d)", p->col[d],
                              p->row_line[d]);
    if (p->ntok >= 1 && t[0].n > 4 && t[0].s[t[0].n - 1] == ':' && memcmp(t[0].s, "NIC", 3) == 0) {
        smi_tok_t name = {t[0].s, t[0].n - 1};
        if (column_kind(&name, &k) != 'N')
            return ACC_OK; /* "NIC Legend:" */
        if ((d = find_column(p, &name)) < 0)
            return topo_smi_error(p, line, "the NIC Legend names %.*s, but the matrix has %s",
                                  name.n, name.s, p->nnic ? "fewer NIC columns" : "no NIC column");
        if (p->legend_line[d])
            return topo_smi_error(p, line, "the NIC Legend names %s twice (first on line %d)",
                                  p->col[d], p->legend_line[d]);
        if (p->ntok != 2 || t[1].n >= SMI_NAME_LEN)
            return topo_smi_error(p, line,
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
            return topo_smi_error(p, li + 1,
                                  "row %.*s comes before any header line (a line of column "
                                  "names GPU0 GPU1 ... CPU Affinity NUMA Affinity)",
                                  p->tok[0].n, p->tok[0].s);
        sniff_model(p, li);
    }
    if (!p->header_line)
        return topo_smi_error(p, p->nlines,
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
            return topo_smi_error(
                p, li + 1, "expected the row of %s, found '%.*s' (every header column needs a row)",
                p->col[d], p->tok[0].n, p->tok[0].s);
        }
        if (p->row_line[d])
            return topo_smi_error(p, li + 1, "second row for %s (first on line %d)", p->col[d],
                                  p->row_line[d]);
        if ((st = parse_row(p, d, li + 1)) != ACC_OK)
            return st;
        rows++;
    }
    if (rows < p->ndev) {
        for (d = 0; d < p->ndev && p->row_line[d]; d++)
            ;
        return topo_smi_error(
            p, p->last_line,
            "the text ends before the row of %s (%d of %d rows; a truncated capture?)", p->col[d],
            rows, p->ndev);
    }
    for (d = p->ngpu; d < p->ndev; d++)
        legend |= p->legend_line[d] != 0;
    for (d = p->ngpu; d < p->ndev && legend; d++)
        if (!p->legend_line[d] && strncmp(p->col[d], "NIC", 3) == 0)
            return topo_smi_error(p, p->last_line,
                                  "the NIC Legend does not name %s (a truncated capture?)",
                                  p->col[d]);
    for (d = p->ngpu; d < p->ndev; d++)
        if (!p->dev[d][0] && strncmp(p->col[d], "NIC", 3) != 0)
            snprintf(p->dev[d], SMI_NAME_LEN, "%s", p->col[d]); /* old drivers: the column name */
    return ACC_OK;
}

static acc_status_t check_matrix(const smi_t *p)
{
    int a, b;
    char s1[8], s2[8];
    for (a = 0; a < p->ndev; a++) {
        if (SMI_CELL(p, a, a) != SMI_C_X)
            return topo_smi_error(p, p->row_line[a],
                                  "row %s: the diagonal cell is %s, expected X (self)", p->col[a],
                                  topo_smi_cell_str(SMI_CELL(p, a, a), s1));
        for (b = 0; b < p->ndev; b++) {
            int c = SMI_CELL(p, a, b), r = SMI_CELL(p, b, a);
            if (a == b)
                continue;
            if (c == SMI_C_X)
                return topo_smi_error(p, p->row_line[a], "X (self) off the diagonal at %s-%s",
                                      p->col[a], p->col[b]);
            if (c != r)
                return topo_smi_error(
                    p, p->row_line[a > b ? a : b],
                    "asymmetric matrix: %s-%s is %s (line %d) but %s-%s is %s (line %d)", p->col[a],
                    p->col[b], topo_smi_cell_str(c, s1), p->row_line[a], p->col[b], p->col[a],
                    topo_smi_cell_str(r, s2), p->row_line[b]);
            if (SMI_IS_NV(c) && (a >= p->ngpu || b >= p->ngpu))
                return topo_smi_error(p, p->row_line[a], "%s-%s is %s, but NVLinks join GPUs only",
                                      p->col[a], p->col[b], topo_smi_cell_str(c, s1));
        }
    }
    return ACC_OK;
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
        st = topo_smi_build(&p, t);
    acc_mem_free(p.buf);
    acc_mem_free(p.line);
    acc_mem_free(p.tok);
    acc_mem_free(p.col);
    acc_mem_free(p.cell);
    acc_mem_free(p.row_line);
    acc_mem_free(p.legend_line);
    acc_mem_free(p.numa_val);
    acc_mem_free(p.cpu_aff);
    acc_mem_free(p.dev);
    acc_mem_free(p.grp);
    return st;
}
