/*
 * Where a job finds its machine and its database: an option, else the setting, else (for the
 * database) the search path.  Shared by communicators (comm_load.c) and the NCCL tuner plugin,
 * so that both doors of a job read the same files.
 */
#include "rt_internal.h"

#include <limits.h>
#include <pthread.h>
#include <unistd.h>

/* Where a job finds its database when neither the options nor ACC_DB name one: /etc/acc/acc.db,
 * then, when acc runs from its build tree, the database the README's set-up made there
 * (build/acc.db: acc_build_tree_dir), then acc.db in the installation's data directories (that of
 * the prefix acc was loaded from, then the configured one: acc_install_data_dirs).  Built once,
 * then only read. */
static char db_search[4][PATH_MAX + 16];
static size_t ndb_search;
static pthread_once_t db_search_once = PTHREAD_ONCE_INIT;

static void make_db_search(void)
{
    size_t n, i;
    const char *const *dirs = acc_install_data_dirs(&n);
    const char *build = acc_build_tree_dir();

    snprintf(db_search[ndb_search++], sizeof(db_search[0]), "/etc/acc/acc.db");
    if (build)
        snprintf(db_search[ndb_search++], sizeof(db_search[0]), "%s/acc.db", build);
    for (i = 0; i < n && ndb_search < 4; i++)
        snprintf(db_search[ndb_search++], sizeof(db_search[0]), "%s/acc.db", dirs[i]);
}

const char *rt_topo_source(const char *given)
{
    return given ? given : acc_setting_str(ACC_SETTING_TOPO);
}

acc_status_t rt_db_locate(const char *given, const char **path)
{
    const char *p = given ? given : acc_setting_str(ACC_SETTING_DB);
    acc_buf_t names;
    acc_status_t st;

    *path = NULL;
    if (p && p[0]) {
        *path = p;
        return ACC_OK;
    }
    pthread_once(&db_search_once, make_db_search);
    for (size_t i = 0; i < ndb_search; i++)
        if (access(db_search[i], R_OK) == 0) {
            *path = db_search[i];
            return ACC_OK;
        }
    acc_buf_init(&names);
    for (size_t i = 0; i < ndb_search; i++)
        acc_buf_printf(&names, "%s%s",
                       i == 0                ? ""
                       : i + 1 == ndb_search ? " nor "
                                             : ", ",
                       db_search[i]);
    st = acc_error_set(ACC_ERR_NOT_FOUND,
                       "no database: ACC_DB is not set and neither %s exists (acc-compile "
                       "--topo ... --db FILE builds one; then set ACC_DB=FILE)",
                       names.data ? names.data : "/etc/acc/acc.db");
    acc_buf_free(&names);
    return st;
}

const char *comm_db_path(const acc_comm_opts_t *opts)
{
    const char *path = NULL;
    return rt_db_locate(opts ? opts->db : NULL, &path) == ACC_OK ? path : NULL;
}
