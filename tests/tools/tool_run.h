/*
 * tool_run.h - run acc's command-line programs of this build as a user would, from a shell:
 * "acc-compile ..." with its standard output sent where the case says (a file, /dev/full) and
 * its standard error captured, optionally under a file size limit (a disk that fills up) or
 * with a deadline.  Header-only, for tests/tools.
 */
#ifndef TOOL_RUN_H
#define TOOL_RUN_H

#include "acc_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define TR_CAP (1 << 16)
static char tr_out[TR_CAP], tr_err[TR_CAP];

static inline void tr_slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* A shell command line with acc's programs of this build in front of PATH. */
static inline void tr_command(char *cmd, size_t cap, const char *line)
{
    snprintf(cmd, cap, "PATH='%s:%s':\"$PATH\" %s", ACC_TOOLS_DIR, ACC_BENCH_DIR, line);
}

/* Run line (e.g. "acc-compile --topo dgx-h100") with standard output to stdout_path (NULL: a
 * scratch file read into tr_out) and standard error into tr_err, files it writes limited to
 * fsize bytes (0: no limit; writes past it fail with EFBIG as on a full disk).  The exit
 * status, or 128 + the signal that ended it. */
static inline int tr_run(const char *line, const char *stdout_path, long fsize)
{
    char cmd[16384], out[4096], err[4096];
    int status;
    pid_t pid;

    snprintf(out, sizeof(out), "%s", acc_test_tmp("tool.out"));
    snprintf(err, sizeof(err), "%s", acc_test_tmp("tool.err"));
    tr_command(cmd, sizeof(cmd), line);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (!freopen(stdout_path ? stdout_path : out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(126);
        if (fsize > 0) {
            struct rlimit lim = {(rlim_t)fsize, (rlim_t)fsize};
            signal(SIGXFSZ, SIG_IGN); /* inherited: the write fails instead */
            if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
                _exit(126);
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    tr_slurp(stdout_path ? "/dev/null" : out, tr_out, sizeof(tr_out));
    tr_slurp(err, tr_err, sizeof(tr_err));
    unlink(out);
    unlink(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* pattern with every "{key}" replaced by value: commands of a table that name files. */
static inline void tr_fill(char *out, size_t cap, const char *pattern, const char *key,
                           const char *value)
{
    char tag[64];
    size_t n = 0, tl;
    snprintf(tag, sizeof(tag), "{%s}", key);
    tl = strlen(tag);
    while (*pattern && n + 1 < cap) {
        if (strncmp(pattern, tag, tl) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "%s", value);
            pattern += tl;
        } else {
            out[n++] = *pattern++;
        }
    }
    out[n < cap ? n : cap - 1] = '\0';
    CHECK_MSG(n + 1 < cap, "command too long: %s", pattern);
}

/* Check that text holds fragment, showing the command and text otherwise. */
#define TR_HAS(text, fragment, line)                                                               \
    CHECK_MSG(strstr((text), (fragment)) != NULL, "%s: no '%s' in:\n%s", (line), (fragment), (text))

#endif
