/* What every command-line program of acc (tools/, and acc-bench) shares: its exit codes, its
 * memory budget, and the check that its standard output was written. */
#ifndef ACC_CLI_H
#define ACC_CLI_H

#include "acc_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* 0 success, 1 unusable input (the message names the file and the place), 2 bad command line,
 * 3 output not written. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_OUTPUT = 3 };

/* An option that takes one value, given a second time (--topo A --topo B): refused, since
 * taking the last would silently drop the first.  EXIT_OK after storing val in *slot, else
 * EXIT_USAGE with the message printed. */
static inline int cli_once(const char *prog, const char **slot, const char *opt, const char *val)
{
    if (*slot && strcmp(*slot, val) != 0) {
        fprintf(stderr, "%s: %s given twice ('%s' and '%s'); give it once\nTry '%s --help'.\n",
                prog, opt, *slot, val, prog);
        return EXIT_USAGE;
    }
    *slot = val;
    return EXIT_OK;
}

/* The memory the program may use (cli_budget), for cli_exit's message. */
static acc_mem_limit_t cli_limit;

/* Give the program's allocations a budget: ACC_MEMORY_BUDGET, else what the machine leaves
 * available (acc_mem_limit), so that a request too large for the machine fails with a message
 * instead of growing until the kernel kills it.  EXIT_OK, or EXIT_USAGE with the message
 * printed (a bad ACC_MEMORY_BUDGET). */
static inline int cli_budget(const char *prog)
{
    if (acc_mem_limit(&cli_limit) != ACC_OK) {
        fprintf(stderr, "%s: %s\n", prog, acc_error_message());
        return EXIT_USAGE;
    }
    /* Of what the machine has, a fifth stays for what the budget does not count (the C
     * library's and SQLite's own allocations, the allocator's overhead, other processes that
     * grow meanwhile); a budget the user set is taken as it is. */
    if (strcmp(cli_limit.source, "ACC_MEMORY_BUDGET") != 0)
        cli_limit.bytes = cli_limit.bytes / 5 * 4;
    acc_mem_budget_set(cli_limit.bytes);
    return EXIT_OK;
}

/* The exit status of program prog whose work ended with rc, once its standard output has been
 * flushed and closed: output that did not all reach its destination (a full disk, /dev/full)
 * turns success into EXIT_OUTPUT, with a message; a failure stays what it was.  A program's main
 * returns cli_exit("acc-x", run(argc, argv)), so that no path can report success for output it
 * lost. */
static inline int cli_exit(const char *prog, int rc)
{
    int failed = ferror(stdout), err = 0;

    if (rc != EXIT_OK && acc_mem_budget_refused()) {
        char text[32];
        acc_mem_size_text(cli_limit.bytes, text, sizeof(text));
        fprintf(stderr,
                "%s: this run needed more memory than the %s it may use (%s); ask for less, or "
                "set ACC_MEMORY_BUDGET on a machine with more memory\n",
                prog, text, cli_limit.source);
    }

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
