#!/bin/sh
# moe_routed.sh — a SIMULATED Mixture-of-Experts GPT (tests/python/moe_routed.py: 8 experts, top-2,
# Mixtral's skip of an expert its router sent no token), its Linears without biases (nanoGPT's
# --bias off) beside two LayerNorms per block (their own weight and bias). Audit 41's F10: "bias
# True: 4 tensors of d elements in each block (norm weights, norm and projection biases)" — the
# 4 d-vectors are all the norms'. Now bias is read from vectors of a projection's other output
# width (qkv's 3d, the MLP's 4d) beside its weight (--bias: True), False where there are none and
# the d-sized ones lie in LayerNorm's pairs, not known where biases of d-wide projections alone
# (--bias_out) leave nothing to tell; the script's own --bias switch (store_true) is its value (it
# had been "no flag of the recorded ... sets it"), the trace's reading where the switch has
# another name (renamed.py).
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
for n in ("never", "bias", "out", "renamed"):
    j, txt, pred, t = load(n)
    assert not t["oom"] and t["steps"] == 2 and t["trainable_params"] == t["params"], t
    # the projections' biases as the program built them (its LayerNorms keep theirs)
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
echo "moe_routed: ok (bias from the projections' own widths)"
