#!/usr/bin/env python3
"""One rank of a communication-bound training job under torchrun (bench/cluster/pytorch_ddp.py
starts it across the emulated cluster): a wide MLP of 58.7 M parameters (1024 -> 4 x 4096 ->
1024, ReLU), batch 8 per rank, Adam on a synthetic regression task (each rank fits a batch of
its own, which the model learns within tens of steps, so that the loss after N steps shows what
compression does to training), every rank's data and the model's initial weights from one seed:
every policy trains the same model on the same data and only the communication differs.

  ddp_train.py --policy P [--bucket-mb MB] [--steps N] [--warmup W] [--seed S]
               [--acc-streams K] [--acc-compress none|fp16|bf16] [--profile FILE]

P: gloo (DDP over gloo, as shipped), gloo-fp16 (DDP over gloo with PyTorch's
fp16_compress_hook), acc (DDP with acc's communication hook, python/acc/ddp.py: DDP's buckets
of --bucket-mb, each reduced on the next of K acc streams, compressed or not),
or profile (no communication: every rank computes under DDP's no_sync, and rank 0 writes the
model's gradients, in the order and at the moments the backward pass produces them, as an acc
model profile to FILE, with the step's measured time as its compute).

Rank 0 prints one JSON line: the policy, the median step time after the warm-up steps (ms),
every step's time, the loss after training (every rank's on its batch, averaged), and the
settings.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

WIDTH, IN, OUT, DEPTH, BATCH = 4096, 1024, 1024, 4, 8


def make_model(seed):
    torch.manual_seed(seed)
    layers = [nn.Linear(IN, WIDTH), nn.ReLU()]
    for _ in range(DEPTH - 1):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    layers.append(nn.Linear(WIDTH, OUT))
    return nn.Sequential(*layers)


def teacher(seed):
    g = torch.Generator().manual_seed(seed + 7)
    return torch.randn(IN, OUT, generator=g) / IN ** 0.5


def batch(seed, rank, step, w):
    g = torch.Generator().manual_seed(seed * 1000003 + rank * 7919 + step)
    x = torch.randn(BATCH, IN, generator=g)
    return x, x @ w + 0.01 * torch.randn(BATCH, OUT, generator=g)


def write_profile(path, model, order, moments, step_ms, backward_ms):
    """acc's model profile (tuner/models/README.md): tensors in the order their gradients became
    final, each with its moment as a fraction of the backward pass."""
    names = {id(p): n for n, p in model.named_parameters()}
    params = {id(p): p for p in model.parameters()}
    lines = ["# acc model profile; the format is described in tuner/models/README.md",
             "version: 1", "name: wide-mlp",
             'description: "A wide MLP, 1024 -> 4 x 4096 -> 1024, ReLU, measured by '
             'bench/cluster/ddp_train.py on this machine\'s CPU"',
             "sample: one 1024-float vector", "sources:",
             '  - "bench/cluster/ddp_train.py --policy profile"',
             "parameters: %d" % sum(p.numel() for p in model.parameters()),
             "forward_flops: 0", "compute:",
             # The format keys compute by GPU: the emulated cluster's topology names an H100.
             "  - gpu: H100 SXM5 80GB", "    precision: fp32", "    batch: %d" % BATCH,
             "    iteration_ms: %.3f" % step_ms,
             "    forward_ms: %.3f" % max(0.001, min(step_ms - backward_ms, step_ms * 0.99)),
             '    source: "measured on this machine\'s CPU, every rank computing at once"',
             "tensors:"]
    t0 = moments[0] if moments else 0
    span = max(1e-9, backward_ms / 1e3)
    last = 0.0
    for pid, t in zip(order, moments):
        ready = min(1.0, max(last, (t - t0) / span))
        last = ready
        lines.append("  - {name: %s, elems: %d, dtype: float, ready: %.6f}" %
                     (names[pid], params[pid].numel(), ready))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--policy", required=True, choices=["gloo", "gloo-fp16", "acc", "profile"])
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--acc-streams", type=int, default=1)
    p.add_argument("--acc-compress", default="none", choices=["none", "fp16", "bf16"])
    p.add_argument("--profile", default="")
    a = p.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    model = make_model(a.seed)
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=a.bucket_mb)
    state = None
    if a.policy == "gloo-fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif a.policy == "acc":
        import acc
        import acc.ddp
        # DDP makes the buckets (bucket_cap_mb); acc reduces each on its streams, compressed
        # as configured.
        c = acc.config(fusion_bytes=int(a.bucket_mb * (1 << 20)), streams=a.acc_streams,
                       compression=a.acc_compress)
        state = acc.ddp.register(ddp, config=c, topo=os.environ.get("ACC_TOPO"),
                                 db=os.environ.get("ACC_DB"))
    opt = torch.optim.Adam(ddp.parameters(), lr=a.lr)
    w = teacher(a.seed)
    order, moments = [], []
    def record(t):
        order.append(id(t))
        moments.append(time.perf_counter())

    if a.policy == "profile" and rank == 0:
        for prm in model.parameters():
            prm.register_post_accumulate_grad_hook(record)
    times, backward = [], []
    x, y = batch(a.seed, rank, 0, w)
    for step in range(a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        order.clear()
        moments.clear()
        if a.policy == "profile":
            with ddp.no_sync():
                loss = nn.functional.mse_loss(ddp(x), y)
                tb = time.perf_counter()
                loss.backward()
                backward.append((time.perf_counter() - tb) * 1e3)
        else:
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    if a.policy == "profile":
        # every rank's last step time, the slowest
        t = torch.tensor([sorted(times[a.warmup:])[len(times[a.warmup:]) // 2],
                          sorted(backward[a.warmup:])[len(backward[a.warmup:]) // 2]])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if rank == 0:
            write_profile(a.profile, model, order, moments, float(t[0]), float(t[1]))
    with torch.no_grad():
        final = torch.tensor([float(nn.functional.mse_loss(model(x), y))])
    dist.all_reduce(final)
    eval_loss = float(final[0]) / size
    if state is not None:
        info = state.engine.info()
        state.close()
    else:
        info = None
    dist.barrier()
    if rank == 0:
        body = times[a.warmup:]
        print(json.dumps({"policy": a.policy, "bucket_mb": a.bucket_mb, "ranks": size,
                          "step_ms": sorted(body)[len(body) // 2], "steps_ms": times,
                          "eval_loss": eval_loss, "acc": info,
                          "params": sum(p.numel() for p in model.parameters())}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
