#!/bin/sh
# oom_first_step.sh — an out-of-memory error in a run's first optimizer step (a SIMULATED
# diffusion UNet with an EMA copy and AdamW on a 2816 MiB card) is said to have come in the first
# step, when the optimizer makes its state: the failed step is counted among the run's steps
# ("1 optimizer step (out of memory in it)"), and that clause had never been printed (it was
# said of "iteration 0" only when no step was counted), nor does it name AdamW's state for an
# optimizer the run may not have.
set -u
fail() { echo "oom_first_step: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP oom_first_step: no python3"; exit 77; }
SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB "$VT" run -q --card 2816MiB -o d.vt -- \
    python3 "$ROOT/examples/sim/sim_diffusion.py" --batch-size 2 --steps 3 >d.out 2>&1
"$VT" report --no-color d.vt >d.txt || fail "report"
grep -q '^  events .* 1 optimizer step (out of memory in it)' d.txt || fail "not the first step: $(grep '^  events' d.txt)"
grep -q '^    the OOM came in the first optimizer step, when the optimizer creates its state (kept for every later step)$' d.txt ||
    fail "$(grep -A1 '^  cause' d.txt)"
"$VT" report --json d.vt | python3 -c 'import json,sys; o=json.load(sys.stdin)["oom"]; assert o["cause"] == "spike" and "first optimizer step" in o["evidence"], o' ||
    fail "JSON"
echo "oom_first_step: ok"
