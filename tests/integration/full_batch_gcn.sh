#!/bin/sh
# full_batch_gcn.sh — an OOM's cause on a run with no micro-batch: tests/python/full_batch_gcn.py
# (a SIMULATED full-batch GCN, OGB's products/gnn.py shape: every forward takes the whole graph,
# one optimizer step per epoch, no batch flag) runs out of memory in its first forward on a
# 2 GiB card. Its cause had been "the tensors of one micro-batch (activations, logits, a
# forward's temporaries) too large for the card" / "they grow with the micro-batch (and the input
# size)", of a run whose micro-batch the report itself calls unknown. Now the cause is one
# forward's tensors (still activations_too_large), its evidence says what they grow with and that
# the micro-batch is not known; its "needs at least" is no more than the same configuration
# measures on a larger card.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/full_batch_gcn.py"
for c in 2GiB 8GiB; do
    timeout 300 "$VT" run -q --card "$c" -o "$c.vt" -- python3 "$P" --num_nodes 400000 \
        --num_edges 4000000 </dev/null >"$c.out" 2>&1
    report_both "$c"
done
python3 - 2GiB.json 2GiB.out 8GiB.json 8GiB.out >check.out 2>&1 <<'PY' || fail "$(cat check.out)"
import json, sys
def load(j, o):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(o) if l.startswith("VRAMTRACE_TORCH_STATS "))
    return json.load(open(j)), t
(o, ot), (b, bt) = load(sys.argv[1], sys.argv[2]), load(sys.argv[3], sys.argv[4])
assert ot["oom"] and ot["oom_phase"] == "forward" and not bt["oom"] and bt["steps"] == 2, (ot, bt)
bad = []
if o["config"]["batch_size"]["value"] is not None:
    bad.append("micro-batch %s of a full-batch run" % o["config"]["batch_size"]["value"])
oom = o["oom"]
if oom["cause"] != "activations_too_large":
    bad.append("cause %s" % oom["cause"])
for k in ("cause_text", "evidence"):
    said = oom[k].replace("the run's micro-batch is not known", "")
    if "micro-batch" in said:
        bad.append("%s names a micro-batch the run does not have: %s" % (k, oom[k]))
if "not known" not in oom["evidence"]:
    bad.append("evidence does not say the micro-batch is not known: %s" % oom["evidence"])
need, peak = o["prediction"]["current_peak_bytes"], b["peak"]["process_bytes"]
if need > peak:
    bad.append("needs at least %d; the same configuration measures %d" % (need, peak))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
grep -q "cause: the tensors of one forward" 2GiB.txt || fail "text: $(grep -A1 'cause:' 2GiB.txt)"
echo "full_batch_gcn: ok (a run with no micro-batch: its OOM is one forward's tensors, the micro-batch not known)"
