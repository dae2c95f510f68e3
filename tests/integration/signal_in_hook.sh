#!/bin/sh
# signal_in_hook.sh — a signal handler's CUDA calls that land while the tracer is inside a hook
# on the same thread, doing its own work (recording an allocation: it asks the driver for the
# current device), are counted as lost events with their reason, never dropped unsaid. The fake
# driver raises SIGUSR1 in every cuCtxGetDevice (FAKECUDA_RAISE=10), which only the tracer calls
# here: tests/prog/host_cases.c sighook makes 50 pairs and its handler a pair at each signal.
# Until 2026-12-06 such a call reached the hook at depth 2, was taken for the runtime calling the
# driver and vanished: the trace said 101 events, none lost, where the run made 201.
set -u
fail() { echo "signal_in_hook: $*"; exit 1; }
P="$BUILD/tests/prog/host_cases"
[ -n "${FAKE:-}" ] && [ -x "$P" ] || { echo "signal_in_hook: no fake runtime or host_cases"; exit 77; }
export LD_LIBRARY_PATH="$FAKE" FAKECUDA_RAISE=10
# untraced: nothing asks the device, no signal comes
"$P" sighook 50 >plain.out || fail "untraced: exit $?"
grep -qx 'made 100 handler 0' plain.out || fail "untraced: $(cat plain.out)"
for bound in 0 8388608; do
    rm -f h.vt
    LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=h.vt VRAMTRACE_MAX_SIZE=$bound "$P" sighook 50 \
        >h.out 2>h.err || fail "traced (bound $bound): exit $?: $(cat h.err)"
    grep -qx 'made 100 handler 100' h.out || fail "traced (bound $bound): $(cat h.out)"
    "$VT" report --json h.vt >h.json 2>/dev/null || fail "report --json (bound $bound): exit $?"
    # the run's events: the program's 100, its handler's 100, the context's ALLOC
    python3 - <<'PY' || fail "bound $bound: above"
import json
r = json.load(open("h.json"))
assert (r["events"], r["lost_events"], r["made_events"]) == (101, 100, 201), (
    r["events"], r["lost_events"], r["made_events"])
PY
    "$VT" report --no-color h.vt >h.txt 2>/dev/null || fail "report (bound $bound): exit $?"
    want="100 of the run's 201 events lost: the capture could not store them (made by a signal handler that interrupted the tracer's own work inside a hook on the same thread)"
    grep -qF "$want" h.txt || fail "text (bound $bound): no '$want' in: $(grep events h.txt)"
    "$VT" dump h.vt | grep '"type":"trailer"' | grep -q '"lost_why":\["in_hook"\]' ||
        fail "dump (bound $bound): the trailer has no lost_why in_hook: $("$VT" dump h.vt | grep trailer)"
done
exit 0
