#!/bin/sh
# foreign_wording.sh — what vramtrace says of a program that is not nanoGPT names the program's
# own flags and values, never nanoGPT's spellings or defaults (found by an audit of every string
# with nanoGPT's words): a ViT script's --compile that ran eager had been "compile=True ran as
# eager"; predict of a BERT's config.json (no --batch-size) "recommended: micro-batch 12 as it
# is", nanoGPT's default as the user's; fit of a ResNet script "e.g. --max_iters={I}" beside its
# own --steps, and "--iters 2" with no {I} to set; report --grad-accum 4 of a ResNet echoed as
# "(gradient_accumulation_steps=4)".
set -u
. "$ROOT/tests/sim_env.sh"
export LD_LIBRARY_PATH="$FAKE"
# 1. a ViT script's own --compile, run eager (the simulation's torch.compile)
timeout 300 "$VT" run -q --card 12GiB -o vit.vt -- python3 "$ROOT/examples/sim/sim_vision.py" \
    --model vit-b16 --batch-size 32 --steps 1 --compile >vit.out 2>&1 || { tail -n 3 vit.out; fail "vit run failed"; }
"$VT" report --no-color vit.vt >vit.txt 2>&1 || fail "vit report failed"
grep -q "note: torch.compile (--compile) on ran as eager" vit.txt && ! grep -q "compile=True" vit.txt ||
    fail "vit --compile: $(grep -n 'compile' vit.txt | head -n 4)"
# 2. predict of a config file with no --batch-size: nothing recommended of the 12 none gave
"$VT" predict "$ROOT/tests/data/hf/bert_base.json" --card 12GiB >p.txt 2>&1 || fail "predict exit $?"
grep -q "^recommended: none from a micro-batch none gave (12 assumed)" p.txt && ! grep -q "as it is" p.txt ||
    fail "predict bert_base.json: $(grep -n '^recommended' p.txt)"
"$VT" predict "$ROOT/tests/data/hf/bert_base.json" --card 12GiB --json >p.json 2>/dev/null &&
    "$VT" predict "$ROOT/tests/data/hf/bert_base.json" --card 12GiB --batch-size 16 --json >p16.json 2>/dev/null ||
    fail "predict --json exit $?"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["recommended"] is None, a["recommended"]
assert b["recommended"]["batch_size"] == 16, b["recommended"]' p.json p16.json || fail "predict --json recommended"
# 3. fit of a command with its own iteration flag and no {I}
"$VT" fit --card 12GiB --max-b 1 --dir fr -- python3 "$ROOT/examples/sim/sim_vision.py" --model resnet50 \
    --batch-size {B} --steps 1 >fit.txt 2>fit.err
grep -q "no {I} in the command: .*(mark its iteration count, --steps {I}," fit.err && ! grep -q "max_iters" fit.err ||
    fail "fit without {I}: $(cat fit.err)"
grep -q -- "--iters 2" fit.txt && fail "fit without {I} told to give --iters: $(grep -n 'iters' fit.txt)"
# 4. report's override of a ResNet's accumulation, said as typed
"$VT" report --no-color --grad-accum 4 "$ROOT/examples/traces/sim/resnet50_b128_fit.vt" >ga.txt 2>&1 ||
    fail "report --grad-accum exit $?"
grep -q "given on vramtrace's command line (--grad-accum 4)" ga.txt && ! grep -q "gradient_accumulation_steps=4" ga.txt ||
    fail "report --grad-accum 4: $(grep -n 'accum' ga.txt | head -n 3)"
# 5. the documents' basic formula counts AdamW's state: said so beside an SGD run's
"$VT" predict --from "$ROOT/examples/traces/sim/vitb16_fp32_sgd_b32_fit.vt" >sgd.txt 2>&1 || fail "predict --from sgd exit $?"
grep -q "^the basic formula .*AdamW [0-9.]* [KMG]iB (the formula counts AdamW's state, whatever the run's optimizer)" sgd.txt ||
    fail "an SGD run's basic formula: $(grep -n 'basic formula' sgd.txt)"
exit 0
