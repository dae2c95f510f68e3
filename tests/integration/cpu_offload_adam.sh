#!/bin/sh
# cpu_offload_adam.sh — an optimizer whose state lives on the host, the ZeRO-Offload way:
# tests/python/cpu_offload_adam.py (a SIMULATED Llama in pure bf16) copies every gradient to the
# host, keeps the fp32 master weights and Adam's two moments there and copies the new weights back
# in place: its device holds no optimizer state (its own truth: 0 B). Its steps' 0 B had been read
# as "no state (plain SGD)" (the row, the JSON's text; the formula comparison's "the optimizer
# keeps no state"), though the script constructs no SGD, only its own Adam class. Now: "no state
# on the device", the script's construction named, its state said to be off the device, or none;
# the same loop with torch.optim.SGD (tests/python/cpu_offload_sgd.py) is still plain SGD.
# Every other number checked against the program's truth (parameters, gradients, the optimizer's
# 0 B, the peak), and the advice run: the recommended configuration of a run out of memory, and
# the largest micro-batch said to fit, rerun under the same --card, must run through.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/cpu_offload_adam.py"
PROG=$P
run() { # name, arguments
    n=$1
    shift
    timeout 300 "$VT" run -q --card 8GiB -o "$n.vt" -- python3 "$PROG" "$@" </dev/null >"$n.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "$n.out" || fail "$n: no truth line: $(tail -n 2 "$n.out")"
    report_both "$n"
}
run fit
run oom --batch_size 32
PROG="$ROOT/tests/python/cpu_offload_sgd.py"
run sgd
PROG=$P
NO_COLOR=1 "$VT" predict --from fit.vt >predict.txt 2>&1 || fail "predict --from fit failed"
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
def truth(n):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
bad = []
t, j, txt = truth("fit"), json.load(open("fit.json")), open("fit.txt").read()
assert not t["oom"] and t["steps"] == 2 and t["optim_state_bytes"] == 0 and t["host_optim_state_bytes"] > 0, t
o = j["recognized"]["optimizer"]
bpp = t["optim_state_bytes"] / t["trainable_params"]
if o["kind"] != "none" or abs(o["state_bytes_per_trainable_param"] - bpp) > 0.005:
    bad.append("fit: %s, %s B per parameter (the device's truth: %.2f)" % (o["kind"], o["state_bytes_per_trainable_param"], bpp))
# the program's optimizer is an Adam whose state is on the host: never "plain SGD", never "no state"
said = [l for l in txt.splitlines() if "optimizer  " in l or "optimizer (vs" in l]
for s in [o["text"], o["where"]] + said:
    if "SGD)" in s or "plain SGD" in s or ("keeps no state" in s and "keeps no state on the device" not in s):
        bad.append("fit: said %r of an Adam keeping its state on the host" % s[:200])
if "no state on the device" not in o["text"] or "off the device" not in o["where"] or "CPUOffloadAdam(" not in o["where"]:
    bad.append("fit: %s / %s" % (o["text"], o["where"]))
# the same loop with torch.optim.SGD(params, lr): no state anywhere, plain SGD it is
ts, os_ = truth("sgd"), json.load(open("sgd.json"))["recognized"]["optimizer"]
assert not ts["oom"] and ts["steps"] == 2 and ts["optimizer"] == "other" and ts["optim_state_bytes"] == 0, ts
if os_["kind"] != "none" or os_["text"] != "no state (plain SGD)" or "off the device" in os_["where"]:
    bad.append("sgd: %s: %s / %s" % (os_["kind"], os_["text"], os_["where"]))
cp = j["category_peaks"]
if cp["optimizer"]["bytes"] != t["optim_state_bytes"]:
    bad.append("fit: optimizer %d B, the device's %d" % (cp["optimizer"]["bytes"], t["optim_state_bytes"]))
for cat, key in (("parameters", "param_bytes"), ("gradients", "grad_bytes")):
    if abs(cp[cat]["bytes"] - t[key]) > t[key] / 1000:
        bad.append("fit: %s %d B, the program's %d" % (cat, cp[cat]["bytes"], t[key]))
if abs(j["peak"]["allocated_blocks_bytes"] - t["max_memory_allocated"]) > t["max_memory_allocated"] / 100:
    bad.append("fit: allocated peak %d, max_memory_allocated %d" % (j["peak"]["allocated_blocks_bytes"], t["max_memory_allocated"]))
# the runs to check the advice by: (name, flags)
todo = []
lb = j["prediction"]["largest_batch_size"]
if lb:
    todo.append(("largest", "--batch_size %d" % lb))
to, jo = truth("oom"), json.load(open("oom.json"))
assert to["oom"], to
rec = [a for a in jo["advice"] if a.get("recommended")]
if not rec or not rec[0].get("command_line"):
    bad.append("oom: no recommended change to run: %s" % [a["change"] for a in jo["advice"]])
else:
    todo.append(("rec", "--batch_size 32 " + rec[0]["command_line"]))
open("todo.txt", "w").write("".join("%s %s\n" % r for r in todo))
print("\n".join(bad))
exit(1 if bad else 0)
PY
grep -q '^card 8GiB (emulated) (8.00 GiB): fits' predict.txt || fail "predict: $(grep '^card' predict.txt)"
[ -s todo.txt ] || fail "no advice to check"
while read -r n flags; do
    # shellcheck disable=SC2086 # (the advice's flags, one word each)
    run "$n" $flags
    grep -q '"oom": false' "$n.out" || fail "$n ($flags) ran out of memory on the card the advice was for"
done <todo.txt
# the run out of memory before its first step: its optimizer's state is not measured, but the
# script's own class makes each of its state tensors on the host ("cpu"): no device state is
# predicted (it had been AdamW's, 174.0 MiB, said assumed), as the program's own count says of
# the reruns that fit (0 B on the device)
NO_COLOR=1 "$VT" predict --from oom.vt >oom.predict 2>&1 || fail "predict --from oom failed"
python3 - <<'PY' >check_oom.out 2>&1 || fail "$(cat check_oom.out)"
import json
bad = []
to = next(json.loads(l.split(" ", 1)[1]) for l in open("oom.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
assert to["oom"] and to["steps"] == 0, to
jo = json.load(open("oom.json"))
o, pr = jo["recognized"]["optimizer"], jo["prediction"]
if o["kind"] != "none" or o["text"] != "no state on the device" or "on the host" not in o["where"]:
    bad.append("oom: %s: %s / %s" % (o["kind"], o["text"], o["where"]))
reruns = [n for n in ("rec", "largest") if __import__("os").path.exists(n + ".out")]
assert reruns
for n in reruns:
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] == 2, (n, t)
    if pr["calibrated_by_category"]["optimizer"] != t["optim_state_bytes"]:
        bad.append("oom: optimizer predicted %d B, the program's %d on the device (%s)"
                   % (pr["calibrated_by_category"]["optimizer"], t["optim_state_bytes"], n))
if pr["optimizer_state_assumed_adamw"] or any("assume AdamW" in x for x in pr["notes"]):
    bad.append("oom: AdamW's state assumed: %s" % pr["notes"])
txt = open("oom.predict").read()
if "assume AdamW" in txt or any(l.startswith("  optimizer ") for l in txt.splitlines()):
    bad.append("oom: predict --from: %s" % [l for l in txt.splitlines() if "optimizer" in l or "AdamW" in l][:3])
print("\n".join(bad))
exit(1 if bad else 0)
PY
# the same run predicted with 2 accumulation steps: the program makes its gradients on the device
# (bf16, its own count 87.0 MiB, grad_bytes of the run that fit) and none of its optimizer's
# state (on the host): the second micro-batch's backward holds the first's gradients, which the
# run out of memory in its first backward had not made. The heading names what its rows add,
# and no more: it had said "the gradients and optimizer state its step makes later" above a
# gradients row and no optimizer row; so had a device AdamW's run out of memory at its first
# backward's start (examples/traces/sim/llama160m_bf16_b16_oom_backward.vt: tests/integration/
# predict_trace.sh) above an optimizer row and no gradients row
"$VT" predict --from oom.vt --gradient_accumulation_steps 2 >oom_a2.predict 2>&1 &&
    "$VT" predict --json --from oom.vt --gradient_accumulation_steps 2 >oom_a2.json 2>&1 ||
    fail "predict --from oom --gradient_accumulation_steps 2 failed"
python3 - <<'PY' >check_a2.out 2>&1 || fail "$(cat check_a2.out)"
import json
bad = []
t = next(json.loads(l.split(" ", 1)[1]) for l in open("fit.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
for name, a2 in (("oom.predict", False), ("oom_a2.predict", True)):
    lines = open(name).read().splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("at the "))
    head, n = lines[i], next(n for n in range(i, len(lines)) if lines[n].startswith("  = tensors"))
    rows = {l.split()[0] for l in lines[i + 1:n]}
    later = head.split("), and the ", 1)[1] if "), and the " in head else ""
    if ("gradients" in later) != ("gradients" in rows) or ("optimizer state" in later) != ("optimizer" in rows):
        bad.append("%s: %r above the rows %s" % (name, head, sorted(rows)))
    if ("gradients" in rows) != a2:
        bad.append("%s: gradients row %s" % (name, "gradients" in rows))
    if a2 and not head.endswith("and the gradients its step makes later, which the run had not made yet:"):
        bad.append("%s: %r" % (name, head))
c = json.load(open("oom_a2.json"))["by_category"]
if abs(c["gradients"] - t["grad_bytes"]) > t["grad_bytes"] / 1000 or c["optimizer"] != t["optim_state_bytes"]:
    bad.append("a2: gradients %d B, optimizer %d B; the program's %d and %d on the device"
               % (c["gradients"], c["optimizer"], t["grad_bytes"], t["optim_state_bytes"]))
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "cpu_offload_adam: ok (no device state: not plain SGD; the advice runs)"
