#!/bin/sh
# ppo_next.sh — a PPO-style loop whose rollout (model.eval(); with torch.no_grad(): a forward over
# --rollout_batch_size sequences, their old logits kept) is collected at the END of the loop body,
# for the next iteration's updates (mini-batches sliced from it, each with its backward and step,
# written before it in the body): tests/python/ppo_next.py (a SIMULATED GPT-2 124M) on a 12 GiB
# card. The backward that reads the rollout comes before the block in the script, after it in the
# run: the rollout is a no-grad pass whose outputs the step uses, as where it is collected first
# (ppo_rollout.sh). The report had said "the tensors peaked ... in an evaluation pass", "during
# eval", "the OOM came during evaluation (its batches' outputs)", and no rollout batch what-if.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/ppo_next.py"
run() { # NAME ROLLOUT
    timeout 300 "$VT" run -q --card 12GiB -o "$1.vt" -- python3 "$P" --rollout_batch_size "$2" \
        </dev/null >"$1.out" 2>&1
    report_both "$1"
}
run fits 8
run oom 24
python3 - fits.out oom.out <<'PY' || fail "the program's truth: $(grep -h VRAMTRACE fits.out oom.out)"
import json, sys
t = [next(json.loads(l.split(" ", 1)[1]) for l in open(f) if l.startswith("VRAMTRACE_TORCH_STATS "))
     for f in sys.argv[1:]]
assert not t[0]["oom"] and t[0]["steps"] > 0, t[0]
assert t[1]["oom_phase"] == "rollout", t[1]
PY
E="in an evaluation pass\|during eval;\|during evaluation"
grep -q "$E" fits.txt oom.txt && fail "$(grep -h "$E" fits.txt oom.txt | head -2)"
grep -q "the tensors' peak came in the no-grad pass whose outputs the step uses (phase eval)" fits.txt ||
    fail "fits: $(grep 'came in the' fits.txt)"
grep -q "^  - rollout batch 8 → " fits.txt || fail "fits: no rollout batch what-if: $(grep -A3 '^advice' fits.txt)"
grep -q "^OOM: .* during a no-grad pass whose outputs the step uses " oom.txt || fail "oom: $(grep '^OOM' oom.txt)"
grep -q "in a rollout pass with a batch of its own (--rollout_batch_size 24 on the command line)" oom.txt ||
    fail "oom: the rollout's flag not named: $(grep -A4 '^advice' oom.txt)"
echo "ppo_next: ok (a rollout collected at the loop body's end for the next updates read as that pass)"
