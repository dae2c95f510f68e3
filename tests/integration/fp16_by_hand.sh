#!/bin/sh
# fp16_by_hand.sh — a SIMULATED loop under fp16 autocast that scales its loss by hand, with no
# GradScaler (tests/python/fp16_by_hand.py): its dtype is the float16 its script asks autocast
# for (the trace's 16-bit weight copies are the same in bfloat16; "no GradScaler" had made it
# "bfloat16"), in the text report and the JSON.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run --card 12GiB -o f.vt -- python3 "$ROOT/tests/python/fp16_by_hand.py" \
    </dev/null >f.out 2>&1 || { cat f.out; fail "run failed"; }
want=$(sed -n 's/^autocast \([a-z0-9]*\), trained [0-9]* steps$/\1/p' f.out)
[ "$want" = float16 ] || fail "the program: $(cat f.out)"
"$VT" report --no-color f.vt >f.txt && "$VT" report --json f.vt >f.json || fail "report failed"
grep -q "^  dtype  *$want  *inferred  16-bit autocast weight copies, and fp16_by_hand.py:[0-9]* autocast(..., $want) in the script$" f.txt ||
    fail "$(grep '^  dtype' f.txt)"
python3 -c "import json,sys; sys.exit(json.load(open('f.json'))['config']['dtype']['value'] != '$want')" ||
    fail "JSON config.dtype: $(python3 -c "import json; print(json.load(open('f.json'))['config']['dtype'])")"
echo "fp16_by_hand: ok"
