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
# phase's, not the forward's.
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
echo "inline_eval: ok (the evaluation's out-of-memory error said as one; --eval_batch_size named)"
