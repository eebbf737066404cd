/*
 * acc-gen-profiles: writes the shipped model profiles (tuner/models/<name>.yaml) from the
 * architecture descriptions in gen_models.c.
 *
 *     acc-gen-profiles [--grad-dtype TYPE] DIR [MODEL...]
 *     acc-gen-profiles --list
 *
 * For each model the description lists the operations of one forward pass in order, with their
 * FLOPs and parameter tensors.  The profile lists the tensors in reverse, which is the order in
 * which their gradients become final during the backward pass, and gives each the fraction of the
 * backward pass after which it is ready, under this rule (tuner/models/README.md):
 *
 *   backward time of an operation is proportional to its forward FLOPs, twice them (the gradient
 *   of the input and of the weight each cost one forward pass), once them for an operation that
 *   reads the network's input (no input gradient); a tensor is ready when the backward pass of
 *   its operation has finished, i.e. after all operations later in the forward order and its own.
 *
 * tests/tuner/test_profiles.c runs this program and requires its output to equal the committed
 * files byte for byte.
 */
#include "gen_net.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NAME_LEN 128

typedef struct {
    uint64_t flops;
    int data_input;
    size_t first, count; /* its parameters: params[first .. first+count) */
} gen_op_t;

typedef struct {
    char name[NAME_LEN];
    uint64_t elems;
} gen_param_t;

struct net {
    gen_op_t *ops;
    size_t nops, capops;
    gen_param_t *params;
    size_t nparams, capparams;
    int failed; /* out of memory, or a parameter before the first operation */
};

void net_op(net_t *n, uint64_t flops, int data_input)
{
    void *v = n->ops;
    if (n->failed || acc_array_reserve(&v, &n->capops, n->nops + 1, sizeof(gen_op_t)) != ACC_OK) {
        n->failed = 1;
        return;
    }
    n->ops = v;
    n->ops[n->nops].flops = flops;
    n->ops[n->nops].data_input = data_input;
    n->ops[n->nops].first = n->nparams;
    n->ops[n->nops].count = 0;
    n->nops++;
}

void net_param(net_t *n, uint64_t elems, const char *fmt, ...)
{
    void *v = n->params;
    va_list ap;

    if (n->failed || !n->nops ||
        acc_array_reserve(&v, &n->capparams, n->nparams + 1, sizeof(gen_param_t)) != ACC_OK) {
        n->failed = 1;
        return;
    }
    n->params = v;
    va_start(ap, fmt);
    vsnprintf(n->params[n->nparams].name, NAME_LEN, fmt, ap);
    va_end(ap);
    n->params[n->nparams].elems = elems;
    n->nparams++;
    n->ops[n->nops - 1].count++;
}

static void net_free(net_t *n)
{
    acc_mem_free(n->ops);
    acc_mem_free(n->params);
}

/* x rounded to `decimals` decimal places.  Dividing by an exact power of ten gives the double
 * nearest the decimal, which the dump then writes in its shortest form. */
static double round_decimals(double x, int decimals)
{
    double scale = pow(10.0, decimals);
    return floor(x * scale + 0.5) / scale;
}

static const char *dtype_tag(acc_dtype_t dt)
{
    switch (dt) {
    case ACC_DT_F16:
        return "fp16";
    case ACC_DT_BF16:
        return "bf16";
    default:
        return "fp32";
    }
}

static acc_status_t add_tensors(const net_t *n, acc_profile_t *p, acc_dtype_t grad_dtype)
{
    uint64_t total = 0, done = 0;
    size_t i, k;
    acc_status_t st;

    for (i = 0; i < n->nops; i++)
        total += n->ops[i].flops * (n->ops[i].data_input ? 1 : 2);
    if (!total)
        return acc_error_set(ACC_ERR_INTERNAL, "%s: the network has no FLOPs", p->name);
    /* Walk the forward order backwards: `done` is the backward work finished once operation i
     * has run its backward pass. */
    for (i = n->nops; i-- > 0;) {
        const gen_op_t *op = &n->ops[i];
        double ready;
        done += op->flops * (op->data_input ? 1 : 2);
        /* Six decimals of the backward pass: 0.2 us of a 200 ms pass, far finer than the
         * published times, and short enough to read. */
        ready = done == total ? 1.0 : round_decimals((double)done / (double)total, 6);
        for (k = op->count; k-- > 0;) {
            const gen_param_t *t = &n->params[op->first + k];
            if ((st = acc_profile_add_tensor(p, t->name, t->elems, grad_dtype, ready)) != ACC_OK)
                return st;
        }
        p->forward_flops += op->flops;
    }
    return ACC_OK;
}

static acc_status_t add_compute(const gen_model_t *m, acc_profile_t *p)
{
    size_t i;
    acc_status_t st;

    for (i = 0; i < m->ncompute; i++) {
        const gen_compute_t *g = &m->compute[i];
        acc_profile_compute_t c;
        double ms;

        memset(&c, 0, sizeof(c));
        c.gpu = (char *)g->gpu;
        c.precision = (char *)g->precision;
        c.batch = g->batch;
        c.accumulation = g->accumulation ? g->accumulation : 1;
        c.source = (char *)g->source;
        /* A throughput is per GPU and covers every micro-batch; a step time covers all the
         * accumulated micro-batches of one optimizer step. */
        ms = g->samples_per_s > 0 ? 1000.0 * g->batch / g->samples_per_s
                                  : g->step_ms / c.accumulation;
        c.iteration_ms = round_decimals(ms, 3);
        if ((st = acc_profile_add_compute(p, &c)) != ACC_OK)
            return st;
    }
    return ACC_OK;
}

static acc_status_t make_profile(const gen_model_t *m, acc_dtype_t grad_dtype, acc_profile_t **out)
{
    net_t n;
    acc_profile_t *p = NULL;
    char name[96];
    acc_buf_t text;
    const char *const *s;
    acc_status_t st;

    memset(&n, 0, sizeof(n));
    acc_buf_init(&text);
    *out = NULL;
    m->build(&n);
    if (n.failed) {
        st = acc_error_set(ACC_ERR_NOMEM, "%s: out of memory describing the network", m->name);
        goto out;
    }
    if (grad_dtype == ACC_DT_F32)
        snprintf(name, sizeof(name), "%s", m->name);
    else
        snprintf(name, sizeof(name), "%s-%s", m->name, dtype_tag(grad_dtype));
    if ((st = acc_profile_create(name, &p)) != ACC_OK)
        goto out;
    acc_buf_printf(&text,
                   "%s Generated by tuner/models/gen_profiles.c (rules in "
                   "tuner/models/README.md); regenerate rather than edit.",
                   m->description);
    if (grad_dtype != ACC_DT_F32)
        acc_buf_printf(&text, " Variant with %s gradients.", acc_dtype_name(grad_dtype));
    if ((st = acc_buf_status(&text)) != ACC_OK ||
        (st = acc_profile_set_description(p, text.data)) != ACC_OK ||
        (st = acc_profile_set_sample(p, m->sample)) != ACC_OK)
        goto out;
    for (s = m->sources; *s; s++)
        if ((st = acc_profile_add_source(p, *s)) != ACC_OK)
            goto out;
    if ((st = add_tensors(&n, p, grad_dtype)) != ACC_OK || (st = add_compute(m, p)) != ACC_OK ||
        (st = gen_derive_compute(p)) != ACC_OK || (st = acc_profile_check(p)) != ACC_OK)
        goto out;
    *out = p;
    p = NULL;
out:
    acc_profile_destroy(p);
    acc_buf_free(&text);
    net_free(&n);
    return st;
}

static acc_status_t write_model(const gen_model_t *m, acc_dtype_t grad_dtype, const char *dir)
{
    acc_profile_t *p = NULL;
    acc_buf_t b;
    char path[4096];
    acc_status_t st;

    acc_buf_init(&b);
    if ((st = make_profile(m, grad_dtype, &p)) != ACC_OK ||
        (st = acc_profile_dump_yaml(p, &b)) != ACC_OK)
        goto out;
    snprintf(path, sizeof(path), "%s/%s.yaml", dir, p->name);
    if ((st = acc_write_file(path, b.data, b.len)) != ACC_OK)
        goto out;
    printf("%-12s %4zu tensors %13" PRIu64 " parameters -> %s\n", p->name, p->ntensors, p->params,
           path);
out:
    acc_profile_destroy(p);
    acc_buf_free(&b);
    return st;
}

static int usage(FILE *f)
{
    fprintf(f, "usage: acc-gen-profiles [--grad-dtype float|half|bfloat16] DIR [MODEL...]\n"
               "       acc-gen-profiles --list\n"
               "Writes DIR/<model>.yaml for each model (all of them when none is named).\n");
    return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
    acc_dtype_t grad_dtype = ACC_DT_F32;
    const char *dir = NULL;
    int i = 1, first_model, rc = 0;
    size_t k;

    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return usage(stdout);
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (k = 0; k < gen_model_count; k++)
            printf("%s\n", gen_models[k].name);
        return 0;
    }
    if (i + 1 < argc && strcmp(argv[i], "--grad-dtype") == 0) {
        if (acc_dtype_parse(argv[i + 1], &grad_dtype) != ACC_OK ||
            (grad_dtype != ACC_DT_F32 && grad_dtype != ACC_DT_F16 && grad_dtype != ACC_DT_BF16)) {
            fprintf(stderr, "acc-gen-profiles: --grad-dtype takes float, half or bfloat16\n");
            return 2;
        }
        i += 2;
    }
    if (i >= argc || argv[i][0] == '-')
        return usage(stderr);
    dir = argv[i++];
    first_model = i;
    for (; i < argc; i++) {
        for (k = 0; k < gen_model_count; k++)
            if (strcmp(argv[i], gen_models[k].name) == 0)
                break;
        if (k == gen_model_count) {
            fprintf(stderr, "acc-gen-profiles: unknown model '%s' (see --list)\n", argv[i]);
            return 2;
        }
    }
    for (k = 0; k < gen_model_count; k++) {
        int wanted = first_model == argc;
        for (i = first_model; i < argc && !wanted; i++)
            wanted = strcmp(argv[i], gen_models[k].name) == 0;
        if (wanted && write_model(&gen_models[k], grad_dtype, dir) != ACC_OK) {
            fprintf(stderr, "acc-gen-profiles: %s: %s\n", gen_models[k].name, acc_error_message());
            rc = 1;
        }
    }
    return rc;
}
