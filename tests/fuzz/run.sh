#!/bin/sh
# run.sh — `make fuzz`: runs each libFuzzer target given as an argument for FUZZ_SECONDS
# seconds, seeded from the kept corpus (tests/fuzz/corpus/config/ for fuzz_config,
# tests/fuzz/corpus/trace/ and the traces of tests/data/ for the trace targets, and
# tests/fuzz/corpus/chunked/ first for fuzz_chunked) into a work
# corpus per target under $BUILD/fuzz/ (or FUZZ_WORK; new inputs go there, never into the tree:
# every seed is run first, so a committed input that fails fails the round). Prints the
# executions and coverage per target; a crash leaves its input in $BUILD/fuzz/ and fails (copy
# it into tests/data/ with a test). FUZZ_JOBS=N runs N processes per target (-fork).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
SECS=${FUZZ_SECONDS:-60}
rc=0
seeds="$BUILD/fuzz/seeds-trace"
mkdir -p "$seeds"
for f in "$ROOT"/tests/data/*.vt; do ln -sf "$f" "$seeds/"; done
for t in "$@"; do
    name=$(basename "$t")
    case $name in
    fuzz_config) kept="$ROOT/tests/fuzz/corpus/config" extra= ;;
    fuzz_chunked) kept="$ROOT/tests/fuzz/corpus/chunked" extra="$ROOT/tests/fuzz/corpus/trace $seeds" ;;
    *) kept="$ROOT/tests/fuzz/corpus/trace" extra=$seeds ;;
    esac
    work="${FUZZ_WORK:-$BUILD/fuzz}/corpus-${name#fuzz_}"
    mkdir -p "$work"
    log="$BUILD/fuzz/$name.log"
    fork=
    [ "${FUZZ_JOBS:-1}" -gt 1 ] && fork="-fork=$FUZZ_JOBS"
    "$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=131072 \
        -print_final_stats=1 -artifact_prefix="$BUILD/fuzz/$name-" $fork \
        "$work" "$kept" $extra >"$log" 2>&1
    r=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
    if [ $r -eq 0 ]; then
        echo "fuzz $name: ${execs:-?} executions in ${SECS}s, ${cov:-cov ?}, no crash"
    else
        echo "fuzz $name: FAILED (exit $r) after ${execs:-?} executions; log $log"
        grep -m 3 'ERROR\|runtime error\|Test unit written' "$log"
        rc=1
    fi
done
exit $rc
