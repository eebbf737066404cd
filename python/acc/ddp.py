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

With record=True (or ACC_RECORD=1) the engine records the job's own profile: each bucket's
size, type and the moment DDP hands it over, measured from the start of the backward pass
(which a hook on the model's outputs marks), and the iteration's compute time; rank 0 stores it
as the profile of `model` (or ACC_MODEL; without a name, a fingerprint of the buckets, which a
later job cannot know before its first iteration: name the model) for acc-tune --model.
"""
import acc


class HookState:
    """What the hook keeps: acc's communicator (made over the process group's ranks, its unique
    id broadcast through the group), the engine, and the futures of this iteration."""

    def __init__(self, process_group=None, config=None, backend=None, topo=None, db=None,
                 model=None, record=None, batch=None, precision=None):
        import torch.distributed as dist
        rank, size = dist.get_rank(process_group), dist.get_world_size(process_group)
        box = [acc.unique_id() if rank == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(process_group, 0)
                                   if process_group is not None else 0, group=process_group)
        if backend is None:
            backend = "cuda" if _on_gpu() else "host"
        self.comm = acc.Communicator(size, rank, box[0], backend=backend, topo=topo, db=db)
        self.engine = acc.FusionEngine(self.comm, config=config, model=model, record=record,
                                       batch=batch, precision=precision)
        self.pending = []
        self.marked = False
        self.forward_hook = None

    def backward_begins(self, grad):
        """A tensor hook on the model's outputs: the first to fire after a forward pass is the
        start of a backward pass.  Each one is marked, so that under gradient accumulation
        (no_sync) the last micro-batch's, during which DDP reduces, is the one recorded."""
        if not self.marked:
            self.marked = True
            self.engine.backward()

    def close(self):
        if self.forward_hook is not None:
            self.forward_hook.remove()
            self.forward_hook = None
        self.engine.close()
        self.comm.close()


def _on_gpu():
    import torch
    return torch.cuda.is_available()


def _dtype(t):
    # acc_dtype_parse reads PyTorch's spellings ("float32", "float16", "bfloat16", ...).
    return str(t.dtype).replace("torch.", "")


def _tensors(value):
    """The tensors of a module's output: a tensor, or tensors in tuples, lists and dicts."""
    import torch
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _watch_outputs(state):
    def forward_hook(module, inputs, output):
        state.marked = False
        for t in _tensors(output):
            if t.requires_grad:
                t.register_hook(state.backward_begins)
    return forward_hook


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
    """Register the hook on a DistributedDataParallel model; the state it keeps.  kwargs:
    backend, topo and db (the communicator's), model (the job's key; ACC_MODEL when None),
    record, batch and precision (the recording's; see FusionEngine)."""
    state = HookState(process_group, config=config, **kwargs)
    ddp_model.register_comm_hook(state, hook)
    # One tensor hook per output and iteration: a clock reading, only used when recording.
    state.forward_hook = ddp_model.register_forward_hook(_watch_outputs(state))
    return state
