/*
 * acc_test.h - the unit-test harness: cases register themselves, tests/CMakeLists.txt turns
 * every ACC_TEST(name) into its own ctest (PART.FILE.name), and a failed check prints where and
 * why and ends the case with exit status 1.  A case that needs something absent (a GPU) calls
 * ACC_SKIP(reason), which exits with status 77 and ctest reports it as skipped.
 *
 * Paths: ACC_TEST_DATA_DIR is tests/data (real third-party inputs, data/PROVENANCE.md), ACC_TEST_SOURCE_DIR the
 * repository root, ACC_TEST_TMP_DIR a per-build scratch directory: acc_test_tmp() paths lie in
 * an empty directory of the running case's own (ACC_TEST_TMP_DIR/PROGRAM/CASE), so cases that
 * ctest runs side by side never share a file.
 */
#ifndef ACC_TEST_H
#define ACC_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc_common.h"

typedef struct acc_test_case {
    const char *name;
    void (*fn)(void);
    struct acc_test_case *next;
} acc_test_case_t;

void acc_test_register(acc_test_case_t *tc);
void acc_test_fail(const char *file, int line, const char *fmt, ...) ACC_PRINTF(3, 4);
void acc_test_skip(const char *reason);
/* A path under the data directory, the source tree or the scratch directory (static buffer
 * per call slot, 8 slots rotating). */
const char *acc_test_data(const char *rel);
const char *acc_test_src(const char *rel);
const char *acc_test_tmp(const char *rel);
/* acc_test_tmp(rel) with nothing there: a file or directory of that name is removed first. */
const char *acc_test_tmp_fresh(const char *rel);

#define ACC_TEST(name)                                                                             \
    static void acc_test_fn_##name(void);                                                          \
    static acc_test_case_t acc_test_case_##name = {#name, acc_test_fn_##name, NULL};               \
    __attribute__((constructor)) static void acc_test_reg_##name(void)                             \
    {                                                                                              \
        acc_test_register(&acc_test_case_##name);                                                 \
    }                                                                                              \
    static void acc_test_fn_##name(void)

/* Same as ACC_TEST, and the ctest gets the label "gpu". */
#define ACC_TEST_GPU(name) ACC_TEST(name)

#define ACC_SKIP(reason) acc_test_skip(reason)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            acc_test_fail(__FILE__, __LINE__, "check failed: %s", #cond);                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            acc_test_fail(__FILE__, __LINE__, __VA_ARGS__);                                        \
    } while (0)

#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        acc_status_t st_ = (expr);                                                                 \
        if (st_ != ACC_OK)                                                                         \
            acc_test_fail(__FILE__, __LINE__, "%s returned %s: %s", #expr, acc_status_name(st_),   \
                          acc_error_message());                                                    \
    } while (0)

/* Expect a failure with a given status; the message must be non-empty. */
#define CHECK_ERR(expr, want)                                                                      \
    do {                                                                                           \
        acc_status_t st_ = (expr);                                                                 \
        if (st_ != (want))                                                                         \
            acc_test_fail(__FILE__, __LINE__, "%s returned %s, expected %s (message: %s)", #expr,  \
                          acc_status_name(st_), acc_status_name(want), acc_error_message());       \
        if (!acc_error_message()[0])                                                               \
            acc_test_fail(__FILE__, __LINE__, "%s failed without a message", #expr);               \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            acc_test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_);  \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol)))                                               \
            acc_test_fail(__FILE__, __LINE__, "%s == %g, expected %g (tolerance %g)", #a, a_, b_,  \
                          (double)(tol));                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                     \
            acc_test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a,                 \
                          a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                 \
    } while (0)

/* 1 in builds whose sanitizers slow programs several times over: a case that sweeps much may
 * run a smaller sweep there (the same code on fewer sizes or steps). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ACC_TEST_SANITIZED 1
#else
#define ACC_TEST_SANITIZED 0
#endif

/* A timing check (something happened "at once" or "within the timeout"): asserted in plain
 * builds only, since under the sanitizers it would measure their slowdown.  The condition is
 * evaluated either way. */
#if ACC_TEST_SANITIZED
#define CHECK_FAST(cond, ...) ((void)(cond))
#else
#define CHECK_FAST(cond, ...) CHECK_MSG(cond, __VA_ARGS__)
#endif

/* The error message contains a fragment (case-sensitive). */
#define CHECK_MSG_HAS(fragment)                                                                    \
    do {                                                                                           \
        if (!strstr(acc_error_message(), (fragment)))                                              \
            acc_test_fail(__FILE__, __LINE__, "error message \"%s\" lacks \"%s\"",                 \
                          acc_error_message(), (fragment));                                        \
    } while (0)

#endif
