#!/bin/sh
# predict_sim.sh — `vramtrace predict` against the SIMULATION (examples/sim/sim_train.py on the
# fake CUDA runtime, a 12 GiB device; no vramtrace run involved): what predict says fits runs,
# what it says does not fit runs out of memory, and the predicted allocated / reserved peaks
# are within 3 % / 10 % of the simulated caching allocator's.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CFG="$ROOT/examples/gpt/config/gpt2-124m-12gb.py"
fail() { echo "FAIL: $*"; exit 1; }

for ba in "16 32" "8 64" "7 2" "4 128"; do
    set -- $ba
    args="--batch_size=$1 --gradient_accumulation_steps=$2 --compile=False"
    # shellcheck disable=SC2086
    "$VT" predict "$CFG" $args --card 12GiB --json >"p$1.json" || fail "predict $args"
    # shellcheck disable=SC2086
    FAKECUDA_MEM=12GiB "$PY" "$ROOT/examples/sim/sim_train.py" "$CFG" $args \
        --max_iters=2 --eval_iters=1 --eval_interval=1000 >"s$1.txt" 2>&1
    sed -n 's/^VRAMTRACE_TORCH_STATS //p' "s$1.txt" >"s$1.json"
    "$PY" - "p$1.json" "s$1.json" "$args" <<'PYEOF' || fail "$args: see above"
import json, sys
p, s, args = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
print(f"{args}: predicted fits={p['fits']} tensors={p['tensor_bytes']/2**30:.2f} GiB "
      f"reserved={p['reserved_bytes']/2**30:.2f} GiB; simulation oom={s['oom']} "
      f"allocated={s['max_memory_allocated']/2**30:.2f} GiB reserved={s['max_memory_reserved']/2**30:.2f} GiB")
if p["fits"]:
    assert not s["oom"], "predicted to fit, but the simulation ran out of memory"
if s["oom"]:
    assert not p["fits"], "the simulation ran out of memory but predict said it fits"
else:
    ea = abs(p["tensor_bytes"] - s["max_memory_allocated"]) / s["max_memory_allocated"]
    er = abs(p["reserved_bytes"] - s["max_memory_reserved"]) / s["max_memory_reserved"]
    assert ea < 0.03, f"allocated off by {ea:.1%}"
    assert er < 0.10, f"reserved off by {er:.1%}"
PYEOF
done
grep -q '"fits":false' p16.json || fail "B=16 should not fit"
grep -q '"fits":true' p4.json || fail "B=4, A=128 should fit"
# a model with no formula (a GAN) scales what it measured with the micro-batch, but its loss's
# scalars (4 B at B=64: under 4 B a sample) stay whole: predict had said "logits/loss 2 B" at 32
for b in 32 256; do
    "$VT" predict --from "$ROOT/examples/traces/sim/gan_b64_fit.vt" --batch-size $b --json >g$b.json ||
        fail "predict --from the GAN at $b"
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["by_category"]; assert c["logits_loss"] == 4, c["logits_loss"]' g$b.json ||
        fail "GAN at $b: its loss scaled"
done
echo ok
