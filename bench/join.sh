#!/usr/bin/env bash
# What acc's drop-in adds to a job's first collective, where it joins the communicator: NRANKS
# processes of tests/runtime/nccl_loop (one rank each, all-reduces in host memory) over the
# tests' stand-in NCCL, with the image build's database of PLATFORM, once with the drop-in
# preloaded and once without, side by side; each rank's first call timed, the median printed.
#
#   bench/join.sh [BUILD_DIR] [NRANKS] [PLATFORM] [BYTES]     defaults: build 8 dgx-h100 65536
#
# BYTES should lie in a range the platform's table gives acc (the join happens at the first such
# call); the script says which plan the table names for it.  Needs a build with tests
# (nccl_loop, the stand-in NCCL, the drop-in).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
nranks=${2:-8}
platform=${3:-dgx-h100}
bytes=${4:-65536}
loop=$build/tests/nccl_loop
stand_in=$build/tests/stand_in_nccl/libnccl.so.2
dropin=$build/runtime/libacc-nccl.so
for f in "$loop" "$stand_in" "$dropin" "$build/tools/acc-compile"; do
    [ -e "$f" ] || { echo "join.sh: $f is missing: build acc with its tests first" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tools/acc-compile" --topo "$platform" --db "$work/acc.db" >/dev/null
echo "join.sh: $nranks ranks of $platform, first call: allreduce of $bytes bytes; the table says:"
"$build/tools/acc-compile" --topo "$platform" --db "$work/acc.db" --print-selection \
    --coll allreduce 2>/dev/null | sed 's/^/  /' | head -n 12

# One run: every rank's first-call time, then their median (seconds).
run() {
    local preload=$1 out=$work/run
    rm -f "$work/id" "$out".*
    for r in $(seq 0 $((nranks - 1))); do
        env NCCL_LOOP_HOST=1 NCCL_LOOP_LIBRARY="$stand_in" ACC_NCCL_LIBRARY="$stand_in" \
            ACC_TOPO="$platform" ACC_DB="$work/acc.db" ACC_LOG_LEVEL=warn \
            ${preload:+LD_PRELOAD="$preload"} \
            "$loop" "$r" "$nranks" "$work/id" 2 "$bytes" >"$out.$r" 2>&1 &
    done
    if ! wait; then
        cat "$out".* >&2
        echo "join.sh: a rank failed" >&2
        exit 1
    fi
    sed -n 's/^rank [0-9]*: first call \([0-9.]*\) s$/\1/p' "$out".* | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

plain=$(run "")
with=$(run "$PWD/$dropin")
awk -v p="$plain" -v w="$with" 'BEGIN {
    printf "first call, median of the ranks: NCCL alone %.1f ms, with the drop-in %.1f ms: +%.1f ms\n",
        p * 1e3, w * 1e3, (w - p) * 1e3 }'
