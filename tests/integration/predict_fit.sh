#!/bin/sh
# predict_fit.sh — `vramtrace predict` on the documents' worked example 2 (GPT-2 124M on a
# 12 GB card): B=16, A=32 does not fit rtx4070, B=8, A=64 does, and 8 is the largest batch.
# CONSISTENCY CHECK, not accuracy: the expected verdicts and the largest batch (7 eager) are what
# vramtrace's own formula (formula.md §3) gives; only the parameter count (124.37 M) is computed
# by hand. The formula's accuracy is tested against independent truths in predict_sim.sh (the
# op-by-op simulation), advice_real.sh and predict_trace.sh (real runs on a 12 GiB card).
set -u
fail() { echo "FAIL: $*"; exit 1; }

out=$("$VT" predict --model gpt2 --batch-size 16 --grad-accum 32 --no-compile --card rtx4070) || fail "predict rc $?"
printf '%s\n' "$out"
# the verdict is one sentence: "card NAME (SIZE): fits|too tight (...)|does not fit, N over|free"
printf '%s\n' "$out" | grep -Eq '^card rtx4070 \(11\.99 GiB\): does not fit, [0-9.]+ GiB over$' ||
    fail "B=16 should not fit rtx4070 (the verdict line)"
printf '%s\n' "$out" | grep -q "largest batch_size that fits.*: 7 " || fail "largest eager batch should be 7"
printf '%s\n' "$out" | grep -q "124.37 M parameters" || fail "parameter count"

j=$("$VT" predict --batch_size=8 --gradient_accumulation_steps=64 --compile=True --card=rtx4070 --json) || fail "json rc"
printf '%s\n' "$j" | grep -q '"fits":true' || fail "B=8 A=64 compiled should fit: $j"
"$VT" predict --batch_size=8 --gradient_accumulation_steps=64 --compile=False --card=rtx4070 --json |
    grep -q '"fits":false' || fail "B=8 A=64 eager should be too tight"
"$VT" predict --batch_size=16 --compile=True --card=rtx4070 --json | grep -q '"fits":false' || fail "B=16 compiled"
printf '%s\n' "$j" | grep -q '"batch_size":{"value":8,"source":"flag"' || fail "config source in JSON"
printf '%s\n' "$j" | grep -q '"n_layer":{"value":12,"source":"default"' || fail "defaults in JSON"

# the peak grows with the batch and the model; a 24 GiB card takes more than a 12 GiB one
p8=$(printf '%s\n' "$j" | sed 's/.*"peak_bytes":\([0-9.e+]*\).*/\1/')
j16=$("$VT" predict --batch_size=16 --compile=False --json) || fail "json 16"
p16=$(printf '%s\n' "$j16" | sed 's/.*"peak_bytes":\([0-9.e+]*\).*/\1/')
awk -v a="$p8" -v b="$p16" 'BEGIN { exit !(b > a * 1.5) }' || fail "peak(16)=$p16 not > 1.5 * peak(8)=$p8"
printf '%s\n' "$j16" | grep -q '"fits":null' || fail "no card: fits null"
l12=$("$VT" predict --model gpt2-medium --card 12GiB --json | sed 's/.*"largest_batch_size":\([0-9]*\).*/\1/')
l24=$("$VT" predict --model gpt2-medium --card rtx4090 --json | sed 's/.*"largest_batch_size":\([0-9]*\).*/\1/')
[ "$l24" -gt "$l12" ] || fail "largest batch on 24 GiB ($l24) should exceed 12 GiB ($l12)"

# unfused attention adds B*H*T^2 scores; checkpointing keeps fewer activations
pk() { "$VT" predict --compile=False "$@" --json | sed 's/.*"peak_bytes":\([0-9.e+]*\).*/\1/'; }
base=$(pk); nf=$(pk --no-flash); ck=$(pk --checkpointing)
awk -v a="$base" -v b="$nf" -v c="$ck" 'BEGIN { exit !(b > a && c < a) }' || fail "no-flash $nf / checkpointing $ck vs $base"

# the small character model fits easily
# not a bare "fits": "largest batch_size that fits" is printed whatever the verdict
sc=$("$VT" predict --model shakespeare-char --card rtx4070) || fail "shakespeare-char rc"
printf '%s\n' "$sc" | grep -Eq '^card rtx4070 \(11\.99 GiB\): fits, [0-9.]+ GiB free$' ||
    { printf '%s\n' "$sc"; fail "shakespeare-char should fit rtx4070 (the verdict line)"; }
printf '%s\n' "$sc" | grep -q '^step: batch_size 64, gradient_accumulation_steps 1 ' || fail "shakespeare-char's own batch: $sc"
# its micro-batch and accumulation are nanoGPT's config for it where nothing else gives them:
# a --batch-size before it and a traced run's stay (until 2026-12-03 both became 64 and 1: the
# simulated GPT-2 run at B=6, A=4 was predicted at B=64, A=1)
for args in "--batch-size 8 --model shakespeare-char" "--model shakespeare-char --batch-size 8"; do
    # shellcheck disable=SC2086
    "$VT" predict $args | grep -q '^step: batch_size 8,' || fail "$args: not the batch given"
done
# (said in the traced program's flags, not nanoGPT's batch_size / gradient_accumulation_steps)
"$VT" predict --from "$ROOT/examples/traces/sim/gpt2_sgd_b6_a4_fit.vt" --model shakespeare-char |
    grep -q '^step: --batch-size 6, --grad-accum 4 ' || fail "--from B=6 A=4: the run's batch replaced"
"$VT" predict --model gpt2 --batch-size 7 --no-compile --card rtx4070 |
    grep -Eq '^card rtx4070 \(11\.99 GiB\): fits, ' || fail "B=7, the largest batch said to fit, does not fit"
"$VT" predict --model gpt2 --batch-size 8 --no-compile --card rtx4070 |
    grep -Eq '^card rtx4070 \(11\.99 GiB\): (too tight|does not fit)' || fail "B=8 said to fit, though 7 is the largest"
"$VT" predict --help | grep -q -- "--card" || fail "--help"
echo ok
