/*
 * Directories: the per-user one acc writes to, which depends on environment variables that are
 * not acc's own (XDG_CACHE_HOME, HOME) and so, like the settings table, are read here and only
 * here; and the shipped data directories acc reads (platforms, model profiles, the database),
 * found relative to where the code runs from, so that an installation works wherever its
 * prefix is moved (the prefix the build was configured with comes next, then the source tree
 * the build came from, for build directories).
 */
#include "acc_common.h"

#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
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

/* The installation's data directories: that of the prefix this code was loaded from, then the
 * configured one.  Filled once. */
static char found_dir[PATH_MAX];
static const char *install_dirs[2];
static size_t ninstall_dirs;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

/* dir/rel, normalised, into out when it is a directory. */
static int data_dir_beside(const char *file, const char *rel, char out[PATH_MAX])
{
    char real[PATH_MAX], joined[2 * PATH_MAX + 2];

    if (!realpath(file, real))
        return 0;
    snprintf(joined, sizeof(joined), "%s/%s", dirname(real), rel);
    return realpath(joined, out) != NULL && is_dir(out);
}

/* The file holding this code: libacc.so or a plugin in <prefix>/lib..., or a program in
 * <prefix>/bin that links acc statically (dladdr names the main program as it was started, so
 * /proc/self/exe says where it is).  Returns 1 for a shared library. */
static int code_file(const char **file)
{
    Dl_info info;

    if (dladdr((void *)code_file, &info) && info.dli_fname && strstr(info.dli_fname, ".so")) {
        *file = info.dli_fname;
        return 1;
    }
    *file = "/proc/self/exe";
    return 0;
}

static void find_install_dirs(void)
{
    const char *file;
    int found = code_file(&file) ? data_dir_beside(file, ACC_LIBDIR_TO_DATA, found_dir)
                                 : data_dir_beside(file, ACC_BINDIR_TO_DATA, found_dir);

    if (found)
        install_dirs[ninstall_dirs++] = found_dir;
    if (!found || strcmp(found_dir, ACC_INSTALL_DATA_DIR) != 0)
        install_dirs[ninstall_dirs++] = ACC_INSTALL_DATA_DIR;
}

const char *const *acc_install_data_dirs(size_t *n)
{
    pthread_once(&install_once, find_install_dirs);
    *n = ninstall_dirs;
    return install_dirs;
}

/* The build directory, when the code runs from inside it. */
static char build_dir[PATH_MAX];
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static void find_build_dir(void)
{
    char code[PATH_MAX], dir[PATH_MAX];
    const char *file;
    size_t n;

    code_file(&file);
    if (!realpath(file, code) || !realpath(ACC_BUILD_DIR, dir))
        return;
    n = strlen(dir);
    if (strncmp(code, dir, n) == 0 && code[n] == '/')
        snprintf(build_dir, sizeof(build_dir), "%s", dir);
}

const char *acc_build_tree_dir(void)
{
    pthread_once(&build_once, find_build_dir);
    return build_dir[0] ? build_dir : NULL;
}

const char *acc_data_dir(acc_setting_id_t setting, const char *subdir, const char *source)
{
    /* One per setting: the path is built once and then only read. */
    static char paths[ACC_SETTING_COUNT][PATH_MAX + 64];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const char *d = acc_setting_str(setting), *const * dirs;
    size_t n, i;

    if (d && d[0])
        return d;
    dirs = acc_install_data_dirs(&n);
    for (i = 0; i < n; i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/%s", dirs[i], subdir);
        if (is_dir(p)) {
            pthread_mutex_lock(&lock);
            snprintf(paths[setting], sizeof(paths[setting]), "%s", p);
            pthread_mutex_unlock(&lock);
            return paths[setting];
        }
    }
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
