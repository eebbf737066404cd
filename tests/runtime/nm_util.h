/*
 * nm_util.h - the names a shared library exports, as `nm -D --defined-only` lists them (what a
 * user checks of a plugin).  Header-only, for tests/runtime.
 */
#ifndef NM_UTIL_H
#define NM_UTIL_H

#include "acc_test.h"

#include <stdio.h>

#define NM_NAME_MAX 64

/* Up to cap names into names[]; how many. */
static inline size_t nm_exported(const char *path, char names[][NM_NAME_MAX], size_t cap)
{
    char cmd[1024], line[256], name[128];
    FILE *p;
    size_t n = 0;
    snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", path);
    CHECK((p = popen(cmd, "r")) != NULL);
    while (fgets(line, sizeof(line), p))
        if (sscanf(line, "%*s %*s %127s", name) == 1 && n < cap)
            snprintf(names[n++], NM_NAME_MAX, "%.63s", name);
    CHECK_INT(pclose(p), 0);
    return n;
}

#endif
