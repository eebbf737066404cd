"""acc's DDP communication hook on GPUs (ctest python.ddp_hook, label gpu): two processes
train a small model with DistributedDataParallel and the hook (fp16 compression on two of
acc's streams) and with DDP's own allreduce, from the same weights on the same data; the
gradients agree within fp16's rounding.  Exit status 77 (skipped) without PyTorch, without two
GPUs, or with a libacc built without the cuda backend, saying which."""
import os
import sys

SKIP = 77


def skip(why):
    print("skipped: " + why)
    sys.exit(SKIP)


def worker(rank, port, results):
    import torch
    import torch.distributed as dist
    import acc
    import acc.ddp
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    dist.init_process_group("nccl", rank=rank, world_size=2)
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    grads = []
    for use_acc in (False, True):
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 10)).cuda()
        torch.manual_seed(1)
        for p in model.parameters():
            torch.nn.init.normal_(p)
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank],
                                                        bucket_cap_mb=1)
        state = None
        if use_acc:
            state = acc.ddp.register(ddp, config=acc.config(fusion_bytes=1 << 20, streams=2,
                                                            compression="fp16"))
        torch.manual_seed(2 + rank)
        x = torch.randn(64, 256, device="cuda")
        ddp(x).square().mean().backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
        if state:
            state.close()
    err = (grads[1] - grads[0]).abs().max().item()
    scale = grads[0].abs().max().item()
    results.put((rank, err <= 4 * 2.0 ** -11 * scale, err, scale))
    dist.destroy_process_group()


def main():
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        skip("PyTorch is not installed")
    if torch.cuda.device_count() < 2:
        skip("fewer than two GPUs")
    import acc
    try:
        acc.Communicator(1, 0, acc.unique_id(), backend="cuda").close()
    except acc.AccError as e:
        skip("this libacc has no cuda backend (%s)" % e)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, 29511, results)) for r in range(2)]
    for p in procs:
        p.start()
    got = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
    for rank, ok, err, scale in got:
        print("rank %d: largest difference %.3g of gradients up to %.3g" % (rank, err, scale))
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()
