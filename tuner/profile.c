/* Model profiles in memory: building, the invariants, look-ups, and the shipped profiles'
 * directory.  The YAML text form is in profile_yaml.c. */
#include "acc_topo.h"
#include "acc_tune.h"
#include "profile_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16", NULL};

int profile_name_ok(const char *name)
{
    const char *s;
    if (!name || !*name || strlen(name) > PROFILE_NAME_MAX || name[0] == '.')
        return 0;
    for (s = name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

int profile_precision_ok(const char *s)
{
    const char *const *p;
    for (p = precisions; s && *p; p++)
        if (strcmp(*p, s) == 0)
            return 1;
    return 0;
}

int acc_profile_precision_valid(const char *s)
{
    return profile_precision_ok(s);
}

acc_status_t profile_resolve_gpu(const char *gpu, int *sm)
{
    const acc_gpu_model_t *m;
    int64_t v;

    if (gpu && strncmp(gpu, "sm_", 3) == 0) {
        if (acc_parse_int64(gpu + 3, &v) != ACC_OK || v < 10 || v > 1000 ||
            !acc_topo_gpu_arch((int)v))
            return acc_error_set(ACC_ERR_NOT_FOUND,
                                 "unknown compute capability '%s' (write sm_70, sm_80, sm_90, "
                                 "...)",
                                 gpu);
        *sm = (int)v;
        return ACC_OK;
    }
    m = acc_topo_gpu_model_by_name(gpu);
    if (!m)
        return acc_error_set(ACC_ERR_NOT_FOUND,
                             "unknown GPU '%s'; write its compute capability instead (sm_80) or "
                             "a model name such as \"A100 SXM4 80GB\"",
                             gpu ? gpu : "");
    *sm = m->sm;
    return ACC_OK;
}

acc_status_t acc_profile_create(const char *name, acc_profile_t **out)
{
    acc_profile_t *p;

    *out = NULL;
    if (!profile_name_ok(name))
        return acc_error_set(ACC_ERR_INVALID,
                             "profile name '%s' must be 1 to %d letters, digits, '.', '_' or '-' "
                             "(it names a file), not starting with '.'",
                             name ? name : "", PROFILE_NAME_MAX);
    p = acc_mem_calloc(1, sizeof(*p));
    if (!p || !(p->name = acc_mem_strdup(name)) || !(p->description = acc_mem_strdup("")) ||
        !(p->sample = acc_mem_strdup(""))) {
        acc_profile_destroy(p);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory creating profile '%s'", name);
    }
    *out = p;
    return ACC_OK;
}

void acc_profile_destroy(acc_profile_t *p)
{
    size_t i;
    if (!p)
        return;
    for (i = 0; i < p->nsources; i++)
        acc_mem_free(p->sources[i]);
    for (i = 0; i < p->ntensors; i++)
        acc_mem_free(p->tensors[i].name);
    for (i = 0; i < p->ncompute; i++) {
        acc_mem_free(p->compute[i].gpu);
        acc_mem_free(p->compute[i].precision);
        acc_mem_free(p->compute[i].source);
    }
    acc_mem_free(p->sources);
    acc_mem_free(p->tensors);
    acc_mem_free(p->compute);
    acc_mem_free(p->name);
    acc_mem_free(p->description);
    acc_mem_free(p->sample);
    acc_mem_free(p);
}

static acc_status_t replace_text(char **slot, const char *text, const char *what)
{
    char *s = acc_mem_strdup(text ? text : "");
    if (!s)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory setting the %s", what);
    acc_mem_free(*slot);
    *slot = s;
    return ACC_OK;
}

acc_status_t acc_profile_set_description(acc_profile_t *p, const char *text)
{
    return replace_text(&p->description, text, "description");
}

acc_status_t acc_profile_set_sample(acc_profile_t *p, const char *text)
{
    return replace_text(&p->sample, text, "sample");
}

acc_status_t acc_profile_add_source(acc_profile_t *p, const char *text)
{
    size_t cap = p->nsources;
    void *v = p->sources;
    char *s;

    if (!text || !*text)
        return acc_error_set(ACC_ERR_INVALID, "profile '%s': a source must not be empty", p->name);
    if (acc_array_reserve(&v, &cap, p->nsources + 1, sizeof(char *)) != ACC_OK ||
        !(s = acc_mem_strdup(text))) {
        p->sources = v;
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a source");
    }
    p->sources = v;
    p->sources[p->nsources++] = s;
    return ACC_OK;
}

acc_status_t acc_profile_add_tensor(acc_profile_t *p, const char *name, uint64_t elems,
                                    acc_dtype_t dtype, double ready)
{
    size_t cap = p->ntensors;
    void *v = p->tensors;
    acc_profile_tensor_t *t;

    if (!name || !*name)
        return acc_error_set(ACC_ERR_INVALID, "profile '%s': tensor %zu has no name", p->name,
                             p->ntensors);
    if (elems == 0 || elems > PROFILE_MAX_PARAMS || p->params + elems > PROFILE_MAX_PARAMS)
        return acc_error_set(ACC_ERR_RANGE,
                             "profile '%s': tensor '%s' has %llu elements; each tensor needs at "
                             "least one and the model at most %llu",
                             p->name, name, (unsigned long long)elems,
                             (unsigned long long)PROFILE_MAX_PARAMS);
    if (p->ntensors >= PROFILE_MAX_TENSORS)
        return acc_error_set(ACC_ERR_RANGE, "profile '%s': more than %d tensors", p->name,
                             PROFILE_MAX_TENSORS);
    if (acc_array_reserve(&v, &cap, p->ntensors + 1, sizeof(*t)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding tensor '%s'", name);
    p->tensors = v;
    t = &p->tensors[p->ntensors];
    if (!(t->name = acc_mem_strdup(name)))
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding tensor '%s'", name);
    t->elems = elems;
    t->dtype = dtype;
    t->ready = ready;
    p->ntensors++;
    p->params += elems;
    return ACC_OK;
}

acc_status_t acc_profile_add_compute(acc_profile_t *p, const acc_profile_compute_t *c)
{
    size_t cap = p->ncompute;
    void *v = p->compute;
    acc_profile_compute_t e = *c;
    acc_status_t st;

    if ((st = profile_resolve_gpu(c->gpu, &e.sm)) != ACC_OK)
        return acc_error_prefix(st, "profile '%s': ", p->name);
    if (acc_array_reserve(&v, &cap, p->ncompute + 1, sizeof(e)) != ACC_OK)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a compute entry");
    p->compute = v;
    e.gpu = acc_mem_strdup(c->gpu);
    e.precision = acc_mem_strdup(c->precision ? c->precision : "");
    e.source = acc_mem_strdup(c->source ? c->source : "");
    if (!e.gpu || !e.precision || !e.source) {
        acc_mem_free(e.gpu);
        acc_mem_free(e.precision);
        acc_mem_free(e.source);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory adding a compute entry");
    }
    p->compute[p->ncompute++] = e;
    return ACC_OK;
}

static int cmp_tensor_name(const void *a, const void *b)
{
    const acc_profile_tensor_t *x = *(const acc_profile_tensor_t *const *)a;
    const acc_profile_tensor_t *y = *(const acc_profile_tensor_t *const *)b;
    return strcmp(x->name, y->name);
}

/* Sorting pointers keeps the check O(n log n): a hostile file may list a million tensors. */
static acc_status_t check_unique_names(const acc_profile_t *p)
{
    const acc_profile_tensor_t **v;
    acc_status_t st = ACC_OK;
    size_t i;

    if (p->ntensors < 2)
        return ACC_OK;
    v = acc_mem_calloc(p->ntensors, sizeof(*v));
    if (!v)
        return acc_error_set(ACC_ERR_NOMEM, "out of memory checking tensor names");
    for (i = 0; i < p->ntensors; i++)
        v[i] = &p->tensors[i];
    qsort(v, p->ntensors, sizeof(*v), cmp_tensor_name);
    for (i = 1; i < p->ntensors; i++)
        if (strcmp(v[i - 1]->name, v[i]->name) == 0) {
            st = acc_error_set(
                ACC_ERR_INVALID, "profile '%s': tensor '%s' is listed twice (tensors %zu and %zu)",
                p->name, v[i]->name, (size_t)(v[i - 1] - p->tensors), (size_t)(v[i] - p->tensors));
            break;
        }
    acc_mem_free(v);
    return st;
}

acc_status_t profile_check_compute(const acc_profile_t *p, const acc_profile_compute_t *c, size_t i)
{
    if (!profile_precision_ok(c->precision))
        return acc_error_set(ACC_ERR_INVALID,
                             "profile '%s': compute entry %zu: precision '%s' is not one of "
                             "fp32, tf32, fp16, bf16",
                             p->name, i, c->precision ? c->precision : "");
    if (c->batch < 1 || c->accumulation < 1)
        return acc_error_set(ACC_ERR_RANGE,
                             "profile '%s': compute entry %zu: batch %d and accumulation %d must "
                             "be at least 1",
                             p->name, i, c->batch, c->accumulation);
    if (!(c->iteration_ms > 0 && c->iteration_ms < 1e9))
        return acc_error_set(ACC_ERR_RANGE,
                             "profile '%s': compute entry %zu: iteration_ms %g must be a "
                             "positive time in milliseconds",
                             p->name, i, c->iteration_ms);
    if (!(c->forward_ms >= 0 && c->forward_ms < c->iteration_ms))
        return acc_error_set(ACC_ERR_RANGE,
                             "profile '%s': compute entry %zu: forward_ms %g must be at least 0 "
                             "and less than iteration_ms %g",
                             p->name, i, c->forward_ms, c->iteration_ms);
    if (!c->source || !*c->source)
        return acc_error_set(ACC_ERR_INVALID,
                             "profile '%s': compute entry %zu has no source; say where the "
                             "figure was published or measured",
                             p->name, i);
    return ACC_OK;
}

acc_status_t acc_profile_check(const acc_profile_t *p)
{
    uint64_t sum = 0;
    size_t i;
    acc_status_t st;

    if (!profile_name_ok(p->name))
        return acc_error_set(ACC_ERR_INVALID, "profile name '%s' is not a valid file stem",
                             p->name ? p->name : "");
    if (!p->ntensors)
        return acc_error_set(ACC_ERR_INVALID, "profile '%s' lists no tensors", p->name);
    for (i = 0; i < p->ntensors; i++) {
        const acc_profile_tensor_t *t = &p->tensors[i];
        if (t->elems == 0 || t->elems > PROFILE_MAX_PARAMS - sum)
            return acc_error_set(ACC_ERR_RANGE, "profile '%s': tensor '%s' has %llu elements",
                                 p->name, t->name, (unsigned long long)t->elems);
        sum += t->elems;
        if (t->dtype < 0 || t->dtype >= ACC_DT_COUNT)
            return acc_error_set(ACC_ERR_INVALID, "profile '%s': tensor '%s' has no data type",
                                 p->name, t->name);
        if (!(t->ready >= 0.0 && t->ready <= 1.0))
            return acc_error_set(ACC_ERR_RANGE,
                                 "profile '%s': tensor '%s' is ready at %g, outside 0..1", p->name,
                                 t->name, t->ready);
        if (i && t->ready < p->tensors[i - 1].ready)
            return acc_error_set(ACC_ERR_RANGE,
                                 "profile '%s': tensor '%s' is ready at %g, before the tensor "
                                 "listed above it ('%s', %g); list tensors in gradient-ready "
                                 "order",
                                 p->name, t->name, t->ready, p->tensors[i - 1].name,
                                 p->tensors[i - 1].ready);
    }
    if (sum != p->params)
        return acc_error_set(ACC_ERR_INVALID,
                             "profile '%s': parameters is %llu but the tensors add up to %llu",
                             p->name, (unsigned long long)p->params, (unsigned long long)sum);
    if ((st = check_unique_names(p)) != ACC_OK)
        return st;
    for (i = 0; i < p->ncompute; i++)
        if ((st = profile_check_compute(p, &p->compute[i], i)) != ACC_OK)
            return st;
    return ACC_OK;
}

const acc_profile_compute_t *acc_profile_find_compute(const acc_profile_t *p, int sm,
                                                      const char *precision)
{
    size_t i;
    for (i = 0; p && i < p->ncompute; i++)
        if (p->compute[i].sm == sm &&
            (!precision || strcmp(p->compute[i].precision, precision) == 0))
            return &p->compute[i];
    return NULL;
}

double acc_profile_backward_ms(const acc_profile_compute_t *c)
{
    if (c->forward_ms > 0)
        return c->iteration_ms - c->forward_ms;
    return c->iteration_ms * 2.0 / 3.0;
}

uint64_t acc_profile_grad_bytes(const acc_profile_t *p)
{
    uint64_t b = 0;
    size_t i;
    for (i = 0; i < p->ntensors; i++)
        b += p->tensors[i].elems * acc_dtype_size(p->tensors[i].dtype);
    return b;
}

/* ---- shipped profiles ----------------------------------------------------------------------- */

/* ACC_MODEL_DIR wins; then the installed copy; then the source tree of this build. */
const char *acc_profile_builtin_dir(void)
{
    return acc_data_dir(ACC_SETTING_MODEL_DIR, "models", ACC_SOURCE_MODEL_DIR);
}

acc_status_t acc_profile_builtin_list(char ***names, size_t *count)
{
    return acc_yaml_names(acc_profile_builtin_dir(), "model profile", ACC_SETTING_MODEL_DIR, names,
                          count);
}

acc_status_t acc_profile_load_builtin(const char *name, acc_profile_t **out)
{
    const char *dir = acc_profile_builtin_dir();
    char path[4096];
    char **names = NULL;
    size_t n = 0, i;
    acc_buf_t known;
    acc_status_t st;

    *out = NULL;
    /* The name becomes a path: nothing that could leave the directory. */
    if (!profile_name_ok(name))
        return acc_error_set(ACC_ERR_INVALID,
                             "'%s' is not a model profile name (letters, digits, '.', '_', '-')",
                             name ? name : "");
    snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
    if (access(path, F_OK) == 0)
        return acc_profile_load_file(path, out);
    acc_buf_init(&known);
    if (acc_profile_builtin_list(&names, &n) == ACC_OK)
        for (i = 0; i < n; i++)
            acc_buf_printf(&known, "%s%s", i ? ", " : "", names[i]);
    st = acc_error_set(ACC_ERR_NOT_FOUND,
                       "no model profile '%s' in '%s' (profiles there: %s); pass a profile file "
                       "or set ACC_MODEL_DIR",
                       name, dir, known.data && known.data[0] ? known.data : "none");
    acc_strv_free(names, n);
    acc_buf_free(&known);
    return st;
}

acc_status_t acc_profile_scale(const acc_profile_t *p, double factor, acc_profile_t **out)
{
    acc_profile_t *q = NULL;
    acc_status_t st;
    size_t i;

    *out = NULL;
    if (!(factor > 0) || factor > 1)
        return acc_error_set(ACC_ERR_RANGE, "scaling profile '%s' by %g: the factor lies in (0, 1]",
                             p->name, factor);
    if ((st = acc_profile_create(p->name, &q)) != ACC_OK)
        return st;
    st = acc_profile_set_description(q, p->description ? p->description : "");
    if (st == ACC_OK)
        st = acc_profile_set_sample(q, p->sample ? p->sample : "");
    for (i = 0; i < p->nsources && st == ACC_OK; i++)
        st = acc_profile_add_source(q, p->sources[i]);
    for (i = 0; i < p->ntensors && st == ACC_OK; i++) {
        const acc_profile_tensor_t *t = &p->tensors[i];
        double e = (double)t->elems * factor + 0.5;
        st = acc_profile_add_tensor(q, t->name, e < 1 ? 1 : (uint64_t)e, t->dtype, t->ready);
    }
    for (i = 0; i < p->ncompute && st == ACC_OK; i++)
        st = acc_profile_add_compute(q, &p->compute[i]);
    if (st != ACC_OK) {
        acc_profile_destroy(q);
        return st;
    }
    q->forward_flops = p->forward_flops;
    *out = q;
    return ACC_OK;
}
