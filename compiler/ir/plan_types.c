/* Names, sizes and parsing of the plan IR's element types and reductions (ACC_DTYPE_MAP and
 * ACC_REDOP_MAP in acc_plan.h): the one place code generation, the simulator, the reports and
 * the executors take them from. */
#include "acc_plan.h"

static const char *const dtype_names[ACC_DT_COUNT] = {
#define DTYPE_NAME(id, name, bytes) name,
    ACC_DTYPE_MAP(DTYPE_NAME)
#undef DTYPE_NAME
};

static const size_t dtype_sizes[ACC_DT_COUNT] = {
#define DTYPE_SIZE(id, name, bytes) bytes,
    ACC_DTYPE_MAP(DTYPE_SIZE)
#undef DTYPE_SIZE
};

static const char *const redop_names[ACC_RED_COUNT] = {
#define REDOP_NAME(id, name) name,
    ACC_REDOP_MAP(REDOP_NAME)
#undef REDOP_NAME
};

/* Other spellings users type: NCCL's enum names without the prefix, numpy's, PyTorch's. */
static const struct {
    const char *alias;
    acc_dtype_t dt;
} dtype_aliases[] = {
    {"float32", ACC_DT_F32}, {"fp32", ACC_DT_F32}, {"f32", ACC_DT_F32},   {"float16", ACC_DT_F16},
    {"fp16", ACC_DT_F16},    {"f16", ACC_DT_F16},  {"bf16", ACC_DT_BF16}, {"float64", ACC_DT_F64},
    {"fp64", ACC_DT_F64},    {"f64", ACC_DT_F64},  {"int", ACC_DT_I32},   {"i32", ACC_DT_I32},
};

const char *acc_dtype_name(acc_dtype_t t)
{
    return (t >= 0 && t < ACC_DT_COUNT) ? dtype_names[t] : "?";
}

size_t acc_dtype_size(acc_dtype_t t)
{
    return (t >= 0 && t < ACC_DT_COUNT) ? dtype_sizes[t] : 0;
}

acc_status_t acc_dtype_parse(const char *s, acc_dtype_t *out)
{
    size_t i;
    for (i = 0; s && i < ACC_DT_COUNT; i++) {
        if (acc_str_ieq(s, dtype_names[i])) {
            *out = (acc_dtype_t)i;
            return ACC_OK;
        }
    }
    for (i = 0; s && i < sizeof(dtype_aliases) / sizeof(dtype_aliases[0]); i++) {
        if (acc_str_ieq(s, dtype_aliases[i].alias)) {
            *out = dtype_aliases[i].dt;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "unknown data type '%s' (float, half, bfloat16, double, int32)",
                         s ? s : "");
}

const char *acc_redop_name(acc_redop_t op)
{
    return (op >= 0 && op < ACC_RED_COUNT) ? redop_names[op] : "?";
}

acc_status_t acc_redop_parse(const char *s, acc_redop_t *out)
{
    int i;
    for (i = 0; s && i < ACC_RED_COUNT; i++) {
        if (acc_str_ieq(s, redop_names[i])) {
            *out = (acc_redop_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID, "unknown reduction '%s' (sum, prod, min, max, avg)",
                         s ? s : "");
}
