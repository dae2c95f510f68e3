#!/bin/sh
# moe_routed.sh — a SIMULATED Mixture-of-Experts GPT (tests/python/moe_routed.py: 8 experts, top-2,
# Mixtral's skip of an expert its router sent no token) whose every weight requires a gradient and
# is in the optimizer, layer 0's last expert routed no token: it takes no gradient in those steps.
# Audit 41's F9: the report had said "trainable 166.84 M of the 168.94 M weight elements ... the
# rest not trained: frozen parameters, buffers, or an EMA's or a teacher's copy of weights", its
# formula reason "fp32 weights, not all trained", `predict --from` "the rest frozen: adapters such
# as LoRA trained alone, or frozen layers". Now what the trace knows: no gradient at the
# gradients' most, frozen or not reached by a step (an expert not routed to): not told apart; where
# a later step routes it (--empty_steps 1) its gradient counts it trainable: all of them.
# F10: "bias True: 4 tensors of d elements in each block (norm weights, norm and projection
# biases)" of bias=False Linears beside two LayerNorms (their weights and biases): now bias is
# read from vectors of a projection's other output width (qkv's 3d, the MLP's 4d) beside its
# weight, False where there are none and the d-sized ones lie in LayerNorm's pairs, not known
# where biases of d-wide projections alone (--bias_out) leave nothing to tell; the script's own
# --bias switch (store_true) is its value (it had been "no flag of the recorded ... sets it").
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/moe_routed.py"
run() { # NAME PROGRAM ARGS...: the program under vramtrace, its reports, predict --from
    n=$1 p=$2
    shift 2
    PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 8GiB -o "$n.vt" -- python3 "$p" "$@" \
        </dev/null >"$n.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "$n.out" || fail "$n: no truth line: $(tail -n 2 "$n.out")"
    report_both "$n"
    "$VT" predict --from "$n.vt" --card 8GiB >"$n.predict" 2>&1 || fail "$n: predict --from failed"
}
run never "$P"
run later "$P" --empty_steps 1
run bias "$P" --bias
run out "$P" --bias_out
# the same program with its switch under a name vramtrace does not read: the inference speaks
sed 's/"--bias", action/"--use_bias", dest="bias", action/' "$P" >renamed.py
grep -q '"--use_bias"' renamed.py || fail "renamed.py: the switch was not renamed"
run renamed renamed.py
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
def load(n):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    return json.load(open(n + ".json")), open(n + ".txt").read(), open(n + ".predict").read(), t
bad = []
for n in ("never", "later", "bias", "out", "renamed"):
    j, txt, pred, t = load(n)
    assert not t["oom"] and t["steps"] == 2 and t["trainable_params"] == t["params"], t
    rec = j["recognized"]
    row = [l for l in txt.splitlines() if l.startswith("  trainable ")]
    # F9: every weight trains; those with no gradient in the steps seen are not called frozen
    if t["params_never_grad"]:
        if rec["trainable_params"] != t["params"] - t["params_never_grad"]:
            bad.append("%s: trainable %s, the gradients' elements %d" % (n, rec["trainable_params"], t["params"] - t["params_never_grad"]))
        if rec.get("trainable_params_rest_untold") is not True:
            bad.append("%s: JSON trainable_params_rest_untold %r" % (n, rec.get("trainable_params_rest_untold")))
        if not row or "a step did not reach (an expert its router did not choose" not in row[0] or \
                "does not tell them apart" not in row[0]:
            bad.append("%s: %s" % (n, row))
        if "with a gradient: " not in pred:
            bad.append("%s: predict --from: %s" % (n, [l for l in pred.splitlines() if "M parameters" in l]))
    elif rec["trainable_params"] != t["params"] or "trainable_params_rest_untold" in rec:
        bad.append("%s: trainable %s of the program's %d, all of which a later step reached" % (n, rec["trainable_params"], t["params"]))
    for said in ("the rest not trained", "not all trained", "the rest frozen"):
        if t["params_never_grad"] and (said in txt or said in pred):
            bad.append("%s: %r said: %s" % (n, said, [l.strip() for l in (txt + pred).splitlines() if said in l]))
    # F10: the projections' biases as the program built them (its LayerNorms keep theirs)
    inf = j["inferred"].get("bias")
    want = 1 if t["bias"] else None if t["bias_out"] else 0
    if (inf or {}).get("value") != want:
        bad.append("%s: inferred bias %r, the program's Linears bias=%s (output projections %s)" % (n, inf, t["bias"], t["bias_out"]))
    cfg = j["config"]["bias"]
    if n == "renamed":
        if cfg["value"] is not False or cfg["source"] != "inferred":
            bad.append("%s: config bias %r" % (n, cfg))
    elif cfg["value"] is not bool(t["bias"]) or cfg.get("flag") != "--bias":
        bad.append("%s: config bias %r, the switch --bias %s" % (n, cfg, t["bias"]))
print("\n".join(bad))
exit(1 if bad else 0)
PY
grep -Eq '^  bias \(--bias\) +False +file +moe_routed.py: --bias, a switch' never.txt || fail "never: $(grep '^  bias' never.txt)"
grep -Eq '^  bias +False +inferred +bias False: no projection of another output width than d has a bias' renamed.txt ||
    fail "renamed: $(grep '^  bias' renamed.txt)"
echo "moe_routed: ok (no gradient is not frozen; bias from the projections' own widths)"
