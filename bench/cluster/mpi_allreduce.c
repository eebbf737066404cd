/*
 * mpi_allreduce: MPI_Allreduce timed the way acc-bench times acc's (nccl-tests' columns, the
 * slowest rank's mean over the timed calls, out of place, float sum), so the two tables of a run
 * can be put side by side.  Built by bench/cluster/run-peers.sh with the MPI's own mpicc; not
 * part of acc's build, which needs no MPI.
 *
 *   mpi_allreduce [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]
 *
 * Each result is checked once against the exact sum (inputs are small integers, so the float
 * sum is exact): a wrong element makes the exit status 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K':
        return v << 10;
    case 'M':
        return v << 20;
    case 'G':
        return v << 30;
    default:
        return v;
    }
}

int main(int argc, char **argv)
{
    uint64_t lo = 1024, hi = 64ull << 20;
    int factor = 4, iters = 20, warmup = 3, rank, n, c, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    while ((c = getopt(argc, argv, "b:e:f:n:w:")) != -1) {
        if (c == 'b')
            lo = parse_size(optarg);
        else if (c == 'e')
            hi = parse_size(optarg);
        else if (c == 'f')
            factor = atoi(optarg);
        else if (c == 'n')
            iters = atoi(optarg);
        else if (c == 'w')
            warmup = atoi(optarg);
    }
    if (factor < 2 || iters < 1 || lo < 4 || lo > hi) {
        if (rank == 0)
            fprintf(stderr, "mpi_allreduce: bad arguments\n");
        MPI_Finalize();
        return 2;
    }
    float *in = malloc(hi), *out = malloc(hi);
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(ver, &len);
        printf("# mpi_allreduce: %d ranks; %.*s\n", n, (int)strcspn(ver, "\n,"), ver);
        printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong");
        printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", "");
    }
    for (uint64_t bytes = lo; bytes <= hi; bytes *= (uint64_t)factor) {
        size_t count = bytes / sizeof(float), wrong = 0;
        double t0 = 0, mean, slowest;
        long all_wrong = 0;
        for (size_t i = 0; i < count; i++)
            in[i] = (float)((i + (size_t)rank) % 7);
        for (int k = 0; k < warmup + iters; k++) {
            if (k == warmup) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        mean = (MPI_Wtime() - t0) * 1e6 / iters;
        for (size_t i = 0; i < count; i++) {
            float want = 0;
            for (int r = 0; r < n; r++)
                want += (float)((i + (size_t)r) % 7);
            wrong += out[i] != want;
        }
        MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        long w = (long)wrong;
        MPI_Allreduce(&w, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        bad |= all_wrong != 0;
        if (rank == 0) {
            double algbw = (double)bytes / slowest / 1e3;
            printf("  %10llu  %12zu  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %5ld\n",
                   (unsigned long long)bytes, count, "float", "sum", -1, slowest, algbw,
                   algbw * 2.0 * (n - 1) / n, all_wrong);
            fflush(stdout);
        }
    }
    free(in);
    free(out);
    MPI_Finalize();
    return bad;
}
