#!/bin/sh
# run_status.sh — `vramtrace run` ends with its program's exit status whatever befalls its own
# summary: written to a pipe whose reader is gone (it had died of SIGPIPE, 141, and with --watch
# left the program running alone), or cut short by an out-of-memory failure while it read the
# trace (it said so, and had ended 2: the program's 3 lost; tests/libfailmalloc.so fails the
# parent's allocations from the 130th on, after the program ran).
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "run_status: $*"; exit 1; }
P="$BUILD/tests/prog/rt_cases"
python3 - "$VT" "$P" <<'PY' || fail "see above"
import os, subprocess, sys
vt, prog = sys.argv[1:3]
for watch in ([], ["--watch"]):
    r, w = os.pipe()
    os.close(r)
    cmd = [vt, "run"] + watch + ["-o", "sp%s.vt" % len(watch), "--", "sh", "-c", prog + " basic >/dev/null; exit 3"]
    p = subprocess.run(cmd, stdout=w, stderr=w, timeout=120)
    os.close(w)
    assert p.returncode == 3, (watch, p.returncode)
print("run_status: a closed output pipe: exit 3, as the program")
PY
[ -f "$BUILD/tests/libfailmalloc.so" ] || fail "failmalloc not built"
# (from the 130th on, or later where the allocation that fails is the one glibc's loader makes
# for libdw's thread-local data, which ends the process itself: docs/limitations.md)
for n in 130 140 150 160 170 180 190 200; do
    rm -f oom.vt*
    LD_PRELOAD="$BUILD/tests/libfailmalloc.so" VT_FAILMALLOC=$n+ "$VT" run -o oom.vt -- sh -c "$P basic >/dev/null; exit 3" >oom.out 2>&1
    rc=$?
    [ $rc = 127 ] && grep -q "cannot allocate memory for thread-local data" oom.out || break
done
[ $rc = 3 ] || { cat oom.out; fail "out of memory in the summary: exit $rc, the program's is 3"; }
grep -q '^vramtrace: cannot summarize the trace: out of memory while reading it$' oom.out || { cat oom.out; fail "not said"; }
grep -q '^vramtrace run: out of memory' oom.out || { cat oom.out; fail "not said (main)"; }
echo "run_status: ok"
