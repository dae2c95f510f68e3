#!/bin/sh
# sample_pass.sh — a sampling pass during training, in a function decorated @torch.no_grad() (no
# model.eval(), no function named evaluate) with a batch of its own (--sample_batch):
# tests/python/sample_pass.py (a SIMULATED GPT-2 124M trained at a micro-batch of 4, sampling a
# batch of --sample_batch after its second step) on a 12 GiB card. At 32 its sampling runs out of
# memory (the program's own truth: oom_phase "sampling"); the report had said "during forward"
# and recommended a smaller micro-batch (each keeps the sampling's batch of 32, which ran out of
# memory), and a diffusion model's sampling pass in main, seen as an evaluation, had been told
# "recommended: micro-batch 32 -> 16" with its --sample_batch never named. Now the error is the
# sampling pass's, no micro-batch is recommended and --sample_batch is named (report, predict
# --from); at 8 the run fits and its sampling's peak is the eval phase's, not the forward's.
set -u
. "$ROOT/tests/sim_env.sh"
. "$ROOT/tests/side_pass.sh"
side_pass sample_pass sample_batch sampling samplings
grep -q "during eval;" oom.txt || fail "oom: $(grep '^OOM' oom.txt)"
grep -q "in a sampling pass with a batch of its own (--sample_batch 32 on the command line)" oom.txt ||
    fail "oom: the sampling's flag not named: $(grep -A3 '^advice' oom.txt)"
grep -q "recommended: micro-batch" oom.txt && fail "oom: $(grep 'recommended:' oom.txt)"
"$VT" predict --from oom.vt >p.txt 2>&1 || fail "predict --from: $(tail -n 2 p.txt)"
grep -q "^none recommended: every micro-batch keeps the sampling's batch (--sample_batch 32)" p.txt ||
    fail "predict --from: $(grep -i 'recommended\|largest micro' p.txt)"
echo "sample_pass: ok (the sampling pass's out-of-memory error said as one; --sample_batch named)"
