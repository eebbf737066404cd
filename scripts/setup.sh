#!/usr/bin/env bash
# Installs what acc needs on a Debian/Ubuntu machine (only what is missing), builds it with
# warnings as errors, and runs the main job on a shipped default platform.
set -euo pipefail
cd "$(dirname "$0")/.."

packages="cmake ninja-build pkg-config gcc g++ clang libclang-rt-14-dev libhwloc-dev hwloc
          libyaml-dev libxml2-dev libsqlite3-dev libssl-dev python3"
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

cmake -S . -B build -G Ninja -DACC_WERROR=ON
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
