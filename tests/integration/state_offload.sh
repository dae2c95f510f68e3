#!/bin/sh
# state_offload.sh — optimizer state kept on the host between steps: tests/python/ckpt_device.py
# --offload (a SIMULATED GPT of the program's own, fused AdamW) moves every state tensor to the
# host after each step and brings it back with .cuda() just before the next one. The state
# brought back had been "inputs" (a batch, scaled with the micro-batch), and the prediction of the
# run's own configuration had held the state through every forward: 1.36 GB "needed" by a run
# that peaked at 1.04 GB, and at a larger batch more than the card for a run that ran through.
# Now the copies are optimizer state, and the run's own configuration is predicted at what it
# measured, whether the moment measured came after a forward (B = 1: 1.02 GiB had been "needed"
# where it took 932 MiB; 12) or in a forward after steps, with no state live (B = 2).
set -u
. "$ROOT/tests/sim_env.sh"
for b in 1 2 12; do
    timeout 300 "$VT" run -q --card 3GiB -o "b$b.vt" -- python3 "$ROOT/tests/python/ckpt_device.py" \
        --offload --save_every 100 --batch_size $b </dev/null >"b$b.out" 2>&1
    report_both "b$b"
    NO_COLOR=1 "$VT" predict --from "b$b.vt" >"p$b.txt" 2>&1 || fail "predict --from b$b failed"
done
python3 - b1.json b1.out b2.json b2.out b12.json b12.out <<'PY' || fail "see above"
import json, sys
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
for i in (1, 3, 5):
    r, t = json.load(open(sys.argv[i])), truth(sys.argv[i + 1])
    assert not t["oom"] and t["steps"] == 4, t  # (the case: it ran through)
    # the state brought back is the optimizer's, never a batch
    assert r["category_peaks"]["inputs"]["bytes"] <= t["input_bytes"], r["category_peaks"]["inputs"]
    assert r["category_peaks"]["optimizer"]["bytes"] == t["optim_state_bytes"], (r["category_peaks"], t)
    # the run's own configuration needs what the run took: no more
    p = r["prediction"]
    assert p["current_allocated_bytes"] <= t["max_memory_allocated"], (p["current_allocated_bytes"], t)
    assert p["current_peak_bytes"] <= r["peak"]["process_bytes"], (p["current_peak_bytes"], r["peak"])
    # measured in a forward after steps with no state live (B = 2), or after a forward (1, 12):
    # the forwards' state read from the run either way
    cal = p["calibration"]
    assert cal["measured_after_forward"] == (i != 3) and cal["optimizer_state_not_kept"], (i, cal)
PY
grep -q '^card 3GiB (emulated) (3.00 GiB): fits' p2.txt || fail "predict b2: $(grep '^card' p2.txt)"
grep -q '^  recommended: none (keep the current configuration)' b2.txt ||
    fail "b2: $(grep '^  recommended' b2.txt)"
echo "state_offload: ok (state brought back for each step: optimizer state; the run's own configuration at what it took)"
