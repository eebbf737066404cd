"""The c10d backend "acc": PyTorch's collectives on libacc's communicators.

PyTorch calls these methods with its own argument lists (those of c10d::Backend); each returns
a work object whose future completes, with the output tensors, when acc's call has (lane.py says
where and in which order calls run).  Collectives libacc has (allreduce, all-gather,
reduce-scatter, broadcast, reduce) go to it; the rest are built on those (calls.py and
composed.py say how).  Arguments acc cannot serve raise at the call, naming what and why.
"""
import torch
from torch._C import _distributed_c10d as c10d

from . import calls, composed, gradients
from .lane import Lane, stream_of

NAME = "acc"


class AccWork(c10d.Work):
    """A collective in flight: wait() returns when it has completed on this rank (on the
    caller's CUDA stream for CUDA tensors) and raises its error, as PyTorch's backends' works
    do; get_future() completes with the output tensors.  (PyTorch does not hand is_completed()
    to works written in Python: it stays False; ask get_future().done().)"""

    def __init__(self, fut):
        super().__init__()
        self._fut = fut

    def wait(self, timeout=None):
        self._fut.wait()  # raises the call's error
        return True

    def get_future(self):
        return self._fut


def _contiguous(t):
    """(a contiguous tensor holding t, a function that puts it back into t)."""
    if t.is_contiguous():
        return t, lambda: None
    c = t.contiguous()
    return c, lambda: t.copy_(c)


class AccBackend(c10d.Backend):
    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        self._store, self._timeout = store, timeout
        self._lanes = {}

    def getBackendName(self):
        return NAME

    def name(self):
        return NAME

    # --- where calls run ------------------------------------------------------------------------
    def _lane(self, device):
        if device.type not in ("cpu", "cuda"):
            raise ValueError("acc: tensors on %s: the acc backend runs CPU tensors (host backend) "
                             "and CUDA tensors (cuda backend)" % device)
        key = device.type
        if key not in self._lanes:
            self._lanes[key] = Lane(self._store, self.rank(), self.size(), self._timeout, device)
        return self._lanes[key]

    def _start(self, what, tensors, run, result, gradient=None):
        """Queue run(comm, stream) on the lane of the tensors' device; a work object whose
        future's value is result.  gradient: the one tensor of a SUM allreduce, which the lane
        may run on the job's fusion engine instead (gradients.py)."""
        devices = {t.device for t in tensors}
        if len(devices) != 1:
            raise ValueError("acc: %s with tensors on %s: one call's tensors must be on one "
                             "device" % (what, ", ".join(sorted(str(d) for d in devices))))
        device = devices.pop()
        lane = self._lane(device)
        stream = stream_of(tensors[0])

        def job(comm):
            run(comm, stream)
            return result
        return AccWork(lane.submit(what, job, None if gradient is None else (gradient, result)))

    # --- reductions -----------------------------------------------------------------------------
    def allreduce(self, tensors, opts):
        op = calls.op_name(opts.reduceOp, "allreduce")

        def run(comm, stream):
            for t in tensors:
                if calls.reduces(t.dtype):
                    c, back = _contiguous(t)
                    calls.allreduce(comm, c, op, stream)
                    back()
                else:
                    t.copy_(calls.reduce_exact(calls.gathered(comm, t, stream), op))
        one = tensors[0] if len(tensors) == 1 else None
        grad = one if one is not None and gradients.eligible(one, op) else None
        return self._start("allreduce", tensors, run, tensors, grad)

    def allreduce_coalesced(self, tensors, opts):
        return self.allreduce(tensors, opts)

    def reduce(self, tensors, opts):
        op = calls.op_name(opts.reduceOp, "reduce")
        root = opts.rootRank
        self._check_root("reduce", root)

        def run(comm, stream):
            for t in tensors:
                if calls.reduces(t.dtype):
                    c, back = _contiguous(t)
                    calls.reduce(comm, c, op, root, stream)
                    back()
                else:
                    parts = calls.gathered(comm, t, stream)
                    if comm.rank == root:
                        t.copy_(calls.reduce_exact(parts, op))
        return self._start("reduce", tensors, run, tensors)

    def _reduce_scatter_flat(self, comm, out, flat, op, stream):
        """out receives its rank's part of the reduction of every rank's flat (size × out)."""
        if calls.reduces(out.dtype):
            o, back = _contiguous(out)
            calls.reduce_scatter(comm, o, flat.contiguous(), op, stream)
            back()
        else:
            total = calls.reduce_exact(calls.gathered(comm, flat, stream), op)
            out.copy_(total.chunk(comm.size)[comm.rank].view(out.shape))

    def reduce_scatter(self, outputs, input_lists, opts):
        op = calls.op_name(opts.reduceOp, "reduce_scatter")
        for out, ins in zip(outputs, input_lists):
            self._check_parts("reduce_scatter", "input_list", ins, out)

        def run(comm, stream):
            for out, ins in zip(outputs, input_lists):
                flat = torch.cat([t.reshape(-1) for t in ins])
                self._reduce_scatter_flat(comm, out, flat, op, stream)
        return self._start("reduce_scatter", outputs, run, outputs)

    def reduce_scatter_single(self, output, input, opts):
        op = calls.op_name(opts.reduceOp, "reduce_scatter_tensor")
        self._check_sizes("reduce_scatter_tensor", input, output)

        def run(comm, stream):
            self._reduce_scatter_flat(comm, output, input.reshape(-1), op, stream)
        return self._start("reduce_scatter_tensor", [output, input], run, [output])

    def reduce_scatter_single_coalesced(self, outputs, inputs, opts):
        op = calls.op_name(opts.reduceOp, "reduce_scatter_tensor_coalesced")
        for o, i in zip(outputs, inputs):
            self._check_sizes("reduce_scatter_tensor_coalesced", i, o)

        def run(comm, stream):
            for o, i in zip(outputs, inputs):
                self._reduce_scatter_flat(comm, o, i.reshape(-1), op, stream)
        return self._start("reduce_scatter_tensor_coalesced", list(outputs) + list(inputs), run,
                           outputs)

    # --- data movement --------------------------------------------------------------------------
    def broadcast(self, tensors, opts):
        root = opts.rootRank
        self._check_root("broadcast", root)

        def run(comm, stream):
            for t in tensors:
                w = calls.words(t.contiguous())
                calls.broadcast(comm, w, root, stream)
                if comm.rank != root:
                    t.copy_(calls.unwords(w, t))
        return self._start("broadcast", tensors, run, tensors)

    def allgather(self, output_lists, inputs, opts):
        for outs, inp in zip(output_lists, inputs):
            self._check_parts("all_gather", "tensor_list", outs, inp)

        def run(comm, stream):
            for outs, inp in zip(output_lists, inputs):
                for o, p in zip(outs, calls.gathered(comm, inp, stream)):
                    o.copy_(p)
        return self._start("all_gather", inputs, run, output_lists)

    def allgather_coalesced(self, output_lists, inputs, opts):
        return self.allgather(output_lists, inputs, opts)

    def _gather_into(self, comm, output, input, stream):
        if calls.reduces(input.dtype) and output.is_contiguous():
            calls.allgather(comm, output.view(-1), input.contiguous().view(-1), stream)
        else:
            parts = calls.gathered(comm, input, stream)
            output.copy_(torch.cat([p.reshape(-1) for p in parts]).view(output.shape))

    def all_gather_single(self, output, input, opts):
        self._check_sizes("all_gather_into_tensor", output, input)

        def run(comm, stream):
            self._gather_into(comm, output, input, stream)
        return self._start("all_gather_into_tensor", [output, input], run, [output])

    def all_gather_single_coalesced(self, outputs, inputs, opts):
        for o, i in zip(outputs, inputs):
            self._check_sizes("all_gather_into_tensor_coalesced", o, i)

        def run(comm, stream):
            for o, i in zip(outputs, inputs):
                self._gather_into(comm, o, i, stream)
        return self._start("all_gather_into_tensor_coalesced", list(outputs) + list(inputs), run,
                           outputs)

    def barrier(self, opts=None):
        # A one-word allreduce on the host backend: it returns on a rank once every rank called.
        token = torch.zeros(1, dtype=torch.int32)

        def run(comm, stream):
            calls.allreduce(comm, token, "sum", None)
        return self._start("barrier", [token], run, [token])

    # --- built on acc's collectives (composed.py) -----------------------------------------------
    def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts):
        ins, outs = list(input_split_sizes), list(output_split_sizes)

        def run(comm, stream):
            composed.all_to_all_rows(comm, output, input, outs, ins, stream)
        return self._start("all_to_all_single", [output, input], run, [output])

    def alltoall(self, outputs, inputs, opts):
        def run(comm, stream):
            composed.all_to_all_list(comm, outputs, inputs, stream)
        return self._start("all_to_all", list(outputs) + list(inputs), run, outputs)

    def gather(self, output_lists, inputs, opts):
        return self._rooted("gather", composed.gather, opts.rootRank, inputs, output_lists,
                            inputs)

    def scatter(self, outputs, input_lists, opts):
        return self._rooted("scatter", composed.scatter, opts.rootRank, outputs, outputs,
                            input_lists)

    def _rooted(self, what, fn, root, tensors, outs, ins):
        self._check_root(what, root)

        def run(comm, stream):
            fn(comm, outs, ins, root, stream)
        return self._start(what, tensors, run, outs)

    def send(self, tensors, dst, tag):
        raise _no_point_to_point("send")

    def recv(self, tensors, src, tag):
        raise _no_point_to_point("recv")

    def recv_anysource(self, tensors, tag):
        return self.recv(tensors, -1, tag)

    # --- arguments ------------------------------------------------------------------------------
    def _check_root(self, what, root):
        if not 0 <= root < self.size():
            raise ValueError("acc: %s from rank %d: the group has ranks 0 to %d"
                             % (what, root, self.size() - 1))

    def _check_parts(self, what, name, parts, one):
        if len(parts) != self.size():
            raise ValueError("acc: %s: %s has %d tensors; the group has %d ranks"
                             % (what, name, len(parts), self.size()))
        for p in parts:
            if p.numel() != one.numel() or p.dtype != one.dtype:
                raise ValueError("acc: %s: every tensor of %s must be like the other argument "
                                 "(%d elements of %s), not %d of %s"
                                 % (what, name, one.numel(), one.dtype, p.numel(), p.dtype))

    def _check_sizes(self, what, whole, part):
        if whole.numel() != part.numel() * self.size() or whole.dtype != part.dtype:
            raise ValueError("acc: %s: the whole tensor must hold the group's %d parts of %d "
                             "elements of %s, not %d elements of %s"
                             % (what, self.size(), part.numel(), part.dtype, whole.numel(),
                                whole.dtype))

    def gradient_settings(self):
        """The configuration the CPU lane's fusion engine runs with (gradients.py); None before
        its first call or where the job did not opt in."""
        lane = self._lanes.get("cpu")
        return None if lane is None or lane.gradients is None else dict(lane.gradients.config)

    # --- the end --------------------------------------------------------------------------------
    def shutdown(self):
        for lane in self._lanes.values():
            lane.shutdown()

    def abort(self):
        for lane in self._lanes.values():
            lane.abort()


def _no_point_to_point(what):
    return RuntimeError("acc: %s is not supported: libacc runs collectives only, not "
                        "point-to-point messages; use gloo (CPU) or nccl (CUDA) for a group that "
                        "sends and receives" % what)


def create(store, rank, size, timeout):
    """The creator register_backend is given: PyTorch calls it for every group."""
    return AccBackend(store, rank, size, timeout)
