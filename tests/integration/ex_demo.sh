#!/bin/sh
# ex_demo.sh — `make demo` end to end (scripts/demo.sh on the SIMULATION): the documents' GPT-2
# 124M case OOMs under `vramtrace run --card 12GiB`, captured in mode tensor+segment (the fake
# libc10_cuda.so's trace hooks, as PyTorch's), the report's first advice fits on the same card,
# and the traces say what the simulation did (autograd thread, AdamW state, an OOM).
set -u
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "no python3"; exit 77; }
if "$VT" run -- true 2>&1 | grep -q 'not implemented'; then
    echo "vramtrace run is not implemented yet"
    exit 77
fi
fail() { echo "ex_demo: $*"; exit 1; }
DEMO_DIR="$TESTDIR/demo" BUILD="$BUILD" sh "$ROOT/scripts/demo.sh" >demo.txt 2>&1
rc=$?
[ $rc = 0 ] || { tail -60 demo.txt; fail "demo.sh exit $rc (expected: first run OOM, recommended run fits)"; }
grep -q 'SIMULATION' demo.txt || fail "the demo does not say it is a simulation"
grep -q 'out of memory, as expected' demo.txt || fail "no OOM in the first run"
grep -q 'capture mode of the first run: tensor+segment' demo.txt || fail "the demo's run is not in mode tensor+segment"
grep -q 'using the documents' demo.txt && fail "the demo fell back to a recommendation of its own"
D="$TESTDIR/demo"
"$VT" dump "$D/oom.vt" >oom.jsonl || fail "dump of the OOM trace failed"
grep -q '"type": *"oom"' oom.jsonl || fail "no OOM record in the trace"
"$VT" dump "$D/fit.vt" >fit.jsonl || fail "dump of the recommended run's trace failed"
# tensor mode (--tensors: the cudaMallocAsync backend, one allocation per tensor) works too
SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB "$VT" run --tensors --card 12GiB -q -o tensors.vt -- \
    "$PY" "$ROOT/examples/sim/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" --max_iters=2 \
    --eval_iters=1 --eval_interval=1000 --compile=False --batch_size=4 --gradient_accumulation_steps=2 \
    >tensors.out 2>&1 || { cat tensors.out; fail "tensor-mode run of the recommended batch size failed"; }
"$VT" dump tensors.vt >tensors.jsonl || fail "dump of the tensor-mode trace failed"
grep -q 'adamw.py' tensors.jsonl || fail "no allocation from simtorch/optim/adamw.py in tensor mode"
grep -q '"api":"cudaMallocAsync"' tensors.jsonl || fail "tensor mode did not use cudaMallocAsync"
grep -q '"pt_autograd_0"' fit.jsonl || fail "no pt_autograd_0 thread in the recommended run's trace"
grep '"type": *"alloc"' fit.jsonl | grep -q '"backward": *true' || fail "no backward-flagged allocation"
"$VT" report --json "$D/oom.vt" >oom.json || fail "report --json of the OOM trace failed"
"$PY" - oom.json <<'PYEOF' || fail "the OOM report lacks the OOM or a fitting first advice"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "tensor+segment", r["mode"]
assert r["oom"] and r["oom"]["requested_bytes"] > 0, r.get("oom")
assert r["advice"] and r["advice"][0]["fits"], r["advice"][:1]
assert "batch_size" in r["advice"][0]["change"], r["advice"][0]
PYEOF
"$VT" report --json "$D/fit.vt" >fit.json || fail "report --json of the recommended run failed"
"$PY" - oom.json fit.json <<'PYEOF' || fail "the recommended run's measured peak is not within 10 % of the prediction"
import json, sys
oom, fit = (json.load(open(p)) for p in sys.argv[1:3])
pred, meas = oom["advice"][0]["predicted_peak_bytes"], fit["peak"]["process_bytes"]
assert fit["oom"] is None, fit["oom"]
assert abs(pred - meas) <= 0.10 * meas, (pred, meas)
print(f"predicted {pred / 2**20:.0f} MiB, measured {meas / 2**20:.0f} MiB")
PYEOF
echo ok
