/* What the benchmark programs share: the process's CPU time and its peak memory. */
#ifndef ACC_BENCH_UTIL_H
#define ACC_BENCH_UTIL_H

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

/* Peak resident memory of the process in MiB (Linux reports ru_maxrss in kilobytes). */
static inline double bench_peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#endif
