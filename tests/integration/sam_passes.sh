#!/bin/sh
# sam_passes.sh — SAM's two passes per optimizer step: tests/python/sam_passes.py (SIMULATED, a
# convolutional classifier, its own SAM wrapping SGD with momentum) runs two forward+backward
# passes over each batch; first_step frees the gradients (zero_grad) between them, before the base
# SGD's first step makes its momentum. Its 3 steps of 2 passes each had been "6 optimizer steps",
# "A = 1: 1 backward pass before each of the 6 optimizer steps" and a halved micro-batch "2
# micro-steps per optimizer step instead of 1". Now, against the program's own counts: every count
# of optimizer steps the report gives is the program's, or it says it is not known (the JSON's
# iterations_known false, growth.optimizer_steps null); A is not said to be passes per step it is
# not; so with a base SGD whose later steps allocate nothing (--wd 0) and in a run of one step.
# The same program trained the plain way (--sam 0, one pass per step) keeps its exact count and
# A = 1. SAM's copy of the weights (old_p, made in first_step, outside the base SGD's step) had
# been "parameters" (twice the model's weights) and its state SGD's momentum alone (4 B per
# parameter): now it is the optimizer's state, whose bytes per parameter are the program's own.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME ARGS...
    n=$1
    shift
    timeout 300 "$VT" run -q --card 3GiB -o $n.vt -- python3 "$ROOT/tests/python/sam_passes.py" "$@" \
        </dev/null >$n.out 2>&1 || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
}
run sam1 --sam 1
run sam1wd0 --sam 1 --wd 0 # (the base SGD's later steps allocate nothing)
run sam1one --sam 1 --steps 1
run sam0 --sam 0
# `fit` over SAM's batch: a trial's optimizer steps are not known either (its JSON had said 6 and
# its note "showed 6 optimizer steps" of a run of 3 steps)
timeout 300 "$VT" fit --card 3GiB --max-b 32 --json --dir fs -- python3 "$ROOT/tests/python/sam_passes.py" \
    --sam 1 --batch "{B=32}" </dev/null >fs.json 2>fs.err || fail "fit failed: $(tail -n 3 fs.err)"
python3 - sam1 sam1wd0 sam1one sam0 <<'PY' || fail "see above"
import json, re, sys
bad = []
f = json.load(open("fs.json"))
t = next(json.loads(l.split(" ", 1)[1]) for l in open("fs/b32/output.log") if l.startswith("VRAMTRACE_TORCH_STATS "))
n = f["trials"][0]["optimizer_steps"]
if n is not None and n != t["steps"]:
    bad.append("fit: a trial's optimizer_steps %d, the program ran %d" % (n, t["steps"]))
for m in re.findall(r"showed (\d+) optimizer steps", f["accumulation_note"] or ""):
    if int(m) != t["steps"]:
        bad.append("fit: its note says %s optimizer steps, the program ran %d" % (m, t["steps"]))
for base in sys.argv[1:]:
    r = json.load(open(base + ".json"))
    txt = open(base + ".txt").read()
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] >= 1 and t["backward_passes"] == t["steps"] * t["passes_per_step"], t
    known = r.get("iterations_known", True)
    if known and r["iterations"] != t["steps"]:
        bad.append("%s: %d optimizer steps in the JSON, the program ran %d" % (base, r["iterations"], t["steps"]))
    g = r["growth"]["optimizer_steps"]
    if g is not None and g != t["steps"] and g != t["steps"] + 1:  # (+1: a setup's optimizer allocations)
        bad.append("%s: growth.optimizer_steps %d, the program ran %d" % (base, g, t["steps"]))
    for n in re.findall(r"(\d+) optimizer steps?\b", txt):
        if int(n) != t["steps"]:
            bad.append("%s: the text says %s optimizer steps, the program ran %d" % (base, n, t["steps"]))
    a = r["config"]["gradient_accumulation_steps"]
    for p, n in re.findall(r"(\d+) backward pass(?:es)? before each of the (\d+) optimizer steps", txt + json.dumps(r)):
        if (int(p), int(n)) != (t["passes_per_step"], t["steps"]):
            bad.append("%s: %s passes before each of %s steps, the program's %d of %d" % (base, p, n, t["passes_per_step"], t["steps"]))
    if a["value"] is not None and a["value"] != t["grad_accum"]:
        bad.append("%s: A = %s, the program accumulates %d" % (base, a["value"], t["grad_accum"]))
    for m in re.findall(r"(\d+) micro-steps per optimizer step instead of (\d+)", txt):
        if int(m[1]) != t["passes_per_step"] and t["passes_per_step"] != t["grad_accum"]:
            bad.append("%s: advice says %s micro-steps instead of %s: each step ran %d passes" % (base, m[0], m[1], t["passes_per_step"]))
    if base == "sam0" and (not known or r["iterations"] != t["steps"] or a["value"] != 1):
        bad.append("sam0: the plain run's steps (%s, known %s) or A (%s) not told" % (r["iterations"], known, a["value"]))
    if base.startswith("sam1") and known:
        bad.append("%s: iterations_known not false" % base)
    if base.startswith("sam1") and a["value"] is None and "%d backward passes" % t["backward_passes"] not in a["where"]:
        bad.append("%s: A's row does not say the run's passes: %s" % (base, a["where"]))
    if r["categories"]["parameters"] > t["param_bytes"] * 1.01:
        bad.append("%s: parameters %d at the peak, the model's weights %d" % (base, r["categories"]["parameters"], t["param_bytes"]))
    bpp = r["recognized"]["optimizer"].get("state_bytes_per_trainable_param")
    own = t["optim_state_bytes"] / t["trainable_params"]
    if bpp is None or abs(bpp - own) > 0.01:
        bad.append("%s: %s B of optimizer state per parameter, the program's %.2f" % (base, bpp, own))
    w = r["recognized"]["optimizer"]["where"]
    if base.startswith("sam1") and ("SAM (constructed" not in w or "copies of the weights that class keeps" not in w):
        bad.append("%s: the optimizer's row does not say SAM's copies: %s" % (base, w))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "sam_passes: ok (SAM's passes are no optimizer steps: its count is not known, a plain run's exact)"
