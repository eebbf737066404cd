#!/usr/bin/env bash
# Every figure in bench/results/, measured again on this machine, in one run:
#   peers.py        acc's host backend beside Open MPI: two ranks in shared memory, and four
#                   emulated nodes on shaped TCP (peers.md)
#   replays.py      every shipped model profile replayed across the emulated cluster under DDP's,
#                   Horovod's, negotiate, acc's stored optimum and online tuning, measured beside
#                   predicted; then ranks finishing gradients in orders of their own (replays.md,
#                   replays.svg, negotiation.md)
#   pytorch_ddp.py  torchrun with DDP over gloo, gloo's fp16 hook, a hand-set sweep and acc's hook,
#                   default and tuned (pytorch.md)
#   multirail.py    acc's host backend, gloo and Open MPI across emulated nodes of two links
#                   each, over one link and over both (multirail.md)
#   models.py       real models (ResNet-50, a GPT-2-small-sized transformer under DDP and FSDP2)
#                   over gloo, gloo's fp16 hook and its bucket sweep, and the backend acc
#                   (models.md, models-*.svg)
# and RUN.md: the command, the commit, the machine, its load before and after, how long it took.
#
#   bench/cluster/run-all.sh [--quick] [--rt] [--out DIR]
#
# --quick: one repeat and fewer iterations (minutes instead of about an hour and a half);
# --rt: every rank at real-time priority (chrt -f 10) for acc and its peers alike, so that other
# load disturbs the figures less; on a quiet machine leave it off.  Needs root (network
# namespaces), the build (ACC_BUILD, default build/), Open MPI (installed from Debian when
# missing) and PyTorch (ACC_TORCH_PYTHON, default /root/.cache/acc/torch-venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results
flags=()
for arg in "$@"; do
    case "$arg" in
    --quick | --rt) flags+=("$arg") ;;
    --out=*) out="${arg#--out=}" ;;
    *) echo "usage: bench/cluster/run-all.sh [--quick] [--rt] [--out=DIR]" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" != 0 ]; then
    echo "run-all.sh: the emulated cluster needs root (network namespaces); run it as root" >&2
    exit 77
fi
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
    echo "run-all.sh: installing Open MPI from Debian (openmpi-bin libopenmpi-dev)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        openmpi-bin libopenmpi-dev
fi
build="${ACC_BUILD:-build}"
cmake --build "$build" >/dev/null
py="${ACC_TORCH_PYTHON:-/root/.cache/acc/torch-venv/bin/python}"
mkdir -p "$out"
start=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
python3 bench/cluster/peers.py --out "$out" "${flags[@]}"
python3 bench/cluster/replays.py --out "$out" "${flags[@]}"
python3 bench/cluster/pytorch_ddp.py --out "$out" --python "$py" "${flags[@]}"
python3 bench/cluster/multirail.py --out "$out" --python "$py" "${flags[@]}"
python3 bench/cluster/models.py --out "$out" --python "$py" "${flags[@]}"
end=$(date +%s)
cat >"$out/RUN.md" <<EOF
## How these results were made

    bench/cluster/run-all.sh ${flags[*]}

- commit $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain --untracked-files=no)" ] || echo " (with uncommitted changes)"), $(date -u +%Y-%m-%dT%H:%MZ)
- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB, Linux $(uname -r)
- load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after
- $(( (end - start) / 60 )) minutes in all
EOF
echo "run-all.sh: results in $out/ ($(( (end - start) / 60 )) minutes)"
