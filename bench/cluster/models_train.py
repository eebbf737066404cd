#!/usr/bin/env python3
"""One rank of a real model's training under torchrun (bench/cluster/models.py starts it across
the emulated cluster), the same seed, weights and data for every policy:

  --model resnet50     ResNet-50 (25.6 M parameters; torchvision's architecture, written here in
                       plain PyTorch: bottleneck blocks of 3, 4, 6, 3), 64x64 images, batch 4
  --model gpt2         a GPT-2-small-sized transformer (12 layers, 768 wide, 12 heads, a
                       50257-token vocabulary tied to the output, 124 M parameters; plain
                       PyTorch, pre-norm, causal), 128 tokens, batch 2
  --parallel ddp|fsdp2 DistributedDataParallel, or FSDP2's fully_shard on every block then the
                       model

  --policy gloo        the process group gloo's (DDP's 25 MiB buckets unless --bucket-mb)
  --policy gloo-fp16   DDP over gloo with PyTorch's fp16_compress_hook
  --policy acc         the process group acc's (init_process_group("cpu:acc")): acc's defaults,
                       or, where the job names its model (ACC_MODEL, ACC_DB, ACC_TOPO), the
                       fusion size, streams and compression stored for it (acc tuned)
  --policy acc-record  DDP over gloo with acc's hook recording the model's gradient timeline
                       into ACC_DB as the profile of ACC_MODEL (for online tuning's replay)

Rank 0 prints one JSON line: the settings, the median step time after the warm-up steps (ms),
every step's time and the loss of every step (the mean over the ranks, summed on a gloo group of
its own, so that a compressing policy does not round it), and acc's gradient configuration.  SGD with momentum, so
that memory stays near the parameters' four copies.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(inplace=True), nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                   nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return F.relu(self.body(x) + self.skip(x))


def resnet50(classes=1000):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        for e in (self.tok, self.pos):  # GPT-2's initialisation: logits start near uniform
            nn.init.normal_(e.weight, std=0.02)

    def forward(self, idx):
        t = idx.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), 1)
        x = self.tok(idx) + self.pos(torch.arange(t))
        for b in self.blocks:
            x = b(x, mask)
        return self.ln(x) @ self.tok.weight.t()


MODELS = {
    # name: (constructor, one batch from a generator, the loss of a batch, samples per batch)
    "resnet50": (resnet50,
                 lambda g: (torch.randn(4, 3, 64, 64, generator=g),
                            torch.randint(0, 1000, (4,), generator=g)),
                 lambda m, b: F.cross_entropy(m(b[0]), b[1]), 4),
    "gpt2": (GPT,
             lambda g: torch.randint(0, 50257, (2, 129), generator=g),
             lambda m, b: F.cross_entropy(m(b[:, :-1]).flatten(0, 1), b[:, 1:].flatten()), 2),
}


def wrap(model, parallel, policy, bucket_mb, group, batch):
    if parallel == "fsdp2":
        from torch.distributed.device_mesh import DeviceMesh
        from torch.distributed.fsdp import fully_shard
        mesh = DeviceMesh.from_group(group, "cpu")
        blocks = model.blocks if hasattr(model, "blocks") else [
            m for m in model if isinstance(m, Bottleneck)]
        for b in blocks:
            fully_shard(b, mesh=mesh)
        return fully_shard(model, mesh=mesh)
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket_mb, process_group=group)
    if policy == "gloo-fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(group, default_hooks.fp16_compress_hook)
    elif policy == "acc-record":
        import acc.ddp
        ddp.acc_state = acc.ddp.register(ddp, process_group=group, record=True,
                                         model=os.environ["ACC_MODEL"],
                                         topo=os.environ.get("ACC_TOPO"),
                                         db=os.environ.get("ACC_DB"), batch=batch)
    return ddp


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True, choices=sorted(MODELS))
    p.add_argument("--parallel", default="ddp", choices=["ddp", "fsdp2"])
    p.add_argument("--policy", required=True,
                   choices=["gloo", "gloo-fp16", "acc", "acc-record"])
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--seed", type=int, default=1234)
    a = p.parse_args()
    if a.policy == "acc":
        import acc.torch  # noqa: F401  (registers the backend)
        dist.init_process_group("cpu:acc")
    else:
        dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    side = dist.new_group(backend="gloo")  # the loss's sum, exact under every policy
    make, data, loss_of, batch = MODELS[a.model]
    torch.manual_seed(a.seed)
    model = wrap(make(), a.parallel, a.policy, a.bucket_mb, dist.group.WORLD, batch)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    g = torch.Generator().manual_seed(a.seed * 1000003 + rank)
    times, losses = [], []
    for _ in range(a.warmup + a.steps):
        b = data(g)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_of(model, b)
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
        mean = loss.detach().reshape(1).clone()
        dist.all_reduce(mean, group=side)
        losses.append(mean.item() / n)
    if hasattr(model, "acc_state"):
        model.acc_state.close()  # the recording is stored by now
    gradients = None
    if a.policy == "acc":
        import acc.torch
        gradients = acc.torch.gradient_settings()
    if rank == 0:
        measured = sorted(times[a.warmup:])
        print(json.dumps({"model": a.model, "parallel": a.parallel, "policy": a.policy,
                          "bucket_mb": a.bucket_mb, "ranks": n,
                          "params": sum(p.numel() for p in model.parameters()),
                          "step_ms": measured[len(measured) // 2], "steps_ms": times,
                          "losses": losses, "finite": all(math.isfinite(x) for x in losses),
                          "acc_gradients": gradients and gradients["text"]}),
              flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
