"""The c10d backend "acc" (ctests python.torch_backend_2 and _4): N ranks (spawned processes)
join init_process_group("cpu:acc") and run every collective PyTorch offers, each against a
reference every rank computes from the inputs it knows all ranks give:

- all_reduce with SUM, AVG, PRODUCT, MIN and MAX on float32, float64, bfloat16, int32 (acc's
  own reductions) and int64 (the exact one built on all-gather), synchronous and as an
  asynchronous work object with its future;
- all_gather (list and into one tensor), reduce_scatter (list and tensor), broadcast and
  reduce from every root, barrier;
- all_to_all_single (equal and uneven splits), all_to_all, gather and scatter, which acc builds
  on its own collectives;
- all_reduce on new_group subgroups (tensor-parallel pairs of ranks);
- what acc does not do raises at once, naming it: ReduceOp.BAND, send.

    test_torch_backend.py NRANKS      (environment: ACC_LIBRARY, PYTHONPATH; CMake sets them)

Exit status 77 (skipped) with a notice when this interpreter has no PyTorch."""
import sys

import torch_ranks

FLOAT_RTOL = {"float32": 1e-6, "float64": 1e-12, "bfloat16": 1e-2}


def value(rank, n, dtype, op):
    """Rank's input: small values, so that products of 4 ranks stay exact in every type."""
    import torch
    base = torch.tensor([1, 2, 3, -1, 2, 1, 3], dtype=torch.float64)
    v = (base + rank) if op != "PRODUCT" else (base.abs() % 2 + 1 + (rank % 2))
    return v.to(getattr(torch, dtype))


def reference(parts, op):
    import torch
    s = torch.stack([p.double() for p in parts])
    return {"SUM": s.sum(0), "AVG": s.mean(0), "PRODUCT": s.prod(0), "MIN": s.min(0).values,
            "MAX": s.max(0).values}[op]


def ranks(rank, n, failures):
    import torch
    import torch.distributed as dist
    import acc.torch  # noqa: F401  (registers the backend)

    def check(what, got, want, rtol=0.0):
        got, want = got.double(), want.double()
        err = (got - want).abs().max().item() if got.numel() else 0.0
        if got.shape != want.shape or err > rtol * max(1.0, want.abs().max().item()):
            failures.append("rank %d: %s gave %s, want %s" % (rank, what, got.tolist(),
                                                              want.tolist()))

    dist.init_process_group("cpu:acc", rank=rank, world_size=n)
    if dist.get_backend() != "cpu:acc":
        failures.append("the group's backend is %r, not 'cpu:acc'" % dist.get_backend())

    for dtype in ("float32", "float64", "bfloat16", "int32", "int64"):
        for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
            if op == "AVG" and dtype in ("int32", "int64"):
                continue  # an integer average truncates; the float types cover AVG
            t = value(rank, n, dtype, op)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            want = reference([value(r, n, dtype, op) for r in range(n)], op)
            check("all_reduce %s %s" % (dtype, op), t, want, FLOAT_RTOL.get(dtype, 0.0))

    # An asynchronous work object: its future holds the tensors.
    t = torch.full((1000,), float(rank + 1))
    work = dist.all_reduce(t, async_op=True)
    value_ = work.get_future().wait()
    work.wait()
    if not work.get_future().done():
        failures.append("rank %d: the work's future is not done after wait()" % rank)
    check("async all_reduce", value_[0], torch.full((1000,), n * (n + 1) / 2.0))

    mine = torch.arange(5, dtype=torch.float32) + 10 * rank
    outs = [torch.empty(5) for _ in range(n)]
    dist.all_gather(outs, mine)
    for r in range(n):
        check("all_gather part %d" % r, outs[r], torch.arange(5.0) + 10 * r)
    whole = torch.empty(n * 5, dtype=torch.int64)
    dist.all_gather_into_tensor(whole, mine.to(torch.int64))
    check("all_gather_into_tensor", whole,
          torch.cat([torch.arange(5) + 10 * r for r in range(n)]))

    def contribution(r):  # rank r's input to reduce_scatter: n parts of 3
        return torch.arange(3.0 * n) * (r + 1)
    want = sum(contribution(r) for r in range(n)).view(n, 3)[rank]
    out = torch.empty(3)
    dist.reduce_scatter(out, list(contribution(rank).chunk(n)))
    check("reduce_scatter (list)", out, want)
    out = torch.empty(3)
    dist.reduce_scatter_tensor(out, contribution(rank))
    check("reduce_scatter_tensor", out, want)

    for root in range(n):
        b = torch.tensor([rank, root, 7], dtype=torch.uint8)  # a type acc only moves
        dist.broadcast(b, src=root)
        check("broadcast from %d" % root, b, torch.tensor([root, root, 7]))
        t = torch.tensor([float(rank), 1.0])
        dist.reduce(t, dst=root, op=dist.ReduceOp.MAX)
        if rank == root:
            check("reduce MAX to %d" % root, t, torch.tensor([n - 1.0, 1.0]))
    dist.barrier()

    # all_to_all_single, equal splits: rank r sends element d*? to rank d.
    inp = torch.arange(2.0 * n) + 100 * rank
    out = torch.empty(2 * n)
    dist.all_to_all_single(out, inp)
    check("all_to_all_single", out,
          torch.cat([torch.arange(2.0 * rank, 2.0 * rank + 2) + 100 * s for s in range(n)]))
    # Uneven: rank r sends d+1 rows of 2 to rank d.
    splits_in = [d + 1 for d in range(n)]
    inp = torch.cat([torch.full((d + 1, 2), float(10 * rank + d)) for d in range(n)])
    out = torch.empty(n * (rank + 1), 2)
    dist.all_to_all_single(out, inp, output_split_sizes=[rank + 1] * n,
                           input_split_sizes=splits_in)
    check("all_to_all_single uneven", out,
          torch.cat([torch.full((rank + 1, 2), float(10 * s + rank)) for s in range(n)]))
    outs = [torch.empty(d + 1, dtype=torch.int64) for d in range(n)]
    dist.all_to_all(outs, [torch.full((rank + 1,), 10 * rank + d) for d in range(n)])
    for s in range(n):
        check("all_to_all from %d" % s, outs[s], torch.full((s + 1,), 10 * s + rank))

    root = n - 1
    gl = [torch.empty(2) for _ in range(n)] if rank == root else None
    dist.gather(torch.full((2,), float(rank)), gather_list=gl, dst=root)
    if rank == root:
        for r in range(n):
            check("gather part %d" % r, gl[r], torch.full((2,), float(r)))
    out = torch.empty(3, dtype=torch.float64)
    sl = [torch.full((3,), r * 1.5, dtype=torch.float64) for r in range(n)] if rank == 0 else None
    dist.scatter(out, scatter_list=sl, src=0)
    check("scatter", out, torch.full((3,), rank * 1.5))

    # Tensor-parallel pairs: subgroups of 2 ranks (every rank makes every group, in order).
    pairs = [dist.new_group([p, p + 1]) for p in range(0, n - 1, 2)]
    g = pairs[rank // 2] if rank // 2 < len(pairs) else None
    if g is not None:
        t = torch.full((4,), float(rank))
        dist.all_reduce(t, group=g)
        base = rank - rank % 2
        check("all_reduce on the subgroup %s" % [base, base + 1], t,
              torch.full((4,), 2.0 * base + 1))

    # What acc does not do: a clear error at the call, naming it.
    for what, call, name in (
            ("all_reduce with BAND", lambda: dist.all_reduce(torch.ones(2, dtype=torch.int32),
                                                             op=dist.ReduceOp.BAND), "BAND"),
            ("send", lambda: dist.send(torch.ones(1), dst=(rank + 1) % n), "send")):
        try:
            call()
            failures.append("rank %d: %s did not raise" % (rank, what))
        except (ValueError, RuntimeError) as e:
            if name not in str(e) or "acc" not in str(e):
                failures.append("rank %d: %s raised %r, which names neither acc nor %s"
                                % (rank, what, e, name))
    dist.destroy_process_group()


def worker(rank, n):
    failures = []
    ranks(rank, n, failures)
    return failures


def main():
    torch_ranks.need_torch()
    n = int(sys.argv[1])
    results = torch_ranks.run(worker, n, timeout=240)
    failures = [f for r in range(n) for f in results[r]]
    for f in failures:
        print("FAILED: " + f)
    print("%d ranks: every collective %s" % (n, "agrees with the reference" if not failures
                                              else "checked; %d failures" % len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
