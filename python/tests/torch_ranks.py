"""Ranks of a PyTorch job for the backend's tests: run(fn, n) starts n processes (spawned, as
torchrun's are), each calling fn(rank, n, *args) with MASTER_ADDR/MASTER_PORT set for
init_process_group, and returns their results by rank.  A rank that raises, dies or outlives
`timeout` seconds fails the run, naming the rank and why: a hang is a failure here, never a
test that waits for ever."""
import multiprocessing
import os
import queue
import socket
import sys
import traceback

SKIP = 77


def skip(why):
    print("SKIPPED (visible notice): " + why, flush=True)
    sys.exit(SKIP)


def finish(failures):
    """Print each failure and exit: 1 if there were any, else 0."""
    for f in failures:
        print("FAILED: " + f)
    sys.exit(1 if failures else 0)


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        skip("%s has no PyTorch; configure with -DACC_TORCH_PYTHON=PATH (scripts/torch_venv.sh "
             "makes a virtual environment with it)" % sys.executable)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _main(fn, rank, n, port, args, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(n), OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    try:
        results.put((rank, True, fn(rank, n, *args)))
    except BaseException:
        results.put((rank, False, traceback.format_exc()))


def run(fn, n, args=(), timeout=300, allow_exit=()):
    """fn's results by rank.  Ranks in allow_exit may end without a result (a peer the test
    kills)."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_main, args=(fn, r, n, port, args, results)) for r in range(n)]
    for p in procs:
        p.start()
    out, errors = {}, []
    want = n - len(allow_exit)
    try:
        while len(out) + len(errors) < want:
            rank, ok, value = results.get(timeout=timeout)
            if ok:
                out[rank] = value
            else:
                errors.append("rank %d raised:\n%s" % (rank, value))
    except queue.Empty:
        missing = [r for r in range(n) if r not in out and r not in allow_exit]
        errors.append("ranks %s gave no result within %d s: a hang" % (missing, timeout))
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
    if errors:
        raise AssertionError("\n".join(errors))
    return out
