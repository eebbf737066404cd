/*
 * The architectures of the shipped model profiles, written from their hyper-parameters in the
 * forward order of their reference implementations (torchvision, Hugging Face transformers), with
 * the framework's parameter names, and the published compute times of one training iteration.
 *
 * Nothing here is a total: parameter counts, tensor counts and FLOPs all follow from the layer
 * loops below, and tests/tuner/test_profiles.c compares the totals with the published ones.
 * FLOPs count 2 per multiply-add of convolutions, linear layers and the two attention products
 * (QK^T and AV); normalisation, activations, pooling, soft-max and embedding look-ups count 0.
 */
#include "gen_net.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- building blocks ------------------------------------------------------------------------ */

/* Convolution without bias (ResNet) or with it (VGG, ViT's patch embedding); groups = 1. */
static void conv(net_t *n, const char *name, int cin, int cout, int k, int out_hw, int bias,
                 int data_input)
{
    net_op(n, 2ull * cout * out_hw * out_hw * cin * k * k, data_input);
    net_param(n, (uint64_t)cout * cin * k * k, "%s.weight", name);
    if (bias)
        net_param(n, (uint64_t)cout, "%s.bias", name);
}

/* Affine normalisation (BatchNorm, LayerNorm): a scale and a shift per channel, no FLOPs counted.
 */
static void norm(net_t *n, const char *name, int c)
{
    net_op(n, 0, 0);
    net_param(n, (uint64_t)c, "%s.weight", name);
    net_param(n, (uint64_t)c, "%s.bias", name);
}

/* Linear layer on `tokens` rows: weight in x out, bias out. */
static void linear(net_t *n, const char *name, uint64_t tokens, int in, int out)
{
    net_op(n, 2ull * tokens * in * out, 0);
    net_param(n, (uint64_t)in * out, "%s.weight", name);
    net_param(n, (uint64_t)out, "%s.bias", name);
}

/* Scores QK^T and context AV of one layer over a sequence of t tokens of width h (all heads
 * together): 2 x t x t x h multiply-adds, no parameters. */
static void attention_products(net_t *n, uint64_t t, int h)
{
    net_op(n, 4ull * t * t * h, 0);
}

/* ---- ResNet-50 (torchvision.models.resnet50, v1.5: stride in the 3x3 convolution) ----------- */

static const struct {
    int image, width, classes, expansion;
    int blocks[4];
} rn50 = {224, 64, 1000, 4, {3, 4, 6, 3}};

static void build_resnet50(net_t *n)
{
    char pre[96], name[128];
    int hw = rn50.image / 2, inplanes = rn50.width, l, b;

    conv(n, "conv1", 3, rn50.width, 7, hw, 0, 1); /* 7x7 stride 2: 224 -> 112 */
    norm(n, "bn1", rn50.width);
    hw /= 2; /* 3x3 max-pool, stride 2: 112 -> 56 */
    for (l = 0; l < 4; l++) {
        int planes = rn50.width << l, stride = l ? 2 : 1;
        for (b = 0; b < rn50.blocks[l]; b++) {
            int s = b ? 1 : stride, out_hw = hw / s, outc = planes * rn50.expansion;
            snprintf(pre, sizeof(pre), "layer%d.%d", l + 1, b);
#define SUB(x) (snprintf(name, sizeof(name), "%s.%s", pre, x), name)
            conv(n, SUB("conv1"), inplanes, planes, 1, hw, 0, 0);
            norm(n, SUB("bn1"), planes);
            conv(n, SUB("conv2"), planes, planes, 3, out_hw, 0, 0);
            norm(n, SUB("bn2"), planes);
            conv(n, SUB("conv3"), planes, outc, 1, out_hw, 0, 0);
            norm(n, SUB("bn3"), outc);
            /* torchvision runs the shortcut's projection after bn3, then adds. */
            if (s != 1 || inplanes != outc) {
                conv(n, SUB("downsample.0"), inplanes, outc, 1, out_hw, 0, 0);
                norm(n, SUB("downsample.1"), outc);
            }
#undef SUB
            inplanes = outc;
            hw = out_hw;
        }
    }
    linear(n, "fc", 1, inplanes, rn50.classes); /* after global average pooling */
}

static const char *const rn50_sources[] = {
    "He et al., Deep Residual Learning for Image Recognition, CVPR 2016 (arXiv:1512.03385); "
    "torchvision's resnet50 is the v1.5 variant with the stride in the 3x3 convolution",
    "torchvision.models.resnet50 documentation (ResNet50_Weights.IMAGENET1K_V1): num_params "
    "25557032, GFLOPS 4.09 (multiply-adds)",
    NULL};

static const gen_compute_t rn50_compute[] = {
    {"V100 SXM2 16GB", "fp16", 256, 1, 1200, 0,
     "NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "
     "training performance NVIDIA DGX-1 16GB, 1 GPU, mixed precision: 1200 img/s (pytorch-21.03 "
     "NGC); batch 256 from ConvNets/configs.yml (DGX1V, AMP)"},
    {"V100 SXM2 16GB", "fp32", 112, 1, 367, 0,
     "NVIDIA DeepLearningExamples resnet50v1.5/README.md, DGX-1 16GB, 1 GPU, FP32: 367 img/s; "
     "batch 112 from ConvNets/configs.yml (DGX1V, FP32)"},
    {"A100 SXM4 80GB", "fp16", 256, 1, 2470, 0,
     "NVIDIA DeepLearningExamples resnet50v1.5/README.md, training performance NVIDIA DGX A100 "
     "(8x A100 80GB), 1 GPU, mixed precision: 2470 img/s; batch 256 from ConvNets/configs.yml "
     "(DGXA100, AMP)"},
    {"A100 SXM4 80GB", "tf32", 256, 1, 938, 0,
     "NVIDIA DeepLearningExamples resnet50v1.5/README.md, DGX A100, 1 GPU, TF32: 938 img/s; "
     "batch 256 from ConvNets/configs.yml (DGXA100, TF32)"},
    {"H100 SXM5 80GB", "fp16", 1280, 1, 2616, 0,
     "Lambda deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv (commit 0551cb70), "
     "row 'H100 80GB SXM5', resnet50: 2616 img/s (DeepLearningExamples ConvNets, AMP, synthetic "
     "data); batch 1280 from the 80GB template pytorch/scripts/config_v1/config_pytorch_80GB.sh"},
    {"sm_86", "fp16", 512, 1, 0, 618.983,
     "huggingface/pytorch-image-models results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv, "
     "resnet50 on an RTX 3090: train_step_time 618.983 ms at batch 512 (826.06 samples/s), AMP"},
};

/* ---- VGG-16 (torchvision.models.vgg16, no batch norm) --------------------------------------- */

static const struct {
    int image, classes, hidden, pool_out;
    int cfg[18]; /* channels; 0 = 2x2 max-pool */
} vgg = {224,
         1000,
         4096,
         7,
         {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}};

static void build_vgg16(net_t *n)
{
    char name[64];
    int hw = vgg.image, cin = 3, idx = 0, flat;
    size_t i;

    /* features.<index>: each convolution is followed by a ReLU, so indices advance by 2, and
     * by 1 past a pooling layer. */
    for (i = 0; i < COUNT(vgg.cfg); i++) {
        if (!vgg.cfg[i]) {
            hw /= 2;
            idx++;
            continue;
        }
        snprintf(name, sizeof(name), "features.%d", idx);
        conv(n, name, cin, vgg.cfg[i], 3, hw, 1, idx == 0);
        cin = vgg.cfg[i];
        idx += 2;
    }
    /* Adaptive average pooling to 7x7, then classifier.0 / .3 / .6 (ReLU and dropout between). */
    flat = cin * vgg.pool_out * vgg.pool_out;
    linear(n, "classifier.0", 1, flat, vgg.hidden);
    linear(n, "classifier.3", 1, vgg.hidden, vgg.hidden);
    linear(n, "classifier.6", 1, vgg.hidden, vgg.classes);
}

static const char *const vgg_sources[] = {
    "Simonyan and Zisserman, Very Deep Convolutional Networks for Large-Scale Image Recognition, "
    "ICLR 2015 (arXiv:1409.1556), configuration D",
    "torchvision.models.vgg16 documentation (VGG16_Weights.IMAGENET1K_V1): num_params 138357544, "
    "GFLOPS 15.47 (multiply-adds)",
    NULL};

static const gen_compute_t vgg_compute[] = {
    {"sm_70", "fp16", 384, 1, 456, 0,
     "Lambda lambda-tensorflow-benchmark tf-train-throughput-fp16.csv, row 'V100 32GB': vgg16 456 "
     "img/s (tf_cnn_benchmarks, whose VGG-16 has a 1001-class head); batch 384 from "
     "tf-train-bs-fp16.csv"},
    {"A100 PCIe 40GB", "fp16", 448, 1, 1190, 0,
     "Lambda lambda-tensorflow-benchmark tf-train-throughput-fp16.csv, row 'A100 40GB PCIe': vgg16 "
     "1190 img/s (tf_cnn_benchmarks); batch 448 from tf-train-bs-fp16.csv"},
    {"sm_86", "fp16", 384, 1, 0, 824.954,
     "huggingface/pytorch-image-models results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv, "
     "vgg16 on an RTX 3090: train_step_time 824.954 ms at batch 384 (465.36 samples/s), AMP"},
};

/* ---- BERT (Hugging Face BertModel: embeddings, encoder, pooler) ----------------------------- */

typedef struct {
    int layers, hidden, heads, intermediate, vocab, max_positions, type_vocab, seq;
} bert_cfg_t;

/* bert-base-uncased / bert-large-uncased config.json; seq is the sequence length of the compute
 * entries (SQuAD v1.1 fine-tuning with max_seq_length 384). */
static const bert_cfg_t bert_base = {12, 768, 12, 3072, 30522, 512, 2, 384};
static const bert_cfg_t bert_large = {24, 1024, 16, 4096, 30522, 512, 2, 384};

static void build_bert(net_t *n, const bert_cfg_t *c)
{
    char pre[64], name[128];
    uint64_t t = (uint64_t)c->seq;
    int h = c->hidden, l;

    net_op(n, 0, 0); /* look-ups and their sum, then LayerNorm */
    net_param(n, (uint64_t)c->vocab * h, "embeddings.word_embeddings.weight");
    net_param(n, (uint64_t)c->max_positions * h, "embeddings.position_embeddings.weight");
    net_param(n, (uint64_t)c->type_vocab * h, "embeddings.token_type_embeddings.weight");
    net_param(n, (uint64_t)h, "embeddings.LayerNorm.weight");
    net_param(n, (uint64_t)h, "embeddings.LayerNorm.bias");
    for (l = 0; l < c->layers; l++) {
        snprintf(pre, sizeof(pre), "encoder.layer.%d", l);
#define SUB(x) (snprintf(name, sizeof(name), "%s.%s", pre, x), name)
        linear(n, SUB("attention.self.query"), t, h, h);
        linear(n, SUB("attention.self.key"), t, h, h);
        linear(n, SUB("attention.self.value"), t, h, h);
        attention_products(n, t, h);
        linear(n, SUB("attention.output.dense"), t, h, h);
        norm(n, SUB("attention.output.LayerNorm"), h);
        linear(n, SUB("intermediate.dense"), t, h, c->intermediate);
        linear(n, SUB("output.dense"), t, c->intermediate, h);
        norm(n, SUB("output.LayerNorm"), h);
#undef SUB
    }
    linear(n, "pooler.dense", 1, h, h); /* on the [CLS] token only */
}

static void build_bert_base(net_t *n)
{
    build_bert(n, &bert_base);
}

static void build_bert_large(net_t *n)
{
    build_bert(n, &bert_large);
}

static const char *const bert_base_sources[] = {
    "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers for Language "
    "Understanding, NAACL 2019 (arXiv:1810.04805): BERT-base L=12, H=768, A=12, 110M parameters "
    "(rounded)",
    "Hugging Face bert-base-uncased config.json (vocab_size 30522, max_position_embeddings 512, "
    "type_vocab_size 2, intermediate_size 3072); BertModel with its pooler has 109482240 "
    "parameters; the pre-training heads are not included",
    NULL};

static const char *const bert_large_sources[] = {
    "Devlin et al., BERT (arXiv:1810.04805): BERT-large L=24, H=1024, A=16, 340M parameters "
    "(rounded)",
    "Hugging Face bert-large-uncased config.json (vocab_size 30522, max_position_embeddings 512, "
    "type_vocab_size 2, intermediate_size 4096); BertModel with its pooler has 335141888 "
    "parameters; the pre-training heads are not included",
    NULL};

#define LAMBDA_BERT                                                                                \
    "Lambda deeplearning-benchmark pytorch/pytorch-train-throughput-fp16.csv (commit 0551cb70), "  \
    "DeepLearningExamples BERT SQuAD v1.1 fine-tuning, fp16 (AMP), sequence length 384 "           \
    "(scripts/run_squad.sh); "

static const gen_compute_t bert_base_compute[] = {
    {"sm_70", "fp16", 48, 1, 189, 0,
     LAMBDA_BERT "row 'LambdaCloud V100 16GB', bert_base_squad: 189 seq/s; batch 48 from "
                 "pytorch-train-bs-fp16.csv"},
    {"A100 SXM4 80GB", "fp16", 320, 1, 443, 0,
     LAMBDA_BERT "row 'A100 80GB SXM4', bert_base_squad: 443 seq/s; batch 320 from "
                 "pytorch-train-bs-fp16.csv"},
    {"H100 SXM5 80GB", "fp16", 320, 1, 812, 0,
     LAMBDA_BERT "row 'H100 80GB SXM5', bert_base_squad: 812 seq/s; batch 320 from the 80GB "
                 "template pytorch/scripts/config_v1/config_pytorch_80GB.sh"},
};

static const gen_compute_t bert_large_compute[] = {
    {"sm_70", "fp16", 16, 1, 57, 0,
     LAMBDA_BERT "row 'LambdaCloud V100 16GB', bert_large_squad: 57 seq/s; batch 16 from "
                 "pytorch-train-bs-fp16.csv"},
    {"A100 SXM4 80GB", "fp16", 112, 1, 152, 0,
     LAMBDA_BERT "row 'A100 80GB SXM4', bert_large_squad: 152 seq/s; batch 112 from "
                 "pytorch-train-bs-fp16.csv"},
    {"H100 SXM5 80GB", "fp16", 112, 1, 301, 0,
     LAMBDA_BERT "row 'H100 80GB SXM5', bert_large_squad: 301 seq/s; batch 112 from the 80GB "
                 "template pytorch/scripts/config_v1/config_pytorch_80GB.sh"},
};

/* ---- GPT-2 (Hugging Face GPT2LMHeadModel; the LM head is tied to transformer.wte) ----------- */

typedef struct {
    int layers, hidden, heads, vocab, context, seq;
} gpt2_cfg_t;

/* gpt2 / gpt2-xl config.json (n_layer, n_embd, n_head, vocab_size, n_positions); sequences of
 * 1024 tokens as in the compute entries (llm.c -t 1024). */
static const gpt2_cfg_t gpt2_small = {12, 768, 12, 50257, 1024, 1024};
static const gpt2_cfg_t gpt2_xl = {48, 1600, 25, 50257, 1024, 1024};

static void build_gpt2(net_t *n, const gpt2_cfg_t *c)
{
    char pre[64], name[128];
    uint64_t t = (uint64_t)c->seq;
    int h = c->hidden, l;

    net_op(n, 0, 0); /* token and position look-ups */
    net_param(n, (uint64_t)c->vocab * h, "transformer.wte.weight");
    net_param(n, (uint64_t)c->context * h, "transformer.wpe.weight");
    for (l = 0; l < c->layers; l++) {
        snprintf(pre, sizeof(pre), "transformer.h.%d", l);
#define SUB(x) (snprintf(name, sizeof(name), "%s.%s", pre, x), name)
        norm(n, SUB("ln_1"), h);
        linear(n, SUB("attn.c_attn"), t, h, 3 * h); /* Conv1D: weight stored in x out */
        attention_products(n, t, h);                /* causal, but computed densely */
        linear(n, SUB("attn.c_proj"), t, h, h);
        norm(n, SUB("ln_2"), h);
        linear(n, SUB("mlp.c_fc"), t, h, 4 * h);
        linear(n, SUB("mlp.c_proj"), t, 4 * h, h);
#undef SUB
    }
    norm(n, "transformer.ln_f", h);
    /* The LM head multiplies by wte's transpose: its FLOPs open the backward pass, its gradient
     * adds to wte's, which is complete only after the embedding's at the very end. */
    net_op(n, 2ull * t * h * c->vocab, 0);
}

static void build_gpt2_small(net_t *n)
{
    build_gpt2(n, &gpt2_small);
}

static void build_gpt2_xl(net_t *n)
{
    build_gpt2(n, &gpt2_xl);
}

static const char *const gpt2_sources[] = {
    "Radford et al., Language Models are Unsupervised Multitask Learners, 2019; openai/gpt-2 "
    "README: the paper's counts were wrong, the small model once called 117M",
    "Hugging Face gpt2 config.json (n_layer 12, n_embd 768, n_head 12, vocab_size 50257, "
    "n_positions 1024); karpathy/llm.c README prints num_parameters: 124439808 (tied LM head "
    "counted once)",
    NULL};

static const char *const gpt2_xl_sources[] = {
    "Radford et al., Language Models are Unsupervised Multitask Learners, 2019 (1.5B model)",
    "Hugging Face gpt2-xl config.json (n_layer 48, n_embd 1600, n_head 25, vocab_size 50257, "
    "n_positions 1024); karpathy/llm.c scripts/run_gpt2_1558M.sh calls it the 1558M model (tied "
    "LM head counted once)",
    NULL};

static const gen_compute_t gpt2_compute[] = {
    {"A100 SXM4 80GB", "bf16", 64, 1, 0, 300,
     "karpathy/llm.c scripts/run_gpt2_124M.sh: on 8X A100 80GB SXM steps take ~300 ms; -b 64 -t "
     "1024 -d 524288 is 64 sequences per GPU per step, no accumulation (8-GPU step time, "
     "communication included)"},
    {"H100 SXM5 80GB", "bf16", 64, 1, 0, 45.0 * 60 * 1000 / 18865,
     "KellerJordan/modded-nanogpt README: llm.c's GPT-2 (124M) replication took 45 minutes on "
     "8xH100; over the 18865 steps of llm.c scripts/run_gpt2_124M.sh (64 sequences of 1024 "
     "tokens per GPU) that is 2700 s / 18865 = 143.122 ms per step (derived)"},
};

static const gen_compute_t gpt2_xl_compute[] = {
    {"H100 SXM5 80GB", "bf16", 16, 8, 0, 2800,
     "karpathy/llm.c scripts/run_gpt2_1558M.sh: on 8X H100 80GB SXM steps take 2.80 s; -b 16 -t "
     "1024 -d 1048576 is 8 accumulated micro-batches of 16 sequences per GPU per step, so one "
     "micro-batch takes 2800/8 ms"},
};

/* ---- ViT-B/16 (torchvision.models.vit_b_16) ------------------------------------------------- */

static const struct {
    int image, patch, layers, hidden, heads, mlp, classes;
} vit = {224, 16, 12, 768, 12, 3072, 1000};

static void build_vit_b16(net_t *n)
{
    char pre[96], name[160];
    int g = vit.image / vit.patch, h = vit.hidden, l;
    uint64_t t = (uint64_t)g * g + 1; /* patches + class token */

    conv(n, "conv_proj", 3, h, vit.patch, g, 1, 1); /* 16x16 stride 16 patch embedding */
    net_op(n, 0, 0);                                /* class token prepended */
    net_param(n, (uint64_t)h, "class_token");
    net_op(n, 0, 0); /* position embedding added */
    net_param(n, t * h, "encoder.pos_embedding");
    for (l = 0; l < vit.layers; l++) {
        snprintf(pre, sizeof(pre), "encoder.layers.encoder_layer_%d", l);
#define SUB(x) (snprintf(name, sizeof(name), "%s.%s", pre, x), name)
        norm(n, SUB("ln_1"), h);
        /* nn.MultiheadAttention: one packed Q/K/V projection, then the output projection. */
        net_op(n, 2ull * t * h * 3 * h, 0);
        net_param(n, 3ull * h * h, "%s.self_attention.in_proj_weight", pre);
        net_param(n, 3ull * h, "%s.self_attention.in_proj_bias", pre);
        attention_products(n, t, h);
        linear(n, SUB("self_attention.out_proj"), t, h, h);
        norm(n, SUB("ln_2"), h);
        linear(n, SUB("mlp.0"), t, h, vit.mlp);
        linear(n, SUB("mlp.3"), t, vit.mlp, h);
#undef SUB
    }
    norm(n, "encoder.ln", h);
    linear(n, "heads.head", 1, h, vit.classes); /* on the class token only */
}

static const char *const vit_sources[] = {
    "Dosovitskiy et al., An Image is Worth 16x16 Words, ICLR 2021 (arXiv:2010.11929): ViT-Base, "
    "12 layers, hidden 768, MLP 3072, 12 heads, patch 16",
    "torchvision.models.vit_b_16 documentation (ViT_B_16_Weights.IMAGENET1K_V1): num_params "
    "86567656, GFLOPS 17.56 (multiply-adds)",
    NULL};

static const gen_compute_t vit_compute[] = {
    {"sm_86", "fp16", 192, 1, 0, 490.391,
     "huggingface/pytorch-image-models results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv, "
     "vit_base_patch16_224 (same architecture, 86.57M parameters) on an RTX 3090: "
     "train_step_time 490.391 ms at batch 192 (390.86 samples/s), AMP"},
};

/* ---- the list ------------------------------------------------------------------------------- */

const gen_model_t gen_models[] = {
    {"resnet50", "ResNet-50 (torchvision resnet50, v1.5), ImageNet, 1000 classes.",
     "one 224x224 RGB image", rn50_sources, rn50_compute, COUNT(rn50_compute), build_resnet50},
    {"vgg16", "VGG-16 (torchvision vgg16, without batch norm), ImageNet, 1000 classes.",
     "one 224x224 RGB image", vgg_sources, vgg_compute, COUNT(vgg_compute), build_vgg16},
    {"bert-base",
     "BERT-base, uncased (Hugging Face BertModel: embeddings, 12 encoder layers, pooler); "
     "task heads excluded.",
     "one sequence of 384 tokens (SQuAD v1.1 fine-tuning, as in the compute entries)",
     bert_base_sources, bert_base_compute, COUNT(bert_base_compute), build_bert_base},
    {"bert-large",
     "BERT-large, uncased (Hugging Face BertModel: embeddings, 24 encoder layers, pooler); "
     "task heads excluded.",
     "one sequence of 384 tokens (SQuAD v1.1 fine-tuning, as in the compute entries)",
     bert_large_sources, bert_large_compute, COUNT(bert_large_compute), build_bert_large},
    {"gpt2", "GPT-2 small, 124M (Hugging Face GPT2LMHeadModel; LM head tied to wte).",
     "one sequence of 1024 tokens", gpt2_sources, gpt2_compute, COUNT(gpt2_compute),
     build_gpt2_small},
    {"gpt2-xl", "GPT-2 XL, 1.5B (Hugging Face GPT2LMHeadModel; LM head tied to wte).",
     "one sequence of 1024 tokens", gpt2_xl_sources, gpt2_xl_compute, COUNT(gpt2_xl_compute),
     build_gpt2_xl},
    {"vit-b16", "ViT-B/16 (torchvision vit_b_16), ImageNet, 1000 classes.",
     "one 224x224 RGB image (196 patches + class token)", vit_sources, vit_compute,
     COUNT(vit_compute), build_vit_b16},
};

const size_t gen_model_count = COUNT(gen_models);
