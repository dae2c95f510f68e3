#!/bin/sh
# kge_adagrad.sh — an optimizer that makes its state at its construction: tests/python/kge_adagrad.py
# (a SIMULATED TransE, DGL-KE's shape: two embedding tables, dense gradients) with Adagrad, whose
# sums torch.optim.Adagrad.__init__ makes before any step (--optim torch), or a class of the
# program's own that does the same (--optim own; --optim subclass: a torch.optim.Optimizer
# subclass of a name of its own). The sums had been parameters ("parameters 4.38
# GiB" for 2.19 of weights), the optimizer "no state (plain SGD)", the weights "2.19 GiB take no
# gradient"; torch's constructor had counted as an optimizer step; an out-of-memory run before any
# step said "no step ran: its state not measured" and predict "made at its first step". Now,
# against the program's own counts: parameters, optimizer state and 4 B per trainable parameter,
# the steps the program took, in both runs. And the dense embedding backward's table-sized
# gradient, made whole whatever the batch: a half micro-batch's what-if had scaled it (predicted
# 10 % below its rerun); the OOM making it (weights, gradients, sums and it over the card) had
# been "the tensors of one micro-batch ... too large" with 0 MiB of them.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/kge_adagrad.py"
export P
run() { # NAME CARD ARGS...: run the program under vramtrace, the report's text and JSON
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o "$n.vt" -- python3 "$P" "$@" </dev/null >"$n.out" 2>&1
    report_both "$n"
}
run own 2GiB --optim own
run torch 2GiB --optim torch
run oom 2GiB --optim own --hidden_dim 128
run half 2GiB --optim own --batch_size 128
run sub 2GiB --optim subclass
python3 - own.json own.out torch.json torch.out oom.json oom.out half.json half.out sub.json sub.out \
    >check.out 2>&1 <<'PY' || fail "$(cat check.out)"
import json, os, sys
def load(j, o):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(o) if l.startswith("VRAMTRACE_TORCH_STATS "))
    return json.load(open(j)), t
bad = []
for k in (1, 3, 9):
    j, t = load(sys.argv[k], sys.argv[k + 1])
    name = sys.argv[k]
    assert not t["oom"] and t["steps"] == 2, t
    c = j["categories"]
    if c["parameters"] != t["param_bytes"]:
        bad.append("%s: parameters %d, the program's weights %d" % (name, c["parameters"], t["param_bytes"]))
    if c["optimizer"] != t["optim_state_bytes"]:
        bad.append("%s: optimizer %d, the program's Adagrad sums %d" % (name, c["optimizer"], t["optim_state_bytes"]))
    o = j["recognized"]["optimizer"]
    if o["state_bytes_per_trainable_param"] != t["optim_state_bytes"] / t["trainable_params"]:
        bad.append("%s: %s B of state per parameter (%s)" % (name, o["state_bytes_per_trainable_param"], o["where"]))
    if j["recognized"]["trainable_params"] != t["trainable_params"]:
        bad.append("%s: trainable %s, the program's %d" % (name, j["recognized"]["trainable_params"], t["trainable_params"]))
    if j["iterations"] != t["steps"]:
        bad.append("%s: %d optimizer steps, the program's %d" % (name, j["iterations"], t["steps"]))
    p = (j.get("inferred") or {}).get("params")  # (the sums are no weights: not among them)
    if p and p.get("value") not in (None, t["trainable_params"]):
        bad.append("%s: %s weight elements inferred (%s), the program's %d" % (name, p["value"], p.get("where"), t["trainable_params"]))
j, t = load(sys.argv[5], sys.argv[6])
assert t["oom"] and t["oom_phase"] == "backward" and t["steps"] == 0, t
live = j["oom"]["live"] if "live" in j["oom"] else None
if j["iterations"] != 0:
    bad.append("oom: %d optimizer steps, the program took none" % j["iterations"])
o = j["recognized"]["optimizer"]
if "construction" not in o["where"] or "not measured" in o["where"]:
    bad.append("oom: optimizer %s" % o["where"])
if j["oom"]["cause"] != "weights_and_state_too_large":
    bad.append("oom: cause %s (%s)" % (j["oom"]["cause"], j["oom"].get("evidence")))
# no micro-batch fits: the lever left is what sizes the weights, the flags of the line that made
# them (the tables' width given on the command line, their rows by the script's defaults)
made = next(i + 1 for i, l in enumerate(open(os.environ["P"])) if "model = TransE(" in l)
for want in ("made at kge_adagrad.py:%d main" % made, "--hidden_dim (%d, on the command line)" % t["hidden_dim"],
             "--n_entities (%d, the script's default)" % t["n_entities"]):
    if want not in j["oom"]["evidence"]:
        bad.append("oom: no %r in %r" % (want, j["oom"]["evidence"]))
# the half micro-batch's what-if against its rerun (the table's dense gradient kept whole)
f, _ = load(sys.argv[1], sys.argv[2])
h, ht = load(sys.argv[7], sys.argv[8])
assert not ht["oom"] and ht["batch_size"] == 128, ht
for a in f["advice"]:
    if a["batch_size"] == 128 and a["predicted_peak_bytes"] < 0.99 * h["peak"]["process_bytes"]:
        bad.append("fit: %s predicted %d; its rerun peaks at %d" % (a["change"], a["predicted_peak_bytes"], h["peak"]["process_bytes"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
for n in own torch oom; do
    grep -q "take no gradient\|plain SGD\|no step ran" $n.txt && fail "$n: $(grep -o '[^;(]*\(take no gradient\|plain SGD\|no step ran\)[^;)]*' $n.txt | head -n 2)"
done
# the OOM's cause names the table's dense gradient beside the weights, their gradients and the
# sums (they alone fit the card)
grep -q "^  cause: .* a weight's size" oom.txt || fail "oom: $(grep -A1 '^  cause:' oom.txt)"
# an fp32 run whose compute dtype the trace does not tell: no autocast said of its weights
"$VT" predict --from own.vt >predown.out 2>&1 || fail "predict --from own.vt: $(tail -n 2 predown.out)"
grep "^  parameters" predown.out | grep -q autocast && fail "predict --from: $(grep '^  parameters' predown.out)"
"$VT" predict --from oom.vt >pred.out 2>&1
grep "^  optimizer" pred.out | grep -q "made at its construction" || fail "predict --from: $(grep '^  optimizer' pred.out)"
# Python 3.10's frames name no class ("__init__", "<dictcomp>"): the program's own Adagrad is told
# by its construction's line (Adagrad( in the script) calling that __init__
. "$ROOT/tests/python/pythons.sh"
py310=$(vt_pythons | awk '$2 == "3.10" { print $1 }')
if [ -n "$py310" ]; then
    PY="$py310/bin/python3.10"
    timeout 300 "$VT" run -q --card 2GiB -o p310.vt -- "$PY" "$P" --optim own </dev/null >p310.out 2>&1
    report_both p310
    python3 - p310.json p310.out <<'PY' || fail "python 3.10: $(grep '^  optimizer  ' p310.txt)"
import json, sys
j = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert j["categories"]["optimizer"] == t["optim_state_bytes"], (j["categories"], t)
assert j["categories"]["parameters"] == t["param_bytes"], (j["categories"], t)
PY
fi
echo "kge_adagrad: ok (an optimizer's state made at its construction is its state, measured, with no step of its own)"
