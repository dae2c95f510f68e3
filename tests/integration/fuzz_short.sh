#!/bin/sh
# fuzz_short.sh — the CI round of `make fuzz`: every committed trace (tests/data/*.vt and the kept
# corpus, run first as the targets' seeds) through each trace target (fuzz_trace: report and
# predict --from; fuzz_dump; fuzz_views: flame, export, diff; fuzz_chunked: each laid out in the
# chunked layout, its kept corpus tests/fuzz/corpus/chunked/ first) and every config input through
# fuzz_config, built with ASan + UBSan (regressions: each crash found is one of those files; the
# open findings of tests/known_failures set aside by tests/fuzz/known.supp), then what is left of
# FUZZ_SECONDS (default 8) per target of structure-aware fuzzing, from a fresh work corpus.
# Skipped without clang's libFuzzer (`make test` builds the targets when it is there).
# runs: early (8 s of fuzzing per target: about 1 minute)
set -u
F="$BUILD/fuzz"
TRACE_TARGETS="fuzz_trace fuzz_dump fuzz_views fuzz_chunked"
for t in $TRACE_TARGETS fuzz_config; do
    [ -x "$F/$t" ] || { echo "clang with libFuzzer not found: no $t in $F (make fuzz)"; exit 77; }
done
fail() { echo "fuzz_short: $*"; exit 1; }
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$ROOT/tests/fuzz/known.supp"
"$F/fuzz_config" -timeout=30 "$ROOT"/tests/fuzz/corpus/config/* $(ls "$ROOT"/tests/data/fuzz_config_* 2>/dev/null) \
    >regress_config.log 2>&1 || { grep -m 5 'ERROR\|runtime error\|Running' regress_config.log; fail "a committed config input fails fuzz_config"; }
FUZZ_WORK=$PWD FUZZ_SECONDS=${FUZZ_SECONDS:-8} sh "$ROOT/tests/fuzz/run.sh" "$F/fuzz_trace" "$F/fuzz_dump" \
    "$F/fuzz_views" "$F/fuzz_chunked" "$F/fuzz_config" || fail "the fuzz round found a crash"
