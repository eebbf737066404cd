/* The monotonic clock every interval in acc is measured with. */
#include "acc_common.h"

#include <stdlib.h>
#include <time.h>

double acc_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void acc_sleep_until(double t)
{
    struct timespec ts;
    double whole = (double)(int64_t)t;
    if (t <= acc_now_s())
        return;
    ts.tv_sec = (time_t)whole;
    ts.tv_nsec = (long)((t - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    /* Interrupted by a signal: sleep the rest. */
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0 && acc_now_s() < t)
        ;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double acc_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
