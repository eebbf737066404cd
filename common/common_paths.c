/*
 * Directories: the per-user one acc writes to, which depends on environment variables that are
 * not acc's own (XDG_CACHE_HOME, HOME) and so, like the settings table, are read here and only
 * here; and the shipped data directories acc reads (platforms, model profiles).
 */
#include "acc_common.h"

#include <dirent.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static acc_status_t join(const char *base, const char *rest, char **out)
{
    acc_buf_t b;
    acc_buf_init(&b);
    acc_buf_printf(&b, "%s%s", base, rest);
    if (acc_buf_status(&b) != ACC_OK) {
        acc_buf_free(&b);
        return acc_error_set(ACC_ERR_NOMEM, "out of memory for a path");
    }
    *out = acc_buf_take(&b);
    return ACC_OK;
}

acc_status_t acc_cache_dir(char **out)
{
    const char *set = acc_setting_str(ACC_SETTING_CACHE_DIR);
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    struct passwd *pw;

    *out = NULL;
    if (set[0])
        return join(set, "", out);
    /* The XDG base directory specification says a relative value is invalid and must be
     * ignored. */
    if (xdg && xdg[0] == '/')
        return join(xdg, "/acc", out);
    if (home && home[0])
        return join(home, "/.cache/acc", out);
    pw = getpwuid(geteuid());
    if (pw && pw->pw_dir && pw->pw_dir[0])
        return join(pw->pw_dir, "/.cache/acc", out);
    return acc_error_set(ACC_ERR_NOT_FOUND,
                         "no directory for the kernel cache: ACC_CACHE_DIR, XDG_CACHE_HOME and "
                         "HOME are unset and the user has no home directory; set "
                         "ACC_CACHE_DIR");
}

/* ---- shipped data ----------------------------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat sb;
    return p && p[0] && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *acc_data_dir(acc_setting_id_t setting, const char *installed, const char *source)
{
    const char *d = acc_setting_str(setting);
    if (d && d[0])
        return d;
    if (is_dir(installed))
        return installed;
    return source;
}

void acc_strv_free(char **v, size_t n)
{
    size_t i;
    if (!v)
        return;
    for (i = 0; i < n; i++)
        acc_mem_free(v[i]);
    acc_mem_free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

acc_status_t acc_yaml_names(const char *dir, const char *what, acc_setting_id_t setting,
                            char ***names, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t n = 0, cap = 0;

    *names = NULL;
    *count = 0;
    if (!d)
        return acc_error_set(ACC_ERR_NOT_FOUND, "cannot open the %s directory '%s' (set %s)", what,
                             dir, acc_setting_info(setting)->name);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        void *p = v;
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.')
            continue;
        if (acc_array_reserve(&p, &cap, n + 1, sizeof(char *)) != ACC_OK ||
            !(((char **)p)[n] = acc_mem_strndup(e->d_name, len - 5))) {
            closedir(d);
            acc_strv_free(p, n);
            return acc_error_set(ACC_ERR_NOMEM, "out of memory listing the %s directory", what);
        }
        v = p;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof(char *), cmp_str);
    *names = v;
    *count = n;
    return ACC_OK;
}
