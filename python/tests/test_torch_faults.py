"""Faults under the c10d backend "acc" give errors, not hangs (ctest python.torch_faults):
two ranks (spawned processes) with a process-group timeout of TIMEOUT seconds, which acc applies
to every step it waits for.

- ranks that call different collectives (10 elements against 20) both raise
  torch.distributed.DistBackendError, as PyTorch's backends raise a failed collective, saying
  what differed; the group is broken after it: the next call raises too;
- a peer killed between two collectives: the survivor's next call raises DistBackendError
  naming the rank that went away, well within the timeout (its process has ended, though
  torch_ranks has not reaped it yet);
- abort (PyTorch's _abort_process_group, what NCCL's watchdog does on a timeout) ends a call
  waiting for a peer that never comes: its work raises, and a later call on the aborted group
  (a handle kept from before) raises DistBackendError too.

The killed peer and the abort are tried twice: with single collectives, and with the group's
float sums on a fusion engine (ACC_STREAMS set: acc/torch/gradients.py).

A hang fails the test (torch_ranks gives every run a bound).
    test_torch_faults.py             (environment: ACC_LIBRARY, PYTHONPATH; CMake sets them)
Exit status 77 (skipped) with a notice when this interpreter has no PyTorch."""
import datetime
import os
import time

import torch_ranks

TIMEOUT = 20  # seconds: the process group's, and so acc's


def init(rank, n, env=None):
    """The group, its communicator up on every rank (a first all_reduce); env: settings to set
    first (ACC_STREAMS: the group's float sums run on a fusion engine, acc/torch/gradients.py)."""
    import torch
    import torch.distributed as dist
    import acc.torch  # noqa: F401
    os.environ.update(env or {})
    dist.init_process_group("cpu:acc", rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=TIMEOUT))
    dist.all_reduce(torch.ones(4))
    return dist


def raised(fn):
    """The exception fn raised (its type's name and text), or None."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


def mismatch(rank, n):
    import torch
    dist = init(rank, n)
    first = raised(lambda: dist.all_reduce(torch.ones(10 if rank == 0 else 20)))
    after = raised(lambda: dist.all_reduce(torch.ones(10)))
    dist.destroy_process_group()
    return first, after


def killed(rank, n, env=None):
    import torch
    dist = init(rank, n, env)
    if rank == 1:
        os._exit(0)  # a peer that dies between two collectives
    t0 = time.monotonic()
    err = raised(lambda: dist.all_reduce(torch.ones(4)))
    seconds = time.monotonic() - t0
    dist.destroy_process_group()
    return err, seconds


def aborted(rank, n, env=None):
    import torch
    import torch.distributed.distributed_c10d as c10d
    dist = init(rank, n, env)
    if rank == 0:
        pg = dist.group.WORLD
        work = dist.all_reduce(torch.ones(4), async_op=True)  # rank 1 never joins it
        time.sleep(1)
        c10d._abort_process_group()
        return raised(work.wait), raised(lambda: pg.allreduce([torch.ones(4)]).wait())
    time.sleep(3)  # rank 1 leaves without calling; rank 0's abort must not wait for it
    c10d._abort_process_group()
    return None


def main():
    torch_ranks.need_torch()
    failures = []
    bound = 4 * TIMEOUT

    first, after = torch_ranks.run(mismatch, 2, timeout=bound)[0]
    print("mismatched calls:  %s\n  the next call:    %s" % (first, after))
    if not first or first[0] != "DistBackendError":
        failures.append("mismatched calls gave %r, not a DistBackendError" % (first,))
    if not after or after[0] != "DistBackendError":
        failures.append("the call after the mismatch gave %r, not a DistBackendError" % (after,))

    # Single collectives, then the job's fusion engine (a group that opted in to its gradient
    # settings runs its float sums there, on communicators of the engine's own).
    for how, env in (("", None), (" (fusion engine)", {"ACC_STREAMS": "2"})):
        err, seconds = torch_ranks.run(killed, 2, args=(env,), timeout=bound,
                                       allow_exit=(1,))[0]
        print("killed peer%s: %s after %.1f s" % (how, err, seconds))
        if not err or err[0] != "DistBackendError" or "1" not in err[1]:
            failures.append("a killed peer%s gave %r, not a DistBackendError naming rank 1"
                            % (how, err))
        # The host backend sees a peer's process end (within a second), not only the timeout;
        # half the timeout leaves a loaded machine room.
        if seconds > TIMEOUT / 2:
            failures.append("a killed peer%s was noticed after %.1f s, at the timeout (%d s), "
                            "not when its process ended" % (how, seconds, TIMEOUT))

        waited, later = torch_ranks.run(aborted, 2, args=(env,), timeout=bound)[0]
        print("aborted in flight%s: %s\n  a later call:     %s" % (how, waited, later))
        if not waited or "abort" not in waited[1].lower():
            failures.append("the work in flight at abort%s gave %r, not an error saying it was "
                            "aborted" % (how, waited))
        if not later or later[0] != "DistBackendError":
            failures.append("a call after abort%s gave %r, not a DistBackendError"
                            % (how, later))
    torch_ranks.finish(failures)


if __name__ == "__main__":
    main()
