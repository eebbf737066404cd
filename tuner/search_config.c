/*
 * search_config.c - fusion configurations: the peers' defaults, checks, and the text form that
 * tuning runs and optima carry in the database ("policy=acc fusion=32M streams=2 algo=auto").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc_tune.h"

static const char *const policy_names[ACC_FUSION_POLICY_COUNT] = {"none", "ddp", "horovod", "acc",
                                                                  "negotiate"};

const char *acc_fusion_policy_name(acc_fusion_policy_t p)
{
    return (unsigned)p < ACC_FUSION_POLICY_COUNT ? policy_names[p] : "?";
}

acc_status_t acc_fusion_policy_parse(const char *s, acc_fusion_policy_t *out)
{
    int p;
    for (p = 0; p < ACC_FUSION_POLICY_COUNT; p++) {
        if (s && acc_str_ieq(s, policy_names[p])) {
            *out = (acc_fusion_policy_t)p;
            return ACC_OK;
        }
    }
    return acc_error_set(
        ACC_ERR_INVALID,
        "unknown fusion policy '%s' (expected none, ddp, horovod, acc or negotiate)", s ? s : "");
}

static const char *const compress_names[ACC_COMPRESS_COUNT] = {"none", "fp16", "bf16"};

const char *acc_compress_name(acc_compress_t c)
{
    return (unsigned)c < ACC_COMPRESS_COUNT ? compress_names[c] : "?";
}

acc_status_t acc_compress_parse(const char *s, acc_compress_t *out)
{
    int c;
    for (c = 0; c < ACC_COMPRESS_COUNT; c++) {
        if (s && acc_str_ieq(s, compress_names[c])) {
            *out = (acc_compress_t)c;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID, "unknown compression '%s' (expected none, fp16 or bf16)",
                         s ? s : "");
}

acc_status_t acc_compress_parse_list(const char *text, unsigned *mask)
{
    const char *p = text ? text : "";
    acc_compress_t c;

    *mask = 0;
    for (;;) {
        size_t n = strcspn(p, ",");
        char item[16];
        snprintf(item, sizeof(item), "%.*s", (int)(n < sizeof(item) - 1 ? n : sizeof(item) - 1), p);
        if (n >= sizeof(item) || acc_compress_parse(item, &c) != ACC_OK) {
            *mask = 0;
            return acc_error_set(ACC_ERR_INVALID,
                                 "compressions \"%s\": '%.*s' is not none, fp16 or bf16", text,
                                 (int)n, p);
        }
        *mask |= 1u << c;
        if (!p[n])
            return ACC_OK;
        p += n + 1;
    }
}

acc_dtype_t acc_compress_dtype(acc_compress_t c, acc_dtype_t dt)
{
    if (dt != ACC_DT_F32 || c == ACC_COMPRESS_NONE)
        return dt;
    return c == ACC_COMPRESS_FP16 ? ACC_DT_F16 : ACC_DT_BF16;
}

/* What a policy does when nothing else is said: Horovod round-robins its buffers over its
 * streams (gpu_operations.cc); acc sends each to the stream that frees first; DDP and "none"
 * have one stream, where it does not matter. */
static void policy_defaults(acc_tune_config_t *c, acc_fusion_policy_t p)
{
    memset(c, 0, sizeof(*c));
    c->policy = p;
    c->streams = 1;
    c->algo = ACC_TUNE_ALGO_NCCL;
    c->assign = p == ACC_FUSION_ACC ? ACC_STREAMS_LEAST_LOADED : ACC_STREAMS_ROUND_ROBIN;
    c->cycle_ms = p == ACC_FUSION_HOROVOD || p == ACC_FUSION_NEGOTIATE ? 1.0 : 0.0;
    c->fusion_bytes = 1;
}

void acc_tune_config_ddp(acc_tune_config_t *c)
{
    /* torch/csrc/distributed/c10d/reducer.hpp: kDefaultBucketBytesCap = 25 MiB,
     * kDefaultFirstBucketBytes = 1 MiB. */
    policy_defaults(c, ACC_FUSION_DDP);
    c->fusion_bytes = 25ull << 20;
    c->first_bytes = 1ull << 20;
}

void acc_tune_config_horovod(acc_tune_config_t *c)
{
    /* HOROVOD_FUSION_THRESHOLD 128 MiB and HOROVOD_CYCLE_TIME 1 ms since PR #2468 (commit
     * 3ffe479e, 2020-11-19; operations.cc), HOROVOD_NUM_NCCL_STREAMS 1 (global_state.h). */
    policy_defaults(c, ACC_FUSION_HOROVOD);
    c->fusion_bytes = 128ull << 20;
}

void acc_tune_config_negotiate(acc_tune_config_t *c, uint64_t fusion_bytes, double cycle_ms,
                               int streams)
{
    policy_defaults(c, ACC_FUSION_NEGOTIATE);
    c->fusion_bytes = fusion_bytes;
    c->cycle_ms = cycle_ms;
    c->streams = streams;
}

void acc_tune_config_nofusion(acc_tune_config_t *c)
{
    policy_defaults(c, ACC_FUSION_NONE);
}

void acc_tune_config_acc(acc_tune_config_t *c, uint64_t fusion_bytes, int streams,
                         acc_tune_algo_t algo)
{
    policy_defaults(c, ACC_FUSION_ACC);
    c->fusion_bytes = fusion_bytes;
    c->streams = streams;
    c->algo = algo;
}

acc_status_t acc_tune_config_check(const acc_tune_config_t *c)
{
    if ((unsigned)c->policy >= ACC_FUSION_POLICY_COUNT)
        return acc_error_set(ACC_ERR_INVALID, "fusion configuration: unknown policy %d",
                             (int)c->policy);
    if (c->streams < 1 || c->streams > ACC_TUNE_MAX_STREAMS)
        return acc_error_set(ACC_ERR_RANGE, "fusion configuration: streams %d is outside 1..%d",
                             c->streams, ACC_TUNE_MAX_STREAMS);
    if (c->policy != ACC_FUSION_NONE && c->fusion_bytes < 1)
        return acc_error_set(ACC_ERR_RANGE,
                             "fusion configuration: policy %s needs a fusion "
                             "size of at least 1 byte",
                             acc_fusion_policy_name(c->policy));
    int rounds = c->policy == ACC_FUSION_HOROVOD || c->policy == ACC_FUSION_NEGOTIATE;
    if (!(c->cycle_ms >= 0) || c->cycle_ms > 1e6 || (rounds && !(c->cycle_ms > 0)))
        return acc_error_set(ACC_ERR_RANGE,
                             "fusion configuration: cycle %g ms must be %s and at most 1e6",
                             c->cycle_ms, rounds ? "> 0" : ">= 0");
    if ((unsigned)c->assign > ACC_STREAMS_LEAST_LOADED ||
        (unsigned)c->algo >= ACC_TUNE_ALGO_COUNT || (unsigned)c->compress >= ACC_COMPRESS_COUNT)
        return acc_error_set(
            ACC_ERR_INVALID,
            "fusion configuration: unknown stream assignment, collective choice or compression");
    return ACC_OK;
}

acc_status_t acc_tune_config_format(const acc_tune_config_t *c, char *buf, size_t size)
{
    acc_tune_config_t d;
    acc_buf_t b;
    char s[32];
    acc_status_t st;

    if ((st = acc_tune_config_check(c)) != ACC_OK)
        return st;
    policy_defaults(&d, c->policy);
    acc_buf_init(&b);
    acc_buf_printf(&b, "policy=%s", acc_fusion_policy_name(c->policy));
    if (c->policy != ACC_FUSION_NONE) {
        acc_size_text(c->fusion_bytes, s, sizeof(s));
        acc_buf_printf(&b, " fusion=%s", s);
    }
    if (c->first_bytes && c->first_bytes != c->fusion_bytes) {
        acc_size_text(c->first_bytes, s, sizeof(s));
        acc_buf_printf(&b, " first=%s", s);
    }
    if (c->cycle_ms != d.cycle_ms)
        acc_buf_printf(&b, " cycle=%.17gms", c->cycle_ms);
    acc_buf_printf(&b, " streams=%d", c->streams);
    if (c->assign != d.assign)
        acc_buf_printf(&b, " assign=%s", c->assign == ACC_STREAMS_ROUND_ROBIN ? "rr" : "least");
    acc_buf_printf(&b, " algo=%s", acc_tune_algo_name(c->algo));
    if (c->compress != ACC_COMPRESS_NONE)
        acc_buf_printf(&b, " compress=%s", acc_compress_name(c->compress));
    if ((st = acc_buf_status(&b)) == ACC_OK && b.len >= size)
        st = acc_error_set(ACC_ERR_RANGE, "fusion configuration text needs %zu bytes, %zu given",
                           b.len + 1, size);
    if (st == ACC_OK)
        memcpy(buf, b.data, b.len + 1);
    acc_buf_free(&b);
    return st;
}

static acc_status_t bad(const char *text, const char *tok, const char *what)
{
    return acc_error_set(ACC_ERR_PARSE, "fusion configuration \"%s\": '%s': %s", text, tok, what);
}

static acc_status_t parse_pair(const char *text, const char *key, const char *val,
                               acc_tune_config_t *c, const char *tok)
{
    int64_t v;
    double ms;
    char *end;

    if (strcmp(key, "fusion") == 0 || strcmp(key, "first") == 0) {
        uint64_t bytes;
        if (acc_parse_size(val, &bytes) != ACC_OK || bytes == 0)
            return bad(text, tok, "expected a size such as 25M, 256K or 1G");
        *(strcmp(key, "fusion") == 0 ? &c->fusion_bytes : &c->first_bytes) = bytes;
    } else if (strcmp(key, "streams") == 0) {
        if (acc_parse_int64(val, &v) != ACC_OK || v < 1 || v > ACC_TUNE_MAX_STREAMS)
            return bad(text, tok, "expected a stream count from 1 to 16");
        c->streams = (int)v;
    } else if (strcmp(key, "cycle") == 0) {
        ms = strtod(val, &end);
        if (end == val || (strcmp(end, "ms") != 0 && *end) || !(ms >= 0) || ms > 1e6)
            return bad(text, tok, "expected milliseconds, e.g. cycle=1ms");
        c->cycle_ms = ms;
    } else if (strcmp(key, "assign") == 0) {
        if (strcmp(val, "rr") == 0)
            c->assign = ACC_STREAMS_ROUND_ROBIN;
        else if (strcmp(val, "least") == 0)
            c->assign = ACC_STREAMS_LEAST_LOADED;
        else
            return bad(text, tok, "expected rr or least");
    } else if (strcmp(key, "algo") == 0) {
        if (acc_tune_algo_parse(val, &c->algo) != ACC_OK)
            return bad(text, tok, "expected auto, acc or nccl");
    } else if (strcmp(key, "compress") == 0) {
        if (acc_compress_parse(val, &c->compress) != ACC_OK)
            return bad(text, tok, "expected none, fp16 or bf16");
    } else if (strcmp(key, "policy") != 0) {
        return bad(text, tok,
                   "unknown key (known: policy, fusion, first, cycle, streams, assign, algo, "
                   "compress)");
    }
    return ACC_OK;
}

acc_status_t acc_tune_config_parse(const char *text, acc_tune_config_t *out)
{
    acc_tune_config_t c;
    acc_fusion_policy_t pol = ACC_FUSION_NONE;
    char *copy = NULL, *tok, *save = NULL, *p;
    int have_fusion = 0;
    acc_status_t st = ACC_OK;

    if (!text || !(p = strstr(text, "policy=")) || (p != text && p[-1] != ' '))
        return acc_error_set(ACC_ERR_PARSE, "fusion configuration \"%s\": no policy=...",
                             text ? text : "");
    {
        char name[16];
        size_t n = strcspn(p + 7, " \t");
        snprintf(name, sizeof(name), "%.*s", (int)(n < 15 ? n : 15), p + 7);
        if (n >= 15 || acc_fusion_policy_parse(name, &pol) != ACC_OK)
            return acc_error_set(ACC_ERR_PARSE,
                                 "fusion configuration \"%s\": unknown policy "
                                 "(expected none, ddp, horovod or acc)",
                                 text);
    }
    policy_defaults(&c, pol);
    c.algo = ACC_TUNE_ALGO_AUTO;
    if (!(copy = acc_mem_strdup(text)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory");
    for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '='), *orig;
        if (!eq || eq == tok || !eq[1]) {
            st = bad(text, tok, "expected key=value");
            goto out;
        }
        orig = acc_mem_strdup(tok);
        *eq = '\0';
        st = parse_pair(text, tok, eq + 1, &c, orig ? orig : tok);
        acc_mem_free(orig);
        if (st != ACC_OK)
            goto out;
        have_fusion |= strcmp(tok, "fusion") == 0;
    }
    if (pol != ACC_FUSION_NONE && !have_fusion) {
        st = acc_error_set(ACC_ERR_PARSE,
                           "fusion configuration \"%s\": policy %s needs fusion=", text,
                           acc_fusion_policy_name(pol));
        goto out;
    }
    if (c.first_bytes == c.fusion_bytes)
        c.first_bytes = 0;
    if ((st = acc_tune_config_check(&c)) != ACC_OK) {
        acc_error_prefix(st, "fusion configuration \"%s\": ", text);
        goto out;
    }
    *out = c;
out:
    acc_mem_free(copy);
    return st;
}
