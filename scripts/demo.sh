#!/bin/sh
# demo.sh — `make demo`: the whole product end to end on a machine without a GPU. A SIMULATION
# (examples/sim/sim_train.py on the fake CUDA runtime) of GPT-2 124M at B=16, A=32 runs under
# `vramtrace run --card 12GiB` and runs out of memory; `vramtrace report` says why and what to
# change; the recommended configuration runs on the same card and fits; predicted vs measured.
# DEMO_MODE=gpu (scripts/demo-gpu.sh) does the same with examples/gpt/train.py on a real GPU.
# env: BUILD (build dir), PYTHON, DEMO_DIR (where traces go; default $BUILD/demo), DEMO_ARGS.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
VT=$BUILD/vramtrace
MODE=${DEMO_MODE:-sim}
CARD=12GiB
CONFIG=$ROOT/examples/gpt/config/gpt2-124m-12gb.py
DEMO_ARGS=${DEMO_ARGS:---max_iters=3 --eval_iters=2 --eval_interval=1000 --compile=False}
D=${DEMO_DIR:-$BUILD/demo}
mkdir -p "$D" || exit 2

if [ "$MODE" = gpu ]; then
    PY=${PYTHON:-}
    if [ -z "$PY" ]; then
        if [ -x /opt/torch/.venv/bin/python3 ]; then PY=/opt/torch/.venv/bin/python3; else PY=python3; fi
    fi
    WORKLOAD=$ROOT/examples/gpt/train.py
    LABEL="real run (PyTorch on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
    if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
        echo "demo-gpu: $PY has no PyTorch with CUDA (set PYTHON to one that has; \`make demo\` needs no GPU)" >&2
        exit 2
    fi
else
    PY=${PYTHON:-python3}
    WORKLOAD=$ROOT/examples/sim/sim_train.py
    LABEL="SIMULATION"
    export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so"
    # the simulated device is larger than the card: the OOM comes from vramtrace's card emulation
    export FAKECUDA_MEM="${FAKECUDA_MEM:-24GiB}"
    command -v "$PY" >/dev/null 2>&1 || { echo "demo: $PY not found (the simulation is a Python script; set PYTHON)" >&2; exit 2; }
fi
for f in "$VT" "$BUILD/libvramtrace.so"; do
    [ -e "$f" ] || { echo "demo: $f is missing (run \`make\` first, or \`make demo\`)" >&2; exit 2; }
done

if [ -t 1 ]; then B=$(printf '\033[1m'); N=$(printf '\033[0m'); else B=; N=; fi
heading() { printf '\n%s==== %s ====%s\n\n' "$B" "$*" "$N"; }
# json_get FILE EXPR: evaluates EXPR (Python) on r, the JSON document in FILE, with find(*keys)
# (the first numeric value under one of keys, breadth-first); prints it, or nothing.
json_get() {
    "$PYJ" - "$1" "$2" <<'PYEOF' 2>/dev/null
import json, sys
def find(*keys):
    todo = [r]
    while todo:
        o = todo.pop(0)
        if isinstance(o, dict):
            for k in keys:
                if isinstance(o.get(k), (int, float)) and not isinstance(o.get(k), bool):
                    return o[k]
            todo.extend(o.values())
        elif isinstance(o, list):
            todo.extend(o)
try:
    r = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"r": r, "find": find})
    if v is not None:
        print(v)
except Exception:
    pass
PYEOF
}
PYJ=$PY
command -v python3 >/dev/null 2>&1 && PYJ=python3
mib() { awk -v b="$1" 'BEGIN { if (b == "") print "?"; else printf "%.0f MiB", b / 1048576 }'; }
stats_of() { sed -n 's/^VRAMTRACE_TORCH_STATS //p' "$1" | tail -1 >"$1.json"; }

# traced_run NAME ARGS...: runs the workload under vramtrace with the card; keeps the output.
traced_run() {
    name=$1
    shift
    rm -f "$D/$name.vt"
    echo "\$ vramtrace run --card $CARD -o $D/$name.vt -- $(basename "$PY") ${WORKLOAD#"$ROOT"/} ${CONFIG#"$ROOT"/} $DEMO_ARGS $*"
    # shellcheck disable=SC2086
    "$VT" run --card "$CARD" -o "$D/$name.vt" -- "$PY" "$WORKLOAD" "$CONFIG" $DEMO_ARGS "$@" >"$D/$name.out" 2>&1
    rc=$?
    grep -v '^VRAMTRACE_TORCH_STATS \|^iter \|^step ' "$D/$name.out" | tail -n 12
    stats_of "$D/$name.out"
    echo "(exit code $rc; full output in $D/$name.out)"
    return $rc
}

heading "vramtrace demo — $LABEL"
if [ "$MODE" = sim ]; then
    cat <<EOF
This is a SIMULATION: examples/sim/sim_train.py runs nanoGPT's training loop on simtorch, a
sizes-only imitation of PyTorch (model to the device, forward per block, logits and loss,
backward on a thread named pt_autograd_0, fused AdamW state at the first step, zero_grad,
evaluation, gradient accumulation) whose caching allocator is a fake libc10_cuda.so on the
project's FAKE CUDA runtime. No GPU and no PyTorch are involved; the tensors are the ones
eager PyTorch allocates. vramtrace itself is the real thing: LD_PRELOAD capture, attachment to
the allocator's trace hooks (every tensor and segment: mode tensor+segment), trace, report.
EOF
fi
echo
echo "Case: GPT-2 124M (n_layer=12, n_head=12, n_embd=768), block_size=1024, batch_size=16,"
echo "gradient_accumulation_steps=32, float16 AMP, on a $CARD card (vramtrace --card emulates it)."

heading "1. GPT-2 124M at micro-batch 16 on a $CARD card ($LABEL)"
traced_run oom
OOM_RC=$?

heading "2. vramtrace report (categories, formula, OOM cause, advice)"
echo "\$ vramtrace report $D/oom.vt"
"$VT" report "$D/oom.vt"
REP_RC=$?
"$VT" report --json "$D/oom.vt" >"$D/oom.report.json" 2>"$D/oom.report.err"

REC=$(json_get "$D/oom.report.json" '" ".join("--" + kv.strip() for kv in r["advice"][0]["change"].split(",") if "=" in kv)')
PRED=$(json_get "$D/oom.report.json" 'r["advice"][0].get("predicted_peak_bytes")')
PRED_RES=$(json_get "$D/oom.report.json" 'r["advice"][0].get("predicted_reserved_bytes")')
PRED_ALLOC=$(json_get "$D/oom.report.json" 'r["advice"][0].get("predicted_allocated_bytes")')
if [ -z "$REC" ]; then
    echo
    echo "demo: no recommendation could be read from \`vramtrace report --json\` (exit $REP_RC; see" >&2
    echo "      $D/oom.report.err): the demo stops here rather than run a configuration of its own" >&2
    exit 1
fi
MODE_OOM=$(json_get "$D/oom.report.json" 'r.get("mode")')

heading "3. The recommended configuration on the same card: $REC"
# shellcheck disable=SC2086
traced_run fit $REC
FIT_RC=$?

heading "4. vramtrace report of the recommended run"
echo "\$ vramtrace report $D/fit.vt"
"$VT" report "$D/fit.vt"
"$VT" report --json "$D/fit.vt" >"$D/fit.report.json" 2>"$D/fit.report.err"

heading "5. Predicted vs measured ($LABEL)"
MEAS_RES=$(json_get "$D/fit.out.json" 'r.get("max_memory_reserved")')
MEAS_ALLOC=$(json_get "$D/fit.out.json" 'r.get("max_memory_allocated")')
MEAS_PEAK=$(json_get "$D/fit.report.json" 'find("peak_process_bytes", "peak_process")')
printf '%-44s %14s %14s\n' "" "predicted" "measured"
printf '%-44s %14s %14s\n' "peak of the process (vramtrace)" "$(mib "$PRED")" "$(mib "$MEAS_PEAK")"
printf '%-44s %14s %14s\n' "allocator reserved (max_memory_reserved)" "$(mib "$PRED_RES")" "$(mib "$MEAS_RES")"
printf '%-44s %14s %14s\n' "tensors (max_memory_allocated)" "$(mib "$PRED_ALLOC")" "$(mib "$MEAS_ALLOC")"
echo
echo "first run: exit $OOM_RC ($([ "$OOM_RC" = 1 ] && echo "out of memory, as expected" || echo "expected an OOM (exit 1)"));" \
    "recommended run: exit $FIT_RC ($([ "$FIT_RC" = 0 ] && echo "fits" || echo "did not fit"))."
[ "$MODE" = sim ] && echo "All figures above come from a SIMULATION on a fake CUDA runtime (see docs/validation.md for real runs)."
echo "capture mode of the first run: ${MODE_OOM:-unknown}"
echo "Traces: $D/oom.vt $D/fit.vt"
[ "$OOM_RC" = 1 ] && [ "$FIT_RC" = 0 ]
