"""Training over the c10d backend "acc" equals training over gloo (ctests
python.torch_train_2 and _4).  N ranks (spawned processes) join init_process_group("cpu:acc")
and make a gloo group of the same ranks beside it; from the same weights and data:

- DistributedDataParallel without a hook, its process group acc's, against gloo's;
- FSDP2 (fully_shard) on a device mesh of acc's group, against one of gloo's group (FSDP2's
  all-gather of parameters and reduce-scatter of gradients);
- at 2 ranks, a function compiled by torch.compile (inductor) that all-reduces with PyTorch's
  functional collectives (torch.distributed._functional_collectives) on acc's group, against
  eager gloo (compiling takes most of a minute on a small machine, so only once).

The parameters after STEPS steps agree within float tolerance (the backends sum in different
orders: relative 1e-5 of the largest parameter), and are the same on every rank.

    test_torch_train.py NRANKS       (environment: ACC_LIBRARY, PYTHONPATH; CMake sets them)

Exit status 77 (skipped) with a notice when this interpreter has no PyTorch."""
import sys

import torch_ranks

STEPS = 5
RTOL = 1e-5


def make_model():
    import torch
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))


def batches(rank):
    import torch
    g = torch.Generator().manual_seed(100 + rank)
    return [(torch.randn(16, 32, generator=g), torch.randint(0, 4, (16,), generator=g))
            for _ in range(STEPS)]


def train(model, rank):
    import torch
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches(rank):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def flat(params):
    import torch
    return torch.cat([p.detach().reshape(-1) for p in params])


def ddp(group):
    import torch
    model = torch.nn.parallel.DistributedDataParallel(make_model(), process_group=group,
                                                      bucket_cap_mb=0.01)
    train(model, torch_ranks_rank())
    return flat(model.parameters())


def fsdp(group):
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard
    mesh = DeviceMesh.from_group(group, "cpu")
    model = make_model()
    for layer in model:
        if list(layer.parameters()):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    train(model, torch_ranks_rank())
    return flat(p.full_tensor() for p in model.parameters())


def compiled(group, compile_):
    import torch
    import torch.distributed._functional_collectives as funcol

    def step(x):
        return funcol.all_reduce(torch.relu(x) * 2, "sum", group) + 1
    fn = torch.compile(step, fullgraph=True) if compile_ else step
    return fn(torch.arange(-8.0, 8.0) * (torch_ranks_rank() + 1))


_rank = [0]


def torch_ranks_rank():
    return _rank[0]


def worker(rank, n):
    import torch
    import torch.distributed as dist
    import acc.torch  # noqa: F401  (registers the backend)
    _rank[0] = rank
    dist.init_process_group("cpu:acc", rank=rank, world_size=n)
    gloo = dist.new_group(backend="gloo")
    world = dist.group.WORLD
    out = {}
    for what, run in (("DDP", lambda g: ddp(g)), ("FSDP2", lambda g: fsdp(g))):
        out[what] = (run(world).tolist(), run(gloo).tolist())
    if n == 2:
        out["compiled functional all_reduce"] = (compiled(world, True).tolist(),
                                                 compiled(gloo, False).tolist())
    # The same parameters on every rank: gathered by gloo, compared by rank 0.
    mine = torch.tensor(out["DDP"][0] + out["FSDP2"][0])
    every = [torch.empty_like(mine) for _ in range(n)]
    dist.all_gather(every, mine, group=gloo)
    out["same_on_every_rank"] = all(torch.equal(e, every[0]) for e in every)
    dist.destroy_process_group()
    return out


def main():
    torch_ranks.need_torch()
    n = int(sys.argv[1])
    results = torch_ranks.run(worker, n, timeout=600)
    failures = []
    r0 = results[0]
    print("%d ranks, CPU: acc against gloo" % n)
    for what in ("DDP", "FSDP2", "compiled functional all_reduce"):
        if what not in r0:
            continue
        got, want = r0[what]
        scale = max(1.0, max(abs(v) for v in want))
        diff = max(abs(a - b) for a, b in zip(got, want)) if len(got) == len(want) else None
        print("  %-32s %6d values, max |acc - gloo| %s" % (what, len(want),
                                                           "n/a" if diff is None else
                                                           "%.3g" % diff))
        if diff is None or diff > RTOL * scale:
            failures.append("%s: acc gave %s values differing from gloo's by %s (tolerance "
                            "%g)" % (what, len(got), diff, RTOL * scale))
    if not r0["same_on_every_rank"]:
        failures.append("the ranks ended with different parameters")
    torch_ranks.finish(failures)


if __name__ == "__main__":
    main()
