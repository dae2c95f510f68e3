#!/bin/sh
# replay_buffer.sh — data a program keeps on the device is no weight: tests/python/replay_buffer.py
# (a SIMULATED DQN, CleanRL's shape) preallocates its replay buffer on the device in a plain class
# (torch.zeros(..., device="cuda"), uint8 frames) before training. The buffer had been read as
# parameters: in DQN-sized runs "16-bit training", half the trainable count and 4 B of Adam state
# per parameter; an OOM in its allocation "the tensors of one micro-batch ... too large" with
# 0 MiB of them, "needs ~9.79 GiB" and "not even a micro-batch of 1 fits". Now, against the
# program's own counts: the parameters are the Q-network and its target, to the byte; the
# buffer is inputs, kept whole by every what-if; the trainable count and Adam's 8 B are the
# program's; the largest micro-batch named runs on the card, and twice it does not keep 5 % free;
# the OOM's cause is the program's
# data, with no advice of the micro-batch, and its "at least" is no more than the same
# configuration measures on a larger card.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/replay_buffer.py"
run() { # NAME CARD ARGS...: run the program under vramtrace, the report's text and JSON
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o "$n.vt" -- python3 "$P" "$@" </dev/null >"$n.out" 2>&1
    report_both "$n"
}
run fit 3GiB --buffer-size 20000
run oom 3GiB --buffer-size 60000
run big 8GiB --buffer-size 60000
run fwd 3GiB --buffer-size 20000 --batch-size 4096
run half 3GiB --buffer-size 20000 --batch-size 2048
python3 - fit.json fit.out oom.json oom.out big.json big.out fwd.json fwd.out half.json half.out \
    >check.out 2>&1 <<'PY' || fail "$(cat check.out)"
import json, sys
def load(j, o):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(o) if l.startswith("VRAMTRACE_TORCH_STATS "))
    return json.load(open(j)), t
(f, ft), (o, ot), (b, bt), (w, wt), (h, ht) = (load(sys.argv[i], sys.argv[i + 1]) for i in (1, 3, 5, 7, 9))
assert not ft["oom"] and ft["steps"] == 4 and ot["oom"] and not bt["oom"], (ft, ot, bt)
assert wt["oom"] and not ht["oom"], (wt, ht)
bad = []
weights = ft["param_bytes"] + ft["target_bytes"]
if f["categories"]["parameters"] != weights:
    bad.append("parameters %d at the peak, the Q-network's and the target's %d"
               % (f["categories"]["parameters"], weights))
if f["categories"]["inputs"] < ft["buffer_bytes"]:
    bad.append("inputs %d at the peak, below the buffer's %d" % (f["categories"]["inputs"], ft["buffer_bytes"]))
rec = f["recognized"]
if rec["trainable_params"] != ft["trainable_params"]:
    bad.append("trainable %s, the program's %d" % (rec["trainable_params"], ft["trainable_params"]))
bpp = ft["optim_state_bytes"] / ft["trainable_params"]
if rec["optimizer"]["state_bytes_per_trainable_param"] != bpp:
    bad.append("optimizer %s B per parameter, the program's %g" % (rec["optimizer"]["state_bytes_per_trainable_param"], bpp))
if f["config"]["dtype"]["value"] in ("16-bit", "bfloat16", "float16"):
    bad.append("dtype %s of an fp32 run" % f["config"]["dtype"]["value"])
for a in f["advice"]:  # (every what-if keeps the buffer: the batch does not size it)
    if a["predicted_peak_bytes"] < ft["buffer_bytes"] + weights:
        bad.append("%s predicted %d, below the buffer and weights' %d" % (a["change"], a["predicted_peak_bytes"], ft["buffer_bytes"] + weights))
print("largest", f["prediction"]["largest_batch_size"])
# out of memory in a forward of 4096 beside the buffer: the what-ifs keep the buffer whole, and the
# half batch's "at least" is no more than its run measures
for a in w["advice"]:
    if a["predicted_peak_bytes"] < wt["buffer_bytes"] + weights:
        bad.append("%s predicted %d after the forward's OOM, below the buffer and weights' %d"
                   % (a["change"], a["predicted_peak_bytes"], wt["buffer_bytes"] + weights))
    if a["batch_size"] == 2048 and a["gradient_accumulation_steps"] in (None, 1) and \
            a["predicted_peak_bytes"] > h["peak"]["process_bytes"]:
        bad.append("%s predicted at least %d; its run peaks at %d" % (a["change"], a["predicted_peak_bytes"], h["peak"]["process_bytes"]))
oom = o["oom"]
if oom["cause"] != "data_too_large":
    bad.append("OOM cause %s (%s)" % (oom["cause"], oom["evidence"]))
if o["advice"] or o["prediction"]["largest_batch_size"] is not None or "advice_note" not in o:
    bad.append("advice of the micro-batch after an OOM making the buffer: %s" % [a["change"] for a in o["advice"]])
need = b["peak"]["process_bytes"] if "process_bytes" in b["peak"] else None
if need is None or o["prediction"]["current_peak_bytes"] > need:
    bad.append("the OOM run needs 'at least' %d; the same configuration on a larger card peaks at %s" % (o["prediction"]["current_peak_bytes"], need))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
lb=$(sed -n 's/^largest //p' check.out)
[ -n "$lb" ] && [ "$lb" != None ] || fail "no largest micro-batch predicted for the fit run"
timeout 300 "$VT" run -q --card 3GiB -o lb.vt -- python3 "$P" --buffer-size 20000 --batch-size "$lb" \
    </dev/null >lb.out 2>&1 || fail "the largest micro-batch named, $lb, ran out of memory: $(tail -n 2 lb.out)"
# ... and it is the largest: twice it runs out of memory or keeps less than 5 % of the card free
# (a buffer scaled with the micro-batch had made it 64)
timeout 300 "$VT" run -q --card 3GiB -o lb2.vt -- python3 "$P" --buffer-size 20000 \
    --batch-size $((2 * lb)) </dev/null >lb2.out 2>&1
if ! grep -q '"oom": true' lb2.out; then
    report_both lb2
    python3 -c 'import json, sys; sys.exit(json.load(open("lb2.json"))["peak"]["process_bytes"] <= 0.95 * 3 * 2**30)' ||
        fail "the largest micro-batch named is $lb, and $((2 * lb)) keeps 5 % of the card free"
fi
"$VT" predict --from oom.vt >pred.out 2>&1 && fail "predict --from the OOM run predicted: $(head -n 3 pred.out)"
grep -q "making its own data before any forward" pred.out || fail "predict --from: $(cat pred.out)"
"$VT" predict --from fit.vt >predfit.out 2>&1 || fail "predict --from the fit run failed: $(tail -n 2 predfit.out)"
grep -q "^  inputs .* of data the program keeps there" predfit.out || fail "predict --from: $(grep inputs predfit.out)"
# the flag that sizes the data the OOM run died making is named, with the program's value: given
# on the command line (--buffer-size 60000), or the script's default (20000, on 1280 MiB; not the
# larger --total-timesteps 30001, which the data's bytes are no multiple of) ("what sizes the
# data (a buffer's length, a dataset's) is the program's" had named no flag)
run dflt 1280MiB --total-timesteps 30001
for r in oom dflt; do
    python3 - $r.json $r.out <<'PY' || fail "$r: $(grep '^advice' $r.txt)"
import json, sys
j = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "buffer", t  # (the case: out of memory making the buffer)
how = "the script's default" if sys.argv[1].startswith("dflt") else "on the command line"
want = "--buffer-size (%d, %s) sizes the data" % (t["buffer_size"], how)
assert want in j["advice_note"], (want, j["advice_note"])
PY
done
# ... and only where the recorded script passes the flag's value to what makes the data: a
# training set kept whole on the device (tests/python/device_cache.py), sized by the script's
# constants, out of memory making it, names no flag, though --batch-size 32, which its class is
# told, divides its bytes (any flag whose value divided them had been named: "--batch-size (32,
# on the command line) sizes the data: the 1.43 GiB of it live is 32 × 48000000 B, a multiple of
# no larger value of the program's flags"); nor, without it, its default 128 beside --epochs 2
timeout 300 "$VT" run -q --card 2GiB -o cache.vt -- python3 "$ROOT/tests/python/device_cache.py" \
    --batch-size 32 --epochs 2 </dev/null >cache.out 2>&1
timeout 300 "$VT" run -q --card 2GiB -o cache2.vt -- python3 "$ROOT/tests/python/device_cache.py" \
    --epochs 2 </dev/null >cache2.out 2>&1
for r in cache cache2; do
    report_both $r
    python3 - $r.json $r.out <<'PY' || fail "$r: $(grep '^advice' $r.txt)"
import json, sys
j = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
# (the case: out of memory making the sets, the batch a divisor of the training set's bytes)
assert t["oom"] and t["oom_phase"] == "cache" and t["n_train"] * 3 * 32 * 32 % t["batch_size"] == 0, t
assert j["oom"]["cause"] == "data_too_large", j["oom"]
assert ") sizes the data" not in j["advice_note"], j["advice_note"]
assert "what sizes the data (a buffer's length, a dataset's) is the program's" in j["advice_note"], j["advice_note"]
PY
done
# the buffer made in main() itself, beside AdamW(q.parameters()) and the target's
# requires_grad_(False) (--in-main), is data the same: it had been "parameters 1.06 GiB", "16-bit"
# and "3.37 M of the 289.14 M weight elements" (any function naming a model's parameters or
# requires_grad made no data); its OOM names --buffer-size, which the line reads itself
run infit 3GiB --buffer-size 20000 --in-main
run inoom 3GiB --buffer-size 60000 --in-main
python3 - infit.json infit.out inoom.json inoom.out <<'PY' || fail "--in-main: see above"
import json, sys
def load(j, o):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(o) if l.startswith("VRAMTRACE_TORCH_STATS "))
    return json.load(open(j)), t
(f, ft), (o, ot) = load(sys.argv[1], sys.argv[2]), load(sys.argv[3], sys.argv[4])
assert not ft["oom"] and ft["steps"] == 4 and ot["oom"] and ot["oom_phase"] == "buffer", (ft, ot)
bad, weights = [], ft["param_bytes"] + ft["target_bytes"]
if f["categories"]["parameters"] != weights:
    bad.append("parameters %d, the Q-network's and the target's %d" % (f["categories"]["parameters"], weights))
if f["categories"]["inputs"] < ft["buffer_bytes"]:
    bad.append("inputs %d, below the buffer's %d" % (f["categories"]["inputs"], ft["buffer_bytes"]))
if f["recognized"]["trainable_params"] != ft["trainable_params"]:
    bad.append("trainable %s, the program's %d" % (f["recognized"]["trainable_params"], ft["trainable_params"]))
if f["config"]["dtype"]["value"] in ("16-bit", "bfloat16", "float16"):
    bad.append("dtype %s of an fp32 run" % f["config"]["dtype"]["value"])
if o["oom"]["cause"] != "data_too_large":
    bad.append("OOM cause %s" % o["oom"]["cause"])
want = "--buffer-size (%d, on the command line) sizes the data" % ot["buffer_size"]
if want not in o.get("advice_note", ""):
    bad.append("no %r: %s" % (want, o.get("advice_note")))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
# the target network's weights (the program's target_bytes, 6.4 MiB) that take no gradient, said
# in a unit that shows them (they had been "beside them 0.00 GiB of weights take no gradient"),
# in the text, the HTML and predict --from
"$VT" export --html fit.html fit.vt >/dev/null 2>&1 || fail "export --html failed"
want=$(python3 -c 'import json, sys; t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS ")); print("%.1f MiB" % (t["target_bytes"] / 2**20))' fit.out)
for f in fit.txt fit.html predfit.out; do
    grep -q "0\.00 GiB" $f && fail "$f: $(grep -o '[^;>]*0\.00 GiB[^;<]*' $f | head -n 2)"
    grep -q "$want [a-z ]*take no gradient" $f || fail "$f: the untrained weights are not $want: $(grep -o '[^;>]*take no gradient' $f | head -n 2)"
done
echo "replay_buffer: ok (a replay buffer on the device is the program's data: not weights, kept whole, its OOM its own cause)"
