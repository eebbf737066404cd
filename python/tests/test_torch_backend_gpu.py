"""The c10d backend "acc" on CUDA tensors (ctest python.torch_backend_gpu, label gpu): two
ranks (spawned processes, one GPU each, or both on the one GPU a machine has) join
init_process_group("cpu:acc,cuda:acc"); CUDA tensors run on acc's cuda backend on the caller's
current stream, CPU tensors on the host backend, in the same group.  Checked against references
every rank computes: all_reduce (SUM, AVG, MAX on float32, bfloat16), all_gather_into_tensor,
reduce_scatter_tensor, broadcast, all_to_all_single, and a CPU all_reduce between them.

Exit status 77 (skipped) without PyTorch or without a CUDA device, saying which."""
import sys

import torch_ranks


def worker(rank, n):
    import torch
    import torch.distributed as dist
    import acc.torch  # noqa: F401
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("cpu:acc,cuda:acc", rank=rank, world_size=n)
    failures = []

    def check(what, got, want, rtol=1e-6):
        got, want = got.double().cpu(), want.double().cpu()
        if got.shape != want.shape or not torch.allclose(got, want, rtol=rtol, atol=rtol):
            failures.append("rank %d: %s gave %s, want %s" % (rank, what, got.tolist()[:8],
                                                              want.tolist()[:8]))
    dev = torch.device("cuda")
    for dtype, rtol in ((torch.float32, 1e-6), (torch.bfloat16, 1e-2)):
        for op in ("SUM", "AVG", "MAX"):
            t = (torch.arange(1000, device=dev) % 7 + rank).to(dtype)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            parts = torch.stack([(torch.arange(1000) % 7 + r).double() for r in range(n)])
            want = {"SUM": parts.sum(0), "AVG": parts.mean(0), "MAX": parts.max(0).values}[op]
            check("cuda all_reduce %s %s" % (dtype, op), t, want, rtol)
    whole = torch.empty(n * 3, device=dev)
    dist.all_gather_into_tensor(whole, torch.full((3,), float(rank), device=dev))
    check("cuda all_gather_into_tensor", whole,
          torch.cat([torch.full((3,), float(r)) for r in range(n)]))
    out = torch.empty(3, device=dev)
    dist.reduce_scatter_tensor(out, torch.arange(3.0 * n, device=dev))
    check("cuda reduce_scatter_tensor", out, n * torch.arange(3.0 * rank, 3.0 * rank + 3))
    b = torch.full((5,), float(rank), device=dev)
    dist.broadcast(b, src=n - 1)
    check("cuda broadcast", b, torch.full((5,), n - 1.0))
    o = torch.empty(n, device=dev)
    dist.all_to_all_single(o, torch.arange(float(n), device=dev) + 10 * rank)
    check("cuda all_to_all_single", o, torch.tensor([10.0 * s + rank for s in range(n)]))
    c = torch.ones(4)
    dist.all_reduce(c)
    check("cpu all_reduce in the same group", c, torch.full((4,), float(n)))
    torch.cuda.synchronize()
    dist.destroy_process_group()
    return failures


def main():
    torch_ranks.need_torch()
    import torch
    if not torch.cuda.is_available():
        torch_ranks.skip("no CUDA device")
    results = torch_ranks.run(worker, 2, timeout=300)
    failures = results[0] + results[1]
    for f in failures:
        print("FAILED: " + f)
    print("cuda backend, 2 ranks: %s" % ("every collective agrees" if not failures else
                                         "%d failures" % len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
