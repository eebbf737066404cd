/* acc-info: what this acc build knows: version, settings and their values, shipped platforms. */
#include "acc_topo.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char **names;
    size_t n, i;

    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        puts("usage: acc-info [--settings | --platforms]\n"
             "Prints the version, every ACC_* setting with its type, default, value in effect\n"
             "and meaning, and the shipped platform descriptions.");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--settings") != 0 && strcmp(argv[1], "--platforms") != 0) {
        fprintf(stderr, "acc-info: unknown option '%s'\nTry 'acc-info --help'.\n", argv[1]);
        return 2;
    }
    if (argc == 1)
        printf("acc %s\n\n", ACC_VERSION_STRING);
    if (argc == 1 || strcmp(argv[1], "--settings") == 0) {
        puts("Settings (environment variables):");
        acc_settings_print(stdout);
    }
    if (argc == 1 || strcmp(argv[1], "--platforms") == 0) {
        printf("%sPlatforms in %s:\n", argc == 1 ? "\n" : "", acc_topo_platform_dir());
        if (acc_topo_platform_list(&names, &n) != ACC_OK) {
            fprintf(stderr, "acc-info: %s\n", acc_error_message());
            return 1;
        }
        for (i = 0; i < n; i++)
            printf("  %s\n", names[i]);
        acc_topo_strv_free(names, n);
    }
    return acc_settings_validate() == ACC_OK ? 0 : 1;
}
