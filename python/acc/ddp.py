"""A DDP communication hook that runs each bucket's allreduce through acc: on acc's streams,
averaged over the ranks, with the compression the configuration says (fp16/bf16 for fp32
gradients), the configuration being the one the job's settings and stored optimum give unless
one is passed.  Needs PyTorch, imported when a hook is registered.

    import acc.ddp
    model = torch.nn.parallel.DistributedDataParallel(model, **acc.ddp_settings(...)["ddp_kwargs"])
    acc.ddp.register(model)

DDP hands the hook each bucket as a flat tensor, undivided (the hook averages), in the same
order on every rank; the hook starts its allreduce on acc's next stream and returns a future,
and at the last bucket of the iteration it waits for all of them and completes the futures.
The buckets' memory must be what acc's communicator reduces: device memory on the cuda
backend, host memory (a CPU model) on the host backend.
"""
import acc


class HookState:
    """What the hook keeps: acc's communicator (made over the process group's ranks, its unique
    id broadcast through the group), the engine, and the futures of this iteration."""

    def __init__(self, process_group=None, config=None, backend=None, topo=None, db=None):
        import torch.distributed as dist
        rank, size = dist.get_rank(process_group), dist.get_world_size(process_group)
        box = [acc.unique_id() if rank == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(process_group, 0)
                                   if process_group is not None else 0, group=process_group)
        if backend is None:
            backend = "cuda" if _on_gpu() else "host"
        self.comm = acc.Communicator(size, rank, box[0], backend=backend, topo=topo, db=db)
        self.engine = acc.FusionEngine(self.comm, config=config)
        self.pending = []

    def close(self):
        self.engine.close()
        self.comm.close()


def _on_gpu():
    import torch
    return torch.cuda.is_available()


def _dtype(t):
    # acc_dtype_parse reads PyTorch's spellings ("float32", "float16", "bfloat16", ...).
    return str(t.dtype).replace("torch.", "")


def hook(state, bucket):
    """DDP's hook signature: (state, GradBucket) -> torch.futures.Future[Tensor]."""
    import torch
    buf = bucket.buffer()
    if buf.is_cuda:
        # acc's streams read the bucket: what the backward pass wrote must be there.
        torch.cuda.current_stream(buf.device).synchronize()
    state.engine.reduce(buf.data_ptr(), buf.numel(), _dtype(buf))
    fut = torch.futures.Future()
    state.pending.append((fut, buf))
    if bucket.is_last():
        state.engine.wait()
        done, state.pending = state.pending, []
        for f, b in done:
            f.set_result(b)
    return fut


def register(ddp_model, process_group=None, config=None, **kwargs):
    """Register the hook on a DistributedDataParallel model; the state it keeps."""
    state = HookState(process_group, config=config, **kwargs)
    ddp_model.register_comm_hook(state, hook)
    return state
