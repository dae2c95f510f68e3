#!/bin/sh
# report_golden.sh — `vramtrace report` on committed traces compared with committed expected
# output (diff -u): a real segment-mode OOM (H100, --card 12GiB), a real tensor-mode run (JSON),
# a truncated trace, two ranks. UPDATE_GOLDEN=1 rewrites the expectations (review the diff).
# REGRESSION CHECK, not accuracy: the expectations are vramtrace's own reviewed output.
set -u
cd "$ROOT" || exit 2
D=tests/data
fail=0
check() { # check NAME COMMAND...
    name=$1; shift
    "$@" >"$TESTDIR/$name.out" 2>"$TESTDIR/$name.err"
    echo "exit $?" >>"$TESTDIR/$name.out"
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$TESTDIR/$name.out" "$D/$name.expected"
    elif ! diff -u "$D/$name.expected" "$TESTDIR/$name.out"; then
        echo "report_golden: $name differs from $D/$name.expected"; fail=1
    fi
}
json() { "$VT" report --json "$@" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=1, sort_keys=True))'; }
# these two traces come from an older vramtrace that recorded neither the script nor its config
# file: the run's values are given as a user would (gpt2-124m-12gb.py, nanogpt-30m-4070.py and
# examples/gpt/train.py's vocab_size); nothing is taken from upstream nanoGPT's defaults
check report_oom "$VT" report --no-color examples/traces/b_oom_12gib.vt --batch-size 16 --grad-accum 32 \
    --block_size=1024 --n_layer=12 --n_head=12 --n_embd=768 --vocab_size=50304 --dropout=0.0 --bias=False --dtype=float16
check report_tensor json examples/traces/a_tensors_eager.vt --batch_size=16 --block_size=512 \
    --n_layer=6 --n_head=6 --n_embd=384 --vocab_size=50304 --dropout=0.0 --bias=False --dtype=float16
check report_truncated "$VT" report --no-color --top 2 $D/report_truncated.vt
check report_ranks "$VT" report --no-color --fail-if-oom $D/report_rank0.vt $D/report_rank1.vt
grep -q 'truncated' "$TESTDIR/report_truncated.err" || { echo "report_golden: no truncation warning"; fail=1; }
exit $fail
