#!/usr/bin/env bash
# The wheel as a user gets it (CI runs this): `pip wheel ./python` once, installed in a fresh
# virtual environment that reaches PyTorch, where the console scripts and the README's example
# (python/examples/ddp_train.py under torchrun, init_process_group("cpu:acc")) run with no
# ACC_LIBRARY, no PYTHONPATH and no acc package beside them.
#
#     scripts/wheel_check.sh TORCH_PYTHON        (an interpreter that can import torch)
#
# The fresh environment sees PyTorch through a .pth file naming TORCH_PYTHON's site-packages,
# so that nothing is downloaded again: a venv made by a venv's interpreter with
# --system-site-packages would see the base Python's packages, not the venv's PyTorch.  The
# build uses ccache where it is installed; it prints how long the build and the rest took.
set -euo pipefail
cd "$(dirname "$0")/.."
torch_python=${1:?usage: scripts/wheel_check.sh TORCH_PYTHON}
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

start=$(date +%s)
if command -v ccache >/dev/null; then
    export CMAKE_C_COMPILER_LAUNCHER=ccache
fi
"$torch_python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" wheel --quiet ./python -w "$work/wheel"
wheel=$(ls "$work"/wheel/acc-*.whl)
built=$(date +%s)
echo "wheel: $(basename "$wheel"), $(du -k "$wheel" | cut -f1) KiB, built in $((built - start)) s"

"$torch_python" -m venv "$work/venv"
purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
"$torch_python" -c "$purelib" >"$("$work/venv/bin/python" -c "$purelib")/acc-ci-torch.pth"
"$work/venv/bin/pip" install --quiet --no-index "$wheel"

cd "$work" # nothing of the checkout on the path from here
unset ACC_LIBRARY PYTHONPATH
bin="$work/venv/bin"
"$bin/acc-info" >"$work/info.txt"
head -n 1 "$work/info.txt"
"$bin/acc-compile" --list-platforms >"$work/platforms.txt"
grep -q '^dgx-h100 ' "$work/platforms.txt" ||
    { echo "wheel: acc-compile does not list the shipped platform dgx-h100"; exit 1; }
for program in acc-tune acc-bench; do
    "$bin/$program" --help >/dev/null ||
        { echo "wheel: $program --help failed"; exit 1; }
done
"$bin/python" -c 'import acc; acc.load(); from acc import _lib; import os, sys
assert os.path.exists(_lib.BUNDLED), _lib.BUNDLED
print("libacc:", _lib.BUNDLED)'
log="$work/example.log"
ACC_LOG_LEVEL=error "$bin/python" -m torch.distributed.run --standalone --nproc-per-node 2 \
    "$repo/python/examples/ddp_train.py" 2>&1 | tee "$log"
grep -q "parameters the same on every rank: True" "$log" ||
    { echo "wheel: the example did not print its result"; exit 1; }
echo "wheel: built in $((built - start)) s, installed and run in $(( $(date +%s) - built )) s"
