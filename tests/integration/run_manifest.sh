#!/bin/sh
# run_manifest.sh — the list of traces `vramtrace run` reads back (VRAMTRACE_MANIFEST) names each
# trace whole, whatever its name holds: a newline (its raw line had been read as two, and run
# summarized /tmp/x and y.vt, neither the trace) or a backslash, under one run, a run inside
# another's and --watch.
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
echo "run_manifest: ok"
