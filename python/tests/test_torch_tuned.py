"""A job's stored gradient settings through the c10d backend "acc" (ctest python.torch_tuned):
plain DistributedDataParallel, no hook, gets the fusion size, streams and compression the job's
settings or its stored optimum give (acc/torch/gradients.py), as acc's DDP hook would.

Two ranks; each case a group of its own, made after rank 0's environment says what it wants:
- no opt-in: no fusion engine, every allreduce exact;
- ACC_FUSION_BYTES=64K, ACC_STREAMS=2, ACC_COMPRESSION=fp16: the group's engine says so, a
  float32 sum travels as fp16 (1 + 2^-20 on each rank sums to 2, not 2 + 2^-19), an int32 sum
  stays exact, and DDP trains as gloo with PyTorch's fp16 compression hook does, within fp16's
  rounding;
- ACC_MODEL=resnet50 and a database holding its measured optimum on this topology (128K, three
  streams, bf16): the group's engine starts from it, a float32 sum travels as bf16, and DDP
  trains as gloo with PyTorch's bf16 hook does.

    test_torch_tuned.py        (environment: ACC_LIBRARY, PYTHONPATH; CMake sets them)

Exit status 77 (skipped) with a notice when this interpreter has no PyTorch."""
import os
import tempfile

import torch_ranks

NRANKS = 2
STEPS = 4
OPT_IN = ("ACC_MODEL", "ACC_FUSION_BYTES", "ACC_STREAMS", "ACC_COMPRESSION", "ACC_DB")


def make_model():
    import torch
    torch.manual_seed(3)
    # 256 x 256 weights: DDP buckets larger than the 64K and 128K fusion sizes, cut in pieces.
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 8))


def train(group, rank, hook=None):
    import torch
    model = torch.nn.parallel.DistributedDataParallel(make_model(), process_group=group,
                                                      bucket_cap_mb=0.5)
    if hook is not None:
        model.register_comm_hook(group, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(50 + rank)
    for _ in range(STEPS):
        x, y = torch.randn(32, 64, generator=g), torch.randint(0, 8, (32,), generator=g)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def sums(group, step):
    """A float32 sum of 1 + step on every rank, and an int32 sum of 2^24 + 1 on every rank."""
    import torch
    import torch.distributed as dist
    f = torch.full((1000,), 1.0 + step, dtype=torch.float32)
    i = torch.full((10,), (1 << 24) + 1, dtype=torch.int32)
    dist.all_reduce(f, group=group)
    dist.all_reduce(i, group=group)
    return f.unique().tolist(), i.unique().tolist()


def case(rank, env, step, hook):
    """A group made under env (rank 0's decides), its sums, its engine's configuration, and DDP
    trained over it beside gloo with hook."""
    import torch.distributed as dist
    import acc.torch
    for k in OPT_IN:
        os.environ.pop(k, None)
    os.environ.update(env)
    group = dist.new_group(backend="acc")
    out = {"sums": sums(group, step)}
    out["config"] = acc.torch.gradient_settings(group)
    gloo = dist.new_group(backend="gloo")
    got, want = train(group, rank), train(gloo, rank, hook)
    out["max_diff"] = float((got - want).abs().max())
    out["scale"] = float(want.abs().max())
    return out


def worker(rank, n, db):
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    import acc.torch  # noqa: F401  (registers the backend)
    os.environ.update(ACC_TOPO="gpus=%d" % n, ACC_TIMEOUT_MS="60000")
    dist.init_process_group("gloo", rank=rank, world_size=n)
    out = {
        "none": case(rank, {}, 2.0 ** -20, None),
        "settings": case(rank, {"ACC_FUSION_BYTES": "64K", "ACC_STREAMS": "2",
                                "ACC_COMPRESSION": "fp16"}, 2.0 ** -20,
                         default_hooks.fp16_compress_hook),
        "stored": case(rank, {"ACC_MODEL": "resnet50", "ACC_DB": db}, 2.0 ** -9,
                       default_hooks.bf16_compress_hook),
    }
    dist.destroy_process_group()
    return out


def check(name, r, want_config, want_float, tolerance, failures):
    floats, ints = r["sums"]
    print("  %-9s config %s; float32 sum %s, int32 sum %s; DDP against gloo: max |diff| %.3g "
          "of %.3g" % (name, None if r["config"] is None else r["config"]["text"] + " (" +
                       r["config"]["source"] + ")", floats, ints, r["max_diff"], r["scale"]))
    if want_config is None:
        if r["config"] is not None:
            failures.append("%s: a group that did not opt in runs on a fusion engine (%s)"
                            % (name, r["config"]["text"]))
    else:
        got = {k: r["config"][k] for k in want_config} if r["config"] else None
        if got != want_config:
            failures.append("%s: the group's engine runs with %s, not %s" % (name, got,
                                                                            want_config))
    if floats != [want_float]:
        failures.append("%s: the float32 sum is %s, not %r" % (name, floats, want_float))
    if ints != [2 * ((1 << 24) + 1)]:
        failures.append("%s: the int32 sum is %s, not exact" % (name, ints))
    if r["max_diff"] > tolerance * max(1.0, r["scale"]):
        failures.append("%s: DDP over acc differs from gloo by %.3g (tolerance %.3g)"
                        % (name, r["max_diff"], tolerance * max(1.0, r["scale"])))


def main():
    torch_ranks.need_torch()
    import acc_db_util
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "acc.db")
        acc_db_util.create(db)
        acc_db_util.store(db, "gpus=%d" % NRANKS, 1, 128 << 10, 3, "bf16")
        results = torch_ranks.run(worker, NRANKS, args=(db,), timeout=600)
    failures = []
    print("%d ranks, CPU: plain DDP over acc's backend with the job's gradient settings" % NRANKS)
    r0 = results[0]
    check("none", r0["none"], None, 2.0 + 2.0 ** -19, 1e-5, failures)
    check("settings", r0["settings"], {"fusion_bytes": 64 << 10, "streams": 2,
                                       "compression": "fp16", "source": "settings"},
          2.0, 1e-3, failures)
    check("stored", r0["stored"], {"fusion_bytes": 128 << 10, "streams": 3,
                                   "compression": "bf16", "source": "measured optimum"},
          2.0, 1e-2, failures)
    for r in results:
        for name in ("none", "settings", "stored"):
            mine, first = results[r][name], r0[name]
            if mine["sums"] != first["sums"] or (mine["config"] or {}).get("text") != \
                    (first["config"] or {}).get("text"):
                failures.append("%s: rank %d's sums or configuration differ from rank 0's"
                                % (name, r))
    torch_ranks.finish(failures)


if __name__ == "__main__":
    main()
