#!/bin/sh
# fit_limits.sh — `vramtrace fit` does not wait for ever or keep everything: a trial that hangs
# is killed at --trial-timeout with its whole process group (the search stops, exit 2, the
# table says "timed out"; nothing of it is left running); a trial that prints 40 MB keeps a
# log of its first and last 512 KiB with a line saying how much was cut (JSON log_cut_bytes);
# a command that cannot be run is said so on stderr with run's reason (exit 2).
# runs: alone (a hanging trial killed at its 2 s timeout, the whole search within 20 s)
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "fit_limits: $*"; exit 1; }

# 1. a command that hangs (and ignores SIGTERM): killed at 2 s (+ the 5 s grace), exit 2
mark=999.$$ # a sleep no other test runs
start=$(date +%s)
"$VT" fit --trial-timeout 2 --json --dir hang -- sh -c "trap '' TERM; sleep $mark & sleep $mark" x '{B}' \
    >hang.json 2>hang.err
rc=$?
took=$(($(date +%s) - start))
[ $rc = 2 ] || { cat hang.err; fail "hang: exit $rc, want 2"; }
[ $took -lt 20 ] || fail "hang: took $took s"
grep -q "did not finish within 2 s: stopped" hang.err || { cat hang.err; fail "hang: no message"; }
python3 - hang.json <<'PYEOF' || fail "hang: JSON (above)"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["trials"]
assert len(t) == 1 and t[0]["timed_out"] is True and t[0]["time_limit_s"] == 2, t
assert d["failed"] is True and d["best"] is None, d
print("hang: killed after %.1f s" % t[0]["seconds"])
PYEOF
sleep 0.3
pgrep -f "sleep $mark" >/dev/null && { pkill -KILL -f "sleep $mark"; fail "hang: the trial's processes were left running"; }
"$VT" fit --trial-timeout 2 --dir hang2 -- sh -c "sleep $mark" x '{B}' >hang.txt 2>/dev/null
grep -q "timed out (killed after 2 s)" hang.txt || { cat hang.txt; fail "hang: table"; }

# 2. a command that prints 40 MB per trial and allocates: every trial's log is capped
"$VT" fit --json --max-b 2 --dir loud -- sh -c \
    "head -c 40000000 /dev/zero | tr '\\0' x; echo; echo last-line; exec $P threads 1 10" x '{B=1}' \
    >loud.json 2>loud.err
rc=$?
[ $rc = 0 ] || { cat loud.err; fail "loud: exit $rc"; }
grep -q "printed 38.1 MiB: its log keeps the first and last 512 KiB" loud.err || { cat loud.err; fail "loud: no note"; }
for b in 1 2; do
    log=loud/b$b/output.log
    size=$(wc -c <"$log")
    [ "$size" -lt 1200000 ] || fail "loud: $log is $size bytes"
    grep -q "^\[vramtrace fit: [0-9]* bytes of output cut here; the first 524288 and the last 524288 bytes of 400000[0-9]* are kept\]$" "$log" ||
        fail "loud: $log does not say what was cut"
    tail -n 3 "$log" | grep -q '^last-line$' || fail "loud: $log lost its tail"
done
python3 - loud.json <<'PYEOF' || fail "loud: JSON (above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert [t["batch_size"] for t in d["trials"]] == [1, 2], d
for t in d["trials"]:
    assert t["fits"] and not t["timed_out"] and t["log_cut_bytes"] > 38_000_000, t
    assert t["time_limit_s"] >= 120, t  # the first: an hour; then derived, at least 120 s
print("loud: logs capped,", [t["log_cut_bytes"] for t in d["trials"]], "bytes cut")
PYEOF
# 3. SIGCHLD ignored by whoever started fit (the kernel would reap the trials): a trial that
# crashes is said so, exit 2 (it had been taken as one that fit: "at least 16")
python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$VT" fit --max-b 4 --dir chld -- sh -c 'kill -SEGV $$' x '{B}' \
    >chld.txt 2>chld.err
rc=$?
[ $rc = 2 ] && grep -q 'failed at micro-batch 1 (exit 139)' chld.err ||
    { cat chld.err; fail "SIGCHLD ignored: a crashing trial, exit $rc"; }
# 4. a command that cannot be run (a mistyped name, a directory): run's own reason said on
# stderr, not only in the trial's log (it had been "failed ... without running out of GPU memory")
"$VT" fit --card 12GiB --dir nocmd -- nonexistent-cmd-$$ '{B}' >nocmd.txt 2>nocmd.err
rc=$?
[ $rc = 2 ] && grep -q "^vramtrace fit: the command could not be run at micro-batch 1 (exit 127): cannot run nonexistent-cmd-$$: No such file or directory; its output: nocmd/b1/output.log" nocmd.err &&
    ! grep -q "without running out" nocmd.err || { cat nocmd.err; fail "a missing command: exit $rc"; }
"$VT" fit --dir nodir -- "$PWD" '{B}' >nodir.txt 2>nodir.err
rc=$?
[ $rc = 2 ] && grep -q "could not be run at micro-batch 1 (exit 126): cannot run .*: Is a directory" nodir.err ||
    { cat nodir.err; fail "a directory as the command: exit $rc"; }
echo "fit_limits: ok"
