/*
 * One-line "key=value" descriptions: the pairs, the keys' table and the value forms that
 * synthetic topologies (topo_synth.c) and network parameters (topo_network.c) share, so that
 * both read "latency=2.7 rail=1 fabric=ib-ndr" the same way and refuse the same mistakes.
 */
#include "internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room for one pair; a longer one is refused rather than cut. */
#define KV_PAIR_MAX 128

void topo_kv_forms(const topo_kv_t *kv, acc_buf_t *out)
{
    int k;
    for (k = 0; k < kv->nkeys; k++)
        acc_buf_printf(out, "%s%s", k ? ", " : "", kv->keys[k].form);
}

acc_status_t topo_kv_error(const topo_kv_t *kv, acc_status_t st, const char *fmt, ...)
{
    char msg[256];
    acc_buf_t forms;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    acc_buf_init(&forms);
    topo_kv_forms(kv, &forms);
    acc_error_set(st, "%s: %s (keys: %s)", kv->what, msg, forms.data ? forms.data : "");
    acc_buf_free(&forms);
    return st;
}

static acc_status_t kv_pair(topo_kv_t *kv, const char *tok, size_t n, topo_kv_fn fn, void *ctx)
{
    char buf[KV_PAIR_MAX];
    char *eq;
    int k;

    if (n >= sizeof(buf)) {
        snprintf(buf, sizeof(buf), "%.40s", tok);
        return topo_kv_error(kv, ACC_ERR_PARSE, "'%s...' is too long for a key=value pair", buf);
    }
    memcpy(buf, tok, n);
    buf[n] = '\0';
    if (!(eq = strchr(buf, '=')))
        return topo_kv_error(kv, ACC_ERR_PARSE, "'%s' has no '='; write key=value pairs", buf);
    *eq = '\0';
    for (k = 0; k < kv->nkeys; k++)
        if (strcmp(buf, kv->keys[k].key) == 0 ||
            (kv->keys[k].alias && strcmp(buf, kv->keys[k].alias) == 0))
            break;
    if (k == kv->nkeys)
        return topo_kv_error(kv, ACC_ERR_PARSE, "unknown key '%s'", buf);
    if (kv->given & (1u << k))
        return topo_kv_error(kv, ACC_ERR_PARSE, "key '%s' given twice", kv->keys[k].key);
    kv->given |= 1u << k;
    if (!eq[1])
        return acc_error_set(ACC_ERR_INVALID, "%s: %s=: expected %s", kv->what, buf,
                             kv->keys[k].form);
    return fn(ctx, k, buf, eq + 1);
}

static int is_sep(const topo_kv_t *kv, char c)
{
    return c && strchr(kv->seps, c) != NULL;
}

acc_status_t topo_kv_parse(topo_kv_t *kv, const char *text, topo_kv_fn fn, void *ctx)
{
    const char *p = text;
    acc_status_t st;

    kv->given = 0;
    for (;;) {
        size_t n;
        while (is_sep(kv, *p))
            p++;
        if (!*p)
            return ACC_OK;
        for (n = 0; p[n] && !is_sep(kv, p[n]); n++)
            ;
        if ((st = kv_pair(kv, p, n, fn, ctx)) != ACC_OK)
            return st;
        p += n;
    }
}

int topo_kv_count(const char *val, int lo, int hi, int *out)
{
    long v = 0;
    const char *p = val;
    if (!isdigit((unsigned char)*p))
        return 0;
    for (; isdigit((unsigned char)*p) && v <= hi; p++)
        v = v * 10 + (*p - '0');
    if (*p || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

int topo_kv_number(const char *val, double lo, double hi, double *out)
{
    double v;
    if (!isdigit((unsigned char)val[0]) || acc_parse_double(val, &v) != ACC_OK || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int topo_kv_flag(const char *val, int *out)
{
    if (strcmp(val, "1") == 0 || strcmp(val, "yes") == 0 || strcmp(val, "true") == 0)
        *out = 1;
    else if (strcmp(val, "0") == 0 || strcmp(val, "no") == 0 || strcmp(val, "false") == 0)
        *out = 0;
    else
        return 0;
    return 1;
}

int topo_kv_fabric(const char *val, char out[ACC_TOPO_NAME_MAX])
{
    const char *p;
    if (strlen(val) >= ACC_TOPO_NAME_MAX)
        return 0;
    for (p = val; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
            return 0;
    snprintf(out, ACC_TOPO_NAME_MAX, "%s", val);
    return 1;
}
