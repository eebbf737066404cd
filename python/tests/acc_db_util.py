"""An acc database as the Python tests need it: empty, as acc-compile --db or acc-tune leaves one,
or holding a model's stored optimum, as acc-tune (or an earlier job's online tuning) stores it,
through the C API."""
import ctypes

import acc
from acc import _lib


def create(path):
    """An empty acc database at path, as acc-compile --db or acc-tune would leave one."""
    lib = acc.load()
    lib.acc_db_open.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
    lib.acc_db_close.argtypes = [ctypes.c_void_p]
    db = ctypes.c_void_p()
    _lib.call("acc_db_open", path.encode(), 0, ctypes.byref(db))
    lib.acc_db_close(db)


def store(path, topo, measured, fusion, streams, compression, model="resnet50"):
    """The optimum of model on topo in the database at path, as acc-tune (or an earlier
    job's online tuning) stores it, through the C API."""
    lib = acc.load()
    proto = {"acc_db_open": [ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)],
             "acc_tune_target_load": [ctypes.c_char_p] * 4 + [ctypes.c_void_p,
                                                              ctypes.POINTER(ctypes.c_void_p)],
             "acc_tune_store_prepare": [ctypes.c_void_p, ctypes.c_void_p],
             "acc_tune_optimum_put": [ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.POINTER(_lib.Optimum)]}
    for name, args in proto.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = ctypes.c_int
    db, t = ctypes.c_void_p(), ctypes.c_void_p()
    _lib.call("acc_db_open", path.encode(), 0, ctypes.byref(db))
    _lib.call("acc_tune_target_load", model.encode(), topo.encode(), None, None, db,
              ctypes.byref(t))
    _lib.call("acc_tune_store_prepare", db, t)
    opt = _lib.Optimum()
    opt.config = acc.config(fusion_bytes=fusion, streams=streams, compression=compression)
    opt.iteration_ms = 480.0
    opt.measured = measured
    # The target begins with its key (acc_tune_target_t).
    _lib.call("acc_tune_optimum_put", db, t, ctypes.byref(opt))
    lib.acc_tune_target_destroy.argtypes = [ctypes.c_void_p]
    lib.acc_tune_target_destroy(t)
    lib.acc_db_close.argtypes = [ctypes.c_void_p]
    lib.acc_db_close(db)
