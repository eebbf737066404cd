/* acc-info: what this acc build knows (version, settings and their values, shipped platforms)
 * and, with --db, what a database holds. */
#include "acc_db.h"
#include "acc_runtime.h"
#include "acc_topo.h"
#include "acc_tune.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* What a database holds: schema version, topologies with their names, collectives and size
 * ranges, kernels per architecture, optima.  Read-only, with SQLite's quick check. */
static int show_db(const char *path)
{
    acc_db_t *db = NULL;
    acc_buf_t b;
    int rc = EXIT_OK;

    if (acc_db_open(path, ACC_DB_READONLY | ACC_DB_CHECK, &db) != ACC_OK) {
        fprintf(stderr, "acc-info: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    acc_buf_init(&b);
    if (acc_db_summary(db, &b) != ACC_OK) {
        fprintf(stderr, "acc-info: %s\n", acc_error_message());
        rc = EXIT_INPUT;
    } else {
        fwrite(b.data, 1, b.len, stdout);
    }
    acc_buf_free(&b);
    acc_db_close(db);
    return rc;
}

/* "Platforms in DIR:" and the names of what DIR holds, one a line. */
static int list_shipped(int blank_line, const char *what, const char *dir,
                        acc_status_t (*list)(char ***, size_t *))
{
    char **names;
    size_t n, i;

    printf("%s%s in %s:\n", blank_line ? "\n" : "", what, dir);
    if (list(&names, &n) != ACC_OK) {
        fprintf(stderr, "acc-info: %s\n", acc_error_message());
        return EXIT_INPUT;
    }
    for (i = 0; i < n; i++)
        printf("  %s\n", names[i]);
    acc_strv_free(names, n);
    return EXIT_OK;
}

static int run(int argc, char **argv)
{

    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        puts("usage: acc-info [--settings | --platforms | --models | --db FILE | --cleanup]\n"
             "Prints the version, every ACC_* setting with its type, default, value in effect\n"
             "and meaning, the shipped platform descriptions and model profiles (and the\n"
             "directories they are read from); with --db, what a database\n"
             "holds (schema version, topologies, collectives and size ranges, kernels per\n"
             "architecture, optima); with --cleanup, removes from /dev/shm the shared memory\n"
             "that jobs killed while setting up left behind (their processes are gone).\n"
             "Exit status: 0 success, 1 unusable input (a database), 2 bad command line or\n"
             "an invalid ACC_* setting (named), 3 output not written.");
        return EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "--db") == 0) {
        if (argc != 3) {
            fprintf(stderr, "acc-info: --db needs one FILE\nTry 'acc-info --help'.\n");
            return EXIT_USAGE;
        }
        return show_db(argv[2]);
    }
    if (argc == 2 && strcmp(argv[1], "--cleanup") == 0) {
        int removed = 0;
        if (acc_comm_cleanup(&removed) != ACC_OK) {
            fprintf(stderr, "acc-info: %s\n", acc_error_message());
            return EXIT_INPUT;
        }
        printf("removed %d shared-memory segment%s of dead processes from /dev/shm\n", removed,
               removed == 1 ? "" : "s");
        return EXIT_OK;
    }
    if (argc > 1 && strcmp(argv[1], "--settings") != 0 && strcmp(argv[1], "--platforms") != 0 &&
        strcmp(argv[1], "--models") != 0) {
        fprintf(stderr, "acc-info: unknown option '%s'\nTry 'acc-info --help'.\n", argv[1]);
        return EXIT_USAGE;
    }
    if (argc == 1)
        printf("acc %s\n\n", ACC_VERSION_STRING);
    if (argc == 1 || strcmp(argv[1], "--settings") == 0) {
        puts("Settings (environment variables):");
        acc_settings_print(stdout);
    }
    if ((argc == 1 || strcmp(argv[1], "--platforms") == 0) &&
        list_shipped(argc == 1, "Platforms", acc_topo_platform_dir(), acc_topo_platform_list) !=
            EXIT_OK)
        return EXIT_INPUT;
    if ((argc == 1 || strcmp(argv[1], "--models") == 0) &&
        list_shipped(argc == 1, "Model profiles", acc_profile_builtin_dir(),
                     acc_profile_builtin_list) != EXIT_OK)
        return EXIT_INPUT;
    /* After the table, so that the values are there to read; named, never a bare exit status. */
    if (acc_settings_validate() != ACC_OK) {
        fprintf(stderr, "acc-info: %s\n", acc_error_message());
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    int rc = cli_budget("acc-info");
    return cli_exit("acc-info", rc == EXIT_OK ? run(argc, argv) : rc);
}
