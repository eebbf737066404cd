"""acc for Python: the stored DDP settings of a model on a machine, and acc's fusion engine
(gradients reduced in buckets on acc's streams, with optional fp16/bf16 compression and online
tuning) over libacc.so.  See README.md; the C API it wraps is acc_fusion.h.

Errors from the library raise AccError carrying its message, which says what to do.
"""
import ctypes

from . import _lib
from ._lib import AccError, load

__version__ = "0.1.0"
__all__ = ["AccError", "Communicator", "FusionEngine", "config", "ddp_settings", "load",
           "unique_id", "unique_id_from_string", "version"]


def version():
    """The version of the libacc loaded; the package's own is __version__."""
    return _lib.text(load().acc_version())


def unique_id():
    """A new rendezvous served by this process, as the 128 bytes every rank is given."""
    uid = _lib.UniqueId()
    _lib.call("acc_get_unique_id", ctypes.byref(uid))
    return bytes(uid.internal)  # every byte: the array is of unsigned bytes, not a C string


def unique_id_from_string(host_port):
    """The rendezvous rank 0 serves at "HOST:PORT" (MASTER_ADDR:MASTER_PORT)."""
    uid = _lib.UniqueId()
    _lib.call("acc_unique_id_from_string", _lib.cstr(host_port, "host_port", optional=False),
              ctypes.byref(uid))
    return bytes(uid.internal)


def config(fusion_bytes=25 << 20, streams=1, compression="none", policy="acc", first_bytes=0,
           cycle_ms=None):
    """A fusion configuration (acc_tune_config_t): acc's policy with a fusion size, streams and
    a compression, or DDP's / Horovod's defaults with those fields replaced."""
    c = _lib.Config()
    if policy == "ddp":
        load().acc_tune_config_ddp(ctypes.byref(c))
    elif policy == "horovod":
        load().acc_tune_config_horovod(ctypes.byref(c))
    else:
        # auto: the communicator chooses acc's plan or the fallback per size itself
        load().acc_tune_config_acc(ctypes.byref(c), 1, 1, _lib.enum("acc_tune_algo_parse", "auto"))
        c.policy = _lib.enum("acc_fusion_policy_parse", policy)
    c.fusion_bytes = fusion_bytes
    c.streams = streams
    c.compress = _lib.enum("acc_compress_parse", compression)
    if first_bytes:
        c.first_bytes = first_bytes
    if cycle_ms is not None:
        c.cycle_ms = cycle_ms
    return c


def config_text(c):
    """The text form of a configuration: "policy=acc fusion=32M streams=2 algo=auto"."""
    buf = ctypes.create_string_buffer(256)
    _lib.call("acc_tune_config_format", ctypes.byref(c), buf, len(buf))
    return buf.value.decode()


def _as_dict(c):
    return {"policy": _lib.text(load().acc_fusion_policy_name(c.policy)),
            "fusion_bytes": c.fusion_bytes, "streams": c.streams,
            "compression": _lib.text(load().acc_compress_name(c.compress)),
            "text": config_text(c)}


def ddp_settings(model, topo, network=None, db=None):
    """What DDP should use for `model` (a shipped profile's name or a profile file) on `topo`
    (as acc-compile --topo takes it) with `network`: the stored optimum, measured by an earlier
    job if there is one, else acc-tune's, from `db` (None: ACC_DB, else the search path).  A
    dict of DistributedDataParallel's keyword arguments ("ddp_kwargs": bucket_cap_mb) and the
    rest of the configuration (streams, compression, the DDP compression hook's name, whether
    it was measured, its iteration time); None when the database holds nothing for this key.
    Raises AccError with the library's reason otherwise: no database, one that cannot be read,
    a model neither shipped nor known to the database (a misspelling), a topology that does not
    load, an argument that is not a string."""
    opt = _lib.Optimum()
    st = _lib.call("acc_fusion_stored", _lib.cstr(model, "model", optional=False),
                   _lib.cstr(topo, "topo", optional=False), _lib.cstr(network, "network"),
                   _lib.cstr(db, "db"), ctypes.byref(opt))
    if _lib.no_data(st):
        return None
    out = _as_dict(opt.config)
    out["ddp_kwargs"] = {"bucket_cap_mb": opt.config.fusion_bytes / float(1 << 20)}
    out["comm_hook"] = (None if out["compression"] == "none"
                        else out["compression"] + "_compress_hook")
    out["measured"] = bool(opt.measured)
    out["iteration_ms"] = opt.iteration_ms
    return out


class Communicator:
    """A communicator of nranks processes (acc_comm_init_rank): every rank gives the same
    unique id (the bytes of unique_id() or unique_id_from_string())."""

    def __init__(self, nranks, rank, uid, backend="host", topo=None, db=None, timeout_ms=0,
                 device=-1):
        opts = _lib.CommOpts()
        load().acc_comm_opts_init(ctypes.byref(opts))
        opts.backend = _lib.enum("acc_backend_parse", backend)
        opts.timeout_ms, opts.device = timeout_ms, device
        self._topo, self._db = _lib.cstr(topo, "topo"), _lib.cstr(db, "db")  # kept alive
        opts.topo, opts.db = self._topo, self._db
        if not isinstance(uid, (bytes, bytearray)) or len(uid) != _lib.UNIQUE_ID_BYTES:
            raise _lib.invalid("a unique id is %d bytes (acc.unique_id()), not %r"
                               % (_lib.UNIQUE_ID_BYTES, uid))
        u = _lib.UniqueId()
        ctypes.memmove(ctypes.addressof(u), uid, _lib.UNIQUE_ID_BYTES)
        self.handle = ctypes.c_void_p()
        _lib.call("acc_comm_init_rank", ctypes.byref(self.handle), nranks, ctypes.byref(u), rank,
                  ctypes.byref(opts))

    @property
    def rank(self):
        return load().acc_comm_rank(self.handle)

    @property
    def size(self):
        return load().acc_comm_size(self.handle)

    def close(self):
        if self.handle:
            h, self.handle = self.handle, None
            _lib.call("acc_comm_destroy", h)

    def abort(self):
        """End the calls in flight (they fail with ACC_ERR_ABORTED) and free the communicator
        without waiting for the peers; another thread may call it while a call runs."""
        if self.handle:
            h, self.handle = self.handle, None
            _lib.call("acc_comm_abort", h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FusionEngine:
    """acc's fusion engine on a Communicator (acc_fusion.h).  Either register gradients
    (addresses of contiguous buffers, in the order the backward pass produces them), mark them
    ready and wait() at the end of each iteration; or reduce() buffers fused elsewhere (DDP's
    buckets) and wait().  config: a configuration (config()); None lets the settings, the
    stored optimum and the default decide.  online: True, False or None (ACC_TUNE_ONLINE).
    record: True, False or None (ACC_RECORD): record the job's own profile (the timeline of its
    gradients, or buffers, and its compute time) into the database for acc-tune, with batch
    (samples per rank) and precision ("fp32", "tf32", "fp16", "bf16") when given; backward()
    marks the start of each backward pass the recording measures from."""

    def __init__(self, comm, config=None, average=True, model=None, network=None, db=None,
                 online=None, record=None, batch=None, precision=None, record_warmup=0,
                 record_iters=0):
        opts = _lib.FusionOpts()
        load().acc_fusion_opts_init(ctypes.byref(opts))
        self._keep = [config, _lib.cstr(model, "model"), _lib.cstr(network, "network"),
                      _lib.cstr(db, "db"), _lib.cstr(precision, "precision")]
        if config is not None:
            opts.config = ctypes.pointer(config)
        opts.average = 1 if average else 0
        opts.model, opts.network, opts.db, opts.precision = self._keep[1:]
        opts.online = 0 if online is None else (1 if online else -1)
        opts.record = 0 if record is None else (1 if record else -1)
        opts.record_warmup, opts.record_iters = record_warmup, record_iters
        opts.batch = batch or 0
        self.handle = ctypes.c_void_p()
        self.comm = comm  # the engine borrows it
        _lib.call("acc_fusion_create", comm.handle, ctypes.byref(opts), ctypes.byref(self.handle))

    def register(self, address, count, dtype):
        """Register count elements of dtype ("float", "half", "bfloat16", ... or PyTorch's
        names) at address; the gradient's index."""
        index = ctypes.c_int()
        _lib.call("acc_fusion_register", self.handle, ctypes.c_void_p(address), count,
                  _lib.enum("acc_dtype_parse", dtype), ctypes.byref(index))
        return index.value

    def ready(self, index):
        _lib.call("acc_fusion_ready", self.handle, index)

    def backward(self):
        """The backward pass begins now (what a recording measures ready times from)."""
        _lib.call("acc_fusion_backward", self.handle)

    def reduce(self, address, count, dtype):
        _lib.call("acc_fusion_reduce", self.handle, ctypes.c_void_p(address), count,
                  _lib.enum("acc_dtype_parse", dtype))

    def wait(self):
        _lib.call("acc_fusion_wait", self.handle)

    def set_config(self, c):
        _lib.call("acc_fusion_set_config", self.handle, ctypes.byref(c))

    def info(self):
        """What the engine uses: its configuration, where it came from, the key looked up,
        whether online tuning is measuring, the last iteration's figures, and the recording's
        state ("off", "recording", "recorded": rank 0 stores it; the other ranks say
        "recording") and cost; None before the first iteration."""
        i = _lib.FusionInfo()
        if _lib.no_data(_lib.call("acc_fusion_info", self.handle, ctypes.byref(i))):
            return None
        out = _as_dict(i.config)
        out.update({"source": _lib.text(load().acc_fusion_source_name(i.source)),
                    "started_from": _lib.text(load().acc_fusion_source_name(i.started_from)),
                    "model": _lib.text(i.key.model), "tuning": bool(i.tuning),
                    "iterations": i.iterations, "last_ms": i.last_ms,
                    "last_exposed_ms": i.last_exposed_ms, "buckets": i.buckets,
                    "recording": ("off", "recording", "recorded")[i.recording],
                    "record_ms": i.record_ms})
        return out

    def close(self):
        if self.handle:
            h, self.handle = self.handle, None
            _lib.call("acc_fusion_destroy", h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
