#!/bin/sh
# nproc_helpers.sh — under `ulimit -u` (RLIMIT_NPROC, counted per user, threads included) the
# tracer's own threads never take the program's: a program that makes 4 threads at `ulimit -u 5`
# makes them all, traced bounded (the packer) or with the sampler as untraced; the tracer says
# once on stderr which thread it did without, and a bounded trace's trailer says so (dump:
# lost_why no_helper). A bounded trace then packs on the program's threads and loses nothing (2 threads,
# 2 x 100,000 pairs at `ulimit -u 3`). Until 2026-12-06 the packer and the sampler took a slot each
# (the program's 4th pthread_create failed), and where the program's threads came first the
# sampler silently never started and a bounded trace lost 96 % of its events, said without why.
# The limit is not enforced for root: run as uid 65534 (setpriv) when root.
set -u
fail() { echo "nproc_helpers: $*"; exit 1; }
P="$BUILD/tests/prog/host_cases" B="$BUILD/tests/prog/bench_alloc"
[ -n "${FAKE:-}" ] && [ -x "$P" ] && [ -x "$B" ] || { echo "nproc_helpers: no fake runtime or programs"; exit 77; }
command -v prlimit >/dev/null 2>&1 || { echo "nproc_helpers: no prlimit"; exit 77; }
as="" base=0
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null 2>&1 || { echo "nproc_helpers: root without setpriv"; exit 77; }
    as="setpriv --reuid=65534 --regid=65534 --clear-groups"
    base=$(ps -L -u 65534 --no-headers 2>/dev/null | wc -l) # (the user's threads already there)
else
    base=$(ps -L -u "$(id -u)" --no-headers 2>/dev/null | wc -l)
fi
# the programs, the fake CUDA and the preload copied where that user can reach them (a build or
# work folder under a private temporary one is not)
W=$(mktemp -d /tmp/vt-nproc.XXXXXX) || fail "no work folder"
trap 'rm -rf "$W"' EXIT
mkdir "$W/fake" && cp "$P" "$B" "$VT_PRELOAD" "$W/" && cp -P "$FAKE"/*.so* "$W/fake/" &&
    chmod -R a+rwX "$W" || fail "cannot copy the programs to $W"
P="$W/host_cases" B="$W/bench_alloc" FAKE="$W/fake" VT_PRELOAD="$W/$(basename "$VT_PRELOAD")"
cd "$W" || fail "no work folder"
# limited N CMD...: CMD at `ulimit -u` base + N, as the user above
limited() {
    n=$(($1 + base))
    shift
    prlimit --nproc=$n $as env LD_LIBRARY_PATH="$FAKE" "$@"
}
limited 5 "$P" nproc 4 >plain.out 2>&1 || fail "untraced: exit $?: $(cat plain.out)"
grep -qx 'threads 4 failed 0' plain.out || fail "untraced: $(cat plain.out)"
for how in bounded sampler; do
    rm -f t.vt
    case $how in
    bounded) set -- VRAMTRACE_MAX_SIZE=8388608; said="no packing thread" ;;
    sampler) set -- VRAMTRACE_SAMPLE_MS=10; said="no sampler thread" ;;
    esac
    limited 5 LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=t.vt "$@" "$P" nproc 4 >$how.out 2>$how.err ||
        fail "$how: exit $?: $(cat $how.out $how.err)"
    grep -qx 'threads 4 failed 0' $how.out || fail "$how: the tracer took the program's thread: $(cat $how.out)"
    [ "$(grep -c "^vramtrace: $said (ulimit -u [0-9]*: the program's threads come first)" $how.err)" = 1 ] ||
        fail "$how: not said once on stderr: $(cat $how.err)"
    # the packer's absence is in the trailer (the program's threads packed the trace); the
    # sampler's loses no event: no loss reason (it had been given as one for a hook's losses)
    if [ $how = bounded ]; then
        "$VT" dump t.vt | grep '"type":"trailer"' | grep -q '"lost_why":\["no_helper"\]' ||
            fail "$how: the trailer does not say it: $("$VT" dump t.vt | grep trailer)"
    else
        "$VT" dump t.vt | grep '"type":"trailer"' | grep -q 'lost_why' &&
            fail "$how: a loss reason for no samples: $("$VT" dump t.vt | grep trailer)"
    fi
done
# a bounded trace with no packer thread loses nothing: its windows packed on the program's threads
rm -f b.vt
limited 3 LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=b.vt VRAMTRACE_MAX_SIZE=8388608 "$B" 100000 2 \
    >b.out 2>b.err || fail "bench_alloc: exit $?: $(cat b.out b.err)"
"$VT" report --json b.vt >b.json 2>/dev/null || fail "report b.vt: exit $?"
python3 - <<'PY' || fail "bounded, packed inline: above"
import json
r = json.load(open("b.json"))
assert (r["events"], r["lost_events"]) == (400003, 0), (r["events"], r["lost_events"])
PY
# a limit the system's threads leave too little room under, but not the user's own (a busy node:
# other users' threads): the packer starts, nothing said (it had been left out: the system's
# total, 120 threads here, + 256 is above base + 300)
rm -f t.vt
limited 300 LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=t.vt VRAMTRACE_MAX_SIZE=8388608 "$P" nproc 4 \
    >busy.out 2>busy.err || fail "busy: exit $?: $(cat busy.out busy.err)"
total=$(sed 's|.* [0-9]*/\([0-9]*\) .*|\1|' /proc/loadavg)
if [ $((total + 256)) -gt $((base + 300)) ]; then
    grep -q 'no packing thread' busy.err && fail "busy: the user's own threads leave room: $(cat busy.err)"
fi
grep -qx 'threads 4 failed 0' busy.out || fail "busy: $(cat busy.out)"
# a container's root (uid 0 in a user namespace of its own) is bound by the limit as any user
# (the kernel exempts the initial namespace's root alone): no thread of the tracer's takes the
# program's there either (geteuid() == 0 had been taken for an exempt root)
if [ -n "$as" ] && $as unshare -U -r true 2>/dev/null; then
    rm -f t.vt
    n=$((5 + base))
    prlimit --nproc=$n $as unshare -U -r env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$VT_PRELOAD" \
        VRAMTRACE_OUTPUT=t.vt VRAMTRACE_MAX_SIZE=8388608 "$P" nproc 4 >ns.out 2>ns.err ||
        fail "a namespace's root: exit $?: $(cat ns.out ns.err)"
    grep -qx 'threads 4 failed 0' ns.out || fail "a namespace's root: the tracer took the program's thread: $(cat ns.out)"
fi
exit 0
