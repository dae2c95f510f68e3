#!/bin/sh
# truncated_eval.sh — a Lightning run cut in its sanity check (a SIGKILLed run: 15 to 35 % of its
# bytes), two validation batches at --val_batch_size before any training forward, says the run's
# sequence length T = 1024 or that it does not know it: never that evaluation's B·T over the
# training's --batch-size. Until 2026-12-07 its 8 x 1024 (16 x 1024) tokens over --batch-size 4
# said T = 2048 (4096), over the trace's own position ids (1024). The whole run that ran out of
# memory in its validation at 16 keeps its training batch (4) and its T, and tells that pass's
# batch apart in its advice.
set -u
fail() { echo "truncated_eval: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP truncated_eval: no python3"; exit 77; }
S="$ROOT/examples/traces/sim"

for name in lightning_gpt2_b4_val8_fit lightning_gpt2_b4_val16_oom_eval; do
    t="$S/$name.vt"
    n=$(wc -c <"$t")
    for pc in 15 20 25 30 35; do
        head -c $((n * pc / 100)) "$t" >c.vt
        "$VT" report --json c.vt >c.json 2>c.err || fail "$name at $pc %: $(cat c.err)"
        python3 - c.json "$name at $pc %" <<'EOF' >>said.txt || exit 1
import json, sys
d, name = json.load(open(sys.argv[1])), sys.argv[2]
c, inf = d["config"], d["inferred"] or {}
t = c["block_size"]
if not (t["value"] == 1024 or (t["value"] is None and t["source"] == "unknown")):
    sys.exit("truncated_eval: %s: T = %s (%s), the run's is 1024" % (name, t["value"], t["where"]))
if "block_size" in inf and inf["block_size"]["value"] != 1024:
    sys.exit("truncated_eval: %s: the trace's T = %s" % (name, inf["block_size"]["value"]))
if c["batch_size"]["value"] != 4:
    sys.exit("truncated_eval: %s: B = %s, --batch-size 4" % (name, c["batch_size"]["value"]))
tok = inf.get("tokens")
# the evaluation's batch (8 or 16 x 1024 tokens) is said to be one
if tok and tok["value"] != 4096 and "evaluation" not in tok["where"]:
    sys.exit("truncated_eval: %s: B·T = %s (%s), no evaluation said" % (name, tok["value"], tok["where"]))
if t["value"] == 1024:
    print(name)
EOF
    done
done
# (not "unknown" throughout: the cuts in the sanity check read its position ids)
grep -qx "lightning_gpt2_b4_val8_fit at 20 %" said.txt || fail "val8 at 20 %: T not said"
grep -qx "lightning_gpt2_b4_val16_oom_eval at 25 %" said.txt || fail "val16 at 25 %: T not said"

# the whole run out of memory in its validation at 16: B and T the training's, that pass's batch
# told apart in the advice
"$VT" report "$S/lightning_gpt2_b4_val16_oom_eval.vt" >w.txt 2>/dev/null
[ $? -le 1 ] || fail "val16 whole: report"
grep -Eq '^  micro-batch B \(--batch-size\) +4 ' w.txt || fail "val16 whole: B ($(grep 'micro-batch B' w.txt))"
grep -Eq '^  tokens per sample T +1024 ' w.txt || fail "val16 whole: T ($(grep 'tokens per sample' w.txt))"
grep -q "an evaluation pass with a batch of its own (--val_batch_size 16 on the command line)" w.txt ||
    fail "val16 whole: the evaluation's batch not told apart"
exit 0
