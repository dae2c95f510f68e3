#!/bin/sh
# ckpt_device.sh — a checkpoint kept on the device: tests/python/ckpt_device.py (a SIMULATED GPT of
# the program's own, bf16 autocast, fused AdamW) clones every weight and every optimizer state
# tensor after each step and keeps the copies until the next ones (its truth: their bytes). The
# clones had been "activations" (and scaled with the micro-batch), the out-of-memory error they
# caused "the tensors of one micro-batch ... too large". Now: they are held as weights (the
# parameters at the peak are the weights' bytes and the copies' of a weight's size, to the byte),
# never inputs, and the error's cause names them (kept_copies) with their bytes; the same batch
# with the copies on the host runs through (the program's own truth).
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, arguments
    n=$1
    shift
    timeout 300 "$VT" run -q --card 3GiB -o "$n.vt" -- python3 "$ROOT/tests/python/ckpt_device.py" "$@" \
        </dev/null >"$n.out" 2>&1
    report_both "$n"
}
run fit --batch_size 8
run oom --batch_size 10
run host --batch_size 10 --ckpt_host
NO_COLOR=1 "$VT" predict --from fit.vt >predict.txt 2>&1 || fail "predict --from failed: $(tail -n 2 predict.txt)"
python3 - fit.json fit.out oom.json oom.out host.out <<'PY' || fail "see above"
import json, sys
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
r, t = json.load(open(sys.argv[1])), truth(sys.argv[2])
o, to, th = json.load(open(sys.argv[3])), truth(sys.argv[4]), truth(sys.argv[5])
assert not t["oom"] and t["checkpoints"] == 4, t  # (the case: it fit, copies on the device)
cats = r["categories"]
assert cats["parameters"] == t["param_bytes"] + t["ckpt_weight_sized_bytes"], (cats["parameters"], t)
assert cats["inputs"] <= t["input_bytes"], (cats["inputs"], t["input_bytes"])
assert r["category_peaks"]["inputs"]["bytes"] <= t["input_bytes"], r["category_peaks"]["inputs"]
# the same batch runs out of memory with the copies on the device, not with them on the host
assert to["oom"] and to["checkpoints"] == 1 and not th["oom"] and th["steps"] == 4, (to, th)
assert o["oom"]["cause"] == "kept_copies", o["oom"]["cause"]
gib = "%.2f GiB of weight-sized copies" % (to["ckpt_weight_sized_bytes"] / 2**30)
assert o["oom"]["evidence"].startswith(gib), (gib, o["oom"]["evidence"])
PY
grep -q '^  cause: copies of the weights or the optimizer.s state the program keeps on the device' oom.txt ||
    fail "oom: $(grep -A1 '^  cause' oom.txt)"
grep -q "^  live at the OOM: parameters .* of it the program's copies made between steps)" oom.txt ||
    fail "oom: $(grep '^  live at the OOM' oom.txt)"
grep -q '^card 3GiB (emulated) (3.00 GiB): fits' predict.txt || fail "predict: $(grep '^card' predict.txt)"
echo "ckpt_device: ok (a checkpoint's clones on the device: held as weights, named in the cause)"
