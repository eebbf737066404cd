"""PyTorch's tensors, types and reduction ops as libacc's collectives take them.

acc reduces float32, float64, float16, bfloat16 and int32 with sum, product, min, max and
average.  Data it only moves (all-gather, broadcast) may be of any type: it travels as the 32-bit
words of its bytes, padded.  A reduction of another type (int64, uint8, bool, ...) is made
exact from what acc has: every rank's tensor all-gathered, reduced in rank order by PyTorch, the
same on every rank.  ReduceOp's bitwise ops and PREMUL_SUM raise a ValueError naming them.
"""
import ctypes

import torch
import torch.distributed as dist

from .. import _lib

RedOpType = dist.ReduceOp.RedOpType
_OPS = {RedOpType.SUM: "sum", RedOpType.AVG: "avg", RedOpType.PRODUCT: "prod",
        RedOpType.MIN: "min", RedOpType.MAX: "max"}
_TYPES = {torch.float32: "float", torch.float64: "double", torch.float16: "half",
          torch.bfloat16: "bfloat16", torch.int32: "int32"}
_WORD = torch.int32


def op_name(op, what):
    """acc's name of a ReduceOp (or its RedOpType); a ValueError naming the op acc lacks."""
    kind = getattr(op, "op", op)
    if kind not in _OPS:
        raise ValueError("acc: %s with ReduceOp.%s is not supported: acc reduces with SUM, AVG, "
                         "PRODUCT, MIN and MAX; use one of those, or another backend for this "
                         "group" % (what, getattr(kind, "name", kind)))
    return _OPS[kind]


def reduces(dtype):
    """Does acc reduce this type itself?"""
    return dtype in _TYPES


def _dt(dtype):
    return _lib.enum("acc_dtype_parse", _TYPES[dtype])


def _ptr(t):
    return ctypes.c_void_p(t.data_ptr())


def allreduce(comm, t, op, stream):
    _lib.call("acc_allreduce", _ptr(t), _ptr(t), t.numel(), _dt(t.dtype),
              _lib.enum("acc_redop_parse", op), comm.handle, stream)


def reduce_scatter(comm, out, inp, op, stream):
    _lib.call("acc_reduce_scatter", _ptr(inp), _ptr(out), out.numel(), _dt(out.dtype),
              _lib.enum("acc_redop_parse", op), comm.handle, stream)


def reduce(comm, t, op, root, stream):
    _lib.call("acc_reduce", _ptr(t), _ptr(t), t.numel(), _dt(t.dtype),
              _lib.enum("acc_redop_parse", op), root, comm.handle, stream)


def words(t):
    """A contiguous tensor of acc's types holding t's bytes: t itself (flat) when acc moves its
    type, else its bytes as 32-bit words, the last one padded."""
    flat = t.reshape(-1)
    if t.dtype in _TYPES:
        return flat
    nbytes = flat.numel() * flat.element_size()
    out = torch.zeros((nbytes + 3) // 4, dtype=_WORD, device=t.device)
    out.view(torch.uint8)[:nbytes].copy_(flat.view(torch.uint8))
    return out


def unwords(w, like):
    """The tensor of like's type and shape whose bytes words() put in w."""
    if like.dtype in _TYPES:
        return w.view(like.shape)
    nbytes = like.numel() * like.element_size()
    return w.view(torch.uint8)[:nbytes].view(like.dtype).view(like.shape)


def allgather(comm, out, inp, stream):
    """out (size × inp's words, contiguous) receives every rank's inp."""
    _lib.call("acc_allgather", _ptr(inp), _ptr(out), inp.numel(), _dt(inp.dtype), comm.handle,
              stream)


def broadcast(comm, t, root, stream):
    _lib.call("acc_broadcast", _ptr(t), _ptr(t), t.numel(), _dt(t.dtype), root, comm.handle,
              stream)


def gathered(comm, t, stream):
    """Every rank's t (any type), as a list in rank order."""
    w = words(t.contiguous())
    out = torch.empty(comm.size * w.numel(), dtype=w.dtype, device=t.device)
    allgather(comm, out, w, stream)
    return [unwords(part, t) for part in out.chunk(comm.size)]


def reduce_exact(parts, op):
    """The reduction of the tensors in rank order, by PyTorch, in their own type."""
    acc_ = parts[0].clone()
    for p in parts[1:]:
        if op in ("sum", "avg"):
            acc_ = acc_ + p if acc_.dtype != torch.bool else acc_ | p
        elif op == "prod":
            acc_ = acc_ * p if acc_.dtype != torch.bool else acc_ & p
        elif op == "min":
            acc_ = torch.minimum(acc_, p)
        else:
            acc_ = torch.maximum(acc_, p)
    if op == "avg":
        if acc_.is_floating_point() or acc_.is_complex():
            acc_ = acc_ / len(parts)
        else:
            acc_ = torch.div(acc_, len(parts), rounding_mode="trunc").to(parts[0].dtype)
    return acc_.to(parts[0].dtype)
