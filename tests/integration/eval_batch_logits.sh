#!/bin/sh
# eval_batch_logits.sh — a training run whose tensors peaked in an evaluation at a batch of its
# own (--eval-batch-size 16 after steps at B=2 and B=4: examples/traces/sim/gpt2_evalb16_*): the
# formula comparison reads the logits per token at the evaluation's batch ("10.0*B*T*V"), where
# it had read them at the training batch ("80.0*B*T*V", "6.67x the refined formula").
set -u
fail() { echo "eval_batch_logits: $*"; exit 1; }
for b in 2 4; do
    t="$ROOT/examples/traces/sim/gpt2_evalb16_b${b}_fit.vt"
    "$VT" report --no-color "$t" >"r$b.txt" || fail "b=$b: report failed"
    grep -q '^    logits/loss (vs basic): .*at this peak, in the eval at its own batch of 16 (--eval-batch-size 16), cross-entropy over V=50257 kept 10.0\*B\*T\*V bytes' "r$b.txt" ||
        fail "b=$b: $(grep 'logits/loss (vs basic)' "r$b.txt")"
    grep -q "^    logits/loss (vs refined): measured [0-9.]*x the refined formula at the training batch of $b: this peak came in the eval, at its own batch of 16 (0.83x at that batch)" "r$b.txt" ||
        fail "b=$b: $(grep 'logits/loss (vs refined)' "r$b.txt")"
done
exit 0
