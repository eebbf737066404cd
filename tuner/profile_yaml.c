/* The model profile's text form (YAML, version 1; tuner/models/README.md): a header of scalar
 * keys, the compute entries as block mappings, then one flow mapping per tensor and line.  The
 * dump writes every field that differs from its default, so load(dump(p)) equals p and a dump
 * of a loaded dump is byte-identical. */
#include "acc_yaml.h"
#include "profile_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- dump ----------------------------------------------------------------------------------- */

static void put_key_scalar(acc_buf_t *b, const char *indent, const char *key, const char *value)
{
    acc_buf_printf(b, "%s%s: ", indent, key);
    acc_yaml_put_scalar(b, value);
    acc_buf_puts(b, "\n");
}

static void dump_compute(const acc_profile_compute_t *c, acc_buf_t *b)
{
    put_key_scalar(b, "  - ", "gpu", c->gpu);
    put_key_scalar(b, "    ", "precision", c->precision);
    acc_buf_printf(b, "    batch: %d\n", c->batch);
    if (c->accumulation != 1)
        acc_buf_printf(b, "    accumulation: %d\n", c->accumulation);
    acc_buf_puts(b, "    iteration_ms: ");
    acc_yaml_put_double(b, c->iteration_ms);
    acc_buf_puts(b, "\n");
    if (c->forward_ms > 0) {
        acc_buf_puts(b, "    forward_ms: ");
        acc_yaml_put_double(b, c->forward_ms);
        acc_buf_puts(b, "\n");
    }
    if (c->assumed)
        acc_buf_puts(b, "    assumed: true\n");
    put_key_scalar(b, "    ", "source", c->source);
}

acc_status_t acc_profile_dump_yaml(const acc_profile_t *p, acc_buf_t *out)
{
    acc_status_t st;
    size_t i;

    if ((st = acc_profile_check(p)) != ACC_OK)
        return acc_error_prefix(st, "cannot write the profile: ");
    acc_buf_puts(out, "# acc model profile; the format is described in tuner/models/README.md\n");
    acc_buf_printf(out, "version: %d\n", ACC_PROFILE_VERSION);
    put_key_scalar(out, "", "name", p->name);
    if (p->description[0])
        put_key_scalar(out, "", "description", p->description);
    if (p->sample[0])
        put_key_scalar(out, "", "sample", p->sample);
    if (p->nsources) {
        acc_buf_puts(out, "sources:\n");
        for (i = 0; i < p->nsources; i++) {
            acc_buf_puts(out, "  - ");
            acc_yaml_put_scalar(out, p->sources[i]);
            acc_buf_puts(out, "\n");
        }
    }
    acc_buf_printf(out, "parameters: %" PRIu64 "\n", p->params);
    if (p->forward_flops)
        acc_buf_printf(out, "forward_flops: %" PRIu64 "\n", p->forward_flops);
    if (p->ncompute) {
        acc_buf_puts(out, "compute:\n");
        for (i = 0; i < p->ncompute; i++)
            dump_compute(&p->compute[i], out);
    }
    acc_buf_puts(out, "tensors:\n");
    for (i = 0; i < p->ntensors; i++) {
        const acc_profile_tensor_t *t = &p->tensors[i];
        acc_buf_puts(out, "  - {name: ");
        acc_yaml_put_scalar(out, t->name); /* quotes a ':' */
        acc_buf_printf(out, ", elems: %" PRIu64 ", dtype: %s, ready: ", t->elems,
                       acc_dtype_name(t->dtype));
        acc_yaml_put_double(out, t->ready);
        acc_buf_puts(out, "}\n");
    }
    if (acc_buf_status(out) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory writing profile '%s'", p->name);
    return ACC_OK;
}

/* ---- load ----------------------------------------------------------------------------------- */

typedef struct {
    acc_yaml_doc_t *doc;
    acc_profile_t *prof;
    int *lines; /* source line of each tensor, for errors found after the list is read */
} loader_t;

static acc_status_t load_sources(loader_t *ld, acc_yaml_node_t *seq)
{
    size_t i;
    acc_status_t st;

    if (!acc_yaml_is_seq(seq))
        return acc_yaml_error(ld->doc, seq, ACC_ERR_PARSE, "'sources' must be a list of strings");
    for (i = 0; i < acc_yaml_seq_len(seq); i++) {
        acc_yaml_node_t *n = acc_yaml_seq_at(ld->doc, seq, i);
        const char *s = acc_yaml_scalar(n);
        if (!s || !*s)
            return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE,
                                  "source %zu must be a non-empty string", i);
        if ((st = acc_profile_add_source(ld->prof, s)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

static acc_status_t load_compute(loader_t *ld, acc_yaml_node_t *map, size_t i)
{
    static const char *const keys[] = {"gpu",          "precision",    "batch",
                                       "accumulation", "iteration_ms", "forward_ms",
                                       "assumed",      "source",       NULL};
    const char *gpu = NULL, *precision = NULL, *source = NULL;
    acc_profile_compute_t c;
    acc_yaml_node_t *n;
    int64_t v;
    acc_status_t st;

    memset(&c, 0, sizeof(c));
    if (!acc_yaml_is_map(map))
        return acc_yaml_error(ld->doc, map, ACC_ERR_PARSE,
                              "compute entry %zu must be a mapping (gpu, precision, batch, "
                              "iteration_ms, source)",
                              i);
    if ((st = acc_yaml_check_keys(ld->doc, map, keys, "a compute entry")) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, map, "gpu", 1, &gpu)) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, map, "precision", 1, &precision)) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, map, "source", 1, &source)) != ACC_OK)
        return st;
    if (!profile_precision_ok(precision))
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, map, "precision"), ACC_ERR_PARSE,
                              "precision '%s' is not one of fp32, tf32, fp16, bf16", precision);
    if (!source[0])
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, map, "source"), ACC_ERR_PARSE,
                              "'source' must say where the figure comes from");
    if ((st = acc_yaml_get_range(ld->doc, map, "batch", 1, 1, 1 << 24, &v)) != ACC_OK)
        return st;
    c.batch = (int)v;
    v = 1;
    if ((st = acc_yaml_get_range(ld->doc, map, "accumulation", 0, 1, 1 << 16, &v)) != ACC_OK)
        return st;
    c.accumulation = (int)v;
    if ((st = acc_yaml_get_double(ld->doc, map, "iteration_ms", 1, &c.iteration_ms)) != ACC_OK ||
        (st = acc_yaml_get_double(ld->doc, map, "forward_ms", 0, &c.forward_ms)) != ACC_OK ||
        (st = acc_yaml_get_bool(ld->doc, map, "assumed", 0, &c.assumed)) != ACC_OK)
        return st;
    n = acc_yaml_get(ld->doc, map, "iteration_ms");
    if (!(c.iteration_ms > 0 && c.iteration_ms < 1e9))
        return acc_yaml_error(ld->doc, n, ACC_ERR_RANGE,
                              "'iteration_ms' must be a positive time in milliseconds");
    n = acc_yaml_get(ld->doc, map, "forward_ms");
    if (n && !(c.forward_ms > 0 && c.forward_ms < c.iteration_ms))
        return acc_yaml_error(ld->doc, n, ACC_ERR_RANGE,
                              "'forward_ms' must be positive and less than iteration_ms (%g); "
                              "leave it out when unknown",
                              c.iteration_ms);
    /* add_compute copies the strings; they stay owned by the document. */
    c.gpu = (char *)gpu;
    c.precision = (char *)precision;
    c.source = (char *)source;
    if ((st = acc_profile_add_compute(ld->prof, &c)) != ACC_OK)
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, map, "gpu"), st, "%s",
                              acc_error_message());
    return ACC_OK;
}

static acc_status_t load_tensor(loader_t *ld, acc_yaml_node_t *map, size_t i)
{
    static const char *const keys[] = {"name", "elems", "dtype", "ready", NULL};
    const char *name = NULL, *dtype = NULL;
    acc_profile_t *p = ld->prof;
    acc_dtype_t dt;
    int64_t elems;
    double ready;
    acc_yaml_node_t *n;
    acc_status_t st;

    if (!acc_yaml_is_map(map))
        return acc_yaml_error(ld->doc, map, ACC_ERR_PARSE,
                              "tensor %zu must be a mapping {name, elems, dtype, ready}", i);
    if ((st = acc_yaml_check_keys(ld->doc, map, keys, "a tensor")) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, map, "name", 1, &name)) != ACC_OK ||
        (st = acc_yaml_get_str(ld->doc, map, "dtype", 1, &dtype)) != ACC_OK ||
        (st = acc_yaml_get_double(ld->doc, map, "ready", 1, &ready)) != ACC_OK)
        return st;
    if (!name[0])
        return acc_yaml_error(ld->doc, map, ACC_ERR_PARSE, "tensor %zu has an empty name", i);
    if ((st = acc_yaml_get_range(ld->doc, map, "elems", 1, 1, (int64_t)PROFILE_MAX_PARAMS,
                                 &elems)) != ACC_OK)
        return st;
    if (acc_dtype_parse(dtype, &dt) != ACC_OK)
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, map, "dtype"), ACC_ERR_PARSE,
                              "tensor '%s': unknown dtype '%s' (float, half, bfloat16, double)",
                              name, dtype);
    n = acc_yaml_get(ld->doc, map, "ready");
    if (!(ready >= 0.0 && ready <= 1.0))
        return acc_yaml_error(ld->doc, n, ACC_ERR_RANGE,
                              "tensor '%s': 'ready' is %g; it is a fraction of the backward pass, "
                              "0..1",
                              name, ready);
    if (i && ready < p->tensors[i - 1].ready)
        return acc_yaml_error(ld->doc, n, ACC_ERR_RANGE,
                              "tensor '%s' is ready at %g, before '%s' above it (%g); list "
                              "tensors in the order their gradients become ready",
                              name, ready, p->tensors[i - 1].name, p->tensors[i - 1].ready);
    if (p->params + (uint64_t)elems > PROFILE_MAX_PARAMS)
        return acc_yaml_error(ld->doc, map, ACC_ERR_RANGE,
                              "the tensors add up to more than %llu parameters",
                              (unsigned long long)PROFILE_MAX_PARAMS);
    if ((st = acc_profile_add_tensor(p, name, (uint64_t)elems, dt, ready)) != ACC_OK)
        return acc_yaml_error(ld->doc, map, st, "%s", acc_error_message());
    ld->lines[i] = acc_yaml_line(map);
    return ACC_OK;
}

static int cmp_index_by_name(const void *a, const void *b, void *ctx)
{
    const acc_profile_t *p = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(p->tensors[x].name, p->tensors[y].name);
    return c ? c : (x > y) - (x < y);
}

/* Duplicate names, reported at the line of the second occurrence. */
static acc_status_t check_duplicates(loader_t *ld)
{
    const acc_profile_t *p = ld->prof;
    size_t *idx, i;
    acc_status_t st = ACC_OK;

    if (p->ntensors < 2)
        return ACC_OK;
    if (!(idx = acc_mem_calloc(p->ntensors, sizeof(*idx))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory checking tensor names");
    for (i = 0; i < p->ntensors; i++)
        idx[i] = i;
    qsort_r(idx, p->ntensors, sizeof(*idx), cmp_index_by_name, (void *)p);
    for (i = 1; i < p->ntensors; i++)
        if (strcmp(p->tensors[idx[i - 1]].name, p->tensors[idx[i]].name) == 0) {
            st = acc_error_set(ACC_ERR_PARSE,
                               "%s:%d: tensor '%s' is listed twice (first on line "
                               "%d)",
                               acc_yaml_name(ld->doc), ld->lines[idx[i]], p->tensors[idx[i]].name,
                               ld->lines[idx[i - 1]]);
            break;
        }
    acc_mem_free(idx);
    return st;
}

static acc_status_t load_tensors(loader_t *ld, acc_yaml_node_t *seq)
{
    size_t i, n = acc_yaml_seq_len(seq);
    acc_status_t st;

    if (!acc_yaml_is_seq(seq) || n == 0)
        return acc_yaml_error(ld->doc, seq, ACC_ERR_PARSE,
                              "'tensors' must be a non-empty list of {name, elems, dtype, "
                              "ready}");
    if (n > PROFILE_MAX_TENSORS)
        return acc_yaml_error(ld->doc, seq, ACC_ERR_RANGE, "more than %d tensors",
                              PROFILE_MAX_TENSORS);
    if (!(ld->lines = acc_mem_calloc(n, sizeof(int))))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory reading %zu tensors", n);
    for (i = 0; i < n; i++)
        if ((st = load_tensor(ld, acc_yaml_seq_at(ld->doc, seq, i), i)) != ACC_OK)
            return st;
    return check_duplicates(ld);
}

static acc_status_t load_root(loader_t *ld, acc_yaml_node_t *root)
{
    static const char *const keys[] = {"version", "name",       "description",   "sample",
                                       "sources", "parameters", "forward_flops", "compute",
                                       "tensors", NULL};
    const char *name = NULL, *text = NULL;
    acc_yaml_node_t *n;
    int64_t v, params;
    size_t i;
    acc_status_t st;

    if (!acc_yaml_is_map(root))
        return acc_yaml_error(ld->doc, root, ACC_ERR_PARSE,
                              "a model profile is a mapping starting with 'version: %d'",
                              ACC_PROFILE_VERSION);
    if ((st = acc_yaml_check_keys(ld->doc, root, keys, "a model profile")) != ACC_OK ||
        (st = acc_yaml_get_int(ld->doc, root, "version", 1, &v)) != ACC_OK)
        return st;
    if (v != ACC_PROFILE_VERSION)
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, root, "version"), ACC_ERR_UNSUPPORTED,
                              "profile format version %" PRId64 " is not supported (this acc "
                              "reads version %d)",
                              v, ACC_PROFILE_VERSION);
    if ((st = acc_yaml_get_str(ld->doc, root, "name", 1, &name)) != ACC_OK)
        return st;
    if (!profile_name_ok(name))
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, root, "name"), ACC_ERR_PARSE,
                              "name '%s' must be 1 to %d letters, digits, '.', '_' or '-'", name,
                              PROFILE_NAME_MAX);
    if ((st = acc_profile_create(name, &ld->prof)) != ACC_OK)
        return st;
    if ((st = acc_yaml_get_str(ld->doc, root, "description", 0, &text)) != ACC_OK ||
        (text && (st = acc_profile_set_description(ld->prof, text)) != ACC_OK))
        return st;
    text = NULL;
    if ((st = acc_yaml_get_str(ld->doc, root, "sample", 0, &text)) != ACC_OK ||
        (text && (st = acc_profile_set_sample(ld->prof, text)) != ACC_OK))
        return st;
    if ((n = acc_yaml_get(ld->doc, root, "sources")) && (st = load_sources(ld, n)) != ACC_OK)
        return st;
    if ((st = acc_yaml_get_range(ld->doc, root, "parameters", 1, 1, (int64_t)PROFILE_MAX_PARAMS,
                                 &params)) != ACC_OK)
        return st;
    v = 0;
    if ((st = acc_yaml_get_range(ld->doc, root, "forward_flops", 0, 0, INT64_MAX, &v)) != ACC_OK)
        return st;
    ld->prof->forward_flops = (uint64_t)v;
    if ((n = acc_yaml_get(ld->doc, root, "compute"))) {
        if (!acc_yaml_is_seq(n))
            return acc_yaml_error(ld->doc, n, ACC_ERR_PARSE, "'compute' must be a list");
        for (i = 0; i < acc_yaml_seq_len(n); i++)
            if ((st = load_compute(ld, acc_yaml_seq_at(ld->doc, n, i), i)) != ACC_OK)
                return st;
    }
    if (!(n = acc_yaml_get(ld->doc, root, "tensors")))
        return acc_yaml_error(ld->doc, root, ACC_ERR_PARSE, "missing required key 'tensors'");
    if ((st = load_tensors(ld, n)) != ACC_OK)
        return st;
    if ((uint64_t)params != ld->prof->params)
        return acc_yaml_error(ld->doc, acc_yaml_get(ld->doc, root, "parameters"), ACC_ERR_PARSE,
                              "'parameters' is %" PRId64 " but the %zu tensors add up to %" PRIu64
                              " (a truncated or edited tensor list?)",
                              params, ld->prof->ntensors, ld->prof->params);
    /* Everything above was checked with a line number; this states the invariants once more,
     * so that the loader and acc_profile_check cannot drift apart. */
    if ((st = acc_profile_check(ld->prof)) != ACC_OK)
        return acc_error_prefix(st, "%s: ", acc_yaml_name(ld->doc));
    return ACC_OK;
}

acc_status_t acc_profile_load_yaml(const char *text, size_t len, const char *name,
                                   acc_profile_t **out)
{
    loader_t ld;
    acc_status_t st;

    *out = NULL;
    memset(&ld, 0, sizeof(ld));
    if ((st = acc_yaml_parse(text, len, name, &ld.doc)) != ACC_OK)
        return st;
    st = load_root(&ld, acc_yaml_root(ld.doc));
    acc_mem_free(ld.lines);
    acc_yaml_destroy(ld.doc);
    if (st != ACC_OK) {
        acc_profile_destroy(ld.prof);
        return st;
    }
    *out = ld.prof;
    return ACC_OK;
}

acc_status_t acc_profile_load_file(const char *path, acc_profile_t **out)
{
    char *text = NULL;
    size_t len = 0;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_read_file(path, &text, &len)) != ACC_OK)
        return st;
    st = acc_profile_load_yaml(text, len, path, out);
    acc_mem_free(text);
    return st;
}
