"""acc as a PyTorch distributed backend: importing acc.torch registers the c10d backend "acc",
so that

    import acc.torch
    torch.distributed.init_process_group("cpu:acc")      # or "acc", "cpu:acc,cuda:acc"

runs the group's collectives on acc's communicators: CPU tensors on the host backend, CUDA
tensors on the cuda backend (backend.py).  An installed package also registers it through the
entry point "torch.distributed.backends", which PyTorch loads when a job names the backend, so
that the import is needed only where PyTorch lacks that entry point group.
"""
import torch.distributed as dist

from .backend import NAME, AccBackend, create

__all__ = ["AccBackend", "register"]

_registered = False


def register():
    """Register the backend "acc" for CPU and CUDA tensors (once per process)."""
    global _registered
    if not _registered:
        dist.Backend.register_backend(NAME, create, devices=["cpu", "cuda"])
        _registered = True


register()
