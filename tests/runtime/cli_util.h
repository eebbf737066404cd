/*
 * cli_util.h - run one of the build's programs as a user would, from a runtime test: a command
 * line through the shell, its output kept for the checks.  Header-only, for tests/runtime.
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include "acc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* Run cmd; its standard output and error (at most cap - 1 bytes) in out; its exit status. */
static inline int cli_run(const char *cmd, char *out, size_t cap)
{
    char full[8192 + 4200];
    const char *o = acc_test_tmp("cli.out");
    FILE *f;
    size_t n;
    int rc;

    snprintf(full, sizeof(full), "%s > '%s' 2>&1", cmd, o);
    rc = system(full);
    f = fopen(o, "rb");
    n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    CHECK_MSG(rc != -1 && WIFEXITED(rc), "could not run %s", full);
    return WEXITSTATUS(rc);
}

#endif
