#!/bin/sh
# watch_live.sh — `vramtrace watch` on a trace being written (a simulated leak, 60 steps of
# 50 ms, examples/sim/sim_long.py), plain and bounded (--max-size): one line per refresh when
# stdout is not a terminal, the steps rising while the run is alive (read before the run ended),
# the last line once the trailer is there, with every step, the growth per step and the site;
# `run --watch` shows the same while it runs its command and returns the command's status;
# --once on an ended trace prints one line, with the out-of-memory error the report finds; a file
# that is not there is an error (followed: waited for, said once); a trace whose writer was killed
# ends the watch, said; out of memory while following says so (watch_ended.sh: ended traces
# against their reports).
# runs: alone (a live watch must see the steps rise while a 3-second run is alive)
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "watch_live: $*"; exit 1; }
SIM="$ROOT/examples/sim/sim_long.py"
N=60
for t in plain bounded; do
    opt=""
    [ $t = bounded ] && opt="--max-size 8MiB"
    # shellcheck disable=SC2086
    "$VT" run -q $opt -o $t.vt -- python3 "$SIM" --scenario=leak --max_iters=$N --step_sleep=0.05 \
        >$t.run 2>&1 &
    pid=$!
    i=0
    while [ ! -s $t.vt ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s $t.vt ] || fail "$t: no trace after 10 s"
    timeout 120 "$VT" watch --interval 0.2 $t.vt >$t.watch 2>$t.werr || { cat $t.werr; fail "$t: watch failed"; }
    wait $pid || fail "$t: the run failed"
    python3 - $t $N <<'PYEOF' || { cat $t.watch; fail "$t: (see above)"; }
import re, sys
t, n = sys.argv[1], int(sys.argv[2])
lines = [l for l in open(t + ".watch") if l.strip()]
steps = [int(re.search(r" steps (\d+) ", l).group(1)) for l in lines]
assert len(lines) >= 5, "%d lines" % len(lines)
assert steps == sorted(steps), steps
assert len({s for s in steps if s < n}) >= 3, "not read while the run was alive: %s" % steps
last = lines[-1]
assert last.rstrip().endswith("(ended)") and steps[-1] >= n, last
m = re.search(r"growth \+([\d.]+) (MiB|KiB)/step .*?at (.*?)\)? \(ended\)", last)
assert m and "forward" in m.group(3), last
assert all("(ended)" not in l for l in lines[:-1]), "ended before the end"
PYEOF
done
"$VT" run --watch -o rw.vt -- python3 "$SIM" --scenario=leak --max_iters=30 --step_sleep=0.04 \
    >rw.out 2>rw.err
rc=$?
[ $rc -eq 0 ] || { cat rw.err; fail "run --watch: exit $rc"; }
n=$(grep -c ' steps [0-9]* .*growth' rw.out)
# a step in flight (its backward pass done, its end not yet) is no other split of the run's steps
# (it had said "steps 21 (its own: 22 backward passes, 21 optimizer steps)" of a live run)
"$VT" run --watch -o fl.vt -- python3 "$SIM" --scenario=steady --max_iters=30 --step_sleep=0.04 \
    --sleep_at=backward >fl.out 2>fl.err || { cat fl.err; fail "run --watch, a step in flight: exit $?"; }
[ "$(grep -c ' steps [0-9]* .*growth' fl.out)" -ge 2 ] || { cat fl.out; fail "run --watch, a step in flight: lines"; }
grep ' (its own' fl.out && fail "run --watch: a step in flight said as the run's own split"
[ "$n" -ge 2 ] || { cat rw.out; fail "run --watch showed $n lines"; }
"$VT" run --watch -q -o rf.vt -- sh -c 'exit 3' >/dev/null 2>&1
[ $? -eq 3 ] || fail "run --watch does not return the command's status"
"$VT" watch --once plain.vt >once.out || fail "watch --once on an ended trace"
[ "$(wc -l <once.out)" -eq 1 ] && grep -q '(ended)' once.out || { cat once.out; fail "watch --once"; }
"$VT" watch --once missing.vt >/dev/null 2>miss.err && fail "watch of a missing file succeeded"
grep -q 'missing.vt' miss.err || { cat miss.err; fail "the error does not name the file"; }
# followed, a file not there yet is waited for and says so once (it waited without a word)
timeout 2 "$VT" watch --interval 0.2 later.vt >/dev/null 2>later.err
[ "$(grep -c 'later.vt: No such file or directory (waiting for it; Ctrl-C stops)' later.err)" = 1 ] ||
    { cat later.err; fail "watch of a file not there yet: not said once"; }
# a trace whose writer was killed (no trailer, the process gone): watch stops and says so (it
# had printed the same line every second, forever)
"$VT" run -q -o killed.vt -- python3 "$SIM" --scenario=leak --max_iters=400 --step_sleep=0.05 \
    >killed.run 2>&1 &
pid=$!
i=0
while [ ! -s killed.vt ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -9 "$(pgrep -P $pid)" 2>/dev/null
wait $pid
timeout 60 "$VT" watch --interval 0.2 killed.vt >killed.watch 2>killed.err ||
    { cat killed.err; fail "watch of a killed run's trace: exit $?"; }
grep -q 'killed.vt: the process that wrote it (pid [0-9]*) is gone and the trace has no end' killed.err ||
    { cat killed.err; fail "watch of a killed run's trace does not say its writer is gone"; }
grep -q ' steps [1-9]' killed.watch || { cat killed.watch; fail "watch of a killed run's trace: no steps shown"; }
# --once says it too (it had shown the line in silence, a truncated trace read with no word)
"$VT" watch --once killed.vt >/dev/null 2>once.err || fail "watch --once of a killed run's trace: exit $?"
grep -q 'killed.vt: the process that wrote it (pid [0-9]*) is gone and the trace has no end' once.err ||
    { cat once.err; fail "watch --once of a killed run's trace does not say its writer is gone"; }
echo "watch_live: plain $(wc -l <plain.watch) lines, bounded $(wc -l <bounded.watch), run --watch $n"
# out of memory while following a live trace: watch stops, says so, exit 2, and shows no figure it
# could not compute (it had shown them at every refresh and said nothing until stopped)
sleep 30 &
sp=$!
"$BUILD/tests/prog/vtgen" -o oomw.vt --tensor --events 20000 --live 2000 --tail none --pid $sp >/dev/null ||
    fail "vtgen (live)"
VT_FAILMALLOC=20+ LD_PRELOAD="$BUILD/tests/libfailmalloc.so" timeout 10 "$VT" watch --plain --interval 0.2 \
    oomw.vt >oomw.out 2>oomw.err
rc=$?
kill $sp 2>/dev/null
[ $rc = 2 ] && [ ! -s oomw.out ] && grep -q '^vramtrace watch: out of memory' oomw.err ||
    { cat oomw.out oomw.err; fail "out of memory while watching: exit $rc"; }
exit 0
