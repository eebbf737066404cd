"""The Python package through the C API on the host backend, without PyTorch: the structures
it mirrors, the stored DDP settings, and the fusion engine on four processes (registered
gradients and buffers fused by the caller, as the DDP hook hands them over).

Run as a ctest (python.acc), with ACC_LIBRARY naming the libacc.so of the build."""
import ctypes
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import acc
import acc_db_util
from acc import _lib

NRANKS = 4
# The logger reads its level once, at its first line: before anything can log.
os.environ["ACC_LOG_LEVEL"] = "error"


def quiet_env(gpus):
    os.environ.update({"ACC_DB": "/nonexistent/acc.db", "ACC_TOPO": "gpus=%d" % gpus,
                       "ACC_LOG_LEVEL": "error", "ACC_TIMEOUT_MS": "60000"})
    for k in ("ACC_MODEL", "ACC_FUSION_BYTES", "ACC_STREAMS", "ACC_COMPRESSION",
              "ACC_TUNE_ONLINE"):
        os.environ.pop(k, None)


class Structures(unittest.TestCase):
    def test_versions_agree(self):
        self.assertEqual(acc.version(), acc.__version__)

    def test_config_round_trips_through_the_library(self):
        # Formatting reads the Python structure, parsing writes one: a field out of place
        # shows in one direction or the other.
        c = acc.config(fusion_bytes=32 << 20, streams=3, compression="bf16", cycle_ms=2.5)
        text = acc.config_text(c)
        self.assertEqual(text, "policy=acc fusion=32M cycle=2.5ms streams=3 algo=auto "
                               "compress=bf16")
        back = _lib.Config()
        _lib.call("acc_tune_config_parse", text.encode(), ctypes.byref(back))
        self.assertEqual(bytes(back), bytes(c))
        self.assertEqual(acc.config_text(acc.config(policy="ddp", fusion_bytes=25 << 20)),
                         "policy=ddp fusion=25M first=1M streams=1 algo=nccl")
        with self.assertRaises(acc.AccError) as e:
            acc.config(compression="int4")
        self.assertIn("int4", str(e.exception))


class Loading(unittest.TestCase):
    def test_a_checkout_finds_its_build_tree_without_acc_library(self):
        """From a checkout (python/ of the repository) the package loads build/libacc.so, the
        library scripts/setup.sh builds, when ACC_LIBRARY is not set: torchrun of the example
        works without it.  Skipped where this checkout's build is elsewhere."""
        here = os.path.dirname(os.path.abspath(__file__))
        built = os.path.normpath(os.path.join(here, os.pardir, os.pardir, "build", "libacc.so"))
        if not os.path.exists(built):
            self.skipTest("no build/libacc.so in this checkout (its build is elsewhere)")
        self.assertEqual(_lib._checkout_library(), built)
        code = ("import acc, acc._lib as l; l.load(); "
                "print(l._checkout_library())")
        env = {k: v for k, v in os.environ.items() if k != "ACC_LIBRARY"}
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
        self.assertEqual(out, built)


class Programs(unittest.TestCase):
    """The console scripts of a wheel run the programs it carries; where one is missing (a
    checkout, not an installed wheel) they say which file and what to do, not a traceback."""

    def test_a_missing_program_is_named(self):
        from acc import _programs
        saved = _programs.BIN
        _programs.BIN = tempfile.mkdtemp()
        try:
            with self.assertRaises(SystemExit) as e:
                _programs.acc_info()
        finally:
            os.rmdir(_programs.BIN)
            _programs.BIN = saved
        self.assertIn("acc-info", str(e.exception.code))
        self.assertIn("pip install ./python", str(e.exception.code))

    def test_the_bundled_library_is_where_the_wheel_puts_it(self):
        # pyproject.toml says where CMake installs into the wheel; _lib.py and _programs.py
        # look there.
        import tomllib
        from acc import _programs
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "pyproject.toml"), "rb") as f:
            skb = tomllib.load(f)["tool"]["scikit-build"]
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(acc.__file__))),
                            skb["wheel"]["install-dir"])
        libdir = skb["cmake"]["define"]["CMAKE_INSTALL_LIBDIR"]
        self.assertEqual(_lib.BUNDLED, os.path.join(root, libdir, "libacc.so"))
        self.assertEqual(_programs.BIN, os.path.join(root, "bin"))


class DdpSettings(unittest.TestCase):
    def test_stored_optimum_as_ddp_settings(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "acc.db")
            acc_db_util.create(path)
            # Nothing tuned yet for this key: the one case that is None.
            self.assertIsNone(acc.ddp_settings("resnet50", "gpus=4", db=path))
            acc_db_util.store(path, "gpus=4", 0, 8 << 20, 3, "bf16")
            s = acc.ddp_settings("resnet50", "gpus=4", db=path)
            self.assertEqual(s["ddp_kwargs"], {"bucket_cap_mb": 8.0})
            self.assertEqual((s["streams"], s["compression"]), (3, "bf16"))
            self.assertEqual(s["comm_hook"], "bf16_compress_hook")
            self.assertFalse(s["measured"])
            # What a job measured comes first.
            acc_db_util.store(path, "gpus=4", 1, 2 << 20, 1, "none")
            s = acc.ddp_settings("resnet50", "gpus=4", db=path)
            self.assertEqual(s["ddp_kwargs"], {"bucket_cap_mb": 2.0})
            self.assertIsNone(s["comm_hook"])
            self.assertTrue(s["measured"])

    def _raises(self, status, fragments, *args, **kwargs):
        with self.assertRaises(acc.AccError) as e:
            acc.ddp_settings(*args, **kwargs)
        self.assertEqual(e.exception.status, status)
        for f in fragments:
            self.assertIn(f, str(e.exception))

    def test_errors_are_not_none(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "acc.db")
            acc_db_util.create(path)
            # A misspelt model is not a model nothing was tuned for.
            self._raises("ACC_ERR_NOT_FOUND", ["model 'resnt50' is neither a shipped profile",
                                               "resnet50", path],
                         "resnt50", "gpus=4", db=path)
            # A model the database knows (a job's own, tuned online) is not misspelt.
            acc_db_util.store(path, "gpus=4", 1, 4 << 20, 1, "none")
            self.assertIsNotNone(acc.ddp_settings("resnet50", "gpus=4", db=path))
            # Databases that cannot be read.
            self._raises("ACC_ERR_NOT_FOUND", ["no such database", "missing.db"],
                         "resnet50", "gpus=4", db=os.path.join(d, "missing.db"))
            junk = os.path.join(d, "junk.db")
            with open(junk, "wb") as f:
                f.write(bytes(range(256)) * 64)
            self._raises("ACC_ERR_SQLITE", [junk, "not a database"],
                         "resnet50", "gpus=4", db=junk)
            self._raises("ACC_ERR_IO", [d, "is a directory"], "resnet50", "gpus=4", db=d)
            # Arguments of the wrong kind, and a topology that does not load.
            self._raises("ACC_ERR_INVALID", ["model must be a string"], 50, "gpus=4", db=path)
            self._raises("ACC_ERR_INVALID", ["topo must be a string"], "resnet50", 4, db=path)
            self._raises("ACC_ERR_INVALID", ["db must be a string or None"],
                         "resnet50", "gpus=4", db=3.5)
            self._raises("ACC_ERR_INVALID", ["gpus=banana"], "resnet50", "gpus=banana", db=path)
            # A profile file that is not there.
            self._raises("ACC_ERR_NOT_FOUND", ["no-such-model.yaml"],
                         "no-such-model.yaml", "gpus=4", db=path)


COUNTS = [1000, 1, 7, 4096, 3, 50000, 17]


def _value(rank, t, e, it):
    # Multiples of 1/8 below 32: sums over four ranks and their quarters are exact in fp32.
    return float(((rank * 7919 + t * 104729 + e * 31 + it * 13) % 512) - 256) / 8.0


def _mean(t, e, it):
    return sum(_value(r, t, e, it) for r in range(NRANKS)) / NRANKS


def _rank(rank, uid, results):
    """One rank: registered gradients under two configurations, then the caller's buffers."""
    try:
        with acc.Communicator(NRANKS, rank, uid) as comm:
            bufs = [(ctypes.c_float * n)() for n in COUNTS]
            with acc.FusionEngine(comm, config=acc.config(fusion_bytes=4 << 10, streams=2)) as f:
                idx = [f.register(ctypes.addressof(b), len(b), "float32") for b in bufs]
                for it, comp in enumerate(["none", "fp16"]):
                    f.set_config(acc.config(fusion_bytes=4 << 10, streams=2, compression=comp))
                    for t, b in enumerate(bufs):
                        for e in range(len(b)):
                            b[e] = _value(rank, t, e, it)
                    for i in idx:
                        f.ready(i)
                    f.wait()
                    tol = 0.0 if comp == "none" else 6 * 2.0 ** -11 * 32
                    for t, b in enumerate(bufs):
                        for e in range(0, len(b), 97):
                            assert abs(b[e] - _mean(t, e, it)) <= tol, (comp, t, e, b[e])
                info = f.info()
                assert info["source"] == "options" and info["streams"] == 2, info
            # The DDP hook's path: buffers fused elsewhere, reduced on acc's streams.
            with acc.FusionEngine(comm, config=acc.config(streams=3, compression="bf16")) as f:
                for t, b in enumerate(bufs):
                    for e in range(len(b)):
                        b[e] = _value(rank, t, e, 5)
                    f.reduce(ctypes.addressof(b), len(b), "float")
                f.wait()
                for t, b in enumerate(bufs):
                    for e in range(0, len(b), 97):
                        assert abs(b[e] - _mean(t, e, 5)) <= 6 * 2.0 ** -8 * 32, (t, e, b[e])
        results.put((rank, "ok"))
    except BaseException as exc:  # the parent reports it
        results.put((rank, repr(exc)))


class Engine(unittest.TestCase):
    def test_four_ranks_reduce_as_the_mean(self):
        quiet_env(NRANKS)
        ctx = multiprocessing.get_context("fork")
        results = ctx.Queue()
        uid = acc.unique_id()
        procs = [ctx.Process(target=_rank, args=(r, uid, results)) for r in range(NRANKS)]
        for p in procs:
            p.start()
        got = dict(results.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(30)
        self.assertEqual(got, {r: "ok" for r in range(NRANKS)})

    def test_bad_use_raises_with_the_librarys_message(self):
        quiet_env(1)
        with acc.Communicator(1, 0, acc.unique_id()) as comm:
            self.assertEqual((comm.rank, comm.size), (0, 1))
            with acc.FusionEngine(comm) as f:
                self.assertIsNone(f.info())
                buf = (ctypes.c_float * 4)(1, 2, 3, 4)
                with self.assertRaises(acc.AccError) as e:
                    f.register(0, 4, "float")
                self.assertEqual(e.exception.status, "ACC_ERR_INVALID")
                f.register(ctypes.addressof(buf), 4, "float")
                with self.assertRaises(acc.AccError) as e:
                    f.ready(5)
                self.assertIn("not registered", str(e.exception))
                f.ready(0)
                f.wait()
                self.assertEqual(list(buf), [1, 2, 3, 4])
                self.assertEqual(f.info()["source"], "default")
        with self.assertRaises(acc.AccError) as e:
            acc.Communicator(1, 0, b"short")
        self.assertEqual(e.exception.status, "ACC_ERR_INVALID")

    def test_one_rank_records_its_profile(self):
        quiet_env(1)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "acc.db")
            with acc.Communicator(1, 0, acc.unique_id()) as comm:
                with self.assertRaises(acc.AccError) as e:
                    acc.FusionEngine(comm, record=True, precision="fp8")
                self.assertIn("fp8", str(e.exception))
                bufs = [(ctypes.c_float * n)() for n in (300, 20)]
                with acc.FusionEngine(comm, model="py-model", db=path, record=True, batch=8,
                                      record_warmup=1, record_iters=2) as f:
                    idx = [f.register(ctypes.addressof(b), len(b), "float") for b in bufs]
                    for _ in range(3):
                        f.backward()
                        for i in idx:
                            f.ready(i)
                        f.wait()
                    info = f.info()
                    self.assertEqual(info["recording"], "recorded")
                    self.assertGreater(info["record_ms"], 0)
            # The engine waited for the recording to be stored before it closed.
            db = sqlite3.connect(path)
            rows = db.execute("SELECT name, sm, batch, ranks, iterations "
                              "FROM recorded_profiles").fetchall()
            db.close()
            self.assertEqual(rows, [("py-model", 90, 8, 1, 2)])


if __name__ == "__main__":
    unittest.main()
