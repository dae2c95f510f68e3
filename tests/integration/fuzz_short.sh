#!/bin/sh
# fuzz_short.sh — the CI round of `make fuzz`: every committed trace (tests/data/*.vt) and
# config input (tests/data/fuzz_config_*.py, tests/fuzz/corpus/config/) replayed through the
# libFuzzer targets built with ASan + UBSan (regressions: each crash found is one of those
# files), then FUZZ_SECONDS (default 20) of fuzzing per target. Skipped without clang's
# libFuzzer (`make test` builds the targets when it is there).
set -u
F="$BUILD/fuzz"
if [ ! -x "$F/fuzz_trace" ] || [ ! -x "$F/fuzz_config" ]; then
    echo "clang with libFuzzer not found: no fuzz targets in $F (make fuzz)"
    exit 77
fi
fail() { echo "fuzz_short: $*"; exit 1; }
"$F/fuzz_trace" -timeout=30 -rss_limit_mb=2048 "$ROOT"/tests/data/*.vt "$ROOT"/tests/fuzz/corpus/trace/* \
    >regress_trace.log 2>&1 || { grep -m 5 'ERROR\|runtime error\|Running' regress_trace.log; fail "a committed trace fails fuzz_trace"; }
"$F/fuzz_config" -timeout=30 "$ROOT"/tests/fuzz/corpus/config/* $(ls "$ROOT"/tests/data/fuzz_config_* 2>/dev/null) \
    >regress_config.log 2>&1 || { grep -m 5 'ERROR\|runtime error\|Running' regress_config.log; fail "a committed config input fails fuzz_config"; }
FUZZ_SECONDS=${FUZZ_SECONDS:-20} sh "$ROOT/tests/fuzz/run.sh" "$F/fuzz_trace" "$F/fuzz_config" || fail "the fuzz round found a crash"
