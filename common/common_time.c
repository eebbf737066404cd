/* The monotonic clock every interval in acc is measured with. */
#include "acc_common.h"

#include <time.h>

double acc_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
