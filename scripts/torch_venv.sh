#!/usr/bin/env bash
# Prints the path of a Python interpreter that can import PyTorch, for the tests that need it
# (CMake's ACC_TORCH_PYTHON): a virtual environment with torch (and numpy, which PyTorch warns
# without) from PyPI, made once and reused,
# under ${ACC_TORCH_CACHE:-$HOME/.cache/acc}/torch-<version>-py<X.Y>, so that runs on the same
# machine (CI's, a developer's) install it once.  The wheels are about 3 GB to download and
# 5.4 GB installed (PyTorch with its CUDA libraries; on a machine without a GPU it runs on the
# CPU); a first run takes a few minutes, later ones a second.  It leaves other environments
# alone (a torch-venv of someone else's beside it included).
#
#   scripts/torch_venv.sh            the interpreter's path on standard output, progress on error
#
# ACC_TORCH_VERSION chooses the version (default below, the one the tests were written against).
# Where a directory of wheels exists (ACC_TORCH_WHEELS, default /root/.cache/acc-wheels), pip
# may take them from there as well as from PyPI; it is never required.  Exit status 77 with a
# notice when PyTorch cannot be had here (no network, no python3-venv, no room): the tests that
# need it then say they are skipped.
set -euo pipefail

version=${ACC_TORCH_VERSION:-2.15.0}
python=${ACC_TORCH_BASE_PYTHON:-python3}
cache=${ACC_TORCH_CACHE:-${HOME:-/root}/.cache/acc}
wheels=${ACC_TORCH_WHEELS:-/root/.cache/acc-wheels}

notice() { echo "torch_venv: $*" >&2; }
unavailable() {
    notice "PyTorch $version cannot be had here: $*; the tests that need it will be skipped"
    exit 77
}

command -v "$python" >/dev/null 2>&1 || unavailable "no $python"
command -v flock >/dev/null 2>&1 || unavailable "no flock (util-linux)"
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv=$cache/torch-$version-py$pyver
complete() {
    [ -f "$venv/.acc-complete" ] &&
        "$venv/bin/python" -c "import numpy, torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" \
            >/dev/null 2>&1
}
if complete; then
    echo "$venv/bin/python"
    exit 0
fi

# One maker at a time (CI and a developer, two clones); the mark is written last, so that an
# environment a killed run left half made is made again, never used.  A virtual environment
# records its own path, so it is made where it stays.
mkdir -p "$cache"
exec 9>"$venv.lock"
flock 9
if complete; then
    echo "$venv/bin/python"
    exit 0
fi
rm -rf "$venv"
notice "making $venv (PyTorch $version from PyPI: a few minutes, 5.4 GB, once)"
"$python" -m venv "$venv" >&2 || unavailable "'$python -m venv' failed (install python3-venv)"
links=()
[ -d "$wheels" ] && links=(--find-links "$wheels")
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${links[@]}" \
    "torch==$version" numpy >&2 || ! "$venv/bin/python" -c 'import numpy, torch' >&2; then
    rm -rf "$venv"
    unavailable "pip could not install torch==$version"
fi
touch "$venv/.acc-complete"
notice "made $venv"
echo "$venv/bin/python"
