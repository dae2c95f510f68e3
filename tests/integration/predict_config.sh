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
printf '%s\n' "$j" | grep -q '"n_embd":{"value":384,"source":"file","where":"train_small.py:7"}' || fail "n_embd from file: $j"
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
expect_usage --model gpt5
expect_usage --card gtx9999
expect_usage --no-such-option=3
expect_usage missing_config.py
expect_usage --from trace.vt
printf 'n_layer = 1.5\n' > bad.py
msg=$("$VT" predict bad.py 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "bad.py rc $rc"
printf '%s\n' "$msg" | grep -q "bad.py:1" || fail "error names file and line: $msg"
echo ok
