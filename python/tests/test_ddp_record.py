"""A PyTorch CPU job records its own model and acc-tune tunes it (ctest python.ddp_record, run by
the interpreter the CMake cache variable ACC_TORCH_PYTHON names): two processes
(torch.multiprocessing, gloo) train a small model with DistributedDataParallel and acc's DDP
hook on acc's host backend, recording (record=True); rank 0 stores the recording of "ddp-mlp"
for the GPU of the topology the CPU stands in for (gpus=2: H100s).  acc-tune finds it, shows
where it came from and tunes it; the next job of the model starts from that optimum.

    test_ddp_record.py ACC_TUNE_EXE

Exit status 77 (skipped) without PyTorch, saying so."""
import os
import socket
import subprocess
import sys
import tempfile

SKIP = 77
MODEL = "ddp-mlp"
ITERS = 8  # two of warm-up (DDP rebuilds its buckets after the first), five recorded, one more


def skip(why):
    print("skipped: " + why)
    sys.exit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, db, record, results):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    import acc.ddp
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    # 3 MiB of fp32 gradients in 1 MiB buckets: DDP hands the hook a few per iteration.
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1)
    state = acc.ddp.register(ddp, backend="host", topo="gpus=2", db=db, model=MODEL,
                             record=record, batch=64, precision="fp32")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(1 + rank)
    for _ in range(ITERS):
        x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    info = state.engine.info()
    state.close()  # waits for rank 0's thread storing the recording
    results.put((rank, info))
    dist.destroy_process_group()


def job(db, record):
    """Run the two ranks; rank 0's engine information."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, port, db, record, results)) for r in range(2)]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=240) for _ in procs)
    for p in procs:
        p.join(60)
        if p.exitcode != 0:
            sys.exit("a rank failed with exit status %s" % p.exitcode)
    return got[0]


def acc_tune(exe, *args):
    out = subprocess.run([exe] + list(args), capture_output=True, text=True)
    print("$ acc-tune %s\n%s%s" % (" ".join(args), out.stdout, out.stderr))
    if out.returncode != 0:
        sys.exit("acc-tune exited with %d" % out.returncode)
    return out.stdout


def check(cond, what):
    if not cond:
        sys.exit("failed: " + what)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_ddp_record.py ACC_TUNE_EXE")
    exe = sys.argv[1]
    try:
        import torch  # noqa: F401
    except ImportError:
        skip("PyTorch is not installed for %s" % sys.executable)
    os.environ["ACC_LOG_LEVEL"] = "error"
    for k in ("ACC_MODEL", "ACC_RECORD", "ACC_DB", "ACC_FUSION_BYTES", "ACC_STREAMS",
              "ACC_COMPRESSION", "ACC_TUNE_ONLINE"):
        os.environ.pop(k, None)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "acc.db")
        # 1. The job records itself.
        info = job(db, True)
        print("recording job: %s" % info)
        check(info["recording"] == "recorded", "rank 0 recorded the job")
        check(info["source"] == "default", "nothing was stored for the model yet")
        # 2. acc-tune finds the recording and tunes it.
        out = acc_tune(exe, "show", "--db", db)
        check("recorded by jobs (1)" in out, "show lists the recording")
        check("\n%s" % MODEL in out and "sm_90" in out and "CPU (host backend)" in out,
              "show says where it was recorded")
        check("batch 64" in out, "show gives the batch")
        text = acc_tune(exe, "profile", "export", MODEL, "--db", db)
        check("name: buffer0, " in text or "{name: buffer0," in text, "buckets are the tensors")
        check("precision: fp32" in text, "the precision given")
        out = acc_tune(exe, "--model", MODEL, "--topo", "gpus=2", "--nccl-only", "--quiet",
                       "--db", db)
        check("optimum (grid)" in out, "acc-tune tuned the recording")
        out = acc_tune(exe, "show", "--db", db, "--model", MODEL)
        check("recorded on " in out and "optima (1)" in out, "the tuned profile says it was recorded")
        # 3. The next job of the model starts from the optimum acc-tune stored.
        info = job(db, False)
        print("next job: %s" % info)
        check(info["started_from"] == "simulated optimum", "the next job starts from the optimum")
        check(info["model"] == MODEL and info["recording"] == "off", "the next job's key")
    print("ok: the CPU DDP job's recording was tuned and the next job started from its optimum")


if __name__ == "__main__":
    main()
