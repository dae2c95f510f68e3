#!/bin/sh
# contrastive_bn.sh — a contrastive loss over in-batch negatives in a network with BatchNorm:
# tests/python/contrastive_bn.py (SIMULATED SimCLR: a convolutional encoder with BatchNorm, a
# projector, NT-Xent over the 2B x 2B similarity matrix, each sample's negatives the batch's
# other 2B - 2). A what-if that accumulates smaller micro-batches to keep the effective batch had
# said only "BatchNorm's statistics over micro-batches of 32 (the final model can differ)", as if
# the loss were the same over fewer samples; it now says the loss may not score each sample
# alone either (a contrastive loss's in-batch negatives), and never "same final model".
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 1GiB -o run.vt -- python3 "$ROOT/tests/python/contrastive_bn.py" \
    --batch_size 64 </dev/null >run.out 2>&1 || fail "run failed: $(tail -n 3 run.out)"
report_both run
python3 - run.json run.out <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["loss"] == "NT-Xent" and t["negatives_per_sample"] == 2 * t["batch_size"] - 2, t
bad, seen = [], 0
for a in r["advice"]:
    B2, A2, note = a["batch_size"], a["gradient_accumulation_steps"], a["note"]
    if B2 >= t["batch_size"] or B2 * A2 != t["batch_size"]:
        continue
    seen += 1  # (the effective batch kept: the loss's negatives are the micro-batch's now)
    if "in-batch negatives" not in note or "same final model" in note or "BatchNorm" not in note:
        bad.append("%s: %s" % (a["change"], note))
if not seen:
    bad.append("no what-if keeps the effective batch %d with smaller micro-batches" % t["batch_size"])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "contrastive_bn: ok (accumulation's what-ifs say the loss's in-batch negatives beside BatchNorm)"
