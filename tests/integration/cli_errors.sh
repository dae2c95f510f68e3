#!/bin/sh
# cli_errors.sh — every error names the file and the problem, in one wording that comes from
# the reader (reader_describe), with the exit codes of exit_codes.h: a file that is not a
# trace (README.md), an empty file, a header cut short, a missing file; for report, dump,
# flame, diff and predict --from. A size without a unit (--card 13) is refused (exit 2).
set -u
fail() { echo "cli_errors: $*"; exit 1; }
T="$ROOT/examples/traces/b_oom_12gib.vt"
cp "$ROOT/README.md" README.md
: >empty.vt
head -c 20 "$T" >short.vt
# expect CMD EXIT MESSAGE ARGS...: stderr holds the line "vramtrace CMD: MESSAGE"
expect() {
    cmd=$1 want_rc=$2 msg=$3
    shift 3
    "$VT" "$cmd" "$@" >out.txt 2>err.txt
    rc=$?
    [ "$rc" = "$want_rc" ] || fail "$cmd $*: exit $rc, expected $want_rc ($(cat err.txt))"
    grep -qxF "vramtrace $cmd: $msg" err.txt || fail "$cmd $*: stderr is: $(cat err.txt)"
}
for cmd in report dump flame; do
    expect $cmd 3 "README.md: not a vramtrace trace (bad magic)" README.md
    expect $cmd 3 "empty.vt: not a vramtrace trace (an empty file: the traced process wrote nothing, or it is still starting)" empty.vt
    expect $cmd 3 "short.vt: a vramtrace trace cut short inside its header (20 of 32 bytes)" short.vt
done
expect diff 3 "README.md: not a vramtrace trace (bad magic)" README.md "$T"
expect diff 3 "README.md: not a vramtrace trace (bad magic)" "$T" README.md
expect report 2 "missing.vt: No such file or directory" missing.vt
expect report 2 "--card: 13: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name" --card 13 "$T"
expect run 2 "--card: 13: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name" --card 13 -- true
# predict --from: not a trace nor a report's JSON -> names the file; a cut trace -> the
# reader's sentence
"$VT" predict --from README.md >out.txt 2>err.txt
[ $? = 2 ] || fail "predict --from README.md: not exit 2"
grep -q 'README.md: ' err.txt || fail "predict --from README.md: $(cat err.txt)"
"$VT" predict --from short.vt >out.txt 2>err.txt
[ $? = 2 ] || fail "predict --from short.vt: not exit 2"
grep -qF 'short.vt: a vramtrace trace cut short inside its header (20 of 32 bytes)' err.txt ||
    fail "predict --from short.vt: $(cat err.txt)"
"$VT" predict --card 13 >out.txt 2>err.txt
[ $? = 2 ] || fail "predict --card 13: not exit 2"
grep -qF '13: a size needs a unit' err.txt || fail "predict --card 13: $(cat err.txt)"
exit 0
