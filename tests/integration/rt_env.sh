#!/bin/sh
# rt_env.sh — the preload's environment under LD_PRELOAD on the fake CUDA: RANK=../../x with
# %r in VRAMTRACE_OUTPUT writes inside the chosen directory (the rank made a safe file name);
# negative or non-numeric VRAMTRACE_STACK_DEPTH / VRAMTRACE_SAMPLE_MS / VRAMTRACE_CARD_BYTES
# run with the defaults and one warning each; the program's own output and exit are unchanged.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "rt_env: $*"; exit 1; }

# 1. RANK=../../x stays inside out/
mkdir -p deep/er/out
(cd deep/er && RANK=../../x VRAMTRACE_OUTPUT='out/t.%r.%p.vt' LD_PRELOAD="$VT_PRELOAD" "$P" basic) \
    >rank.out 2>&1 || { cat rank.out; fail "the program failed under the preload"; }
n=$(find deep/er/out -name 't._._.._x.*.vt' | wc -l)
[ "$n" -eq 1 ] || { find . -name '*.vt'; fail "expected one trace in deep/er/out, found $n"; }
[ -z "$(find . -name '*.vt' ! -path './deep/er/out/*')" ] || { find . -name '*.vt'; fail "a trace outside out/"; }
"$VT" dump deep/er/out/t._._.._x.*.vt >/dev/null || fail "the trace does not read"

# 2. bad numbers: defaults, one warning each, program unchanged
VRAMTRACE_STACK_DEPTH=-5 VRAMTRACE_SAMPLE_MS=abc VRAMTRACE_CARD_BYTES=-1 \
    VRAMTRACE_OUTPUT=bad.vt LD_PRELOAD="$VT_PRELOAD" "$P" basic >bad.out 2>bad.err \
    || { cat bad.out bad.err; fail "the program failed with bad values"; }
"$P" basic >plain.out 2>&1 || fail "the program fails without the preload"
cmp -s bad.out plain.out || { diff plain.out bad.out; fail "the program's output changed"; }
[ "$(grep -c '^vramtrace: VRAMTRACE_' bad.err)" -eq 3 ] || { cat bad.err; fail "expected 3 warnings"; }
for v in STACK_DEPTH SAMPLE_MS CARD_BYTES; do
    [ "$(grep -c "VRAMTRACE_$v=" bad.err)" -eq 1 ] || { cat bad.err; fail "VRAMTRACE_$v: not one warning"; }
done
"$VT" dump bad.vt | python3 -c "
import json, sys
c = [json.loads(l) for l in sys.stdin if '\"config\"' in l][0]
assert c['stack_depth'] == 32 and c['card_bytes'] == 0 and c['sample_ms'] == 0, c
" || fail "bad values were not replaced by the defaults"
exit 0
