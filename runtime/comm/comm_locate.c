/*
 * Where a job finds its machine and its database: an option, else the setting, else (for the
 * database) the search path.  Shared by communicators (comm_load.c) and the NCCL tuner plugin,
 * so that both doors of a job read the same files.
 */
#include "rt_internal.h"

#include <unistd.h>

/* Where a job finds its database when neither the options nor ACC_DB name one. */
static const char *const db_search[] = {"/etc/acc/acc.db", ACC_INSTALL_DB_PATH};

const char *rt_topo_source(const char *given)
{
    return given ? given : acc_setting_str(ACC_SETTING_TOPO);
}

acc_status_t rt_db_locate(const char *given, const char **path)
{
    const char *p = given ? given : acc_setting_str(ACC_SETTING_DB);

    *path = NULL;
    if (p && p[0]) {
        *path = p;
        return ACC_OK;
    }
    for (size_t i = 0; i < sizeof(db_search) / sizeof(db_search[0]); i++)
        if (access(db_search[i], R_OK) == 0) {
            *path = db_search[i];
            return ACC_OK;
        }
    return acc_error_set(ACC_ERR_NOT_FOUND,
                         "no database: ACC_DB is not set and neither %s nor %s exists "
                         "(acc-compile --topo ... --db FILE builds one)",
                         db_search[0], db_search[1]);
}

const char *comm_db_path(const acc_comm_opts_t *opts)
{
    const char *path = NULL;
    return rt_db_locate(opts ? opts->db : NULL, &path) == ACC_OK ? path : NULL;
}
