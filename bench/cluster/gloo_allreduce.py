"""gloo_allreduce: PyTorch's gloo allreduce timed the way acc-bench times acc's and
mpi_allreduce.c times Open MPI's (nccl-tests' columns, the slowest rank's mean over the timed
calls, float sum; each call on a fresh copy of the input, a copy of under 2 % of a call at
1 Gbit/s), so that the three tables of a run can be put side by side.  One rank per
process, started by a launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(acc-cluster does); gloo takes its interfaces from GLOO_SOCKET_IFNAME (e.g. eth0,eth1).

    python gloo_allreduce.py [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP]

Each result is checked once against the exact sum (inputs are small integers, so the float sum
is exact): a wrong element makes the exit status 1."""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-b", type=size, default=1 << 20)
    p.add_argument("-e", type=size, default=64 << 20)
    p.add_argument("-f", type=int, default=4)
    p.add_argument("-n", type=int, default=20)
    p.add_argument("-w", type=int, default=3)
    a = p.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    if rank == 0:
        print("# gloo_allreduce: %d ranks; torch %s, GLOO_SOCKET_IFNAME=%s" %
              (n, torch.__version__, os.environ.get("GLOO_SOCKET_IFNAME", "")))
        print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s" %
              ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"))
        print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s" %
              ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""), flush=True)
    bad = 0
    nbytes = a.b
    while nbytes <= a.e:
        count = nbytes // 4
        base = torch.arange(count, dtype=torch.int64)
        x = ((base + rank) % 7).to(torch.float32)
        want = sum(((base + r) % 7) for r in range(n)).to(torch.float32)
        t0 = 0.0
        for k in range(a.w + a.n):
            if k == a.w:
                dist.barrier()
                t0 = time.perf_counter()
            y = x.clone()
            dist.all_reduce(y)
        mean = (time.perf_counter() - t0) * 1e6 / a.n
        wrong = torch.tensor([float((y != want).sum())])
        slowest = torch.tensor([mean])
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        dist.all_reduce(wrong)
        bad |= int(wrong.item()) != 0
        if rank == 0:
            algbw = nbytes / slowest.item() / 1e3
            print("  %10d  %12d  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %5d" %
                  (nbytes, count, "float", "sum", -1, slowest.item(), algbw,
                   algbw * 2.0 * (n - 1) / n, int(wrong.item())), flush=True)
        nbytes *= a.f
    dist.destroy_process_group()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
