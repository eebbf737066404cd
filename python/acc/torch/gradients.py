"""The job's stored gradient settings (fusion size, streams, compression) applied to a group's
allreduces on CPU tensors, so that plain DistributedDataParallel over the backend gets what acc's
DDP hook gives (acc.ddp).

A job opts in as it does for the hook: by naming its model (ACC_MODEL, the key of the optimum
acc-tune or an earlier job stored) or by setting ACC_FUSION_BYTES, ACC_STREAMS or
ACC_COMPRESSION.  Rank 0's environment decides for the whole group (the lane shares its choice
through the store), because every rank must make the same calls.  Then the group's float32,
float16 and bfloat16 SUM allreduces go to a fusion engine of the lane's communicator, whose
configuration is the one the hook's would be (the settings over the stored optimum over acc's
default, rank 0's decision shared): each tensor (a DDP bucket) is cut into pieces of the fusion
size, which go round robin to the engine's streams, sent compressed where the configuration
says so (fp16/bf16 for float32, cast back on arrival).  DDP's bucket size stays DDP's own
(acc.ddp_settings gives its keyword argument for the stored optimum).

Calls are started as they come and completed together when the lane has nothing else queued,
or before any other call runs (so that calls complete in the order they were made).  The engine
measures nothing here: online tuning and recording need the iteration's end, which the hook sees
and a backend does not; run them through acc.ddp.  Other types and reductions, and every call of
a group that did not opt in, run as single collectives on the communicator.
"""
import os
import threading

import acc

# The settings that opt a job in (their meaning: acc-info --settings).
OPT_IN = ("ACC_MODEL", "ACC_FUSION_BYTES", "ACC_STREAMS", "ACC_COMPRESSION")
_FLOATS = {"torch.float32": "float", "torch.float16": "half", "torch.bfloat16": "bfloat16"}


def wanted():
    """Does this process's environment opt the job in?"""
    return any(os.environ.get(k) for k in OPT_IN)


def eligible(t, op):
    """Does a call of this tensor and reduction go to the engine?"""
    return op == "sum" and str(t.dtype) in _FLOATS and t.is_contiguous() and t.numel() > 0


class Gradients:
    """A fusion engine on comm (its own communicators, duplicated from comm: every rank makes it
    at the same call) and the calls started on it that have not completed yet."""

    def __init__(self, comm):
        self.engine = acc.FusionEngine(comm, average=False, online=False, record=False)
        # An iteration of one empty buffer makes the engine decide its configuration (rank 0's,
        # broadcast), which the pieces' size needs, as an engine of the caller's buffers.
        self.engine.reduce(0, 0, "float")
        self.engine.wait()
        self.config = self.engine.info()
        self.piece = max(1, self.config["fusion_bytes"])
        self.pending = []  # (future, result) of the calls started
        # The tensors of the calls started since the engine last finished them all: after a
        # failure the engine's streams may still be writing into them, so they stay alive
        # until it has (a later wait, or close).
        self.held = []
        self.lock = threading.Lock()  # abort() fails the futures from another thread

    def start(self, t, fut, result):
        """Start t's allreduce in pieces of the fusion size; fut completes with result once
        complete() has waited for it."""
        step = max(1, self.piece // t.element_size())
        self.held.append(t)
        flat = t.view(-1)
        dtype = _FLOATS[str(t.dtype)]
        for first in range(0, flat.numel(), step):
            part = flat[first:first + step]
            self.engine.reduce(part.data_ptr(), part.numel(), dtype)
        self.pending.append((fut, result))

    def busy(self):
        return bool(self.pending)

    def complete(self):
        """Wait for every call started and complete their futures.  Raises the engine's
        AccError, leaving the futures to fail()."""
        if not self.pending:
            return
        self.engine.wait()
        self.held = []
        with self.lock:
            done, self.pending = self.pending, []
            for fut, result in done:
                if not fut.done():
                    fut.set_result(result)

    def fail(self, error):
        """Fail the futures of every call started with error (any thread)."""
        with self.lock:
            done, self.pending = self.pending, []
            for fut, _ in done:
                if not fut.done():
                    fut.set_exception(error)

    def close(self):
        self.engine.close()
        self.held = []
