#!/bin/sh
# capture_ulimit_v.sh — under `ulimit -v` (RLIMIT_AS) the tracer takes little of the program's
# address space: a bounded, sampled trace (the packer's and the sampler's threads) of a program
# that makes a thread of its own runs where the program untraced runs with 6 MB more, every
# event in its trace. The
# tracer's threads had the default stack (RLIMIT_STACK's, 8 MiB each): the program's
# pthread_create failed up to 10 MB above its own limit (bench_alloc: 12 MB untraced, 22 MB
# traced until 2026-12-06; 16 MB since, the trace's own windows and tables).
set -u
fail() { echo "capture_ulimit_v: $*"; exit 1; }
B="$BUILD/tests/prog/bench_alloc"
[ -n "${FAKE:-}" ] && [ -x "$B" ] || { echo "capture_ulimit_v: no fake runtime or program"; exit 77; }
run() { # run KB [traced]: bench_alloc 20,000 pairs on one thread of its own under ulimit -v KB
    (ulimit -v "$1" || exit 99
     if [ -n "${2:-}" ]; then
         LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=t.vt \
             VRAMTRACE_MAX_SIZE=8388608 VRAMTRACE_SAMPLE_MS=10 VRAMTRACE_STACKS=none exec "$B" 20000 1 0
     else
         LD_LIBRARY_PATH="$FAKE" exec "$B" 20000 1 0
     fi) >out.txt 2>err.txt
}
u=""
for kb in 8000 10000 12000 14000 16000 18000 20000 24000 28000 32000; do
    run $kb && { u=$kb; break; }
    [ $? = 99 ] && { echo "capture_ulimit_v: ulimit -v refused"; exit 77; }
done
[ -n "$u" ] || { echo "capture_ulimit_v: the program does not run untraced under 32 MB"; exit 77; }
rm -f t.vt*
run $((u + 6000)) traced || fail "traced at ulimit -v $((u + 6000)) (untraced runs at $u): exit $?: $(head -c 300 err.txt)"
"$VT" report t.vt >rep.txt 2>rep.err || fail "report: exit $?: $(cat rep.err)"
grep -q '^  events   40003 (0 failed allocations)' rep.txt || fail "events lost at ulimit -v $((u + 6000)): $(grep events rep.txt)"
exit 0
