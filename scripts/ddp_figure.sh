#!/usr/bin/env bash
# The README's figure: the step time of DDP on the CPU over the backend acc and with acc's hook
# (no compression, bf16, fp16) beside DDP's own allreduce over gloo, 2 and 4 ranks, measured with the README's example
# (python/examples/ddp_train.py) under torchrun.  Each configuration runs ROUNDS times (default
# 5) of STEPS steps (default 60); a round's figure is its median step, and the table gives the
# median round and, for acc's, the ratio to gloo's measured in the same rounds.  Run it on a
# quiet machine: ranks share the cores.
#
#   scripts/ddp_figure.sh [BUILD_DIR]          (default build; ACC_TORCH_PYTHON or
#                                              scripts/torch_venv.sh gives the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
rounds=${ROUNDS:-5}
steps=${STEPS:-60}
python=${ACC_TORCH_PYTHON:-$(scripts/torch_venv.sh)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# DDP step time on the CPU ($(nproc) cores, $(uname -m)), $steps steps x $rounds rounds," \
     "median; $(date -u +%Y-%m-%d)"
printf '| ranks | gloo (DDP allreduce) | acc backend | acc hook | acc hook, bf16 | acc hook, fp16 |\n'
printf '|---|---|---|---|---|---|\n'
for n in 2 4; do
    "$build/tools/acc-compile" --topo "gpus=$n nvlink=18" --db "$tmp/acc$n.db" >/dev/null
    for r in $(seq "$rounds"); do
        ACC_LIBRARY="$PWD/$build/libacc.so" PYTHONPATH="$PWD/python" ACC_DB="$tmp/acc$n.db" \
            ACC_TOPO="gpus=$n nvlink=18" ACC_LOG_LEVEL=error GLOO_SOCKET_IFNAME=lo \
            OMP_NUM_THREADS=1 "$python" -m torch.distributed.run --standalone \
            --nproc-per-node "$n" python/examples/ddp_train.py --steps "$steps" \
            --modes gloo,acc,acc-hook,acc-bf16,acc-fp16 --out "$tmp/r$n-$r.json" >/dev/null 2>&1
    done
    "$python" - "$tmp" "$n" "$rounds" <<'EOF'
import json, statistics, sys
tmp, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = [{r["mode"]: r["step_ms"] for r in json.load(open("%s/r%d-%d.json" % (tmp, n, k)))}
        for k in range(1, rounds + 1)]
med = {m: statistics.median(r[m] for r in runs) for m in runs[0]}
ratio = {m: statistics.median(r[m] / r["gloo"] for r in runs) for m in runs[0]}
print("| %d | %.1f ms | %s |" % (n, med["gloo"], " | ".join(
    "%.1f ms (%.2fx)" % (med[m], ratio[m]) for m in ("acc", "acc-hook", "acc-bf16", "acc-fp16"))))
EOF
done
