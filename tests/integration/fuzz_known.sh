#!/bin/sh
# fuzz_known.sh — the "fuzz" lines of tests/known_failures, expected to fail: each input, run
# through its target with every sanitizer report fatal and no suppression, must still fail at
# the place the line names; one that passes is fixed (remove its line and its known.supp line).
# Skipped without clang's libFuzzer.
set -u
F="$BUILD/fuzz"
[ -x "$F/fuzz_views" ] || { echo "clang with libFuzzer not found: no targets in $F (make fuzz)"; exit 77; }
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
bad=0 n=0
while read -r kind target input where; do
    [ "$kind" = fuzz ] || continue
    n=$((n + 1))
    if "$F/$target" "$ROOT/$input" >run.log 2>&1; then
        echo "FAIL $input passes $target now: fixed? remove its lines from tests/known_failures and tests/fuzz/known.supp"
        bad=1
    elif ! grep -q "$where" run.log; then
        echo "FAIL $input fails $target elsewhere than $where:"
        grep -m 3 'ERROR\|runtime error' run.log
        bad=1
    else
        echo "still open: $input ($target): $where"
    fi
done <"$ROOT/tests/known_failures"
echo "$n known fuzz findings checked"
exit $bad
