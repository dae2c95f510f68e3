#!/bin/sh
# predict_refuse.sh — `vramtrace predict` refuses what it cannot use instead of going on with
# nanoGPT's defaults in its place: a trace or a report's JSON given as a config file (exit 2,
# "X is a trace: use --from X"), a binary file or one that sets no setting, and a config line that sets a key but cannot be evaluated (exit
# 2, the file, the line and why); lines it has no use for (other keys, docstrings) still pass.
# Without --grad-accum, nanoGPT's default of 40 is not the user's: no effective batch is made up
# from it, the recommendation speaks of the micro-batch and a factor, and says what is assumed.
set -u
fail() { echo "predict_refuse: $*"; exit 1; }
T="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
refused() { # refused PATTERN ARGS...: exit 2 with PATTERN in the message
    pat=$1; shift
    msg=$("$VT" predict "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 2 ] || fail "predict $*: exit $rc, want 2 ($msg)"
    printf '%s\n' "$msg" | grep -qF -- "$pat" || fail "predict $*: '$pat' not in: $msg"
    echo "  predict $*: $msg"
}
cp "$T" run.vt
refused "run.vt is a trace: use --from run.vt" run.vt
# a file that is no config file at all (a checkpoint, a log given by mistake): refused, never a
# prediction of nanoGPT's defaults (random bytes gave a dozen notes and GPT-2 124M, exit 0; a
# text file with no setting gave GPT-2 124M silently)
head -c 4096 run.vt | tail -c 2048 >bin.dat
printf 'x\000y\n' >>bin.dat
refused "bin.dat is not a text file: not a nanoGPT config file" bin.dat
printf 'step 10: loss 3.2\nstep 20: loss 2.9\n' >train.log
refused "train.log sets none of the settings predict reads" train.log
refused "run.vt is a trace: use --from run.vt" --model gpt2 run.vt --card rtx4070
"$VT" report --json run.vt >run.json 2>/dev/null || fail "report --json"
refused "--from run.json" run.json
printf 'batch_size = 8x\n' >typo.py
refused "typo.py:1: 'batch_size = 8x' cannot be evaluated" typo.py
cat >later.py <<'PY'
"""a config
batch_size = not evaluated: inside a docstring
"""
import time
wandb_run_name = 'run-' + str(time.time())  # a key predict has no use for
n_layer = 6
n_embd = n_layer * 64
    batch_size = indented, not a top-level line
block_size = min(512, 1024)
PY
refused "later.py:9: 'block_size = min(512, 1024)' cannot be evaluated" later.py
refused "give --block_size=VALUE" later.py
printf 'n_layer = 2**200\n' >big.py
refused "big.py:1: 'n_layer = 2**200' cannot be evaluated: an integer beyond 64 bits" big.py
head -n 8 later.py >good.py
j=$("$VT" predict good.py --json) || fail "good.py refused"
printf '%s\n' "$j" | grep -q '"n_embd":{"value":384,"source":"file","where":"good.py:7","label":"width d"}' || fail "good.py: $j"
# no --grad-accum: the recommendation is a micro-batch and a factor, never an effective batch
# of nanoGPT's A = 40 (12 x 40 = 480, 8 x 40 = 320)
for b in "" "--batch-size 8" "--batch-size 16"; do
    # shellcheck disable=SC2086
    out=$("$VT" predict --model gpt2 $b --card rtx4070) || fail "predict $b: exit $?"
    printf '%s\n' "$out" | grep -qE 'effective batch [0-9]|gradient_accumulation_steps[ =]40|\(effective' &&
        fail "predict --model gpt2 $b: an effective batch made up from the default: $(printf '%s\n' "$out" | grep -E 'effective|steps')"
    printf '%s\n' "$out" | grep -q 'gradient accumulation not given (--grad-accum N)' || fail "$b: the assumption is not said"
    printf '%s\n' "$out" | grep -qE '^recommended.*micro-batch' || fail "$b: no micro-batch recommendation: $out"
    # shellcheck disable=SC2086
    "$VT" predict --model gpt2 $b --card rtx4070 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["gradient_accumulation_assumed"] is True, d["gradient_accumulation_assumed"]
r = d["recommended"]
assert r and r["gradient_accumulation_steps"] is None and r["accumulation_multiplier"] >= 1, r
' || fail "$b: JSON"
done
out=$("$VT" predict --model gpt2 --batch-size 16 --card rtx4070) || fail "B=16"
printf '%s\n' "$out" | grep -q 'micro-batch 16 → 8, 2× the accumulation steps' || fail "B=16: $out"
# given, the accumulation is the user's: the effective batch is theirs
out=$("$VT" predict --model gpt2 --batch-size 16 --grad-accum 4 --card rtx4070) || fail "A=4"
printf '%s\n' "$out" | grep -q 'keeping the effective batch 64: batch_size=8, gradient_accumulation_steps=8' || fail "A=4: $out"
"$VT" predict --model gpt2 --grad-accum 4 --card rtx4070 --json | grep -q '"gradient_accumulation_assumed":false' || fail "A=4 JSON"
# from a run no formula describes (a ResNet; a GPT-2 evaluation, forwards only), predict scales
# its measured bytes with the micro-batch alone: a model option is refused, never answered with
# the run's own peak (until 2026-12-03 --n-layer 24, --block-size 512, --dtype fp32 and
# --checkpointing printed the run's 10.13 GiB unchanged, exit 0), and an evaluation's
# accumulation too (--grad-accum 4 had added 0.5 GiB of gradients it never makes)
S="$ROOT/examples/traces/sim"
for o in "--n-layer 24" "--block-size 512" "--dtype fp32" "--checkpointing" "--no-flash" "--model gpt2"; do
    # shellcheck disable=SC2086
    refused "$o: the traced run has no formula this changes" --from "$S/resnet50_b128_fit.vt" $o
    # shellcheck disable=SC2086
    refused "$o: the traced run has no formula this changes" --from "$S/gpt2_eval_b16_fit.vt" $o
done
refused "--grad-accum 4: the traced run made forwards only" --from "$S/gpt2_eval_b16_fit.vt" --grad-accum 4
"$VT" report --json "$S/gpt2_eval_b16_fit.vt" >eval.json 2>/dev/null || fail "report --json eval"
refused "--n-layer 24: the traced run has no formula" --from eval.json --n-layer 24
refused "--grad-accum 2: the traced run made forwards only" --from eval.json --grad-accum 2
# what it does move still answers: the micro-batch, a ResNet's accumulation, the card
"$VT" predict --from "$S/resnet50_b128_fit.vt" --batch-size 64 --grad-accum 2 --card 12GiB >/dev/null || fail "ResNet B=64 A=2"
"$VT" predict --from "$S/gpt2_eval_b16_fit.vt" --batch-size 8 --grad-accum 1 >/dev/null || fail "eval B=8"
echo ok
