"""acc as a PyTorch distributed backend: importing acc.torch registers the c10d backend "acc",
so that

    import acc.torch
    torch.distributed.init_process_group("cpu:acc")      # or "acc", "cpu:acc,cuda:acc"

runs the group's collectives on acc's communicators: CPU tensors on the host backend, CUDA
tensors on the cuda backend (backend.py).  An installed package also registers it through the
entry point "torch.distributed.backends", which PyTorch loads when a job names the backend, so
that the import is needed only where PyTorch lacks that entry point group.
"""
import torch
import torch.distributed as dist

from .backend import NAME, AccBackend, create

__all__ = ["AccBackend", "gradient_settings", "register"]

_registered = False


def register():
    """Register the backend "acc" for CPU and CUDA tensors (once per process)."""
    global _registered
    if not _registered:
        dist.Backend.register_backend(NAME, create, devices=["cpu", "cuda"])
        _registered = True


def gradient_settings(group=None):
    """The fusion configuration (fusion_bytes, streams, compression, source, ... as
    acc.FusionEngine.info() gives it) that the group's CPU float SUM allreduces run with when
    the job opted in to its stored gradient settings (ACC_MODEL, ACC_FUSION_BYTES, ACC_STREAMS
    or ACC_COMPRESSION; acc/torch/gradients.py); None before the group's first such call or
    when the job did not opt in."""
    group = group if group is not None else dist.group.WORLD
    backend = group._get_backend(torch.device("cpu"))
    if not isinstance(backend, AccBackend):
        raise ValueError("acc: the group's CPU backend is %s, not acc"
                         % type(backend).__name__)
    return backend.gradient_settings()


register()
