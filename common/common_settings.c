/* The settings table: the only place in acc that reads the environment. */
#include "acc_common.h"

#include <stdlib.h>
#include <string.h>

static const acc_setting_info_t settings[ACC_SETTING_COUNT] = {
#define ACC_SETTING_ROW(id, type, def, doc) {"ACC_" #id, type, def, doc},
    ACC_SETTINGS_MAP(ACC_SETTING_ROW)
#undef ACC_SETTING_ROW
};

static const char *const type_names[] = {"string", "int", "size", "path", "level"};

const acc_setting_info_t *acc_setting_info(acc_setting_id_t id)
{
    if (id < 0 || id >= ACC_SETTING_COUNT)
        return NULL;
    return &settings[id];
}

const char *acc_setting_str(acc_setting_id_t id)
{
    const acc_setting_info_t *info = acc_setting_info(id);
    const char *v;

    if (!info)
        return "";
    v = getenv(info->name);
    return (v && v[0]) ? v : info->default_value;
}

acc_status_t acc_setting_int(acc_setting_id_t id, int64_t *out)
{
    const char *v = acc_setting_str(id);

    if (acc_parse_int64(v, out) != ACC_OK)
        return acc_error_set(ACC_ERR_INVALID, "%s='%s' is not an integer", settings[id].name, v);
    return ACC_OK;
}

acc_status_t acc_setting_size(acc_setting_id_t id, uint64_t *out)
{
    const char *v = acc_setting_str(id);

    if (acc_parse_size(v, out) != ACC_OK)
        return acc_error_set(ACC_ERR_INVALID,
                             "%s='%s' is not a size (bytes, or a number with K, M or G)",
                             settings[id].name, v);
    return ACC_OK;
}

acc_status_t acc_setting_level(acc_setting_id_t id, acc_log_level_t *out)
{
    static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
    const char *v = acc_setting_str(id);
    int i;

    for (i = 0; i < 5; i++) {
        if (acc_str_ieq(v, names[i])) {
            *out = (acc_log_level_t)i;
            return ACC_OK;
        }
    }
    return acc_error_set(ACC_ERR_INVALID,
                         "%s='%s' is not a log level (error, warn, info, debug, trace)",
                         settings[id].name, v);
}

static acc_status_t validate(acc_setting_id_t id)
{
    int64_t i;
    uint64_t u;
    acc_log_level_t l;

    switch (settings[id].type) {
    case ACC_SETTING_INT:
        return acc_setting_int(id, &i);
    case ACC_SETTING_SIZE:
        return acc_setting_size(id, &u);
    case ACC_SETTING_LEVEL:
        return acc_setting_level(id, &l);
    case ACC_SETTING_STRING:
    case ACC_SETTING_PATH:
        return ACC_OK;
    }
    return ACC_OK;
}

acc_status_t acc_settings_validate(void)
{
    acc_buf_t all;
    acc_status_t first = ACC_OK;
    int id, bad = 0;

    /* Every invalid value at once, so that fixing one does not merely reveal the next. */
    acc_buf_init(&all);
    for (id = 0; id < ACC_SETTING_COUNT; id++) {
        acc_status_t st = validate((acc_setting_id_t)id);
        if (st == ACC_OK)
            continue;
        if (first == ACC_OK)
            first = st;
        acc_buf_printf(&all, "%s%s", bad++ ? "; " : "", acc_error_message());
    }
    if (first != ACC_OK)
        acc_error_set(first, "%s; correct %s or unset %s (acc-info --settings lists every setting)",
                      all.data ? all.data : "invalid setting", bad > 1 ? "them" : "it",
                      bad > 1 ? "them" : "it");
    acc_buf_free(&all);
    return first;
}

void acc_settings_print(FILE *out)
{
    int id;
    for (id = 0; id < ACC_SETTING_COUNT; id++) {
        const acc_setting_info_t *s = &settings[id];
        fprintf(out, "%-18s %-6s default '%s', now '%s'%s\n    %s\n", s->name, type_names[s->type],
                s->default_value, acc_setting_str((acc_setting_id_t)id),
                validate((acc_setting_id_t)id) == ACC_OK ? "" : "  <- INVALID", s->doc);
    }
}

void acc_size_text(uint64_t bytes, char *out, size_t cap)
{
    static const char units[] = "KMGTPE";
    int u = -1;

    while (bytes >= 1024 && bytes % 1024 == 0 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(out, cap, "%llu", (unsigned long long)bytes);
    else
        snprintf(out, cap, "%llu%c", (unsigned long long)bytes, units[u]);
}

acc_status_t acc_parse_size(const char *text, uint64_t *out)
{
    char *end;
    double v;
    uint64_t mult = 1;

    if (!text || !*text)
        return ACC_ERR_INVALID;
    v = strtod(text, &end);
    if (end == text || v < 0)
        return ACC_ERR_INVALID;
    /* A table of suffixes, kept as one. */
    /* clang-format off */
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1ull << 10;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1ull << 20;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1ull << 30;
        end++;
        break;
    case 't':
    case 'T':
        mult = 1ull << 40;
        end++;
        break;
    default:
        break;
    }
    /* clang-format on */
    if ((*end == 'i' || *end == 'I') && mult > 1)
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || v * (double)mult > 1.8e19)
        return ACC_ERR_INVALID;
    *out = (uint64_t)(v * (double)mult);
    return ACC_OK;
}
