/*
 * Per-user directories acc writes to.  They depend on environment variables that are not
 * acc's own (XDG_CACHE_HOME, HOME), so, like the settings table, they are read here and only
 * here.
 */
#include "acc_common.h"

#include <pwd.h>
#include <stdlib.h>
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
