"""libacc through ctypes: loading it, the C structures the package passes, the prototypes.

The structures mirror the C headers field for field (acc_tune.h, acc_runtime.h,
acc_fusion.h); the unit tests round-trip each through the library, so that a header that
changes without this file fails there.  Enumerations are never copied: names go through the
library's own parsers (acc_dtype_parse, acc_compress_parse, ...).
"""
import ctypes
import ctypes.util
import os

# Sizes of the C arrays mirrored below (acc_db.h ACC_DB_NAME_MAX, acc_common.h
# ACC_SHA256_HEX_LEN, acc_runtime.h ACC_UNIQUE_ID_BYTES).
NAME_MAX = 64
SHA256_HEX_LEN = 64
UNIQUE_ID_BYTES = 128


class AccError(RuntimeError):
    """A call into libacc failed: .status is its acc_status_t name, the text its message."""

    def __init__(self, status, message):
        super().__init__("%s: %s" % (status, message))
        self.status = status


class Config(ctypes.Structure):
    """acc_tune_config_t"""
    _fields_ = [("policy", ctypes.c_int), ("fusion_bytes", ctypes.c_uint64),
                ("first_bytes", ctypes.c_uint64), ("cycle_ms", ctypes.c_double),
                ("streams", ctypes.c_int), ("assign", ctypes.c_int), ("algo", ctypes.c_int),
                ("compress", ctypes.c_int)]


class Optimum(ctypes.Structure):
    """acc_tune_optimum_t"""
    _fields_ = [("config", Config), ("iteration_ms", ctypes.c_double),
                ("run_id", ctypes.c_int64), ("measured", ctypes.c_int)]


class Key(ctypes.Structure):
    """acc_tune_key_t"""
    _fields_ = [("model", ctypes.c_char * NAME_MAX),
                ("fingerprint", ctypes.c_char * (SHA256_HEX_LEN + 1)),
                ("network", ctypes.c_char * NAME_MAX)]


class CommOpts(ctypes.Structure):
    """acc_comm_opts_t"""
    _fields_ = [("backend", ctypes.c_int), ("topo", ctypes.c_char_p), ("db", ctypes.c_char_p),
                ("timeout_ms", ctypes.c_int), ("device", ctypes.c_int), ("disable", ctypes.c_int),
                ("external_fallback", ctypes.c_int)]


class UniqueId(ctypes.Structure):
    """acc_unique_id_t"""
    _fields_ = [("internal", ctypes.c_ubyte * UNIQUE_ID_BYTES)]


class FusionOpts(ctypes.Structure):
    """acc_fusion_opts_t"""
    _fields_ = [("config", ctypes.POINTER(Config)), ("average", ctypes.c_int),
                ("model", ctypes.c_char_p), ("network", ctypes.c_char_p), ("db", ctypes.c_char_p),
                ("online", ctypes.c_int), ("space", ctypes.c_void_p), ("strategy", ctypes.c_int),
                ("budget", ctypes.c_int), ("warmup", ctypes.c_int),
                ("measure_iters", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("record", ctypes.c_int), ("record_warmup", ctypes.c_int),
                ("record_iters", ctypes.c_int), ("batch", ctypes.c_int),
                ("precision", ctypes.c_char_p)]


class FusionInfo(ctypes.Structure):
    """acc_fusion_info_t"""
    _fields_ = [("config", Config), ("source", ctypes.c_int), ("started_from", ctypes.c_int),
                ("key", Key), ("tuning", ctypes.c_int), ("iterations", ctypes.c_uint64),
                ("last_ms", ctypes.c_double), ("last_exposed_ms", ctypes.c_double),
                ("buckets", ctypes.c_uint64), ("recording", ctypes.c_int),
                ("record_ms", ctypes.c_double)]


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int
_STATUS = ctypes.c_int

# name: (result type, argument types); a result of _STATUS is checked by call().
_PROTOTYPES = {
    "acc_version": (_S, []),
    "acc_status_name": (_S, [_I]),
    "acc_error_message": (_S, []),
    "acc_dtype_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_compress_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_compress_name": (_S, [_I]),
    "acc_fusion_policy_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_fusion_policy_name": (_S, [_I]),
    "acc_backend_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_search_strategy_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_tune_algo_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_tune_config_acc": (None, [ctypes.POINTER(Config), ctypes.c_uint64, _I, _I]),
    "acc_tune_config_ddp": (None, [ctypes.POINTER(Config)]),
    "acc_tune_config_horovod": (None, [ctypes.POINTER(Config)]),
    "acc_tune_config_format": (_STATUS, [ctypes.POINTER(Config), ctypes.c_char_p,
                                         ctypes.c_size_t]),
    "acc_tune_config_parse": (_STATUS, [_S, ctypes.POINTER(Config)]),
    "acc_get_unique_id": (_STATUS, [ctypes.POINTER(UniqueId)]),
    "acc_unique_id_from_string": (_STATUS, [_S, ctypes.POINTER(UniqueId)]),
    "acc_comm_opts_init": (None, [ctypes.POINTER(CommOpts)]),
    "acc_comm_init_rank": (_STATUS, [ctypes.POINTER(_P), _I, ctypes.POINTER(UniqueId), _I,
                                     ctypes.POINTER(CommOpts)]),
    "acc_comm_destroy": (_STATUS, [_P]),
    "acc_comm_abort": (_STATUS, [_P]),
    "acc_comm_rank": (_I, [_P]),
    "acc_redop_parse": (_STATUS, [_S, ctypes.POINTER(_I)]),
    "acc_allreduce": (_STATUS, [_P, _P, ctypes.c_size_t, _I, _I, _P, _P]),
    "acc_allgather": (_STATUS, [_P, _P, ctypes.c_size_t, _I, _P, _P]),
    "acc_reduce_scatter": (_STATUS, [_P, _P, ctypes.c_size_t, _I, _I, _P, _P]),
    "acc_broadcast": (_STATUS, [_P, _P, ctypes.c_size_t, _I, _I, _P, _P]),
    "acc_reduce": (_STATUS, [_P, _P, ctypes.c_size_t, _I, _I, _I, _P, _P]),
    "acc_comm_size": (_I, [_P]),
    "acc_fusion_opts_init": (None, [ctypes.POINTER(FusionOpts)]),
    "acc_fusion_create": (_STATUS, [_P, ctypes.POINTER(FusionOpts), ctypes.POINTER(_P)]),
    "acc_fusion_destroy": (_STATUS, [_P]),
    "acc_fusion_register": (_STATUS, [_P, _P, ctypes.c_size_t, _I, ctypes.POINTER(_I)]),
    "acc_fusion_ready": (_STATUS, [_P, _I]),
    "acc_fusion_backward": (_STATUS, [_P]),
    "acc_fusion_reduce": (_STATUS, [_P, _P, ctypes.c_size_t, _I]),
    "acc_fusion_wait": (_STATUS, [_P]),
    "acc_fusion_set_config": (_STATUS, [_P, ctypes.POINTER(Config)]),
    "acc_fusion_info": (_STATUS, [_P, ctypes.POINTER(FusionInfo)]),
    "acc_fusion_source_name": (_S, [_I]),
    "acc_fusion_stored": (_STATUS, [_S, _S, _S, _S, ctypes.POINTER(Optimum)]),
}

_lib = None


# Where a wheel (pip install ./python) puts the library it built.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "lib", "libacc.so")


def _checkout_library():
    """build/libacc.so of the checkout this package lies in (python/acc/ of the repository), the
    library scripts/setup.sh builds, when there is one; None for an installed package."""
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.normpath(os.path.join(here, os.pardir, os.pardir, "build", "libacc.so"))
    return p if os.path.exists(p) else None


def load(path=None):
    """Load libacc once: `path`, else ACC_LIBRARY (a row of acc's settings table), else the one
    the installed wheel carries, else the build tree's build/libacc.so when the package runs
    from a checkout, else the library the dynamic loader finds.  Returns the ctypes handle."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    path = (path or os.environ.get("ACC_LIBRARY")
            or (BUNDLED if os.path.exists(BUNDLED) else None) or _checkout_library()
            or ctypes.util.find_library("acc"))
    if not path:
        raise OSError("libacc not found: install the package with its library (pip install "
                      "./python), or set ACC_LIBRARY to the libacc.so CMake built "
                      "(build/libacc.so of the checkout), or install acc where the dynamic "
                      "loader looks")
    lib = ctypes.CDLL(path)
    for name, (res, args) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def text(b):
    """A C string from libacc as str."""
    return b.decode() if b is not None else ""


def status_name(st):
    return text(load().acc_status_name(st))


def call(name, *args):
    """Call a libacc function that returns an acc_status_t; raise AccError on a failure.
    Returns the status (0, or ACC_NO_DATA's positive value)."""
    lib = load()
    st = getattr(lib, name)(*args)
    if st < 0:
        raise AccError(status_name(st), text(lib.acc_error_message()))
    return st


def no_data(st):
    """Did a call answer ACC_NO_DATA (nothing stored; not a failure)?"""
    return st != 0 and status_name(st) == "ACC_NO_DATA"


def enum(parser, name):
    """The value of an enumeration's name through the library's parser (acc_dtype_parse...)."""
    out = ctypes.c_int()
    call(parser, cstr(name, "a name for %s" % parser, optional=False), ctypes.byref(out))
    return out.value


def invalid(message):
    """The AccError of a bad argument, as the library reports its own (ACC_ERR_INVALID)."""
    return AccError("ACC_ERR_INVALID", message)


def cstr(s, what="the argument", optional=True):
    """A str (or bytes, or a path) argument as the C string the library takes; None stays NULL
    where the argument is optional.  Anything else raises AccError naming the argument."""
    if s is None and optional:
        return None
    if isinstance(s, bytes):
        return s
    if isinstance(s, str):
        return s.encode()
    if isinstance(s, os.PathLike):
        return os.fsencode(s)
    raise invalid("%s must be a string%s, not %s" % (what, " or None" if optional else "",
                                                    type(s).__name__))
