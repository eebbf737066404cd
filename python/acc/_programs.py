"""The console scripts of an installed wheel: acc-compile, acc-tune, acc-bench and acc-info run
the programs the wheel carries in acc/_data/bin/, with the arguments given."""
import os
import sys

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "bin")


def _run(name):
    exe = os.path.join(BIN, name)
    if not os.access(exe, os.X_OK):
        sys.exit("%s: not in this installation of the acc package (%s is missing): install the "
                 "wheel built by `pip install ./python`, or use the program CMake built"
                 % (name, exe))
    os.execv(exe, [name] + sys.argv[1:])


def acc_compile():
    _run("acc-compile")


def acc_tune():
    _run("acc-tune")


def acc_bench():
    _run("acc-bench")


def acc_info():
    _run("acc-info")
