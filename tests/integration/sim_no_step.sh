#!/bin/sh
# sim_no_step.sh — a run that ends before its first optimizer step (its gradients freed as the
# program exits): no step is made of the gradients' frees. It had been told "1 optimizer step",
# "no state (plain SGD)" for its AdamW and "needs ~6.98 GiB" (the same configuration, run
# through its steps, takes 7.75: the state left out); with one micro-step its model was not
# inferred at all ("the transformer formula needs the sequence length T").
set -u
fail() { echo "sim_no_step: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP sim_no_step: no python3"; exit 77; }
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
for a in 1 2; do
    for how in "pre --exit-before-step" "full"; do
        set -- $how
        # shellcheck disable=SC2086
        timeout 300 "$VT" run --card 12GiB -o "$1_$a.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
            --model gpt2 --batch-size 4 --grad-accum $a --steps 2 ${2:-} >"$1_$a.out" 2>&1 ||
            { tail -n 5 "$1_$a.out"; fail "A=$a $1: run failed"; }
        "$VT" report --no-color "$1_$a.vt" >"$1_$a.txt" && "$VT" report --json "$1_$a.vt" >"$1_$a.json" ||
            fail "A=$a $1: report failed"
    done
    grep -q '"steps": 0' "pre_$a.out" || fail "A=$a: the program took a step: $(grep -o '"steps": [0-9]*' "pre_$a.out")"
    grep -q '^  events .* 0 optimizer steps' "pre_$a.txt" || fail "A=$a: $(grep '^  events' "pre_$a.txt")"
    grep -q 'plain SGD' "pre_$a.txt" && fail "A=$a: $(grep -m1 'plain SGD' "pre_$a.txt")"
    grep -q '^  optimizer  .*Adam / AdamW.*no step ran' "pre_$a.txt" ||
        fail "A=$a: $(grep '^  optimizer  ' "pre_$a.txt")"
    grep -q '^formula comparison at' "pre_$a.txt" || fail "A=$a: $(grep '^formula' "pre_$a.txt")"
    python3 - "pre_$a.json" "full_$a.json" <<'PY' || fail "A=$a: the steps, the optimizer phase or the need"
import json, sys
p, f = (json.load(open(x)) for x in sys.argv[1:])
assert p["iterations"] == 0, p["iterations"]
assert "optimizer" not in p["phases"] or not p["phases"]["optimizer"], p["phases"]
need = next(x for x in p["advice"] if x["change"].startswith("none"))["predicted_peak_bytes"]
took = f["peak"]["process_bytes"]
# what the same configuration took through its steps (AdamW's state too), never less
assert took <= need <= 1.1 * took, (need, took)
PY
done
echo "sim_no_step: ok"
