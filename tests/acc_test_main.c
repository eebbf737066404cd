/* The test runner: `test_x CASE` runs one case, `test_x` runs all, `test_x --list` names them. */
#include "acc_test.h"

#include <stdarg.h>

static acc_test_case_t *cases;
static const char *current = "?";

void acc_test_register(acc_test_case_t *tc)
{
    acc_test_case_t **p = &cases;
    while (*p)
        p = &(*p)->next;
    *p = tc;
}

void acc_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s at %s:%d: ", current, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void acc_test_skip(const char *reason)
{
    printf("SKIP %s: %s\n", current, reason);
    exit(77);
}

static const char *join(const char *base, const char *rel)
{
    static char slots[8][4096];
    static int next;
    char *s = slots[next++ & 7];
    snprintf(s, sizeof(slots[0]), "%s/%s", base, rel);
    return s;
}

const char *acc_test_data(const char *rel)
{
    return join(ACC_TEST_DATA_DIR, rel);
}

const char *acc_test_src(const char *rel)
{
    return join(ACC_TEST_SOURCE_DIR, rel);
}

/* The running case's scratch directory, ACC_TEST_TMP_DIR/PROGRAM/CASE: ctest -j runs cases side
 * by side, and each must neither see nor replace another's files. */
static char case_dir[2048] = ACC_TEST_TMP_DIR;

const char *acc_test_tmp(const char *rel)
{
    return join(case_dir, rel);
}

/* An empty directory of the case's own, made before it runs. */
static void enter_case(const char *prog, const char *name)
{
    char cmd[4200];

    snprintf(case_dir, sizeof(case_dir), "%s/%s/%s", ACC_TEST_TMP_DIR, prog, name);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", case_dir, case_dir);
    if (system(cmd) != 0)
        acc_test_fail(__FILE__, __LINE__, "could not make an empty %s", case_dir);
}

const char *acc_test_tmp_fresh(const char *rel)
{
    const char *path = acc_test_tmp(rel);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    if (system(cmd) != 0)
        acc_test_fail(__FILE__, __LINE__, "could not remove %s", path);
    return path;
}

int main(int argc, char **argv)
{
    acc_test_case_t *tc;
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int ran = 0;

    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (tc = cases; tc; tc = tc->next)
            printf("%s\n", tc->name);
        return 0;
    }
    for (tc = cases; tc; tc = tc->next) {
        if (argc > 1 && strcmp(argv[1], tc->name) != 0)
            continue;
        current = tc->name;
        enter_case(prog, tc->name);
        tc->fn();
        printf("ok %s\n", tc->name);
        ran++;
    }
    if (argc > 1 && !ran) {
        fprintf(stderr, "no test case named '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
