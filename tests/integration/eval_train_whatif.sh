#!/bin/sh
# eval_train_whatif.sh — a run whose tensors peaked in an evaluation at a batch of its own predicts
# a larger training micro-batch from the training's forward (its activations' largest over the run,
# the formula's logits), not from the evaluation's moment: the SIMULATED GPT-2 at B=2 evaluating
# 16 (examples/traces/sim/gpt2_evalb16_b2_fit) had B=6 predicted at 26.6 GiB of tensors, its
# evaluation's logits (6.67x the formula's at B=2) scaled as a training step's and its
# activations at 0.00. Its B=8 is run here (evaluating 16, on a 23 GiB card, two steps) and the
# prediction held to at most 5 % under the tensors it requested and 10 % over its
# max_memory_allocated; at B=2 the prediction stays the evaluation's, as measured.
set -u
. "$ROOT/tests/sim_env.sh"
T="$ROOT/examples/traces/sim/gpt2_evalb16_b2_fit.vt"
timeout 300 "$VT" run -q --card 23GiB -o b8.vt -- python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 \
    --batch-size 8 --eval-batch-size 16 --steps 2 </dev/null >b8.out 2>&1 || fail "the B=8 run failed"
"$VT" predict --from "$T" --batch-size 8 --json >p8.json || fail "predict B=8"
"$VT" predict --from "$T" --json >p2.json || fail "predict B=2"
"$VT" report --json "$T" >r2.json || fail "report"
python3 - b8.out p8.json p2.json r2.json <<'PYEOF' || exit 1
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
from pairs import off
out, p8, p2, r2 = sys.argv[1:5]
f = json.loads([l for l in open(out) if l.startswith("VRAMTRACE_TORCH_STATS ")][-1].split(" ", 1)[1])
p, q, r = json.load(open(p8)), json.load(open(p2)), json.load(open(r2))
lo, hi = off(p, f)
print("B=8: predicted %.2f GiB of tensors (%s), the run requested %.2f, %.2f in blocks (%+.1f / %+.1f %%)" %
      (p["tensor_bytes"] / 2**30, p["by_category_at"], f["requested_bytes_peak"] / 2**30,
       f["max_memory_allocated"] / 2**30, 100 * lo, 100 * hi))
bad = []
if lo < -0.05 or hi > 0.10:
    bad.append("B=8 %+.1f / %+.1f %% off its run" % (100 * lo, 100 * hi))
if q["by_category_at"] != "evaluation" or q["tensor_bytes"] < r["peak"]["allocated_bytes"]:
    bad.append("B=2 (the run's own): %s %d B, the run's evaluation took %d" %
               (q["by_category_at"], q["tensor_bytes"], r["peak"]["allocated_bytes"]))
cal = r["prediction"]["calibration"]
tr = cal["training_ratio"]  # the activations' largest over the run against the formula's
want = r["category_peaks"]["activations"]["bytes"] / cal["refined"]["activations"]
if abs(tr["activations"] / want - 1) > 1e-9 or tr["logits_loss"] != 1:
    bad.append("training ratios %s, the activations' over the run %.4f" % (tr, want))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PYEOF
