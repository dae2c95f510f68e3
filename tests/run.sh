#!/bin/sh
# run.sh — the runner behind `make test`: each cmocka unit binary given as an argument, then
# every tests/integration/*.sh (unless UNIT_ONLY=1). An integration script exits 0 (pass),
# 77 (skip: say why on stdout) or anything else (fail). Ends with "N passed, N failed".
set -u
BUILD=$(cd "${BUILD:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD ROOT
export VT="$BUILD/vramtrace" VT_PRELOAD="$BUILD/libvramtrace.so" FAKE="$BUILD/fakecuda"
pass=0 fail=0 skip=0 failed=""
for t in "$@"; do
    name=$(basename "$t")
    if out=$("$t" 2>&1); then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name"; printf '%s\n' "$out" | tail -n 40
    fi
done
if [ "${UNIT_ONLY:-0}" != 1 ]; then
    for t in "$ROOT"/tests/integration/*.sh; do
        [ -f "$t" ] || continue
        name=$(basename "$t" .sh)
        work=$(mktemp -d "${TMPDIR:-/tmp}/vt-test.XXXXXX")
        out=$(cd "$work" && TESTDIR="$work" timeout 600 sh "$t" 2>&1); rc=$?
        case $rc in
        0) pass=$((pass + 1)); echo "PASS $name"; rm -rf "$work" ;;
        77) skip=$((skip + 1)); echo "SKIP $name: $(printf '%s\n' "$out" | tail -n 1)"; rm -rf "$work" ;;
        *) fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name (exit $rc, kept $work)"; printf '%s\n' "$out" | tail -n 60 ;;
        esac
    done
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
