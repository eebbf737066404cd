#!/usr/bin/env bash
# Installs what acc needs on a Debian/Ubuntu machine (only what is missing), makes (once) a
# virtual environment with PyTorch from PyPI for the tests of acc as PyTorch's guest
# (scripts/torch_venv.sh; ACC_TORCH=0 leaves it out and those tests say they are skipped),
# builds acc with warnings as errors, and runs the main job on a shipped default platform.
set -euo pipefail
cd "$(dirname "$0")/.."

packages="cmake ninja-build pkg-config gcc g++ clang libclang-rt-14-dev libhwloc-dev hwloc
          libyaml-dev libxml2-dev libsqlite3-dev libssl-dev python3 python3-venv util-linux"
missing=""
for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: installing$missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

torch_python=""
if [ "${ACC_TORCH:-1}" != 0 ]; then
    torch_python=$(scripts/torch_venv.sh) || torch_python=""
fi
if [ -z "$torch_python" ]; then
    echo "setup: NOTICE: no PyTorch (ACC_TORCH=0 or scripts/torch_venv.sh could not make it):" \
         "the PyTorch tests (python.torch_*) will be reported skipped"
fi
cmake -S . -B build -G Ninja -DACC_WERROR=ON -DACC_TORCH_PYTHON="$torch_python"
cmake --build build
echo
platform="${1:-dgx-h100}"
# acc's schedules beside NCCL's for every size, then the database an image build would ship,
# with the H100's CUBINs of its plans where this build has NVRTC.
build/tools/acc-compile --topo "$platform" --report --coll allreduce
echo
arch=()
if build/tools/acc-compile --version | grep -q "(NVRTC"; then
    arch=(--arch sm_90)
fi
build/tools/acc-compile --topo "$platform" --db build/acc.db "${arch[@]}"
echo
build/tools/acc-info --db build/acc.db
