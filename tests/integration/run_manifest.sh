#!/bin/sh
# run_manifest.sh — the list of traces `vramtrace run` reads back (VRAMTRACE_MANIFEST) names each
# trace whole, whatever its name holds: a newline (its raw line had been read as two, and run
# summarized /tmp/x and y.vt, neither the trace) or a backslash, under one run, a run inside
# another's and --watch.
# A program with no file descriptor free to open the list (`ulimit -n 4`, the trace in the last
# one; one that holds every one at its first CUDA call) leaves its line as a link beside it,
# read by run, by a run inside another's (itself under the limit) and removed at run's end (the
# line had been lost: "no CUDA allocation was made" beside the whole trace); one whose name is
# too long for a link is said as a trace not listed.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "run_manifest: $*"; exit 1; }

# summarized NAME-AS-SHOWN ERRFILE: run's one summary names the trace as escape_term shows it
summarized() {
    grep -q "cannot summarize" "$2" && { cat "$2"; fail "$1: a line that is no trace was summarized"; }
    [ "$(grep -c '^vramtrace: trace ' "$2")" = 1 ] || { cat "$2"; fail "$1: want one trace"; }
    grep -qF "vramtrace: trace $TESTDIR/$1: " "$2" || { cat "$2"; fail "$1: not the trace summarized"; }
    printf 'summarized: %s\n' "$1"
}
nl=$(printf 'x\ny.vt')
"$VT" run -o "$nl" -- "$P" basic >out 2>err || { cat err; fail "a newline: exit $?"; }
[ -f "$nl" ] || fail "a newline: no trace"
summarized 'x\x0ay.vt' err
"$VT" run -o 'a\nb\\c.vt' -- "$P" basic >out 2>err || { cat err; fail "backslashes: exit $?"; }
[ -f 'a\nb\\c.vt' ] || fail "backslashes: no trace"
summarized 'a\\nb\\\\c.vt' err
both=$(printf 'in\\\nner.vt')
"$VT" run -o outer.vt -- "$VT" run -q -o "$both" -- "$P" basic >out 2>err || { cat err; fail "nested: exit $?"; }
[ -f "$both" ] || fail "nested: no trace"
grep -qF "vramtrace: trace $TESTDIR/in\\\\\\x0aner.vt" err || { cat err; fail "nested: the inner run"; }
sed '/^vramtrace: trace [^:]*$/d' err >outer.err
summarized 'in\\\x0aner.vt' outer.err
timeout 60 "$VT" run --watch -o "w$nl" -- "$P" basic >out 2>err || { cat err; fail "--watch: exit $?"; }
grep -q "(ended)" out || { cat out err; fail "--watch: the trace was not followed"; }
summarized 'wx\x0ay.vt' err

"$VT" run -o fd.vt -- sh -c "ulimit -n 4; exec $P basic" >out 2>err || { cat err; fail "ulimit -n 4: exit $?"; }
summarized fd.vt err
"$VT" run -o outer.vt -- sh -c "ulimit -n 4; exec $VT run -q -o fdin.vt -- $P basic" >out 2>err ||
    { cat err; fail "ulimit -n 4, nested: exit $?"; }
sed '/^vramtrace: trace [^:]*$/d' err >outer.err
summarized fdin.vt outer.err
# ... and the inner run alone under it, reading its list as it adds the line to the outer's
"$VT" run -o outer.vt -- sh -c "ulimit -S -n 4; exec $VT run -q -o fdup.vt -- sh -c 'ulimit -S -n 64; exec $P basic'" \
    >out 2>err || { cat err; fail "ulimit -n 4 for the inner run: exit $?"; }
sed '/^vramtrace: trace [^:]*$/d' err >outer.err
summarized fdup.vt outer.err
# every descriptor held at the first CUDA call: no trace, said why (the line too is a link)
cat >fill.py <<'PY'
import ctypes, os
rt = ctypes.CDLL("libcudart.so.13")
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
rt.cudaMalloc(ctypes.byref(ctypes.c_void_p()), 1 << 20)
PY
"$VT" run -o full.vt -- sh -c "ulimit -n 64; exec python3 fill.py" >out 2>err || { cat err; fail "every descriptor held: exit $?"; }
grep -q "process [0-9]* wrote no trace: cannot create $TESTDIR/full.vt: Too many open files" err ||
    { cat err; fail "every descriptor held: run does not say why no trace was written"; }
# a name whose line is too long for a link (4094 bytes, 8 backslashes written as 16)
long=$(python3 -c 'import os; h = os.getcwd() + "/"; t = "t" + "\\" * 8 + ".vt"; print(h + "./" * ((4094 - len(h) - len(t)) // 2) + t)')
"$VT" run -o "$long" -- sh -c "ulimit -n 4; exec $P basic" >out 2>err || { cat err; fail "a long name, ulimit -n 4: exit $?"; }
[ -f "$long" ] || fail "a long name, ulimit -n 4: no trace"
grep -q "process [0-9]* wrote a trace it could not list: no file descriptor was free to list it, and its name is too long to note otherwise (it is named as $TESTDIR/\./\./" err ||
    { cat err; fail "a long name, ulimit -n 4: the trace is not said"; }
grep -q "no CUDA allocation" err && fail "a long name, ulimit -n 4: run says no CUDA allocation was made"
# a relative name in a working directory too deep to name (getcwd fails past 4096 bytes): said
# as a trace written and not listed (it had been listed as "/t.vt", another file or none)
deep=$(printf 'd%.0s' $(seq 200))
"$VT" run -o deep.vt -- python3 -c "import os
for _ in range(25):
    os.mkdir('$deep'); os.chdir('$deep')
os.environ['VRAMTRACE_OUTPUT'] = 't.vt'
os.execv('$P', ['$P', 'basic'])" >out 2>err || { cat err; fail "a deep directory: exit $?"; }
grep -q "process [0-9]* wrote a trace it could not list: its working directory could not be named" err ||
    { cat err; fail "a deep directory: the trace is not said"; }
grep -q "cannot summarize\|no CUDA allocation" err && { cat err; fail "a deep directory: another file, or none, said"; }
rm -rf "$deep"
# nothing left in TMPDIR: every list and its links removed
[ -z "$(ls -A "${TMPDIR:-/tmp}" | grep vramtrace-run)" ] || fail "left in TMPDIR: $(ls -A "${TMPDIR:-/tmp}")"
echo "run_manifest: ok"
