/* Shipped platform descriptions: where they live and which there are. */
#include "internal.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int is_dir(const char *p)
{
    struct stat sb;
    return p && p[0] && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* ACC_PLATFORM_DIR wins; then the installed copy; then the source tree this build came from,
 * so that a build directory works without `make install`. */
const char *acc_topo_platform_dir(void)
{
    const char *d = acc_setting_str(ACC_SETTING_PLATFORM_DIR);
    if (d && d[0])
        return d;
    if (is_dir(ACC_INSTALL_PLATFORM_DIR))
        return ACC_INSTALL_PLATFORM_DIR;
    return ACC_SOURCE_PLATFORM_DIR;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void acc_topo_strv_free(char **names, size_t count)
{
    size_t i;
    if (!names)
        return;
    for (i = 0; i < count; i++)
        acc_free(names[i]);
    acc_free(names);
}

acc_status_t acc_topo_platform_list(char ***names, size_t *count)
{
    const char *dir = acc_topo_platform_dir();
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t n = 0, cap = 0;

    *names = NULL;
    *count = 0;
    if (!d)
        return acc_error_set(ACC_ERR_NOT_FOUND, "cannot open the platform directory '%s' (set "
                             "ACC_PLATFORM_DIR)", dir);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        void *p = v;
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.')
            continue;
        if (acc_array_reserve(&p, &cap, n + 1, sizeof(char *)) != ACC_OK ||
            !(((char **)p)[n] = acc_strndup(e->d_name, len - 5))) {
            closedir(d);
            acc_topo_strv_free(p, n);
            return acc_error_set(ACC_ERR_NOMEM, "out of memory listing platforms");
        }
        v = p;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof(char *), cmp_name);
    *names = v;
    *count = n;
    return ACC_OK;
}
