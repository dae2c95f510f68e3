#!/usr/bin/env bash
# gpu-overhead.sh OUTDIR — step-time overhead of vramtrace on a real GPU: examples/gpt/train.py
# (the documents' 30M model, eager, 40 iterations) plain and under `vramtrace run` (native +
# Python stacks), alternating, in each allocator mode; medians of ms/iter into OUTDIR/overhead.md.
# Builds like gpu-validate.sh (from .debs/ when carried). ~4 minutes on an H100.
set -u
OUT=${1:?usage: bash scripts/gpu-overhead.sh OUTDIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 2
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
BUILD=build/gpu
if ls .debs/*.deb >/dev/null 2>&1; then
    rm -rf .deps && mkdir -p .deps && for d in .debs/*.deb; do dpkg -x "$d" .deps; done
    make -j"$(nproc)" BUILD=$BUILD DEPS_PREFIX="$PWD/.deps/usr" all >"$OUT/build.log" 2>&1 || { tail "$OUT/build.log"; exit 2; }
else
    make -j"$(nproc)" BUILD=$BUILD all >"$OUT/build.log" 2>&1 || { tail "$OUT/build.log"; exit 2; }
fi
VT=$PWD/$BUILD/vramtrace
CFG=examples/gpt/config/nanogpt-30m-4070.py
ARGS="--max_iters=40 --eval_iters=1 --eval_interval=1000"
W=$(mktemp -d)
ms() { sed -n 's/^VRAMTRACE_TORCH_STATS //p' "$1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["ms_per_iter"])'; }
: >"$OUT/overhead.tsv"
for mode in native expandable tensors compiled; do
    conf=""; extra="--compile=False"
    case $mode in
        expandable) conf="expandable_segments:True" ;;
        tensors) conf="backend:cudaMallocAsync" ;;
        compiled) extra="--compile=True" ;;
    esac
    reps=2; [ $mode = compiled ] && reps=1
    for rep in $(seq 1 $reps); do
        PYTORCH_CUDA_ALLOC_CONF=$conf "$PY" examples/gpt/train.py $CFG $ARGS $extra >"$W/p.log" 2>&1
        PYTORCH_CUDA_ALLOC_CONF=$conf "$VT" run -q -o "$W/t.vt" -- "$PY" examples/gpt/train.py $CFG $ARGS $extra >"$W/t.log" 2>&1
        n=$("$VT" dump --no-resolve "$W/t.vt" 2>/dev/null | grep -c '"type":"\(alloc\|free\)"')
        printf '%s\t%s\t%s\t%s\t%s\n' "$mode" "$rep" "$(ms "$W/p.log")" "$(ms "$W/t.log")" "$n" | tee -a "$OUT/overhead.tsv"
        rm -f "$W"/t.vt*
    done
done
"$PY" - "$OUT/overhead.tsv" >"$OUT/overhead.md" <<'PYEOF'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mode, rep, plain, traced, events = line.split("\t")
    rows[mode].append((float(plain), float(traced), int(events)))
print("| mode (30M model, 40 iterations) | ms/iter plain | ms/iter traced | overhead | events traced |")
print("|---|---|---|---|---|")
for mode, r in rows.items():
    p = statistics.median(x[0] for x in r); t = statistics.median(x[1] for x in r)
    print(f"| {mode} | {p:.2f} | {t:.2f} | {100 * (t - p) / p:+.1f} % | {r[0][2]} |")
PYEOF
cat "$OUT/overhead.md"
