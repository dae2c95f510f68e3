#!/bin/sh
# predict_config.sh — `vramtrace predict` reads nanoGPT config files (arithmetic, non-literals
# ignored) with overrides in order, and rejects bad values with a clear error and exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }

cat > train_small.py <<'PY'
# a nanoGPT-style config
import time
out_dir = 'out-small'
wandb_run_name = 'small-' + str(time.time())
n_layer = 6
n_head = 6
n_embd = 64 * 6
block_size = 512
batch_size = 16
gradient_accumulation_steps = 2 * 2
dtype = 'float16'
PY
j=$("$VT" predict train_small.py --batch_size=8 --json) || fail "rc $?"
printf '%s\n' "$j" | grep -q '"n_embd":{"value":384,"source":"file","where":"train_small.py:7","label":"width d"}' || fail "n_embd from file: $j"
printf '%s\n' "$j" | grep -q '"gradient_accumulation_steps":{"value":4,"source":"file"' || fail "arithmetic"
printf '%s\n' "$j" | grep -q '"batch_size":{"value":8,"source":"flag"' || fail "override after file"
printf '%s\n' "$j" | grep -q '"dtype":{"value":"float16"' || fail "dtype"
# an override before the file loses to it (nanoGPT applies arguments in order)
"$VT" predict --batch_size=8 train_small.py --json | grep -q '"batch_size":{"value":16,"source":"file"' || fail "order"

expect_usage() {
    msg=$("$VT" predict "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 2 ] || fail "predict $* exited $rc, want 2"
    [ -n "$msg" ] || fail "predict $*: no error message"
    echo "  predict $*: $msg"
}
expect_usage --batch-size 0
expect_usage --batch_size=eight
expect_usage --dtype int8
expect_usage --dropout 1.5
expect_usage --n-head 7
# without a trace, what nothing gave is nanoGPT train.py's default: named as such, never as yours
d=$("$VT" predict | grep "^not given, nanoGPT train.py's defaults: ") || fail "bare predict: the defaults not named"
for k in batch_size block_size n_layer n_head n_embd vocab_size dtype compile; do
    printf '%s\n' "$d" | grep -qw "$k" || fail "bare predict: $k not among the defaults: $d"
done
d=$("$VT" predict --model gpt2-medium --batch-size 4 --dtype fp16 --no-compile --dropout 0 --block-size 512 |
    grep "^not given, nanoGPT train.py's defaults: ") || fail "--model gpt2-medium: the defaults not named"
[ "$d" = "not given, nanoGPT train.py's defaults: vocab_size, bias" ] || fail "--model gpt2-medium ...: $d"
o=$("$VT" predict "$ROOT/tests/data/hf/gpt2.json") || fail "predict gpt2.json: exit $?"
printf '%s\n' "$o" | grep -q "^transformers' GPT-2" || fail "predict gpt2.json: $o"
printf '%s\n' "$o" | grep -q "nanoGPT train.py's defaults" &&
    fail "a config.json's model said to take nanoGPT's defaults (its own line says what is not given)"
# no --optimizer and no trace: AdamW's state is an assumption, said; a traced run's is its own
"$VT" predict | grep -q "^optimizer: not given: AdamW's two states assumed, 8 B per trainable parameter (--optimizer)$" ||
    fail "bare predict: the optimizer assumed is not said"
"$VT" predict "$ROOT/tests/data/hf/llama_gqa300m.json" | grep -q "^optimizer: not given: AdamW" ||
    fail "a Llama config.json: the optimizer assumed is not said"
o=$("$VT" predict --from "$ROOT/examples/traces/h100-torch2.11-beyond/gpt2_adafactor_b4_fit.vt") || fail "--from: exit $?"
printf '%s\n' "$o" | grep -q "^calibrated with" || fail "--from: $o"
printf '%s\n' "$o" | grep -q "AdamW's two states assumed" && fail "--from an Adafactor run: AdamW said assumed"
# a head count or width nothing gave is nanoGPT's default: the error says so, not as the user's
"$VT" predict --n-embd 1000 2>&1 | grep -q 'n_embd = 1000 is not divisible by n_head = 12 (nanoGPT.s default: not given)' ||
    fail "--n-embd 1000: the default head count not said: $("$VT" predict --n-embd 1000 2>&1)"
"$VT" predict --n-head 7 2>&1 | grep -q 'n_embd = 768 (nanoGPT.s default: not given) is not divisible by n_head = 7 (' ||
    fail "--n-head 7: the default width not said: $("$VT" predict --n-head 7 2>&1)"
"$VT" predict --n-head 7 --n-embd 100 2>&1 | grep -q "default" &&
    fail "--n-head 7 --n-embd 100: both given, yet a default said"
expect_usage --model gpt5
expect_usage --card gtx9999
expect_usage --no-such-option=3
expect_usage missing_config.py
expect_usage --from trace.vt
# an option predict does not have is unknown, whatever follows it (never "needs a value")
for args in "--bogus" "--bogus 3" "--model gpt2 --bogus"; do
    # shellcheck disable=SC2086
    msg=$("$VT" predict $args 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 2 ] && printf '%s\n' "$msg" | grep -q "unknown option --bogus (see vramtrace predict --help)" &&
        ! printf '%s\n' "$msg" | grep -q 'needs a value' || fail "predict $args: exit $rc: $msg"
done
msg=$("$VT" predict --batch-size 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] && printf '%s\n' "$msg" | grep -q "'--batch-size' needs a value" || fail "--batch-size: $msg"
# float32 logits are 4 B each, compiled or not: 4*B*T*V (12 x 1024 x 50304: 2.30 GiB); only a
# compiled 16-bit step keeps them at 2 B
for c in "" "--no-compile"; do
    # shellcheck disable=SC2086
    out=$("$VT" predict --dtype fp32 $c) || fail "--dtype fp32 $c: rc $?"
    printf '%s\n' "$out" | grep -q '^largest single tensor: 2.30 GiB, fp32 logits' &&
        ! printf '%s\n' "$out" | grep -q '^largest single tensor.*16-bit' ||
        fail "--dtype fp32 $c: $(printf '%s\n' "$out" | grep '^largest single')"
    # shellcheck disable=SC2086
    "$VT" predict --dtype fp32 $c --json | grep -q '"largest_tensor":{"bytes":2472542208,' ||
        fail "--dtype fp32 $c --json: largest_tensor"
done
"$VT" predict | grep -q '^largest single tensor: 1.15 GiB, 16-bit logits' || fail "compiled bf16 logits"
printf 'n_layer = 1.5\n' > bad.py
msg=$("$VT" predict bad.py 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "bad.py rc $rc"
printf '%s\n' "$msg" | grep -q "bad.py:1" || fail "error names file and line: $msg"

# --from: a report's JSON calibrates the what-if (here activations measured 1.3x the formula)
command -v python3 >/dev/null 2>&1 || { echo "ok (the --from part needs python3: not run)"; exit 0; }
"$VT" predict --model gpt2 --batch_size=8 --gradient_accumulation_steps=64 --compile=False --json >base.json || fail "base"
python3 - <<'PY' || fail "cannot write run.json"
import json
b = json.load(open("base.json"))
formula = {k: {"measured_bytes": v} for k, v in b["by_category"].items()}
formula["activations"]["measured_bytes"] = int(b["by_category"]["activations"] * 1.3)
run = {"config": b["config"], "formula": formula, "oom": None,
       "prediction": {"capacity_bytes": 12 << 30, "capacity_name": "12GiB (emulated)"}}
json.dump(run, open("run.json", "w"))
PY
j=$("$VT" predict --from run.json --json) || fail "predict --from rc"
printf '%s\n' "$j" | grep -q '"calibration":"run"' || fail "not calibrated: $j"
printf '%s\n' "$j" | grep -q '"batch_size":{"value":8,"source":"file","where":"--from run.json","label":"micro-batch B"}' || fail "config from the run"
printf '%s\n' "$j" | grep -q '"card":{"name":"12GiB (emulated)"' || fail "the run's card"
python3 - "$j" <<'PY' || fail "calibrated activations"
import json, sys
j, b = json.loads(sys.argv[1]), json.load(open("base.json"))
want = b["by_category"]["activations"] * 1.3
got = j["by_category"]["activations"]
assert abs(got - want) / want < 0.001, (got, want)
PY
# a what-if on top of the run: B=4 halves the calibrated activations
j4=$("$VT" predict --from run.json --batch_size=4 --json) || fail "what-if"
printf '%s\n' "$j4" | grep -q '"batch_size":{"value":4,"source":"flag"' || fail "what-if batch"
# no --grad-accum and no run: the accumulation is not given (the text says so), never nanoGPT's
# 40 as a default in the JSON (until 2026-12-06), and --grad-accum given is that
j=$("$VT" predict --model gpt2 --batch-size 8 --card rtx4070 --json) || fail "predict --model gpt2"
printf '%s\n' "$j" | grep -q '"gradient_accumulation_steps":{"value":null,"source":"unknown"' ||
    fail "accumulation not given: $(printf '%s\n' "$j" | grep -o '"gradient_accumulation_steps":{[^}]*}')"
j=$("$VT" predict --model gpt2 --batch-size 8 --grad-accum 4 --card rtx4070 --json) || fail "--grad-accum 4"
printf '%s\n' "$j" | grep -q '"gradient_accumulation_steps":{"value":4,"source":"flag"' || fail "--grad-accum 4 said"
# (a binary that is no trace: exit 3, as every command exits on it; 2 until 2026-12-01)
msg=$("$VT" predict --from "$VT" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 3 ] && printf '%s\n' "$msg" | grep -q 'neither a trace nor' ||
    fail "predict --from a binary: exit $rc: $msg"
echo ok
