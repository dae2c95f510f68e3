#!/bin/sh
# writer_exec.sh — how a trace ends, under `vramtrace run` on the fake CUDA: each exec form
# leaves a complete trace (EXEC trailer, no zero tail); a failed exec (three in a row) keeps the
# program's result and errno and tracing goes on in the same file, without a word; a vfork
# child's exec leaves the parent's trace alone; a full disk (a small tmpfs, when root may mount
# one) keeps what fits and `report` / `run` say "disk full".
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/exec_cases"
fail() { echo "writer_exec: $*"; exit 1; }
# ends FILE FLAGS ALLOCS: the file is records back to back ending exactly with one TRAILER whose
# header.flags are FLAGS, and it holds ALLOCS cudaMalloc events (from `dump`)
ends() {
    python3 - "$1" "$2" <<'PYEOF' || fail "$1: does not end with one trailer (flags $2) at its last byte"
import struct, sys
b = open(sys.argv[1], "rb").read()
off, last, trailers = 32, None, 0
while off + 8 <= len(b):
    t, fl, size = struct.unpack_from("<HHI", b, off)
    assert t != 0 and size >= 8 and off + size <= len(b), (off, t, size)
    if t == 14:
        trailers += 1
    last = (t, fl)
    off += size
assert off == len(b) and last == (14, int(sys.argv[2])) and trailers == 1, (off, len(b), last, trailers)
PYEOF
    n=$("$VT" dump --no-resolve "$1" | grep -c '"type":"alloc","api":"cudaMalloc"')
    [ "$n" = "$3" ] || fail "$1: $n cudaMalloc events, want $3"
}

for form in execv execve execvp execvpe execl execlp execle fexecve; do
    "$VT" run -q -o "ok-$form.vt" -- "$P" exec "$form" >out 2>&1 || { cat out; fail "$form: run failed"; }
    ends "ok-$form.vt" 4 3
    "$VT" dump "ok-$form.vt" | grep -q '"type":"trailer".*"ended":"exec"' || fail "$form: dump does not say ended: exec"
    "$VT" run -q -o "bad-$form.vt" -- "$P" fail "$form" >out 2>&1 || { cat out; fail "$form: failed exec changed the program"; }
    ends "bad-$form.vt" 0 4
    grep -v '^vramtrace: trace ' out | grep -q vramtrace &&
        { cat out; fail "$form: three failed execs in a row: the preload said something"; }
done

"$VT" run -q -o vf.vt -- "$P" vfork >out 2>&1 || { cat out; fail "vfork run failed"; }
ends vf.vt 0 2

# a shell wrapper that execs a program that execs itself twice: one trace per image (EXEC
# trailers on the first two), and `run --watch` follows the run into each new image's trace
# (it had stopped at the first one's end, "(ended)", and shown nothing of the other two images)
"$VT" run --watch -o ch.vt -- sh -c "exec '$P' chain 0" >out 2>err || { cat out err; fail "chain: run failed"; }
ends ch.vt 4 10
ends ch.vt.1 4 20
ends ch.vt.2 0 30
for mib in 310 320 330; do
    grep -q "live $mib.0 MiB.*(ended)\$" out || { cat out err; fail "chain: run --watch did not show the image holding $mib MiB to its end"; }
done
[ "$(grep -c "the program exec'd; following its new image's trace .*/ch.vt.[12]\$" err)" = 2 ] ||
    { cat err; fail "chain: the handovers are not said"; }
# a watch that falls behind (stopped during the first image until the program has ended) still
# shows every image's trace to its end (it had stopped at the first, the program reaped)
"$VT" run --watch -o cs.vt -- sh -c "exec '$P' chain 0" >cs.out 2>cs.err &
vp=$!
i=0
while [ ! -s cs.vt ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -STOP $vp
c=$(pgrep -P $vp)
i=0 # (the program ends a zombie: its parent, stopped, cannot reap it)
while [ -n "$c" ] && [ "$(awk '{print $3}' /proc/"$c"/stat 2>/dev/null)" != Z ] && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -CONT $vp
wait $vp || { cat cs.out cs.err; fail "chain, watch behind: run failed"; }
for mib in 310 320 330; do
    grep -q "live $mib.0 MiB.*(ended)\$" cs.out ||
        { cat cs.out cs.err; fail "chain, watch behind: the image holding $mib MiB not shown to its end"; }
done

# a trace that ended on a full disk (tests/data/disk_full.vt, made on a 16 KiB tmpfs): `report`
# says "disk full", exit 0, never "killed"; `dump` shows the trailer's reason
"$VT" report "$ROOT/tests/data/disk_full.vt" >rep 2>rerr || { cat rerr; fail "disk_full.vt: report failed"; }
grep -q 'disk full' rerr || { cat rerr; fail "disk_full.vt: report does not say disk full"; }
grep -q 'killed' rerr && fail "disk_full.vt: report calls it killed"
"$VT" dump --no-resolve "$ROOT/tests/data/disk_full.vt" | grep -q '"type":"trailer".*"ended":"disk_full"' ||
    fail "disk_full.vt: dump does not say ended: disk_full"

# a full disk: needs root to mount a small tmpfs; otherwise this part is skipped (the unit test
# test_writer covers the same through its system-call seam)
mkdir -p small
if mount -t tmpfs -o size=64k vt-small small 2>/dev/null; then
    trap 'umount "$TESTDIR/small" 2>/dev/null' EXIT
    "$VT" run -o small/full.vt -- "$BUILD/tests/prog/rt_cases" threads 2 20000 >out 2>err ||
        { cat err; fail "disk full: the program was affected"; }
    [ "$(grep -c 'vramtrace: disk full.*tracing stopped' err)" = 1 ] || { cat err; fail "disk full: want one warning"; }
    cat out err | grep -q 'stopped early (disk full' || { cat out err; fail "disk full: run summary does not say so"; }
    ends small/full.vt 1 "$("$VT" dump --no-resolve small/full.vt | grep -c '"type":"alloc","api":"cudaMalloc"')"
    n=$("$VT" dump --no-resolve small/full.vt | grep -c '"type":"alloc"')
    [ "$n" -gt 500 ] || fail "disk full: only $n events kept in 64 KiB"
    "$VT" report small/full.vt >rep 2>rerr || { cat rerr; fail "disk full: report failed"; }
    grep -q 'disk full' rerr || { cat rerr; fail "disk full: report does not say disk full"; }
    grep -q 'killed' rerr && fail "disk full: report calls it killed"
    # a full TMPDIR: the run's list of traces cannot be written; it says so and where the trace
    # is, not "no CUDA allocation was made" (a trace was written); room is kept for the list when
    # TMPDIR fills while the program runs (its trace is summarized)
    rm -f small/full.vt* && dd if=/dev/zero of=small/fill bs=4k count=100 2>/dev/null
    TMPDIR="$TESTDIR/small" "$VT" run -o tmpfull.vt -- "$BUILD/tests/prog/rt_cases" threads 2 200 >out 2>err ||
        { cat err; fail "full TMPDIR: the program was affected"; }
    [ -s tmpfull.vt ] || fail "full TMPDIR: no trace"
    grep -q "no CUDA allocation" err && { cat err; fail "full TMPDIR: run says no allocation was made"; }
    grep -q "the list of this run's traces could not be written ([^ ]*/small/vramtrace-run.*: No space left on device), so none is summarized here: a trace it wrote, if any, is named as $TESTDIR/tmpfull.vt\$" err ||
        { cat err; fail "full TMPDIR: not said"; }
    rm -f small/fill && dd if=/dev/zero of=small/fill bs=4k count=11 2>/dev/null
    TMPDIR="$TESTDIR/small" "$VT" run -o tmpfill.vt -- sh -c \
        "dd if=/dev/zero of='$TESTDIR/small/fill2' bs=4k count=100 2>/dev/null; exec '$BUILD/tests/prog/rt_cases' threads 2 200" >out 2>err ||
        { cat err; fail "TMPDIR filled by the program: the program was affected"; }
    grep -q "trace $TESTDIR/tmpfill.vt: 801 events" err || { cat err; fail "TMPDIR filled by the program: the trace is not listed"; }
    umount small
    trap - EXIT
else
    echo "writer_exec: not root: the tmpfs disk-full part was skipped"
fi
exit 0
