"""One acc communicator of a process group on one kind of device, and the order its calls run
in.

A lane is made at the group's first collective on that device (every rank makes its calls in
the same order, so every rank makes it at the same call): rank 0 of the group makes a unique id
(acc_get_unique_id) and puts its bytes in the store PyTorch handed the backend, the other ranks
wait for them there, and all join the communicator with the group's timeout, which acc applies
to every step it waits for.

CPU tensors run on the host backend, one call after another on a thread of the lane's own, so
that the caller gets a work object at once and a future that completes when the call has (acc's
host calls are synchronous, and ctypes lets go of the interpreter while they run); a job that
opted in to its stored gradient settings runs its float SUM allreduces on a fusion engine there
(gradients.py).  CUDA tensors
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
from . import gradients

UID_KEY = "acc_unique_id"
GRADIENTS_KEY = "acc_gradients"  # rank 0's gradients.wanted(), "1" or "0"


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
        self.gradients = None  # CPU lanes whose job opted in: made at the first such call
        self.wants_gradients = False
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
        wants = "%s/%s" % (GRADIENTS_KEY, self.device.type)
        if self.rank == 0:
            uid = acc.unique_id()
            self.store.set(wants, "1" if gradients.wanted() else "0")
            self.store.set(key, uid)
        else:
            uid = bytes(self.store.get(key))
        self.wants_gradients = self.queue is not None and bytes(self.store.get(wants)) == b"1"
        backend = "host" if self.device.type == "cpu" else "cuda"
        comm = acc.Communicator(self.size, self.rank, uid, backend=backend,
                                timeout_ms=self.timeout_ms,
                                device=self.device.index if self.device.index is not None else -1)
        self.comm = comm
        return comm

    # --- running calls ------------------------------------------------------------------------
    def submit(self, what, fn, gradient=None):
        """Run fn(comm) in this lane's order; a future of its result (acc's failures as
        DistBackendError; every call after a failure fails with it too).  gradient: the tensor
        of a float SUM allreduce and the call's result, (tensor, result), which go to the fusion engine
        instead of fn where the job opted in (gradients.py)."""
        fut = torch.futures.Future()
        if self.closed:
            fut.set_exception(self.error or dist.DistBackendError(
                "acc: %s on a process group that was shut down or aborted" % what))
        elif self.queue is not None:
            self.queue.put((what, fn, fut, gradient))
        else:
            self._run(what, fn, fut, None)
        return fut

    def _run(self, what, fn, fut, gradient):
        if self.error is not None:
            fut.set_exception(self.error)
            return
        try:
            comm = self._join()
            if gradient is not None and self.wants_gradients:
                if self.gradients is None:
                    self.gradients = gradients.Gradients(comm)
                self.gradients.start(gradient[0], fut, gradient[1])
                return
            self._complete_gradients()
            result = fn(comm)
        except acc.AccError as err:
            self._break(what, err)
            fut.set_exception(self.error)
        except Exception as err:  # a bug or bad argument found while running: this call's
            fut.set_exception(err)
        else:
            fut.set_result(result)

    def _complete_gradients(self):
        """Wait for the calls on the fusion engine and complete their futures (AccError)."""
        if self.gradients is not None:
            self.gradients.complete()

    def _break(self, what, err):
        self.error = backend_error(what, err)
        if self.gradients is not None:
            self.gradients.fail(self.error)

    def _serve(self):
        while True:
            item = self.queue.get()
            if item is None:
                self._finish_gradients()
                return
            self._run(*item)
            if self.queue.empty():
                self._finish_gradients()

    def _finish_gradients(self):
        if self.gradients is None or self.error is not None:
            return
        try:
            self._complete_gradients()
        except acc.AccError as err:
            self._break("allreduce", err)

    # --- the end ------------------------------------------------------------------------------
    def shutdown(self):
        """Finish the calls queued, then free the communicator (acc_comm_destroy)."""
        if self.closed:
            return
        self.closed = True
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()
        if self.gradients is not None:
            self.gradients.close()
        if self.comm is not None:
            # A lane broken by its fusion engine's calls has a communicator that is not: its
            # peers may be gone, and destroying it would wait for them.
            if self.error is not None:
                self.comm.abort()
            else:
                self.comm.close()

    def abort(self):
        """End the call in flight (acc_comm_abort: it returns ACC_ERR_ABORTED without waiting
        for the peers) and fail every call queued behind it."""
        if self.closed:
            return
        self.closed = True
        if self.error is None:
            self.error = dist.DistBackendError("acc: the process group was aborted")
        # The fusion engine's calls run on communicators of its own, which the abort does not
        # reach: their futures fail now, and the lane's thread is left to end when their
        # peers' timeout ends them.
        engine_busy = self.gradients is not None and self.gradients.busy()
        if engine_busy:
            self.gradients.fail(self.error)
        if self.comm is not None:
            self.comm.abort()
        if self.thread is not None:
            self.queue.put(None)
            if not engine_busy:
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
