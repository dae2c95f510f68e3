#!/bin/sh
# pcgrad_tasks.sh — a multi-task step's per-task backward passes of one forward (PCGrad):
# tests/python/pcgrad_tasks.py (SIMULATED) runs one forward of a shared trunk and --tasks heads,
# then per task zero_grad(set_to_none=True) and loss.backward(retain_graph=True), keeping a flat
# copy of every gradient; the copies merged into p.grad, one AdamW step. Each task's zero_grad
# between the passes of one forward had been an optimizer step: 2 steps of 4 passes "8 optimizer
# steps", "A = 1: 1 backward pass before each of the 8 optimizer steps", the per-task copies
# (freed at the step's end) a leak "never emptied ... reaches the card at step N"; a run out of
# memory in the projection after 24 passes, before any step, "23 optimizer steps", "during
# forward", its cause "the tensors of one micro-batch" (most of them the per-task copies) and
# "recommended: micro-batch 16 → 8 ... fits", which runs out of memory. Now, against the
# program's own counts: every count of optimizer steps the report gives is the program's, or it
# says it is not known; A is not said to be passes per step it is not; no growth of the per-task
# copies is said to stay alive past a step, nor to reach the card; the run out of memory is told
# after its passes, its cause what the step made after them, names the flag with their count,
# and what it recommends (a micro-batch, the largest one) runs when rerun.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/pcgrad_tasks.py"
run() { # NAME CARD ARGS...
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o $n.vt -- python3 "$P" "$@" </dev/null >$n.out 2>&1
    grep -q "^VRAMTRACE_TORCH_STATS " $n.out || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
    "$VT" predict --from $n.vt >$n.predict 2>&1 || fail "predict --from $n failed: $(tail -n 3 $n.predict)"
}
run fit 1GiB --tasks 4
run oom 1300MiB --tasks 24
python3 - fit oom <<'PY' || fail "see above"
import json, re, sys
bad = []
for base in sys.argv[1:]:
    r = json.load(open(base + ".json"))
    txt = open(base + ".txt").read()
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert t["backward_passes"] >= 2 * max(t["steps"], 1) and t["oom"] == (base == "oom"), t  # (the case)
    if r.get("iterations_known", True) and r["iterations"] != t["steps"]:
        bad.append("%s: %d optimizer steps in the JSON, the program ran %d" % (base, r["iterations"], t["steps"]))
    g = r["growth"]["optimizer_steps"]
    if g is not None and g != t["steps"]:
        bad.append("%s: growth.optimizer_steps %d, the program ran %d" % (base, g, t["steps"]))
    for n in re.findall(r"(\d+) optimizer steps?\b", txt):
        if int(n) != t["steps"]:
            bad.append("%s: the text says %s optimizer steps, the program ran %d" % (base, n, t["steps"]))
    for p, n in re.findall(r"(\d+) backward pass(?:es)? before each of the (\d+) optimizer steps", txt + json.dumps(r)):
        if (int(p), int(n)) != (t["passes_per_step"], t["steps"]):
            bad.append("%s: %s passes before each of %s steps, the program's %d of %d" % (base, p, n, t["passes_per_step"], t["steps"]))
    a = r["config"]["gradient_accumulation_steps"]["value"]
    if a is not None and a != t["grad_accum"]:
        bad.append("%s: A = %s, the program accumulates %d" % (base, a, t["grad_accum"]))
    if not r.get("iterations_known", True) and "another backward pass of the same forward" not in txt:
        bad.append("%s: the steps not known, but not why (the passes of one forward)" % base)
    # every weight trains (one task's pass reaches the trunk and its head), in fp32, with AdamW
    for w in ("take no gradient", "plain SGD", "autocast computes", "a state of its own size"):
        if w in txt + open(base + ".predict").read():
            bad.append("%s: says %r: %s" % (base, w, [l.strip()[:160] for l in txt.split("\n") if w in l][:2]))
    rec = r["recognized"]
    tp = rec["trainable_params"]
    if tp is not None and (tp > t["trainable_params"] or (tp < t["trainable_params"] and not rec.get("trainable_params_at_least"))):
        bad.append("%s: trainable %s (at least: %s), the program trains %d" % (base, tp, rec.get("trainable_params_at_least"), t["trainable_params"]))
    if r["config"]["dtype"]["value"] not in (None, "float32"):
        bad.append("%s: dtype %s, the program is fp32" % (base, r["config"]["dtype"]["value"]))
    p = r["inferred"].get("params")
    if p and abs(p["value"] - t["params"]) > t["params"] // 100:
        bad.append("%s: %d parameters inferred, the program has %d" % (base, p["value"], t["params"]))
    if r["growth"]["reaches_card"] is not None or "never emptied" in txt:
        bad.append("%s: growth of the per-task copies said kept: %s" % (base, r["growth"]["reaches_card"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
python3 - oom >rerun.txt <<'PY' || fail "$(cat rerun.txt)"
import json, sys
r = json.load(open("oom.json"))
txt = open("oom.txt").read()
t = next(json.loads(l.split(" ", 1)[1]) for l in open("oom.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"].startswith("projection") and t["steps"] == 0, t  # (the case)
bad = []
oom = [l for l in txt.split("\n") if l.startswith("OOM:")][0]
if "during forward" in oom or "after %d backward passes" % t["tasks"] not in oom:
    bad.append("the OOM's moment: " + oom)
if "cut the forward short" in txt:  # (its forward was whole: 24 passes ran after it)
    bad.append("the forward said cut short: " + [l for l in txt.split("\n") if "cut the forward short" in l][0].strip())
if r["oom"]["after_backward_passes"] != t["tasks"]:
    bad.append("JSON oom.after_backward_passes %s, the program's %d" % (r["oom"]["after_backward_passes"], t["tasks"]))
if "one micro-batch (activations, logits" in r["oom"]["cause_text"]:
    bad.append("cause: " + r["oom"]["cause_text"])
if "--tasks %d" % t["tasks"] not in txt[txt.find("\nadvice for"):]:
    bad.append("the flag with the passes' count (--tasks %d) is not named" % t["tasks"])
# the step's own tensors after its passes, at any micro-batch: the kept copies, their clones and
# the stack of them it failed to make, beside the weights
need = 3 * t["copies_bytes"] + t["param_bytes"]
for a in r["advice"]:
    if a["batch_size"] and a["batch_size"] < t["batch_size"] and a["predicted_allocated_bytes"] < need:
        bad.append("%s: %d B of tensors predicted, the step's copies alone need %d" % (a["change"], a["predicted_allocated_bytes"], need))
    if a["recommended"] and a["batch_size"] != t["batch_size"]:
        print(a["batch_size"])
lb = r["prediction"]["largest_batch_size"]
if lb and not r["prediction"]["largest_batch_size_at_most"]:
    print(lb)
if bad:
    print("\n".join(bad))
    raise SystemExit(1)
PY
for b in $(sort -u rerun.txt); do
    timeout 300 "$VT" run -q --card 1300MiB -o b$b.vt -- python3 "$P" --tasks 24 --batch-size $b </dev/null >b$b.out 2>&1
    grep -q '"oom": false' b$b.out || fail "--batch-size $b, said to fit, ran out of memory: $(grep -o '"oom_phase": "[^"]*"' b$b.out)"
done
echo "pcgrad_tasks: ok (the per-task passes of one forward are no optimizer steps)"
