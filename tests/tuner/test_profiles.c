/* Model profiles: the shipped files against the published parameter counts, against their
 * generator, through load/dump round trips, and malformed profiles with file:line errors. */
#include "acc_test.h"
#include "acc_tune.h"

#include <math.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Published figures the generated profiles must reproduce.  Parameter counts: torchvision's
 * model documentation (num_params) for resnet50, vgg16 and vit_b_16; Hugging Face BertModel
 * with its pooler for bert-base-uncased and bert-large-uncased (the BERT paper rounds them to
 * 110M and 340M); llm.c's printout "num_parameters: 124439808" for gpt2 and its 1558M model for
 * gpt2-xl (OpenAI's README: the paper's 117M was an error).  Tensor counts: named_parameters()
 * of the same modules (ResNet-50: 53 convolutions + 53 batch norms x 2 + fc weight and bias).
 * GMACs: torchvision's "GFLOPS" column, which counts multiply-adds; 0 where none is published. */
static const struct {
    const char *name;
    size_t tensors;
    uint64_t params;
    double gmacs;
} published[] = {
    {"resnet50", 161, 25557032, 4.09}, {"vgg16", 32, 138357544, 15.47},
    {"bert-base", 199, 109482240, 0},  {"bert-large", 391, 335141888, 0},
    {"gpt2", 148, 124439808, 0},       {"gpt2-xl", 580, 1557611200, 0},
    {"vit-b16", 152, 86567656, 17.56},
};
#define NPUBLISHED (sizeof(published) / sizeof(published[0]))

static const char *model_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof(path), "%s", acc_test_src("tuner/models"));
    snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s.yaml", name);
    return path;
}

static acc_profile_t *load_shipped(const char *name)
{
    acc_profile_t *p = NULL;
    CHECK_OK(acc_profile_load_file(model_path(name), &p));
    return p;
}

static char *read_text(const char *path, size_t *len)
{
    char *text = NULL;
    CHECK_OK(acc_read_file(path, &text, len));
    return text;
}

ACC_TEST(published_parameter_counts)
{
    size_t i;
    for (i = 0; i < NPUBLISHED; i++) {
        acc_profile_t *p = load_shipped(published[i].name);
        CHECK_STR(p->name, published[i].name);
        CHECK_INT(p->ntensors, published[i].tensors);
        CHECK_INT(p->params, published[i].params);
        /* Gradients are float, as PyTorch autocast leaves them. */
        CHECK_INT(acc_profile_grad_bytes(p), 4 * published[i].params);
        acc_profile_destroy(p);
    }
}

/* The FLOP count behind the backward timeline agrees with torchvision's published figures:
 * convolutions, linear layers and attention products are the whole of them. */
ACC_TEST(forward_flops_match_torchvision)
{
    size_t i;
    for (i = 0; i < NPUBLISHED; i++) {
        acc_profile_t *p = load_shipped(published[i].name);
        CHECK(p->forward_flops > 2 * p->params / 10);
        if (published[i].gmacs > 0)
            CHECK_NEAR(p->forward_flops / 2e9, published[i].gmacs, 0.001 * published[i].gmacs);
        acc_profile_destroy(p);
    }
}

static int run_generator(const char *dir, const char *extra)
{
#ifdef ACC_GEN_PROFILES_EXE
    pid_t pid = fork();
    int status = 0;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        if (extra)
            execl(ACC_GEN_PROFILES_EXE, ACC_GEN_PROFILES_EXE, dir, extra, (char *)NULL);
        else
            execl(ACC_GEN_PROFILES_EXE, ACC_GEN_PROFILES_EXE, dir, (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#else
    (void)dir;
    (void)extra;
    acc_test_fail(__FILE__, __LINE__, "built without ACC_GEN_PROFILES_EXE (tuner/CMakeLists.txt)");
    return -1;
#endif
}

static size_t yaml_files(const char *dir, char names[][64], size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    CHECK(d != NULL);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && n < max)
            snprintf(names[n++], 64, "%.63s", e->d_name);
    }
    closedir(d);
    return n;
}

/* The committed profiles are exactly what the generator writes today: reviewable (the
 * derivation is code) and reproducible (no hand edits drift in). */
ACC_TEST(committed_profiles_equal_generator_output)
{
    const char *dir = acc_test_tmp("generated-profiles");
    char made[32][64], committed[32][64];
    size_t nmade, ncommitted, i, j;

    mkdir(dir, 0755);
    /* Start empty: a profile left by an earlier run must not pass for generated. */
    nmade = yaml_files(dir, made, 32);
    for (i = 0; i < nmade; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
        CHECK(unlink(path) == 0);
    }
    CHECK_INT(run_generator(dir, NULL), 0);
    nmade = yaml_files(dir, made, 32);
    ncommitted = yaml_files(acc_test_src("tuner/models"), committed, 32);
    CHECK_INT(nmade, NPUBLISHED);
    CHECK_INT(ncommitted, nmade);
    for (i = 0; i < nmade; i++) {
        char path[4096];
        size_t la, lb;
        char *a, *b;
        for (j = 0; j < ncommitted && strcmp(made[i], committed[j]) != 0; j++)
            ;
        CHECK_MSG(j < ncommitted, "generator wrote %s, which is not committed", made[i]);
        snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
        a = read_text(path, &la);
        snprintf(path, sizeof(path), "%s/%s", acc_test_src("tuner/models"), made[i]);
        b = read_text(path, &lb);
        CHECK_MSG(la == lb && memcmp(a, b, la) == 0,
                  "tuner/models/%s differs from the generator's output; run acc-gen-profiles "
                  "tuner/models and review the diff",
                  made[i]);
        acc_mem_free(a);
        acc_mem_free(b);
    }
}

ACC_TEST(generator_rejects_unknown_model)
{
    const char *dir = acc_test_tmp("generated-none");
    mkdir(dir, 0755);
    CHECK_INT(run_generator(dir, "alexnet"), 2);
}

/* load -> dump gives the file back byte for byte, and a second round changes nothing. */
ACC_TEST(round_trip_is_identical)
{
    size_t i;
    for (i = 0; i < NPUBLISHED; i++) {
        size_t len;
        char *text = read_text(model_path(published[i].name), &len);
        acc_profile_t *p = NULL, *q = NULL;
        acc_buf_t a, b;
        acc_buf_init(&a);
        acc_buf_init(&b);
        CHECK_OK(acc_profile_load_yaml(text, len, published[i].name, &p));
        CHECK_OK(acc_profile_dump_yaml(p, &a));
        CHECK_MSG(a.len == len && memcmp(a.data, text, len) == 0, "%s: dump differs from file",
                  published[i].name);
        CHECK_OK(acc_profile_load_yaml(a.data, a.len, "dump", &q));
        CHECK_OK(acc_profile_dump_yaml(q, &b));
        CHECK_STR(b.data, a.data);
        acc_buf_free(&a);
        acc_buf_free(&b);
        acc_profile_destroy(p);
        acc_profile_destroy(q);
        acc_mem_free(text);
    }
}

static size_t find_tensor(const acc_profile_t *p, const char *name)
{
    size_t i;
    for (i = 0; i < p->ntensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return i;
    acc_test_fail(__FILE__, __LINE__, "%s has no tensor %s", p->name, name);
    return 0;
}

/* The backward timeline: the classifier's gradients come first, the input layer's last; the
 * embeddings of the language models (and GPT-2's tied LM head with them) at the very end. */
ACC_TEST(gradient_ready_order)
{
    acc_profile_t *p;
    size_t i;

    for (i = 0; i < NPUBLISHED; i++) {
        p = load_shipped(published[i].name);
        CHECK(p->tensors[0].ready > 0.0);
        CHECK(p->tensors[0].ready < 0.3);
        CHECK(p->tensors[p->ntensors - 1].ready == 1.0);
        acc_profile_destroy(p);
    }
    p = load_shipped("resnet50");
    CHECK_STR(p->tensors[0].name, "fc.bias");
    CHECK_STR(p->tensors[p->ntensors - 1].name, "conv1.weight");
    CHECK(p->tensors[find_tensor(p, "layer4.0.conv2.weight")].ready <
          p->tensors[find_tensor(p, "layer1.0.conv2.weight")].ready);
    acc_profile_destroy(p);
    /* VGG-16's 392 MB classifier.0 is ready within the first 1% of the backward pass. */
    p = load_shipped("vgg16");
    i = find_tensor(p, "classifier.0.weight");
    CHECK_INT(p->tensors[i].elems, 25088 * 4096);
    CHECK(p->tensors[i].ready < 0.01);
    acc_profile_destroy(p);
    p = load_shipped("gpt2");
    CHECK_STR(p->tensors[p->ntensors - 1].name, "transformer.wte.weight");
    CHECK(p->tensors[0].ready > 0.2); /* the LM head's backward runs before ln_f's */
    acc_profile_destroy(p);
    p = load_shipped("bert-large");
    CHECK(p->tensors[find_tensor(p, "embeddings.word_embeddings.weight")].ready == 1.0);
    CHECK_STR(p->tensors[0].name, "pooler.dense.bias");
    acc_profile_destroy(p);
}

ACC_TEST(compute_entries_per_generation)
{
    static const char *const with_all[] = {"resnet50", "bert-base", "bert-large"};
    const acc_profile_compute_t *c;
    acc_profile_t *p;
    size_t i;

    for (i = 0; i < 3; i++) {
        p = load_shipped(with_all[i]);
        CHECK(acc_profile_find_compute(p, 70, NULL) != NULL);
        CHECK(acc_profile_find_compute(p, 80, NULL) != NULL);
        CHECK(acc_profile_find_compute(p, 90, NULL) != NULL);
        acc_profile_destroy(p);
    }
    p = load_shipped("resnet50");
    c = acc_profile_find_compute(p, 70, "fp16");
    CHECK(c != NULL);
    CHECK_INT(c->batch, 256);
    CHECK_NEAR(c->iteration_ms, 256.0 / 1200 * 1000, 0.001); /* DLE: 1200 img/s */
    CHECK_NEAR(acc_profile_backward_ms(c), c->iteration_ms * 2 / 3, 1e-9);
    CHECK_STR(acc_profile_find_compute(p, 70, "fp32")->precision, "fp32");
    CHECK(acc_profile_find_compute(p, 75, NULL) == NULL);
    CHECK(acc_profile_find_compute(p, 80, "bf16") == NULL);
    for (i = 0; i < p->ncompute; i++)
        CHECK(strlen(p->compute[i].source) > 40);
    acc_profile_destroy(p);
    p = load_shipped("gpt2-xl");
    c = acc_profile_find_compute(p, 90, "bf16");
    CHECK(c != NULL);
    CHECK_INT(c->accumulation, 8);
    CHECK_NEAR(c->iteration_ms * c->accumulation, 2800, 0.01); /* llm.c: 2.80 s per step */
    acc_profile_destroy(p);
}

ACC_TEST(every_profile_covers_every_shipped_platform)
{
    char **models = NULL, **platforms = NULL;
    size_t nm = 0, np = 0, i, j;

    CHECK_OK(acc_profile_builtin_list(&models, &nm));
    CHECK_OK(acc_topo_platform_list(&platforms, &np));
    CHECK(nm >= 7 && np >= 10);
    for (j = 0; j < np; j++) {
        acc_topo_t *t = NULL;
        const acc_topo_vertex_t *g;
        CHECK_OK(acc_topo_load_platform(platforms[j], &t));
        g = acc_topo_vertex(t, acc_topo_find(t, ACC_VTX_GPU, 0));
        for (i = 0; i < nm; i++) {
            acc_profile_t *p = load_shipped(models[i]);
            const acc_profile_compute_t *c = acc_profile_find_compute(p, g->sm, NULL);
            CHECK_MSG(c != NULL, "profile %s has no compute time for %s's GPU (sm_%d)", models[i],
                      platforms[j], g->sm);
            /* A derived time says so, and how it was derived. */
            if (c->assumed)
                CHECK_MSG(strstr(c->source, "derived, not published") &&
                              strstr(c->source, "TFLOPS") && strstr(c->source, "datasheet"),
                          "%s on sm_%d: %s", models[i], g->sm, c->source);
            acc_profile_destroy(p);
        }
        acc_topo_destroy(t);
    }
    acc_strv_free(models, nm);
    acc_strv_free(platforms, np);
}

ACC_TEST(derived_compute_times)
{
    acc_profile_t *p = load_shipped("vit-b16");
    const acc_profile_compute_t *pub = acc_profile_find_compute(p, 86, NULL), *h100;
    double util;

    /* ViT-B/16 is published on an RTX 3090 only: the H100's time carries over the fraction of
     * peak it reaches there (71 TFLOPS there, 989.4 on the H100). */
    CHECK(pub && !pub->assumed);
    h100 = acc_profile_find_compute(p, 90, NULL);
    CHECK(h100 && h100->assumed);
    CHECK_INT(h100->batch, pub->batch);
    util = 3.0 * (double)p->forward_flops * pub->batch / (pub->iteration_ms * 1e-3) / 71e12;
    CHECK_NEAR(h100->iteration_ms,
               3.0 * (double)p->forward_flops * h100->batch / (989.4e12 * util) * 1e3, 0.001);
    CHECK(h100->iteration_ms < pub->iteration_ms);
    acc_profile_destroy(p);
    /* Published ones stay as published; a V100 has no bf16, so a bf16 recipe becomes fp16. */
    p = load_shipped("gpt2-xl");
    CHECK(!acc_profile_find_compute(p, 90, NULL)->assumed);
    CHECK_STR(acc_profile_find_compute(p, 70, NULL)->precision, "fp16");
    CHECK_INT(acc_profile_find_compute(p, 70, NULL)->accumulation, 8);
    acc_profile_destroy(p);
}

ACC_TEST(builtin_dir_list_and_setting)
{
    const char *dir = acc_test_tmp("model-dir");
    static const char mine[] = "version: 1\nname: mine\nparameters: 4\ntensors:\n"
                               "  - {name: w, elems: 4, dtype: half, ready: 1}\n";
    char path[4096], **names = NULL;
    acc_profile_t *p = NULL;
    size_t n = 0, i, found = 0;

    unsetenv("ACC_MODEL_DIR");
    CHECK_OK(acc_profile_builtin_list(&names, &n));
    for (i = 0; i < n; i++)
        found += strcmp(names[i], "gpt2-xl") == 0 || strcmp(names[i], "resnet50") == 0;
    CHECK_INT(found, 2);
    acc_strv_free(names, n);
    CHECK_OK(acc_profile_load_builtin("vit-b16", &p));
    CHECK_INT(p->params, 86567656);
    acc_profile_destroy(p);

    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/mine.yaml", dir);
    CHECK_OK(acc_write_file(path, mine, sizeof(mine) - 1));
    setenv("ACC_MODEL_DIR", dir, 1);
    CHECK_STR(acc_profile_builtin_dir(), dir);
    CHECK_OK(acc_profile_load_builtin("mine", &p));
    CHECK_INT(p->tensors[0].dtype, ACC_DT_F16);
    CHECK_INT(acc_profile_grad_bytes(p), 8);
    acc_profile_destroy(p);
    CHECK_ERR(acc_profile_load_builtin("resnet50", &p), ACC_ERR_NOT_FOUND);
    CHECK_MSG_HAS(dir);
    CHECK_MSG_HAS("mine");
    CHECK_ERR(acc_profile_load_builtin("../mine", &p), ACC_ERR_INVALID);
    CHECK(p == NULL);
    unsetenv("ACC_MODEL_DIR");
}

/* ---- malformed profiles ----------------------------------------------------------------- */

static const char tiny[] = "version: 1\n"                                                /* 1 */
                           "name: tiny\n"                                                /* 2 */
                           "parameters: 30\n"                                            /* 3 */
                           "compute:\n"                                                  /* 4 */
                           "  - gpu: sm_80\n"                                            /* 5 */
                           "    precision: fp16\n"                                       /* 6 */
                           "    batch: 8\n"                                              /* 7 */
                           "    iteration_ms: 12.5\n"                                    /* 8 */
                           "    source: measured on our own A100\n"                      /* 9 */
                           "tensors:\n"                                                  /* 10 */
                           "  - {name: fc.bias, elems: 10, dtype: float, ready: 0.25}\n" /* 11 */
                           "  - {name: fc.weight, elems: 20, dtype: half, ready: 1}\n";  /* 12 */

/* tiny with the first occurrence of `from` replaced by `to`. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(tiny, from);
    char *out;
    CHECK(at != NULL);
    out = acc_mem_alloc(sizeof(tiny) + strlen(to));
    memcpy(out, tiny, (size_t)(at - tiny));
    strcpy(out + (at - tiny), to);
    strcat(out, at + strlen(from));
    return out;
}

static void expect_error(const char *from, const char *to, acc_status_t want, const char *where,
                         const char *what)
{
    char *text = edit(from, to);
    acc_profile_t *p = NULL;
    CHECK_ERR(acc_profile_load_yaml(text, strlen(text), "tiny.yaml", &p), want);
    CHECK(p == NULL);
    CHECK_MSG_HAS(where);
    CHECK_MSG_HAS(what);
    acc_mem_free(text);
}

ACC_TEST(tiny_profile_loads)
{
    acc_profile_t *p = NULL;
    CHECK_OK(acc_profile_load_yaml(tiny, strlen(tiny), "tiny.yaml", &p));
    CHECK_INT(p->ntensors, 2);
    CHECK_INT(p->compute[0].sm, 80);
    CHECK_INT(p->compute[0].accumulation, 1);
    CHECK_INT(acc_profile_grad_bytes(p), 10 * 4 + 20 * 2);
    acc_profile_destroy(p);
}

ACC_TEST(malformed_unknown_key)
{
    expect_error("parameters: 30\n", "parameters: 30\ncolor: red\n", ACC_ERR_PARSE,
                 "tiny.yaml:4:", "unknown key 'color'");
    expect_error("elems: 10,", "elems: 10, shape: [10],", ACC_ERR_PARSE,
                 "tiny.yaml:11:", "unknown key 'shape'");
    expect_error("    batch: 8\n", "    batch: 8\n    streams: 2\n", ACC_ERR_PARSE,
                 "tiny.yaml:8:", "unknown key 'streams'");
}

ACC_TEST(malformed_negative_or_zero_elems)
{
    expect_error("elems: 10,", "elems: -10,", ACC_ERR_RANGE, "tiny.yaml:11:", "'elems' is -10");
    expect_error("elems: 10,", "elems: 0,", ACC_ERR_RANGE, "tiny.yaml:11:", "'elems' is 0");
    expect_error("elems: 10,", "elems: ten,", ACC_ERR_PARSE, "tiny.yaml:11:", "integer");
}

ACC_TEST(malformed_ready_outside_or_decreasing)
{
    expect_error("ready: 1}", "ready: 1.5}", ACC_ERR_RANGE, "tiny.yaml:12:", "0..1");
    expect_error("ready: 0.25}", "ready: -0.1}", ACC_ERR_RANGE, "tiny.yaml:11:", "0..1");
    expect_error("ready: 0.25}", "ready: nan}", ACC_ERR_PARSE, "tiny.yaml:11:", "a number");
    expect_error("ready: 1}", "ready: 0.2}", ACC_ERR_RANGE, "tiny.yaml:12:", "before 'fc.bias'");
}

ACC_TEST(malformed_missing_or_wrong_version)
{
    expect_error("version: 1\n", "", ACC_ERR_PARSE,
                 "tiny.yaml:1:", "missing required key 'version'");
    expect_error("version: 1\n", "version: 2\n", ACC_ERR_UNSUPPORTED, "tiny.yaml:1:", "version 2");
}

ACC_TEST(malformed_truncated)
{
    size_t len, cut;
    char *text;
    acc_profile_t *p = NULL;

    /* Cut after a whole tensor line: valid YAML, but the tensors no longer add up. */
    cut = (size_t)(strstr(tiny, "  - {name: fc.weight") - tiny);
    CHECK_ERR(acc_profile_load_yaml(tiny, cut, "tiny.yaml", &p), ACC_ERR_PARSE);
    CHECK_MSG_HAS("tiny.yaml:3:");
    CHECK_MSG_HAS("add up to 10");
    /* Cut inside a flow mapping: a syntax error at a line. */
    CHECK_ERR(acc_profile_load_yaml(tiny, sizeof(tiny) - 12, "tiny.yaml", &p), ACC_ERR_PARSE);
    CHECK_MSG_HAS("tiny.yaml:1");
    /* A real profile cut anywhere past its opening comment is refused with its name and a
     * line. */
    text = read_text(model_path("resnet50"), &len);
    for (cut = (size_t)(strchr(text, '\n') - text) + 2; cut < len; cut += len / 97) {
        CHECK_MSG(acc_profile_load_yaml(text, cut, "resnet50.yaml", &p) != ACC_OK,
                  "resnet50.yaml cut at %zu bytes loaded", cut);
        CHECK(p == NULL);
        CHECK_MSG(strncmp(acc_error_message(), "resnet50.yaml:", 14) == 0 &&
                      acc_error_message()[14] >= '0' && acc_error_message()[14] <= '9',
                  "cut at %zu: message without a line: %s", cut, acc_error_message());
    }
    acc_mem_free(text);
}

ACC_TEST(malformed_other_fields)
{
    expect_error("ready: 1}", "ready: 1}\n  - {name: fc.bias, elems: 5, dtype: float, ready: 1}",
                 ACC_ERR_PARSE, "tiny.yaml:13:", "listed twice (first on line 11)");
    expect_error("dtype: half", "dtype: int8", ACC_ERR_PARSE, "tiny.yaml:12:", "unknown dtype");
    expect_error("gpu: sm_80", "gpu: Voodoo3", ACC_ERR_NOT_FOUND,
                 "tiny.yaml:5:", "unknown GPU 'Voodoo3'");
    expect_error("gpu: sm_80", "gpu: sm_12", ACC_ERR_NOT_FOUND, "tiny.yaml:5:", "sm_12");
    expect_error("precision: fp16", "precision: fp8", ACC_ERR_PARSE, "tiny.yaml:6:", "fp8");
    expect_error("batch: 8", "batch: 0", ACC_ERR_RANGE, "tiny.yaml:7:", "'batch' is 0");
    expect_error("iteration_ms: 12.5", "iteration_ms: -3", ACC_ERR_RANGE,
                 "tiny.yaml:8:", "positive");
    expect_error("iteration_ms: 12.5", "iteration_ms: 12.5\n    forward_ms: 20", ACC_ERR_RANGE,
                 "tiny.yaml:9:", "less than iteration_ms");
    expect_error("    source: measured on our own A100\n", "", ACC_ERR_PARSE,
                 "tiny.yaml:5:", "missing required key 'source'");
    expect_error("name: tiny", "name: ../etc/passwd", ACC_ERR_PARSE,
                 "tiny.yaml:2:", "letters, digits");
    expect_error("tensors:\n", "tensors: []\nx:\n", ACC_ERR_PARSE, "tiny.yaml:", "unknown key");
}

ACC_TEST(builder_checks_invariants)
{
    acc_profile_t *p = NULL;
    acc_profile_compute_t c;
    acc_buf_t b;

    CHECK_ERR(acc_profile_create("a/b", &p), ACC_ERR_INVALID);
    CHECK_OK(acc_profile_create("built", &p));
    CHECK_ERR(acc_profile_check(p), ACC_ERR_INVALID); /* no tensors */
    CHECK_OK(acc_profile_add_tensor(p, "b", 3, ACC_DT_BF16, 0.5));
    CHECK_OK(acc_profile_add_tensor(p, "w", 6, ACC_DT_BF16, 0.4));
    CHECK_ERR(acc_profile_check(p), ACC_ERR_RANGE);
    CHECK_MSG_HAS("'w'");
    p->tensors[1].ready = 0.5;
    CHECK_OK(acc_profile_check(p));
    CHECK_ERR(acc_profile_add_tensor(p, "z", 0, ACC_DT_F32, 1), ACC_ERR_RANGE);
    memset(&c, 0, sizeof(c));
    c.gpu = "H100 SXM5 80GB";
    c.precision = "bf16";
    c.batch = 4;
    c.accumulation = 2;
    c.iteration_ms = 10;
    c.forward_ms = 4;
    c.source = "our measurement, 2024-05-01";
    CHECK_OK(acc_profile_add_compute(p, &c));
    CHECK_INT(p->compute[0].sm, 90);
    CHECK_NEAR(acc_profile_backward_ms(&p->compute[0]), 6, 1e-12);
    acc_buf_init(&b);
    CHECK_OK(acc_profile_dump_yaml(p, &b));
    CHECK(strstr(b.data, "    accumulation: 2\n    iteration_ms: 10\n    forward_ms: 4\n"));
    acc_buf_free(&b);
    p->params++;
    CHECK_ERR(acc_profile_check(p), ACC_ERR_INVALID);
    CHECK_MSG_HAS("add up to 9");
    acc_profile_destroy(p);
    acc_profile_destroy(NULL);
}

/* Names YAML could misread are quoted so that they read back (a ':' inside a flow mapping). */
ACC_TEST(odd_names_round_trip)
{
    static const char *const names[] = {
        "a:b", "weird name:? x", "x: y", "#hash", "q\"uote", "tab\there", "1e5", "true", "[list]"};
    acc_profile_t *p = NULL, *q = NULL;
    acc_buf_t a, b;
    size_t i;

    CHECK_OK(acc_profile_create("odd", &p));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        CHECK_OK(acc_profile_add_tensor(p, names[i], i + 1, ACC_DT_F32, 1));
    acc_buf_init(&a);
    acc_buf_init(&b);
    CHECK_OK(acc_profile_dump_yaml(p, &a));
    CHECK_OK(acc_profile_load_yaml(a.data, a.len, "odd.yaml", &q));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        CHECK_STR(q->tensors[i].name, names[i]);
    CHECK_OK(acc_profile_dump_yaml(q, &b));
    CHECK_STR(b.data, a.data);
    acc_buf_free(&a);
    acc_buf_free(&b);
    acc_profile_destroy(p);
    acc_profile_destroy(q);
}

ACC_TEST(scaled_profile_keeps_all_but_the_bytes)
{
    acc_profile_t *p = NULL, *q = NULL;
    CHECK_OK(acc_profile_load_builtin("bert-large", &p));
    CHECK_OK(acc_profile_scale(p, 1.0 / 32, &q));
    CHECK_OK(acc_profile_check(q));
    CHECK_STR(q->name, p->name);
    CHECK(q->ntensors == p->ntensors && q->ncompute == p->ncompute);
    for (size_t i = 0; i < p->ntensors; i++) {
        double want = (double)p->tensors[i].elems / 32;
        CHECK_STR(q->tensors[i].name, p->tensors[i].name);
        CHECK(q->tensors[i].ready == p->tensors[i].ready);
        CHECK(q->tensors[i].elems >= 1 &&
              fabs((double)q->tensors[i].elems - want) <= 0.5 + 1e-9 + (want < 1 ? 1 : 0));
    }
    CHECK_NEAR((double)acc_profile_grad_bytes(q), acc_profile_grad_bytes(p) / 32.0,
               1e-3 * (double)acc_profile_grad_bytes(p) / 32.0);
    CHECK_NEAR(q->compute[0].iteration_ms, p->compute[0].iteration_ms, 0);
    acc_profile_destroy(q);
    CHECK_ERR(acc_profile_scale(p, 2, &q), ACC_ERR_RANGE);
    CHECK_ERR(acc_profile_scale(p, 0, &q), ACC_ERR_RANGE);
    CHECK(!q);
    acc_profile_destroy(p);
}
