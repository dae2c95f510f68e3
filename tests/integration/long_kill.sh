#!/bin/sh
# long_kill.sh — SIGKILL at any moment leaves a readable bounded trace: a run that rolls its window
# all the time (tests/prog/long_prog as fast as it goes, --max-size 8MiB: the packer drops an old
# group of slots every few milliseconds and frees raw slots, while the program's threads write)
# is killed with SIGKILL at 12 moments (0.05 s to 1.5 s, and 0.5 s to 2 s after the file reached
# its bound); every trace it leaves is read by
# report as a truncated trace (no trailer), never malformed and never a crash, with every step
# summarized so far; dump (on 3 of them) reads it whole, its steps numbered 1..N; at least six were
# killed after the window had rolled (a snapshot read). What a loop this fast makes faster than the packer keeps is counted, not
# hidden (the trailer's n_dropped in a run that ends; `lost` in the report).
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "long_kill: $*"; exit 1; }
P="$BUILD/tests/prog/long_prog"
C10="$FAKE/c10/cda/libc10_cuda.so"
[ -f "$C10" ] || { echo "no $C10 (make fake)"; exit 77; }
rolled=0
# six kills at fixed moments, then six at moments after the file reached its bound (how soon
# that is depends on the machine's speed: a loaded 2-core VM takes twice as long)
for ms in 50 300 600 900 1200 1500 +500 +800 +1100 +1400 +1700 +2000; do
    rm -f k.vt
    VRAMTRACE_OUTPUT=k.vt VRAMTRACE_MAX_SIZE=$((8 << 20)) LD_PRELOAD="$VT_PRELOAD" \
        "$P" "$C10" 100000000 50 >/dev/null 2>&1 &
    pid=$!
    case $ms in
    +*)
        ms=${ms#+}
        i=0
        while [ "$(if [ -f k.vt ]; then wc -c <k.vt; else echo 0; fi)" -lt $((8 << 20)) ] &&
            [ $i -lt 600 ]; do
            sleep 0.05
            i=$((i + 1))
        done ;;
    esac
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    # (at 50 ms a loaded machine may not have reached the first CUDA call: no file, as untraced)
    [ -f k.vt ] || [ $ms = 50 ] || fail "killed at $ms ms: no trace"
    [ -f k.vt ] || continue
    "$VT" report --json k.vt >k.json 2>k.err
    rc=$?
    if [ $rc -ne 0 ]; then
        # killed before its first tensor: said so, exit 0 — anything else fails
        cat k.err
        fail "killed at $ms ms: report exit $rc"
    fi
    case $ms in 50 | 1500 | 2000)
        "$VT" dump --no-resolve k.vt >k.jsonl 2>k.derr || { cat k.derr; fail "killed at $ms ms: dump failed"; } ;;
    *) : >k.jsonl ;;
    esac
    python3 - "$ms" <<'PYEOF' || fail "killed at $ms ms (see above)"
import json, sys
ms = sys.argv[1]
r = json.load(open("k.json"))
assert r["run"]["status"] == "truncated", (ms, r["run"]["status"])
steps = []
for line in open("k.jsonl"):
    if '"type":"step"' in line:
        steps.append(json.loads(line)["step"])
    elif '"type":"status"' in line:
        st = json.loads(line)
        assert st["status"] == "truncated", (ms, st)
assert steps == list(range(1, len(steps) + 1)), (ms, steps[:5], len(steps))
assert not steps or r["growth"]["steps"] == len(steps), (ms, r["growth"]["steps"], len(steps))
assert r["bounded"] is not None, ms
print("rolled" if r["bounded"]["dropped_events"] else "not rolled", file=open("k.rolled", "w"))
PYEOF
    grep -q '^rolled' k.rolled && rolled=$((rolled + 1))
done
[ $rolled -ge 6 ] || fail "only $rolled of 12 traces were killed after their window rolled"
echo "long_kill: 12 SIGKILLs, every trace readable, $rolled after the window rolled"

# the file-size limit (ulimit -f) under a bound larger than it: the program runs to its end as
# without the tracer (no SIGXFSZ), the trace ends saying disk_full, and the report says how many
# of the run's events the file could not hold
rm -f f.vt
(ulimit -f 3000 && VRAMTRACE_OUTPUT=f.vt VRAMTRACE_MAX_SIZE=$((16 << 20)) LD_PRELOAD="$VT_PRELOAD" \
    exec "$P" "$C10" 1000000 50 >f.out 2>f.err)
rc=$?
[ $rc -eq 0 ] || { cat f.err; fail "under ulimit -f the program exited $rc"; }
[ "$(wc -c <f.vt)" -le $((3000 * 1024)) ] || fail "the trace passed the file-size limit"
"$VT" dump --no-resolve f.vt | grep '"type":"trailer"' | grep -q '"ended":"disk_full"' ||
    fail "the trailer does not say the disk (the file-size limit) stopped it"
"$VT" report --no-color f.vt >f.txt 2>f.rerr || fail "report on the limited trace"
# (cut as the packer wrote them: "missing N events of the run are not in the file"; or, where the
# capture could no longer hand them to the packer, a machine under load: "lost N events the
# capture could not keep")
grep -q '^  missing  [0-9]* events of the run are not in the file\|^  lost     [1-9][0-9]* events the capture could not keep' f.txt ||
    { cat f.txt; fail "the report does not say what is missing"; }
grep -q "stopped early (the process's file-size limit, ulimit -f: " f.rerr || fail "report does not warn that the file-size limit stopped the trace"
