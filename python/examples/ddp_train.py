"""Data-parallel training on the CPU with PyTorch DDP over the c10d backend "acc": the README's
example, and what the ctests python.torch_ddp_2 and python.torch_ddp_4 run
(python/tests/test_torch_ddp.py).

    torchrun --standalone --nproc-per-node 2 python/examples/ddp_train.py

needs PyTorch and the acc package (pip install ./python; or, in a checkout, python/ on
PYTHONPATH and ACC_LIBRARY naming the libacc.so CMake built).  Each rank trains the same small
MLP from the same weights on data of its own; at the end rank 0 prints the loss, the median step
time and whether every rank holds the same parameters.  --modes runs several trainings one
after the other, each from the same weights and data: acc (plain DDP, its process group acc's),
gloo (DDP on a gloo group of the same ranks), acc-hook, acc-fp16, acc-bf16 (acc's DDP
communication hook on its own streams, without and with compression); --out writes what each
gave, for the test to compare.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

import acc
import acc.ddp
import acc.torch  # registers the backend "acc" (an installed package also does it by itself)

STEPS = 20  # --steps


def make_model():
    torch.manual_seed(1)  # the same weights on every rank and in every mode
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 10))


def batches(rank, steps):
    """Inputs of each rank's own, labelled by a fixed random linear teacher."""
    teacher = torch.randn(256, 10, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(steps):
        x = torch.randn(64, 256, generator=g)
        yield x, (x @ teacher).argmax(dim=1)


def train(mode, rank, steps, gloo):
    compression = {"acc-hook": "none", "acc-fp16": "fp16", "acc-bf16": "bf16"}.get(mode)
    group = gloo if mode == "gloo" else None  # None: the default group, acc's
    # The example, as the README shows it:
    model = torch.nn.parallel.DistributedDataParallel(make_model(), bucket_cap_mb=1,
                                                      process_group=group)
    state = None
    if compression:
        config = acc.config(fusion_bytes=1 << 20, streams=2, compression=compression)
        state = acc.ddp.register(model, config=config)  # acc reduces DDP's buckets
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses, times = [], []
    for x, y in batches(rank, steps):
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # each bucket's allreduce: acc's (or gloo's, on the gloo group)
        optimizer.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    if state:
        state.close()
    # The end of the example.
    params = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(params) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, params)
    loss = torch.tensor([losses[-1]])
    dist.all_reduce(loss)  # the mean loss over the ranks, by the process group
    return {"mode": mode, "params": params.tolist(),
            "same_on_every_rank": all(torch.equal(g, gathered[0]) for g in gathered),
            "loss": loss.item() / dist.get_world_size(),
            "step_ms": sorted(times[1:])[len(times[1:]) // 2] * 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="acc",
                    help="comma-separated: acc, gloo, acc-hook, acc-fp16, acc-bf16")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--out", help="rank 0 writes the results here as JSON")
    args = ap.parse_args()
    dist.init_process_group("cpu:acc")  # torchrun's environment says where rank 0 is
    rank = dist.get_rank()
    modes = args.modes.split(",")
    gloo = dist.new_group(backend="gloo") if "gloo" in modes else None
    results = [train(mode, rank, args.steps, gloo) for mode in modes]
    if rank == 0:
        for r in results:
            print("%-8s %d ranks: loss %.6f after %d steps, %.2f ms per step (median), "
                  "parameters the same on every rank: %s"
                  % (r["mode"], dist.get_world_size(), r["loss"], args.steps, r["step_ms"],
                     r["same_on_every_rank"]))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
