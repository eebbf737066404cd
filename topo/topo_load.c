/* Loading a topology from any source: format detection from content, dispatch to the importer,
 * finalisation, and the one place that names every way to give acc a machine. */
#include "internal.h"

#include <ctype.h>
#include <string.h>
#include <sys/stat.h>

#define ALTERNATIVES                                                                               \
    "a topology file (NCCL topology XML from NCCL_TOPO_DUMP_FILE, hwloc XML from `lstopo --of "    \
    "xml`, `nvidia-smi topo -m` output, or acc YAML), a shipped platform name (see "               \
    "`acc-compile --list-platforms`), 'auto', or a synthetic description such as "                 \
    "\"nodes=2 gpus=8 nvlink=18 nic=8x400\""

/* Set while acc_topo_load_with_nvlinks loads the input it adds NVLinks to: the warning that it
 * lists none would be wrong by the time anyone reads it. */
static _Thread_local int nvlinks_coming;

/* Finalize an import; an input whose GPUs lack the NVLinks their part has is worth a warning,
 * since every plan for it will be a PCIe plan. */
static acc_status_t finish(acc_topo_t *t, const char *source, acc_topo_format_t fmt)
{
    acc_status_t st = ACC_OK;
    acc_buf_t warning;

    if (!acc_topo_source(t)[0])
        st = acc_topo_set_source(t, source, fmt);
    else
        t->format = fmt;
    if (st != ACC_OK)
        return st;
    if ((st = acc_topo_finalize(t)) != ACC_OK)
        return acc_error_prefix(st, "%s: ", source);
    acc_buf_init(&warning);
    if (!nvlinks_coming && topo_missing_nvlinks(t, &warning) && warning.data)
        ACC_WARN(TOPO, "%s", warning.data);
    acc_buf_free(&warning);
    return ACC_OK;
}

acc_status_t acc_topo_load_buffer(const char *text, size_t len, const char *name, acc_topo_t **out)
{
    acc_topo_t *t = NULL;
    acc_topo_format_t fmt = acc_topo_detect_format(text, len);
    acc_status_t st;

    *out = NULL;
    if (fmt == ACC_TOPO_FMT_NCCL_GRAPH)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s is an NCCL graph file (NCCL_GRAPH_FILE: the channels NCCL "
                             "searched), not a topology; pass the topology NCCL dumps with "
                             "NCCL_TOPO_DUMP_FILE instead",
                             name);
    if (fmt == ACC_TOPO_FMT_UNKNOWN)
        return acc_error_set(ACC_ERR_UNSUPPORTED,
                             "%s: not a topology acc can read; expected " ALTERNATIVES, name);
    if ((st = acc_topo_create(&t)) != ACC_OK)
        return st;
    switch (fmt) {
    case ACC_TOPO_FMT_HWLOC_XML:
        st = topo_import_hwloc_xml(t, text, len, name);
        break;
    case ACC_TOPO_FMT_NCCL_XML:
        st = topo_import_nccl_xml(t, text, len, name);
        break;
    case ACC_TOPO_FMT_NVIDIA_SMI:
        st = topo_import_nvidia_smi(t, text, len, name);
        break;
    default:
        st = topo_import_yaml(t, text, len, name);
        break;
    }
    if (st == ACC_OK)
        st = finish(t, name, fmt);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

acc_status_t acc_topo_load_file(const char *path, acc_topo_t **out)
{
    char *text = NULL;
    size_t len = 0;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_read_file(path, &text, &len)) != ACC_OK)
        return st;
    st = acc_topo_load_buffer(text, len, path, out);
    acc_mem_free(text);
    return st;
}

acc_status_t acc_topo_load_synthetic(const char *desc, acc_topo_t **out)
{
    acc_topo_t *t = NULL;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_topo_create(&t)) != ACC_OK)
        return st;
    st = topo_import_synthetic(t, desc);
    if (st == ACC_OK)
        st = finish(t, desc, ACC_TOPO_FMT_SYNTHETIC);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

static int valid_platform_name(const char *name)
{
    const char *p;
    if (!name[0])
        return 0;
    for (p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
            return 0;
    return name[0] != '.';
}

/* src names nothing: a mistyped platform gets the nearest names ("did you mean"), anything else
 * the list of what --topo takes. */
static acc_status_t not_found(const char *src)
{
    acc_buf_t near;
    acc_status_t st;

    acc_buf_init(&near);
    if (valid_platform_name(src) && topo_platform_suggest(src, &near) == ACC_OK && near.len)
        st = acc_error_set(ACC_ERR_NOT_FOUND,
                           "'%s' is no shipped platform, file or synthetic description; did you "
                           "mean %s? (`acc-compile --list-platforms` lists the platforms)",
                           src, near.data);
    else
        st = acc_error_set(ACC_ERR_NOT_FOUND,
                           "'%s' is no file, shipped platform or synthetic description; "
                           "pass " ALTERNATIVES,
                           src);
    acc_buf_free(&near);
    return st;
}

acc_status_t acc_topo_load_platform(const char *name, acc_topo_t **out)
{
    acc_buf_t path;
    acc_status_t st;
    struct stat sb;

    *out = NULL;
    if (!valid_platform_name(name))
        return acc_error_set(ACC_ERR_INVALID, "'%s' is not a platform name", name);
    acc_buf_init(&path);
    acc_buf_printf(&path, "%s/%s.yaml", acc_topo_platform_dir(), name);
    if ((st = acc_buf_status(&path)) != ACC_OK)
        return st;
    if (stat(path.data, &sb) != 0) {
        acc_buf_t near;
        acc_buf_init(&near);
        topo_platform_suggest(name, &near);
        st = acc_error_set(ACC_ERR_NOT_FOUND,
                           "no shipped platform '%s' in %s%s%s (see "
                           "`acc-compile --list-platforms`)",
                           name, acc_topo_platform_dir(), near.len ? "; did you mean " : "",
                           near.len ? near.data : "");
        acc_buf_free(&near);
    } else {
        st = acc_topo_load_file(path.data, out);
        if (st == ACC_OK && !acc_topo_name(*out)[0])
            acc_topo_set_name(*out, name);
    }
    acc_buf_free(&path);
    return st;
}

acc_status_t acc_topo_load_live(acc_topo_t **out)
{
    acc_topo_t *t = NULL;
    acc_status_t st;

    *out = NULL;
    if ((st = acc_topo_create(&t)) != ACC_OK)
        return st;
    st = topo_import_live(t);
    if (st == ACC_OK)
        st = finish(t, "auto", ACC_TOPO_FMT_LIVE);
    if (st != ACC_OK) {
        acc_topo_destroy(t);
        return st;
    }
    *out = t;
    return ACC_OK;
}

acc_status_t acc_topo_load(const char *src, acc_topo_t **out)
{
    struct stat sb;
    acc_buf_t path;
    int platform;

    *out = NULL;
    if (!src || !src[0])
        return acc_error_set(ACC_ERR_INVALID, "no topology given; pass " ALTERNATIVES);
    if (strcmp(src, "auto") == 0)
        return acc_topo_load_live(out);
    if (stat(src, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return acc_error_set(ACC_ERR_INVALID, "'%s' is a directory, not a topology file", src);
        return acc_topo_load_file(src, out);
    }
    if (strchr(src, '='))
        return acc_topo_load_synthetic(src, out);
    acc_buf_init(&path);
    acc_buf_printf(&path, "%s/%s.yaml", acc_topo_platform_dir(), src);
    platform = valid_platform_name(src) && path.data && stat(path.data, &sb) == 0;
    acc_buf_free(&path);
    if (platform)
        return acc_topo_load_platform(src, out);
    return not_found(src);
}

acc_status_t acc_topo_load_with_nvlinks(const char *src, const char *platform, acc_topo_t **out)
{
    acc_topo_t *t = NULL, *p = NULL;
    acc_status_t st;

    *out = NULL;
    if (!platform)
        return acc_topo_load(src, out);
    nvlinks_coming = 1;
    st = acc_topo_load(src, &t);
    nvlinks_coming = 0;
    if (st == ACC_OK && (st = acc_topo_load_platform(platform, &p)) == ACC_OK)
        st = acc_topo_nvlink_from(t, p, out);
    acc_topo_destroy(t);
    acc_topo_destroy(p);
    return st;
}
