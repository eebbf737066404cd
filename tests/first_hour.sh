#!/usr/bin/env bash
# The first hour, as a test: every ```sh block of README.md and python/README.md runs, in the
# order the pages give them, as a new user pastes them: each in a fresh shell (bash -eu -o
# pipefail, so a failing command or an undefined variable fails the block) whose environment
# holds nothing but PATH, HOME, USER, LANG and TMPDIR, in a scratch copy of the working tree
# whose build/ is BUILD_DIR (so that nothing is built again).  After each block the copy's
# `git status` must be clean: what the README makes belongs in ignored places (build/).
# Blocks that cannot run here are skipped by the list below, each with its reason, and said so;
# a skip entry that matches no block fails the test, so that the list stays true as the pages
# change.  New blocks run without any change here.
#
# Usage: tests/first_hour.sh BUILD_DIR   (a build of this tree, as scripts/setup.sh makes it;
#        FIRST_HOUR_ONLY=N runs block N alone, after listing them all with FIRST_HOUR_LIST=1)
set -euo pipefail

fail() {
    echo "first hour: FAILED: $*" >&2
    exit 1
}

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[ -f "$1/CMakeCache.txt" ] || fail "$1 is not a configured build directory (run scripts/setup.sh)"
build=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
pages=(README.md python/README.md)

# ---- the skip list --------------------------------------------------------------------------
# "a fixed string of the block|why it cannot run here".  Keep it short: a block that can be made
# to run belongs in the README in a form that runs.
skips=(
    # The README's first block is CI's first stage itself (.ci/run): it builds the project and
    # runs the whole suite.  This test reuses that build instead of making another.
    "./scripts/setup.sh|builds the project and runs every test: CI's first stage, whose build this test reuses"
    # Installing writes into \$HOME/.local, outside any scratch directory; tests/install/check.sh
    # (CI's install stage) installs this build into a scratch prefix and builds a consumer.
    "cmake --install build|installs into \$HOME/.local; tests/install/check.sh does this in a scratch prefix"
    # The emulated cluster needs root, network namespaces and a train.py of the user's own.
    "sudo bench/cluster/acc-cluster|needs root and network namespaces (bench/cluster/README.md); run-all.sh takes 1.5 h"
    # The PyTorch quick start builds the wheel (minutes) and needs torchrun on the PATH of a
    # venv with PyTorch: CI's wheel stage (scripts/wheel_check.sh) builds the wheel once and runs
    # these two lines in a fresh venv.
    "pip install ./python|builds the wheel: scripts/wheel_check.sh (CI's wheel stage) runs these lines in a fresh venv"
    # A real NCCL library at a path of the reader's machine.
    "/path/to/libnccl.so.2|needs a real NCCL library (libnccl.so.2) at a path of the reader's machine"
    # Figures the README quotes, measured over minutes: running them is the benchmark, not a check.
    "--policy record|reproduces the recording-cost figure (36 iterations of ResNet-50, about a minute)"
    "--policy online --iters 200|reproduces online tuning (200 iterations of ResNet-50, minutes)"
)
# Blocks that need what this machine may lack.
if ! "$build/tools/acc-compile" --version | grep -q "(NVRTC"; then
    skips+=("--arch sm_80,sm_90|this build has no NVRTC (the CUDA toolkit), which --arch needs")
fi
# PyTorch from the venv scripts/setup.sh made and configured the build with (ACC_TORCH_PYTHON),
# never downloaded here.
if ! grep -q '^ACC_TORCH_PYTHON:[A-Z]*=.' "$build/CMakeCache.txt"; then
    skips+=("scripts/torch_venv.sh|no PyTorch here (the build was configured without ACC_TORCH_PYTHON)")
fi

# ---- the blocks -----------------------------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
blocks=$tmp/blocks
mkdir -p "$blocks"
n=0
for page in "${pages[@]}"; do
    [ -f "$repo/$page" ] || fail "$page is missing"
    # One file per block, named by its order; its first line says where it came from.
    n=$(awk -v page="$page" -v dir="$blocks" -v n="$n" '
        /^```sh[[:space:]]*$/ { n++; f = sprintf("%s/%03d", dir, n); print "# " page ":" NR + 1 > f; inb = 1; next }
        inb && /^```/ { inb = 0; close(f); next }
        inb { print > f }
        END { print n }' "$repo/$page")
done
[ "$n" -gt 0 ] || fail "no \`\`\`sh block in ${pages[*]}"

skip_reason() { # block file -> the reason it is skipped, or nothing
    local entry
    for entry in "${skips[@]}"; do
        if grep -qF -- "${entry%%|*}" "$1"; then
            echo "${entry#*|}"
            return
        fi
    done
}
for entry in "${skips[@]}"; do
    grep -qlF -- "${entry%%|*}" "$blocks"/* ||
        fail "the skip entry '${entry%%|*}' matches no block: remove it from $0"
done
if [ -n "${FIRST_HOUR_LIST:-}" ]; then
    for f in "$blocks"/*; do
        r=$(skip_reason "$f")
        echo "$(basename "$f") $(head -1 "$f" | cut -c3-)${r:+ (skipped: $r)}"
        sed -n '2,$p' "$f" | sed 's/^/    /'
    done
    exit 0
fi

# ---- the scratch copy -----------------------------------------------------------------------
# The working tree as it is (tracked files and untracked ones git does not ignore), made a
# repository of its own so that `git status` says what a block left; build/ is BUILD_DIR.
copy=$tmp/acc
mkdir -p "$copy"
(cd "$repo" && git ls-files -co --exclude-standard -z |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$copy"
git -C "$copy" init -q
git -C "$copy" add -A
git -C "$copy" -c user.name=first-hour -c user.email=first-hour@localhost commit -qm snapshot
ln -s "$build" "$copy/build"
echo "/build" >>"$copy/.git/info/exclude"

# ---- run ------------------------------------------------------------------------------------
start=$(date +%s)
ran=0
skipped=0
for f in "$blocks"/*; do
    i=$(basename "$f")
    [ -z "${FIRST_HOUR_ONLY:-}" ] || [ "$((10#$i))" = "$((10#$FIRST_HOUR_ONLY))" ] || continue
    where=$(head -1 "$f" | cut -c3-)
    reason=$(skip_reason "$f")
    if [ -n "$reason" ]; then
        echo "-- block $i ($where): skipped: $reason"
        skipped=$((skipped + 1))
        continue
    fi
    t0=$(date +%s)
    log=$tmp/log-$i
    if ! (cd "$copy" &&
        env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" \
            USER="${USER:-$(id -un)}" LANG=C.UTF-8 TMPDIR="$tmp" \
            timeout 600 bash --noprofile --norc -eu -o pipefail "$f") >"$log" 2>&1; then
        sed 's/^/    | /' "$f" >&2
        tail -n 40 "$log" >&2
        fail "block $i ($where) failed (its commands and the end of its output above)"
    fi
    left=$(git -C "$copy" status --porcelain --untracked-files=all)
    if [ -n "$left" ]; then
        echo "$left" >&2
        fail "block $i ($where) left files in the repository (above): write them under build/"
    fi
    echo "-- block $i ($where): passed in $(($(date +%s) - t0)) s"
    ran=$((ran + 1))
done
echo "first hour: passed: $ran blocks ran, $skipped skipped, in $(($(date +%s) - start)) s"
