#!/bin/sh
# run.sh — `make fuzz`: runs each libFuzzer target given as an argument for FUZZ_SECONDS
# seconds, seeded from tests/fuzz/corpus/<name>/ (kept in git) into a work corpus under
# $BUILD/fuzz/ (new inputs go there, never into the tree). Prints the executions per target;
# a crash leaves its input in $BUILD/fuzz/ and fails (copy it into tests/data/ with a test).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
SECS=${FUZZ_SECONDS:-60}
rc=0
for t in "$@"; do
    name=$(basename "$t")
    kind=${name#fuzz_}
    work="$BUILD/fuzz/corpus-$kind"
    mkdir -p "$work"
    log="$BUILD/fuzz/$name.log"
    "$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=131072 \
        -print_final_stats=1 -artifact_prefix="$BUILD/fuzz/$name-" \
        "$work" "$ROOT/tests/fuzz/corpus/$kind" >"$log" 2>&1
    r=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ $r -eq 0 ]; then
        echo "fuzz $name: ${execs:-?} executions in ${SECS}s, no crash"
    else
        echo "fuzz $name: FAILED (exit $r) after ${execs:-?} executions; log $log"
        grep -m 3 'ERROR\|runtime error\|Test unit written' "$log"
        rc=1
    fi
done
exit $rc
