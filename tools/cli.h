/* What every command-line program of acc (tools/, and acc-bench) shares: its exit codes. */
#ifndef ACC_CLI_H
#define ACC_CLI_H

/* 0 success, 1 unusable input (the message names the file and the place), 2 bad command line,
 * 3 output not written. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_OUTPUT = 3 };

#endif
