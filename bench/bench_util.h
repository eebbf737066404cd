/* What the benchmark programs share: the process's CPU time and its peak memory. */
#ifndef ACC_BENCH_UTIL_H
#define ACC_BENCH_UTIL_H

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

/* CPU seconds of the process so far, every thread's: beside the wall time it tells how much
 * the machine's other load and a program's own threads changed it. */
static inline double bench_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The process's peak resident memory: the kernel's high-water mark of its address space
 * (VmHWM), which starts again at an exec - getrusage's ru_maxrss keeps the peak of the
 * process that exec'd (a bench's parent), and is the answer only where /proc is missing. */
static inline double bench_peak_mib(void)
{
    struct rusage ru;
    char line[128];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long kib;
        if (sscanf(line, "VmHWM: %lu kB", &kib) == 1) {
            fclose(f);
            return (double)kib / 1024.0;
        }
    }
    if (f)
        fclose(f);
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#endif
