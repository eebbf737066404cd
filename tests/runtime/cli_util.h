/*
 * cli_util.h - run one of the build's programs as a user would, from a test: its output
 * (stdout and stderr together) in cli_out, its exit status returned.  Header-only, for
 * tests/runtime.
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include "acc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static char cli_out[1 << 20];

static inline int cli_run(const char *cmd)
{
    char full[8192 + 4352];
    const char *o = acc_test_tmp("cli.out");
    FILE *f;
    size_t n;
    int rc;

    snprintf(full, sizeof(full), "%s > '%s' 2>&1", cmd, o);
    rc = system(full);
    f = fopen(o, "rb");
    n = f ? fread(cli_out, 1, sizeof(cli_out) - 1, f) : 0;
    cli_out[n] = '\0';
    if (f)
        fclose(f);
    CHECK_MSG(rc != -1 && WIFEXITED(rc), "could not run %s", full);
    return WEXITSTATUS(rc);
}

#endif
