/* YAML documents through libyaml's loader, typed accessors with file:line errors, and scalar
 * writing for acc's dumps. */
#include "acc_yaml.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

struct acc_yaml_doc {
    yaml_document_t doc;
    char *name;
};

acc_status_t acc_yaml_parse(const char *text, size_t len, const char *name, acc_yaml_doc_t **out)
{
    yaml_parser_t parser;
    acc_yaml_doc_t *d;
    acc_status_t st = ACC_OK;

    d = acc_mem_calloc(1, sizeof(*d));
    if (!d || !(d->name = acc_mem_strdup(name ? name : "<string>"))) {
        acc_mem_free(d);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory parsing YAML");
    }
    if (!yaml_parser_initialize(&parser)) {
        acc_mem_free(d->name);
        acc_mem_free(d);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory initialising the YAML parser");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &d->doc)) {
        st = acc_error_set(ACC_ERR_PARSE, "%s:%lu:%lu: YAML syntax error: %s%s%s", d->name,
                           (unsigned long)parser.problem_mark.line + 1,
                           (unsigned long)parser.problem_mark.column + 1,
                           parser.problem ? parser.problem : "unknown problem",
                           parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        acc_mem_free(d->name);
        acc_mem_free(d);
        return st;
    }
    yaml_parser_delete(&parser);
    if (!yaml_document_get_root_node(&d->doc)) {
        st = acc_error_set(ACC_ERR_PARSE, "%s: empty YAML document", d->name);
        acc_yaml_destroy(d);
        return st;
    }
    *out = d;
    return ACC_OK;
}

void acc_yaml_destroy(acc_yaml_doc_t *doc)
{
    if (!doc)
        return;
    yaml_document_delete(&doc->doc);
    acc_mem_free(doc->name);
    acc_mem_free(doc);
}

const char *acc_yaml_name(const acc_yaml_doc_t *doc)
{
    return doc->name;
}

acc_yaml_node_t *acc_yaml_root(acc_yaml_doc_t *doc)
{
    return yaml_document_get_root_node(&doc->doc);
}

int acc_yaml_line(const acc_yaml_node_t *node)
{
    return node ? (int)node->start_mark.line + 1 : 0;
}

int acc_yaml_is_map(const acc_yaml_node_t *n)
{
    return n && n->type == YAML_MAPPING_NODE;
}

int acc_yaml_is_seq(const acc_yaml_node_t *n)
{
    return n && n->type == YAML_SEQUENCE_NODE;
}

const char *acc_yaml_scalar(const acc_yaml_node_t *n)
{
    return (n && n->type == YAML_SCALAR_NODE) ? (const char *)n->data.scalar.value : NULL;
}

acc_status_t acc_yaml_error(acc_yaml_doc_t *doc, const acc_yaml_node_t *n, acc_status_t st,
                            const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return acc_error_set(st, "%s:%d: %s", doc->name, acc_yaml_line(n), msg);
}

size_t acc_yaml_map_len(const acc_yaml_node_t *map)
{
    if (!acc_yaml_is_map(map))
        return 0;
    return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

acc_yaml_node_t *acc_yaml_map_at(acc_yaml_doc_t *doc, acc_yaml_node_t *map, size_t i,
                                 const char **key)
{
    yaml_node_pair_t *p;
    if (key)
        *key = NULL;
    if (i >= acc_yaml_map_len(map))
        return NULL;
    p = map->data.mapping.pairs.start + i;
    if (key)
        *key = acc_yaml_scalar(yaml_document_get_node(&doc->doc, p->key));
    return yaml_document_get_node(&doc->doc, p->value);
}

acc_yaml_node_t *acc_yaml_get(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key)
{
    size_t i, n = acc_yaml_map_len(map);
    for (i = 0; i < n; i++) {
        const char *k = NULL;
        acc_yaml_node_t *v = acc_yaml_map_at(doc, map, i, &k);
        if (k && strcmp(k, key) == 0)
            return v;
    }
    return NULL;
}

acc_status_t acc_yaml_check_keys(acc_yaml_doc_t *doc, acc_yaml_node_t *map,
                                 const char *const *allowed, const char *what)
{
    size_t i, n = acc_yaml_map_len(map);
    for (i = 0; i < n; i++) {
        const char *k = NULL;
        const char *const *a;
        acc_yaml_node_t *v = acc_yaml_map_at(doc, map, i, &k);
        if (!k)
            return acc_yaml_error(doc, v, ACC_ERR_PARSE, "%s has a key that is not a string", what);
        for (a = allowed; *a; a++)
            if (strcmp(*a, k) == 0)
                break;
        if (!*a) {
            acc_buf_t b;
            acc_status_t st;
            acc_buf_init(&b);
            for (a = allowed; *a; a++)
                acc_buf_printf(&b, "%s%s", a == allowed ? "" : ", ", *a);
            st = acc_yaml_error(doc, v, ACC_ERR_PARSE, "unknown key '%s' in %s (known: %s)", k,
                                what, b.data ? b.data : "");
            acc_buf_free(&b);
            return st;
        }
    }
    return ACC_OK;
}

size_t acc_yaml_seq_len(const acc_yaml_node_t *seq)
{
    if (!acc_yaml_is_seq(seq))
        return 0;
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

acc_yaml_node_t *acc_yaml_seq_at(acc_yaml_doc_t *doc, acc_yaml_node_t *seq, size_t i)
{
    if (i >= acc_yaml_seq_len(seq))
        return NULL;
    return yaml_document_get_node(&doc->doc, seq->data.sequence.items.start[i]);
}

static acc_status_t lookup(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                           int required, acc_yaml_node_t **out)
{
    *out = acc_yaml_is_map(map) ? acc_yaml_get(doc, map, key) : NULL;
    if (!*out && required)
        return acc_yaml_error(doc, map, ACC_ERR_PARSE, "missing required key '%s'", key);
    return ACC_OK;
}

acc_status_t acc_yaml_get_str(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                              int required, const char **out)
{
    acc_yaml_node_t *n;
    acc_status_t st = lookup(doc, map, key, required, &n);
    if (st != ACC_OK || !n)
        return st;
    if (!acc_yaml_scalar(n))
        return acc_yaml_error(doc, n, ACC_ERR_PARSE, "'%s' must be a string", key);
    *out = acc_yaml_scalar(n);
    return ACC_OK;
}

acc_status_t acc_yaml_node_int(acc_yaml_doc_t *doc, acc_yaml_node_t *n, const char *what,
                               int64_t *out)
{
    const char *s = acc_yaml_scalar(n);
    if (!s || acc_parse_int64(s, out) != ACC_OK)
        return acc_yaml_error(doc, n, ACC_ERR_PARSE, "'%s' must be an integer, not '%s'", what,
                              s ? s : "(not a scalar)");
    return ACC_OK;
}

acc_status_t acc_yaml_node_double(acc_yaml_doc_t *doc, acc_yaml_node_t *n, const char *what,
                                  double *out)
{
    const char *s = acc_yaml_scalar(n);
    if (!s || acc_parse_double(s, out) != ACC_OK)
        return acc_yaml_error(doc, n, ACC_ERR_PARSE, "'%s' must be a number, not '%s'", what,
                              s ? s : "(not a scalar)");
    return ACC_OK;
}

acc_status_t acc_yaml_get_int(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                              int required, int64_t *out)
{
    acc_yaml_node_t *n;
    acc_status_t st = lookup(doc, map, key, required, &n);
    if (st != ACC_OK || !n)
        return st;
    return acc_yaml_node_int(doc, n, key, out);
}

acc_status_t acc_yaml_get_range(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                                int required, int64_t lo, int64_t hi, int64_t *out)
{
    acc_yaml_node_t *n;
    int64_t v;
    acc_status_t st = lookup(doc, map, key, required, &n);
    if (st != ACC_OK || !n)
        return st;
    if ((st = acc_yaml_node_int(doc, n, key, &v)) != ACC_OK)
        return st;
    if (v < lo || v > hi)
        return acc_yaml_error(doc, n, ACC_ERR_RANGE,
                              "'%s' is %" PRId64 ", outside %" PRId64 "..%" PRId64, key, v, lo, hi);
    *out = v;
    return ACC_OK;
}

acc_status_t acc_yaml_get_double(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                                 int required, double *out)
{
    acc_yaml_node_t *n;
    acc_status_t st = lookup(doc, map, key, required, &n);
    if (st != ACC_OK || !n)
        return st;
    return acc_yaml_node_double(doc, n, key, out);
}

acc_status_t acc_yaml_get_bool(acc_yaml_doc_t *doc, acc_yaml_node_t *map, const char *key,
                               int required, int *out)
{
    acc_yaml_node_t *n;
    const char *s;
    acc_status_t st = lookup(doc, map, key, required, &n);
    if (st != ACC_OK || !n)
        return st;
    s = acc_yaml_scalar(n);
    if (s && (acc_str_ieq(s, "true") || acc_str_ieq(s, "yes") || strcmp(s, "1") == 0)) {
        *out = 1;
        return ACC_OK;
    }
    if (s && (acc_str_ieq(s, "false") || acc_str_ieq(s, "no") || strcmp(s, "0") == 0)) {
        *out = 0;
        return ACC_OK;
    }
    return acc_yaml_error(doc, n, ACC_ERR_PARSE, "'%s' must be true or false, not '%s'", key,
                          s ? s : "(not a scalar)");
}

/* A scalar may be written plain when it cannot be mistaken for YAML syntax or another type. */
static int plain_safe(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "null", "on", "off", "~",
                                        NULL};
    const char *p;
    const char *const *w;
    double d;

    if (!*s || isspace((unsigned char)s[0]) || isspace((unsigned char)s[strlen(s) - 1]))
        return 0;
    if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0]))
        return 0;
    for (p = s; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\')
            return 0;
        /* Any ':' is quoted: inside a flow mapping libyaml reads "a:b" as a key. */
        if (*p == ':' || (*p == ' ' && p[1] == '#'))
            return 0;
        /* Flow indicators would end a value inside a flow mapping or sequence. */
        if (strchr(",[]{}", *p))
            return 0;
    }
    for (w = words; *w; w++)
        if (acc_str_ieq(s, *w))
            return 0;
    /* A string that looks like a number must stay a string. */
    if (acc_parse_double(s, &d) == ACC_OK)
        return 0;
    return 1;
}

void acc_yaml_put_scalar(acc_buf_t *b, const char *s)
{
    const char *p;
    if (plain_safe(s)) {
        acc_buf_puts(b, s);
        return;
    }
    acc_buf_puts(b, "\"");
    for (p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            acc_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            acc_buf_puts(b, "\\n");
        else if (c == '\t')
            acc_buf_puts(b, "\\t");
        else if (c < 0x20)
            acc_buf_printf(b, "\\x%02x", c);
        else
            acc_buf_append(b, p, 1);
    }
    acc_buf_puts(b, "\"");
}

void acc_yaml_put_double(acc_buf_t *b, double v)
{
    char text[64];
    int prec;
    for (prec = 6; prec <= 17; prec++) {
        double back;
        snprintf(text, sizeof(text), "%.*g", prec, v);
        if (acc_parse_double(text, &back) == ACC_OK && back == v)
            break;
    }
    acc_buf_puts(b, text);
}
