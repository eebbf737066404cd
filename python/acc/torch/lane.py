"""One acc communicator of a process group on one kind of device, and the order its calls run
in.

A lane is made at the group's first collective on that device (every rank makes its calls in
the same order, so every rank makes it at the same call): rank 0 of the group makes a unique id
(acc_get_unique_id) and puts its bytes in the store PyTorch handed the backend, the other ranks
wait for them there, and all join the communicator with the group's timeout, which acc applies
to every step it waits for.

CPU tensors run on the host backend, one call after another on a thread of the lane's own, so
that the caller gets a work object at once and a future that completes when the call has (acc's
host calls are synchronous, and ctypes lets go of the interpreter while they run).  CUDA tensors
run on the cuda backend in the caller's thread, on the caller's current stream, as NCCL's calls
are enqueued: the work is complete for everything later on that stream.

A failure breaks the lane as acc's communicator breaks: this and every later call raise
torch.distributed.DistBackendError with acc's message (the step it waited for, the ranks that
exited, the call that differed between ranks), as the NCCL backend raises its errors.
"""
import ctypes
import datetime
import queue
import threading

import torch
import torch.distributed as dist

import acc
from .. import _lib

UID_KEY = "acc_unique_id"


def backend_error(what, err):
    """The exception PyTorch's backends raise for a failed collective, carrying acc's reason."""
    e = dist.DistBackendError("acc: %s failed: %s" % (what, err))
    e.__cause__ = err
    return e


class Lane:
    def __init__(self, store, rank, size, timeout, device):
        self.store, self.rank, self.size, self.device = store, rank, size, device
        self.timeout_ms = _timeout_ms(timeout)
        self.comm = None
        self.error = None  # the exception that broke the lane
        self.closed = False
        self.queue = None
        self.thread = None
        if device.type == "cpu":
            self.queue = queue.Queue()
            self.thread = threading.Thread(target=self._serve, name="acc-lane", daemon=True)
            self.thread.start()

    # --- the communicator ---------------------------------------------------------------------
    def _join(self):
        if self.comm is not None:
            return self.comm
        key = "%s/%s" % (UID_KEY, self.device.type)
        if self.rank == 0:
            uid = acc.unique_id()
            self.store.set(key, uid)
        else:
            uid = bytes(self.store.get(key))
        backend = "host" if self.device.type == "cpu" else "cuda"
        comm = acc.Communicator(self.size, self.rank, uid, backend=backend,
                                timeout_ms=self.timeout_ms,
                                device=self.device.index if self.device.index is not None else -1)
        self.comm = comm
        return comm

    # --- running calls ------------------------------------------------------------------------
    def submit(self, what, fn):
        """Run fn(comm) in this lane's order; a future of its result (acc's failures as
        DistBackendError; every call after a failure fails with it too)."""
        fut = torch.futures.Future()
        if self.closed:
            fut.set_exception(self.error or dist.DistBackendError(
                "acc: %s on a process group that was shut down or aborted" % what))
        elif self.queue is not None:
            self.queue.put((what, fn, fut))
        else:
            self._run(what, fn, fut)
        return fut

    def _run(self, what, fn, fut):
        if self.error is not None:
            fut.set_exception(self.error)
            return
        try:
            result = fn(self._join())
        except acc.AccError as err:
            self.error = backend_error(what, err)
            fut.set_exception(self.error)
        except Exception as err:  # a bug or bad argument found while running: this call's
            fut.set_exception(err)
        else:
            fut.set_result(result)

    def _serve(self):
        while True:
            item = self.queue.get()
            if item is None:
                return
            self._run(*item)

    # --- the end ------------------------------------------------------------------------------
    def shutdown(self):
        """Finish the calls queued, then free the communicator (acc_comm_destroy)."""
        if self.closed:
            return
        self.closed = True
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()
        if self.comm is not None:
            self.comm.close()

    def abort(self):
        """End the call in flight (acc_comm_abort: it returns ACC_ERR_ABORTED without waiting
        for the peers) and fail every call queued behind it."""
        if self.closed:
            return
        self.closed = True
        if self.error is None:
            self.error = dist.DistBackendError("acc: the process group was aborted")
        if self.comm is not None:
            self.comm.abort()
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()


def _timeout_ms(timeout):
    if timeout is None:
        return 0  # ACC_TIMEOUT_MS
    if isinstance(timeout, datetime.timedelta):
        return max(1, int(timeout.total_seconds() * 1000))
    return max(1, int(timeout))


def stream_of(tensor):
    """The stream acc's call goes on: the caller's current CUDA stream; None on the CPU."""
    if tensor.is_cuda:
        return ctypes.c_void_p(torch.cuda.current_stream(tensor.device).cuda_stream)
    return None
