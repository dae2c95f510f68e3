#!/bin/sh
# inline_eval.sh — an evaluation written inline in the training loop (model.eval(); with
# torch.no_grad(): ... inside main, under no function named evaluate or estimate_loss) is an
# evaluation: tests/python/inline_eval.py (a SIMULATED GPT-2 124M trained at a micro-batch of 4,
# evaluating a batch of --eval_batch_size after its second step) on a 12 GiB card. At 32 its
# evaluation runs out of memory (the program's own truth: oom_phase "eval"); the report had said
# "during forward", "cause: the tensors of one micro-batch" and "recommended: micro-batch 4 -> 2,
# accumulation 1 -> 2" (whose run runs out of memory in the same evaluation). Now the error is the
# evaluation's (report text and JSON, diff, predict --from), no micro-batch is recommended and
# the evaluation's own flag is named; at 8 the run fits and its evaluation's peak is the eval
# phase's, not the forward's. A rollout block of the same form whose outputs the step trains on
# (tests/python/rollout.py) is a no-grad pass of the step's, not an evaluation.
set -u
. "$ROOT/tests/sim_env.sh"
. "$ROOT/tests/side_pass.sh"
side_pass inline_eval eval_batch_size eval evals
grep -q "during eval;" oom.txt || fail "oom: $(grep '^OOM' oom.txt)"
grep -q "an evaluation pass with a batch of its own (--eval_batch_size 32 on the command line)" oom.txt ||
    fail "oom: the evaluation's flag not named: $(grep -A3 '^advice' oom.txt)"
grep -q "recommended: micro-batch" oom.txt && fail "oom: $(grep 'recommended:' oom.txt)"
"$VT" diff fits.vt oom.vt >diff.txt 2>&1 || true
grep -q "(B ran out of memory .*(phase: eval)" diff.txt || fail "diff: $(grep 'ran out' diff.txt)"
"$VT" predict --from oom.vt >p.txt 2>&1 || fail "predict --from: $(tail -n 2 p.txt)"
grep -q "^none recommended: every micro-batch keeps the evaluation's batch (--eval_batch_size 32)" p.txt ||
    fail "predict --from: $(grep -i 'recommended\|largest micro' p.txt)"
# a rollout collected under model.eval() and no_grad (4 x the micro-batch; tests/python/rollout.py)
# whose outputs the step's loss reads, out of memory there: it had been "during eval" and "the OOM
# came during evaluation (its batches' outputs)"; it is a pass of the step's, said so
timeout 300 "$VT" run -q --card 12GiB -o roll.vt -- python3 "$ROOT/tests/python/rollout.py" \
    --batch_size 6 --steps 3 </dev/null >roll.out 2>&1
"$VT" report --no-color roll.vt >roll.txt || fail "rollout: report failed"
"$VT" export --html roll.html roll.vt >/dev/null 2>&1 || fail "rollout: export --html failed"
python3 - roll.out <<'PY' || fail "rollout: the program's truth"
import json, sys
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "rollout" and t["steps"] >= 1, t  # (a step trained on a rollout)
PY
grep -q "^OOM: .* during a no-grad pass whose outputs the step uses " roll.txt ||
    fail "rollout: $(grep '^OOM' roll.txt)"
grep -q "the OOM came during a no-grad pass whose outputs the step uses" roll.txt &&
    ! grep -qi "during eval\|during the eval\|in the eval<\|during evaluation" roll.txt roll.html ||
    fail "rollout: $(grep -i 'during' roll.txt)"
echo "inline_eval: ok (the evaluation's out-of-memory error said as one; --eval_batch_size named)"
