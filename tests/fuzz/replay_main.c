/* Runs a fuzz target over files and directories of inputs without libFuzzer (for ctest and for
 * reproducing a crash: `fuzz_x crash-file`). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat sb;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (stat(path, &sb) != 0) {
        fprintf(stderr, "no such input %s\n", path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    d = opendir(path);
    if (!d)
        return 1;
    while ((e = readdir(d)) != NULL) {
        char child[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        rc |= run_path(child, count);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int i, rc = 0, count = 0;
    for (i = 1; i < argc; i++)
        rc |= run_path(argv[i], &count);
    printf("replayed %d inputs\n", count);
    return rc || count == 0;
}
