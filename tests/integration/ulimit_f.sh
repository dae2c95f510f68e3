#!/bin/sh
# ulimit_f.sh — the preload's own I/O never signals the program. Under `ulimit -f` (1, 16,
# 100, 1000, 4000 KiB) the traced program exits 0, as it does untraced (it used to be killed
# by SIGXFSZ, exit 153): tracing stops with one warning naming the file-size limit, the trace
# keeps what fits and ends with a DISK_FULL trailer whose `error` is EFBIG (27), and `run`
# and `report` say so (the limit, never a full disk); when not even the first page fits no file is left and `run` says why. A warning
# written to a stderr whose reader is gone does not kill the program with SIGPIPE.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "ulimit_f: $*"; exit 1; }

# trailer FILE: "FLAGS ERROR" of the trace's last record, a TRAILER ending the file
trailer() {
    python3 - "$1" <<'PYEOF' || fail "$1: does not end with a trailer"
import struct, sys
b = open(sys.argv[1], "rb").read()
off, last = 32, None
while off + 8 <= len(b):
    t, fl, size = struct.unpack_from("<HHI", b, off)
    assert t and size >= 8 and off + size <= len(b), (off, t, size)
    last = (t, fl, off)
    off += size
assert off == len(b) and last[0] == 14, (off, len(b), last)
print(last[1], struct.unpack_from("<I", b, last[2] + 8 + 36)[0])
PYEOF
}

for lim in 1 16 100 1000 4000; do
    rm -f "t$lim.vt"*
    (ulimit -f $lim && "$VT" run -o "t$lim.vt" -- "$P" threads 2 20000 >"out$lim" 2>"err$lim")
    rc=$?
    [ $rc = 0 ] || { cat "err$lim"; fail "ulimit -f $lim: exit $rc (the program must not be killed)"; }
    if [ $lim = 1 ]; then
        [ ! -e t1.vt ] || fail "ulimit -f 1: an empty trace was left"
        grep -q "vramtrace: cannot create [^ ]*/t1.vt: File too large (the process's file-size limit, ulimit -f); tracing stopped" err1 ||
            { cat err1; fail "ulimit -f 1: no warning naming the limit"; }
        grep -q "wrote no trace: cannot create [^ ]*/t1.vt: File too large" err1 ||
            { cat err1; fail "ulimit -f 1: run does not say why there is no trace"; }
        grep -q "no CUDA allocation was made" err1 && fail "ulimit -f 1: run blames the program"
        # (the trace, listed when made, was removed: not summarized as a missing file)
        grep -q "cannot summarize" err1 && { cat err1; fail "ulimit -f 1: the removed trace summarized"; }
        continue
    fi
    [ -f "t$lim.vt" ] || { cat "err$lim"; fail "ulimit -f $lim: no trace"; }
    size=$(wc -c <"t$lim.vt")
    [ "$size" -le $((lim * 1024)) ] || fail "ulimit -f $lim: the trace ($size bytes) passed the limit"
    set -- $(trailer "t$lim.vt")
    if [ "$1" = 0 ]; then # it fitted: the run was traced whole
        [ "$2" = 0 ] || fail "ulimit -f $lim: complete trace with error $2"
        grep -q "tracing stopped" "err$lim" && fail "ulimit -f $lim: complete but warned"
    else
        [ "$1 $2" = "1 27" ] || fail "ulimit -f $lim: trailer flags $1 error $2, want DISK_FULL + EFBIG (1 27)"
        [ "$(grep -c 'tracing stopped' "err$lim")" = 1 ] || { cat "err$lim"; fail "ulimit -f $lim: want one warning"; }
        grep -q "stopped at the process's file-size limit (ulimit -f)" "err$lim" ||
            { cat "err$lim"; fail "ulimit -f $lim: run does not name the limit"; }
        "$VT" dump --no-resolve "t$lim.vt" | grep -q '"ended":"disk_full"' || fail "ulimit -f $lim: dump"
        # never called a full disk: run's summary and report's warning name the limit (they had
        # said "stopped early (disk full; ...)" a line above "not on a full disk")
        grep -q "disk full" "err$lim" && { cat "err$lim"; fail "ulimit -f $lim: run says disk full"; }
        grep -q "stopped early (the process's file-size limit, ulimit -f; " "err$lim" ||
            { cat "err$lim"; fail "ulimit -f $lim: run's summary does not name the limit"; }
        "$VT" report "t$lim.vt" >/dev/null 2>"rerr$lim"
        grep -q "disk full" "rerr$lim" && { cat "rerr$lim"; fail "ulimit -f $lim: report says disk full"; }
        grep -q "stopped early (the process's file-size limit, ulimit -f: tracing stopped, the program went on)" "rerr$lim" ||
            { cat "rerr$lim"; fail "ulimit -f $lim: report's warning does not name the limit"; }
    fi
    echo "ulimit -f $lim: exit 0, $size bytes, trailer flags $1 error $2"
done
[ "$(trailer t16.vt)" = "1 27" ] || fail "ulimit -f 16 should stop early"

# without `run`: the preload alone, the program's exit status and output untouched
rm -f plain.vt*
(ulimit -f 100 && LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=plain.vt "$P" threads 2 20000 >pout 2>perr)
rc=$?
[ $rc = 0 ] || { cat perr; fail "LD_PRELOAD alone under ulimit -f 100: exit $rc"; }
[ "$(trailer plain.vt)" = "1 27" ] || fail "plain.vt: want DISK_FULL + EFBIG"

# SIGPIPE: the preload's warning goes to a stderr pipe nobody reads any more
python3 - "$VT_PRELOAD" "$P" <<'PYEOF' || fail "a warning on a closed stderr pipe killed the program"
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
env = dict(os.environ, LD_PRELOAD=sys.argv[1], VRAMTRACE_STACK_DEPTH="abc", VRAMTRACE_OUTPUT="pipe.vt")
p = subprocess.run([sys.argv[2], "basic"], stdout=subprocess.DEVNULL, stderr=w, env=env)
os.close(w)
print("warning to a closed pipe: exit", p.returncode)
sys.exit(0 if p.returncode == 0 else 1)
PYEOF
# a bounded trace under the limit (2000 blocks): what never reached the file is counted and
# said, never "every record made before was kept" (its 600,000 events had been "0 events ...
# stopped early (disk full; every record made before was kept)", the report's events line "74
# of the run's 600075 events lost" where 597,615 were)
rm -f bnd.vt*
(ulimit -f 2000 && "$VT" run --max-size 8MiB --no-compress -o bnd.vt -- "$P" threads 1 300000 >bout 2>berr)
[ $? = 0 ] || { cat berr; fail "bounded under ulimit -f 2000: exit"; }
grep -q 'every record made before was kept\|complete\.$' berr && { cat berr; fail "bounded: run says all was kept"; }
"$VT" report --json bnd.vt >bnd.json 2>/dev/null || fail "bounded: report --json"
"$VT" report --no-color bnd.vt >bnd.txt 2>bnd.err || fail "bounded: report"
python3 - bnd.json <<'PYEOF' || fail "bounded: the events lost are not counted"
import json, sys
r = json.load(open(sys.argv[1]))
dropped = r["bounded"]["dropped_events"]  # (a bounded trace's windows, by design)
assert r["made_events"] and r["lost_events"] > 0, (r["events"], r["lost_events"], r["made_events"])
assert r["events"] + r["lost_events"] + dropped >= r["made_events"], r
print("bounded under ulimit -f 2000: %d kept, %d lost of %d" % (r["events"], r["lost_events"], r["made_events"]))
PYEOF
grep -q "events lost" bnd.txt || fail "bounded: the events line says nothing lost: $(grep '^  events' bnd.txt)"
grep -q 'every record made before' bnd.err && fail "bounded: report: $(cat bnd.err)"
# bounded, under a limit below its first slot (ulimit -f 40): no file, the limit named (it had
# been "cannot start: out of memory, threads or room for it")
rm -f bnd0.vt*
(ulimit -f 40 && "$VT" run --max-size 8MiB --no-compress -o bnd0.vt -- "$P" threads 1 2000 >bout 2>berr)
[ $? = 0 ] || { cat berr; fail "bounded under ulimit -f 40: exit"; }
[ ! -e bnd0.vt ] || fail "bounded under ulimit -f 40: an empty trace was left"
grep -q "wrote no trace: cannot create [^ ]*/bnd0.vt: File too large (the process's file-size limit" berr ||
    { cat berr; fail "bounded under ulimit -f 40: the limit not named"; }
# the preload alone, bounded: one warning naming the limit (it had said nothing)
rm -f bnd2.vt*
(ulimit -f 2000 && LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_MAX_SIZE=8388608 VRAMTRACE_COMPRESS=0 \
    VRAMTRACE_OUTPUT=bnd2.vt "$P" threads 1 300000 >bout 2>berr) || fail "bounded, preload alone: exit"
[ "$(grep -c "bnd2.vt: File too large (the process's file-size limit, ulimit -f) at [0-9]* KiB: the trace keeps what fits there" berr)" = 1 ] ||
    { cat berr; fail "bounded, preload alone: want one warning naming the limit"; }
# a bounded trace whose first slot does not fit: the limit is named (it had been "cannot create
# bnd1.vt: Resource temporarily unavailable")
rm -f bnd1.vt*
(ulimit -f 1000 && "$VT" run --max-size 8MiB --no-compress -o bnd1.vt -- "$P" threads 1 1000 >bout 2>berr)
grep -q "cannot create [^ ]*/bnd1.vt: File too large (the process's file-size limit, ulimit -f)" berr ||
    { cat berr; fail "bounded, no room for the first slot: the limit not named"; }
echo "ulimit_f: ok"
