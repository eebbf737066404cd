"""The collectives libacc has no plan for, built on the ones it has: all-to-all and gather on
all-gather, scatter on broadcast.  Each moves every rank's data to every rank (the group's size
times what the collective itself needs), which is correct on any type and any split and keeps
the ranks in step; a job that lives on all-to-all wants a backend with point-to-point messages.
"""
import torch

from . import calls


def _rows(t):
    """Elements per row of dimension 0 (all-to-all's split sizes count rows)."""
    return t.numel() // t.shape[0] if t.dim() > 0 and t.shape[0] else 1


def _exchange(comm, flat, sent, stream):
    """flat: this rank's elements in destination order, sent[d] of them for rank d.  Returns,
    for every source rank s, the elements s sent to this rank."""
    n = comm.size
    counts = calls.gathered(comm, torch.tensor(sent, dtype=torch.int64, device=flat.device),
                            stream)
    counts = [c.tolist() for c in counts]  # counts[s][d]: elements s sends to d
    width = max(sum(c) for c in counts)
    padded = torch.zeros(width, dtype=flat.dtype, device=flat.device)
    padded[:flat.numel()] = flat
    parts = calls.gathered(comm, padded, stream)
    me = comm.rank
    return [parts[s][sum(counts[s][:me]):sum(counts[s][:me]) + counts[s][me]] for s in range(n)]


def all_to_all_rows(comm, output, input, output_splits, input_splits, stream):
    """all_to_all_single: rows of input go to each rank by input_splits (equal when empty);
    output receives each rank's rows in rank order (output_splits must agree)."""
    n, me = comm.size, comm.rank
    rows = _rows(input)
    if not input_splits:
        if input.dim() == 0 or input.shape[0] % n:
            raise ValueError("acc: all_to_all_single without input_split_sizes needs a first "
                             "dimension divisible by the group's %d ranks, not %s"
                             % (n, tuple(input.shape)))
        input_splits = [input.shape[0] // n] * n
    got = _exchange(comm, input.contiguous().reshape(-1), [s * rows for s in input_splits],
                    stream)
    received = [g.numel() // max(rows, 1) for g in got]
    if output_splits and list(output_splits) != received:
        raise ValueError("acc: all_to_all_single on rank %d: the ranks send it %s rows, but "
                         "output_split_sizes says %s" % (me, received, list(output_splits)))
    whole = torch.cat(got)
    if whole.numel() != output.numel():
        raise ValueError("acc: all_to_all_single on rank %d: the ranks send it %d elements, but "
                         "the output holds %d" % (me, whole.numel(), output.numel()))
    output.copy_(whole.view(output.shape))


def all_to_all_list(comm, outputs, inputs, stream):
    """all_to_all: inputs[d] goes to rank d; outputs[s] receives rank s's."""
    flat = torch.cat([t.reshape(-1) for t in inputs])
    got = _exchange(comm, flat, [t.numel() for t in inputs], stream)
    for s, (o, g) in enumerate(zip(outputs, got)):
        if g.numel() != o.numel():
            raise ValueError("acc: all_to_all on rank %d: rank %d sends %d elements, but "
                             "output_tensor_list[%d] holds %d"
                             % (comm.rank, s, g.numel(), s, o.numel()))
        o.copy_(g.view(o.shape))


def gather(comm, output_lists, inputs, root, stream):
    for i, inp in enumerate(inputs):
        parts = calls.gathered(comm, inp, stream)
        if comm.rank == root:
            outs = output_lists[i]
            if len(outs) != comm.size:
                raise ValueError("acc: gather: gather_list has %d tensors; the group has %d "
                                 "ranks" % (len(outs), comm.size))
            for o, p in zip(outs, parts):
                o.copy_(p.view(o.shape))


def scatter(comm, outputs, input_lists, root, stream):
    for i, out in enumerate(outputs):
        n = comm.size
        if comm.rank == root:
            ins = input_lists[i]
            if len(ins) != n or any(t.numel() != out.numel() for t in ins):
                raise ValueError("acc: scatter: scatter_list must hold %d tensors of %d elements"
                                 % (n, out.numel()))
            whole = torch.cat([t.reshape(-1) for t in ins])
        else:
            whole = torch.empty(n * out.numel(), dtype=out.dtype, device=out.device)
        w = calls.words(whole)
        calls.broadcast(comm, w, root, stream)
        out.copy_(calls.unwords(w, whole).chunk(n)[comm.rank].view(out.shape))
