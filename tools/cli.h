/* What every command-line program of acc (tools/, and acc-bench) shares: its exit codes, and
 * the check that its standard output was written. */
#ifndef ACC_CLI_H
#define ACC_CLI_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* 0 success, 1 unusable input (the message names the file and the place), 2 bad command line,
 * 3 output not written. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_OUTPUT = 3 };

/* The exit status of program prog whose work ended with rc, once its standard output has been
 * flushed and closed: output that did not all reach its destination (a full disk, /dev/full)
 * turns success into EXIT_OUTPUT, with a message; a failure stays what it was.  A program's main
 * returns cli_exit("acc-x", run(argc, argv)), so that no path can report success for output it
 * lost. */
static inline int cli_exit(const char *prog, int rc)
{
    int failed = ferror(stdout), err = 0;

    if (fflush(stdout) != 0) {
        failed = 1;
        err = errno;
    }
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    /* A program that failed already said why (possibly this very write). */
    if (!failed || rc != EXIT_OK)
        return rc;
    if (err)
        fprintf(stderr, "%s: cannot write standard output: %s; the output is incomplete\n", prog,
                strerror(err));
    else
        fprintf(stderr,
                "%s: cannot write standard output (a write failed); the output is "
                "incomplete\n",
                prog);
    return rc == EXIT_OK ? EXIT_OUTPUT : rc;
}

#endif
