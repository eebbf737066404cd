"""One DDP training step on one rank and one GPU, over NCCL: what test_nccl_gpu.c runs with the
drop-in NCCL preloaded.  Prints how this PyTorch reaches NCCL (a shared library a preload can
stand in front of, or linked in statically) and "ddp step ok" when the step's gradients are
right."""
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def nccl_kind():
    with open("/proc/self/maps") as maps:
        shared = any("libnccl.so" in line for line in maps)
    return "shared library" if shared else "linked in"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    model = DistributedDataParallel(torch.nn.Linear(64, 8).cuda(), device_ids=[0])
    x = torch.ones(16, 64, device="cuda")
    model(x).sum().backward()
    # d(sum of outputs)/d(weight) = the batch size times the input, for every output row
    expected = torch.full((8, 64), 16.0, device="cuda")
    assert torch.allclose(model.module.weight.grad, expected), model.module.weight.grad
    torch.cuda.synchronize()
    print("nccl:", nccl_kind())
    dist.destroy_process_group()
    print("ddp step ok")


if __name__ == "__main__":
    main()
