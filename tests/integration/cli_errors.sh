#!/bin/sh
# cli_errors.sh — every error names the file and the problem, in one wording that comes from
# the reader (reader_describe), with the exit codes of exit_codes.h: a file that is not a
# trace (README.md), an empty file, a header cut short, a missing file, a directory; for report,
# dump, flame, watch, diff and predict --from. A size without a unit (--card 13) is refused
# (exit 2). Options that contradict or repeat one another are refused, naming them (exit 2),
# never the last one silently winning; so is a wrong count of trace files, with the count.
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
mkdir adir
for cmd in report dump flame watch; do
    o=
    [ $cmd = watch ] && o=--once # what watch has read once: the same words and exit codes
    expect $cmd 3 "README.md: not a vramtrace trace (bad magic)" $o README.md
    expect $cmd 3 "empty.vt: not a vramtrace trace (an empty file: the traced process wrote nothing, or it is still starting)" $o empty.vt
    expect $cmd 3 "short.vt: a vramtrace trace cut short inside its header (20 of 32 bytes)" $o short.vt
    expect $cmd 2 "adir: Is a directory" $o adir # (dump said "cannot open adir: ... (check the path)")
    expect $cmd 2 "missing.vt: No such file or directory" $o missing.vt
done
# watch without --once waits for a file being started (not there, empty), not for one that
# cannot become a trace: a directory or README.md end it at once
timeout 20 "$VT" watch --interval 0.1 adir >out.txt 2>err.txt
rc=$?
[ $rc = 2 ] && grep -qxF "vramtrace watch: adir: Is a directory" err.txt || fail "watch adir: exit $rc: $(cat err.txt)"
timeout 20 "$VT" watch --interval 0.1 README.md >out.txt 2>err.txt
rc=$?
[ $rc = 3 ] && grep -qxF "vramtrace watch: README.md: not a vramtrace trace (bad magic)" err.txt ||
    fail "watch README.md: exit $rc (124: it waited): $(cat err.txt)"
timeout 1 "$VT" watch --interval 0.1 empty.vt >out.txt 2>err.txt
[ $? = 124 ] || fail "watch empty.vt: did not wait for the header: $(cat err.txt)"
expect diff 3 "README.md: not a vramtrace trace (bad magic)" README.md "$T"
expect diff 3 "README.md: not a vramtrace trace (bad magic)" "$T" README.md
expect report 2 "missing.vt: No such file or directory" missing.vt
expect report 2 "--card: 13: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name" --card 13 "$T"
expect run 2 "--card: 13: a size needs a unit (e.g. 12GiB, 12288MiB) or a card name" --card 13 -- true
# predict --from: not a trace nor a report's JSON -> names the file; a cut trace -> the
# reader's sentence, naming the file once; exit 3, as every command exits on a file that is no
# trace (predict said 2, and "--from short.vt: short.vt: ...", until 2026-12-01)
"$VT" predict --from README.md >out.txt 2>err.txt
[ $? = 3 ] || fail "predict --from README.md: not exit 3"
grep -q 'README.md: ' err.txt || fail "predict --from README.md: $(cat err.txt)"
"$VT" predict --from short.vt >out.txt 2>err.txt
[ $? = 3 ] || fail "predict --from short.vt: not exit 3"
grep -qF -- '--from short.vt: a vramtrace trace cut short inside its header (20 of 32 bytes)' err.txt ||
    fail "predict --from short.vt: $(cat err.txt)"
# a directory given as the command: said as one, exit 126 (it said "Permission denied"); a
# file given as fit's --dir: refused before any trial (it ran them and named the file as their
# directory)
"$VT" run -q -o d.vt -- ./adir >out.txt 2>err.txt
rc=$?
[ $rc = 126 ] && grep -qxF "vramtrace run: cannot run ./adir: Is a directory" err.txt ||
    fail "run -- ./adir: exit $rc: $(cat err.txt)"
# a script whose interpreter does not exist: said so, not "No such file" of the script that is
# there (exit 127 as a shell gives)
printf '#!/nonexistent/interp\n' >badinterp.sh && chmod +x badinterp.sh
"$VT" run -q -o b.vt -- ./badinterp.sh >out.txt 2>err.txt
rc=$?
[ $rc = 127 ] && grep -qxF "vramtrace run: cannot run ./badinterp.sh: its interpreter /nonexistent/interp: No such file or directory" err.txt ||
    fail "run -- ./badinterp.sh: exit $rc: $(cat err.txt)"
# a device is no trace, said so, and watch does not wait for it (it had waited for ever on
# /dev/null, "an empty file ... still starting")
for cmd in dump "watch"; do
    timeout 10 "$VT" $cmd /dev/null >out.txt 2>err.txt
    rc=$?
    [ $rc = 3 ] && grep -qF "/dev/null: not a vramtrace trace (a device that reads as empty, not a trace file)" err.txt ||
        fail "$cmd /dev/null: exit $rc: $(cat err.txt)"
done
: >afile
"$VT" fit --dir afile -- true {B} {I} >out.txt 2>err.txt
rc=$?
[ $rc = 2 ] && grep -qxF "vramtrace fit: --dir afile: Not a directory" err.txt ||
    fail "fit --dir afile: exit $rc: $(cat err.txt)"
# flags that contradict each other are refused, as run refuses --compress --no-compress (the
# last one won silently), and so is a second --from
expect predict 2 "--compile and --no-compile contradict each other: give one" --compile --no-compile
expect predict 2 "--bias and --no-bias contradict each other: give one" --no-bias --bias
expect predict 2 "--tied-head and --untied-head contradict each other: give one" --tied-head --untied-head
H4="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
# a missing value: an example of a value the option takes (it said "--dtype 8", "--card 8")
expect predict 2 "option '--dtype' needs a value (e.g. --dtype bfloat16)" --dtype
expect predict 2 "option '--card' needs a value (e.g. --card rtx4070)" --card
"$VT" predict --card 13 >out.txt 2>err.txt
[ $? = 2 ] || fail "predict --card 13: not exit 2"
grep -qF -- '--card: 13: a size needs a unit' err.txt || fail "predict --card 13: $(cat err.txt)"
# contradicting or repeated options: refused, both named, nothing written
expect report 2 "--json and --html x.html: give one (--json prints the report as JSON, --html writes it as a page)" --json --html x.html "$T"
expect report 2 "--html given twice (a.html, then b.html): give one (see vramtrace report --help)" --html a.html --html b.html "$T"
expect export 2 "--html given twice (a.html, then b.html): give one (see vramtrace export --help)" --html a.html --html b.html "$T"
expect export 2 "--html and --perfetto both write a.html: give each its own file" --html a.html --perfetto a.html "$T"
for f in x.html a.html b.html; do [ -e $f ] && fail "$f written after a refused command line"; done
expect run 2 "--compress and --no-compress contradict each other: give one" --compress --no-compress -- true
expect run 2 "--compress and --no-compress contradict each other: give one" --no-compress --compress -- true
# fit: a placeholder's default that is not used as written is refused before any trial
for w in '{B=abc}' '{B=0}' '{B=-2}' '{B=}' '{B=8x}' '{B=99999999999999999999}'; do
    expect fit 2 "$w: a default must be a whole number from 1 to 1073741824 (e.g. {B=16})" --dir fitdir -- echo "$w"
done
expect fit 2 "{A=0}: a default must be a whole number from 1 to 1073741824 (e.g. {A=16})" --dir fitdir -- echo '{B}' '{A=0}'
expect fit 2 "--bs={B=16: {B= has no closing '}' (e.g. {B=16})" --dir fitdir -- echo '--bs={B=16'
expect fit 2 "{I=5}: {I} takes no default: the iterations are --iters N (default 2)" --dir fitdir -- echo '{B}' '{I=5}'
expect fit 2 "{B=16} and {B=32}: two defaults for {B}: give one" --dir fitdir -- echo '{B=16}' '{B=32}'
[ -e fitdir ] && fail "fit made its directory (ran a trial?) for a refused placeholder"
# the wrong number of trace files: the count, with the usage on the same line
# a usage error is one line, as report's and run's are (these had printed their whole --help)
expect flame 2 "expected one trace file, got 2 (usage: vramtrace flame [options] FILE)" "$T" "$T"
expect flame 2 "expected one trace file, got 0 (usage: vramtrace flame [options] FILE)"
expect export 2 "expected one trace file, got 2 (usage: vramtrace export [options] FILE)" --html x.html "$T" "$T"
expect export 2 "expected one trace file, got 0 (usage: vramtrace export [options] FILE)" --html x.html
expect export 2 "no output asked for: give --perfetto, --memory-viz or --html (see vramtrace export --help)" "$T"
expect diff 2 "expected two traces, got 1 (usage: vramtrace diff [options] A.vt B.vt)" "$T"
expect dump 2 "no trace file given (usage: vramtrace dump [options] FILE...)"
for c in flame export diff dump; do
    "$VT" $c >/dev/null 2>err.txt
    [ "$(wc -l <err.txt)" = 1 ] || fail "$c with no file: $(wc -l <err.txt) lines on stderr"
done
# a config line predict cannot evaluate: the reason whole, to its closing parenthesis
printf 'batch_size = 8x\n' >cfg.py
"$VT" predict --model gpt2 cfg.py >out.txt 2>err.txt
[ $? = 2 ] || fail "predict cfg.py (batch_size = 8x): not exit 2"
grep -qF "cfg.py:1: 'batch_size = 8x' cannot be evaluated: not a literal nor arithmetic of literals and earlier keys (a call, an unknown name, a typo such as 8x); " err.txt ||
    fail "predict cfg.py: the reason is cut: $(cat err.txt)"
# run of a command that cannot be run: the reason, a shell's exit status (127 not found, 126 not
# runnable), and no "no CUDA allocation was made" of a command that never started
"$VT" run -- ./no-such-command >out.txt 2>err.txt
[ $? = 127 ] || fail "run of a missing command: not exit 127"
printf 'x\n' >notexec.txt
"$VT" run -- ./notexec.txt >out.txt 2>err2.txt
[ $? = 126 ] || fail "run of a file that cannot be run: not exit 126"
grep -q "cannot run ./no-such-command: No such file or directory" err.txt &&
    grep -q "cannot run ./notexec.txt: Permission denied" err2.txt || fail "run: the reason: $(cat err.txt err2.txt)"
grep -q "no CUDA allocation" err.txt err2.txt && fail "run of a command that never ran: said to have made no CUDA allocation"
"$VT" run -- true >out.txt 2>err.txt
grep -q "no CUDA allocation was made" err.txt || fail "run of a command that ran without CUDA: not said"
# run's closing hint names the program as the user can run it again: its path when no
# `vramtrace` on PATH is it (a fresh clone's build/vramtrace), else `vramtrace`
"$VT" run -o hint.vt -- "$BUILD/tests/prog/bench_alloc" 10 1 0 >out.txt 2>err.txt || fail "run bench_alloc failed"
grep -qF "Run \`$(readlink -f "$VT") report $PWD/hint.vt\` for categories" err.txt || fail "run's hint: $(tail -1 err.txt)"
mkdir -p hbin && ln -sf "$(readlink -f "$VT")" hbin/vramtrace
PATH="$PWD/hbin:$PATH" vramtrace run -o hint2.vt -- "$BUILD/tests/prog/bench_alloc" 10 1 0 >out.txt 2>err.txt || fail "run on PATH failed"
grep -qF "Run \`vramtrace report $PWD/hint2.vt\` for categories" err.txt || fail "run's hint, on PATH: $(tail -1 err.txt)"
# every command's --help ends with its exit codes
for c in run dump report predict flame diff fit export watch; do
    "$VT" $c --help >out.txt 2>&1 || fail "$c --help failed"
    grep -q '^exit: ' out.txt || fail "$c --help: no exit line"
done
# fit whose first trial fails: no table to speak of, and it says none completed
"$VT" fit --dir ff -- sh -c 'exit 5' x '{B}' >out.txt 2>err.txt
[ $? = 2 ] || fail "fit of a failing command: not exit 2"
grep -qxF "the search stopped early (the first trial failed): no trial completed, nothing was measured" out.txt &&
    ! grep -q 'table holds\|^micro-batch' out.txt || fail "fit, no trial completed: $(cat out.txt)"
# an empty -o (it had been the default name), --max-size past the largest (the message's bound is
# one the parser takes: it had said 1PiB, refused), --interval in hex (0x10 had been 16 s)
expect run 2 "-o: an empty file name" -o '' -- true
expect run 2 "--max-size 2048TiB: expected a size with a unit from 8MiB to 1024TiB (512MiB, 2GiB)" --max-size 2048TiB -- true
"$VT" run -q --max-size 1024TiB -o mx.vt -- true >out.txt 2>err.txt || fail "--max-size 1024TiB: $(cat err.txt)"
expect watch 2 "--interval 0x10: expected seconds from 0.1 to 3600" --interval 0x10 --once empty.vt
# VRAMTRACE_PRELOAD that is no shared library: refused before the program runs (the loader had
# skipped it, the program ran untraced, and run said "no CUDA allocation was made")
rm -f ran.txt
VRAMTRACE_PRELOAD=/etc/passwd "$VT" run -- sh -c 'echo ran >ran.txt' >out.txt 2>err.txt
[ $? = 2 ] && [ ! -e ran.txt ] || fail "VRAMTRACE_PRELOAD=/etc/passwd: ran ($(cat err.txt))"
grep -qxF "vramtrace run: VRAMTRACE_PRELOAD=/etc/passwd: not a shared library (ELF): the program would run untraced" err.txt ||
    fail "VRAMTRACE_PRELOAD=/etc/passwd: $(cat err.txt)"
# a preload whose path has a space or a colon (an install directory, VRAMTRACE_PRELOAD): refused
# before the program runs (LD_PRELOAD is split there: the program had run untraced, two loader
# errors on its stderr, run saying "no CUDA allocation was made")
for d in "sp ace" "co:lon"; do
    mkdir -p "$d" && cp "$VT" "$VT_PRELOAD" "$d/" || fail "copy into $d"
    rm -f ran.txt
    "./$d/vramtrace" run -- sh -c 'echo ran >ran.txt' >out.txt 2>err.txt
    [ $? = 2 ] && [ ! -e ran.txt ] || fail "installed in '$d': ran ($(cat err.txt))"
    grep -qF "vramtrace run: $PWD/$d/libvramtrace.so: its path has a space or a colon, which LD_PRELOAD splits it on" err.txt ||
        fail "installed in '$d': $(cat err.txt)"
done
VRAMTRACE_PRELOAD="$PWD/sp ace/libvramtrace.so" "$VT" run -- sh -c 'echo ran >ran.txt' >out.txt 2>err.txt
[ $? = 2 ] && [ ! -e ran.txt ] || fail "VRAMTRACE_PRELOAD with a space: ran ($(cat err.txt))"
grep -qF "vramtrace run: VRAMTRACE_PRELOAD=$PWD/sp ace/libvramtrace.so: its path has a space" err.txt ||
    fail "VRAMTRACE_PRELOAD with a space: $(cat err.txt)"
# a run inside another's: the outer one lists the trace too (it had said "no CUDA allocation
# was made, so no trace was written" of a command that wrote one)
"$VT" run -q -o outer.vt -- "$VT" run -q -o inner.vt -- "$BUILD/tests/prog/rt_cases" basic >out.txt 2>err.txt ||
    fail "nested run: exit $?"
[ "$(grep -c "vramtrace: trace .*/inner.vt" err.txt)" = 2 ] && ! grep -q 'no CUDA allocation' err.txt ||
    fail "nested run: $(cat err.txt)"
# ... nor a program (a position-independent executable: ELF and ET_DYN too, the loader refuses
# it), a library of another class or architecture, or a FIFO (run had waited on it for ever):
# each refused with why, before the program runs
mkfifo pre.fifo
cp "$VT_PRELOAD" cls32.so && printf '\001' | dd of=cls32.so bs=1 seek=4 conv=notrunc 2>/dev/null
cp "$VT_PRELOAD" arm.so && printf '\267\000' | dd of=arm.so bs=1 seek=18 conv=notrunc 2>/dev/null
# (big-endian: its type and machine in its own byte order, said as another machine's, not "not a
# shared library"; a program-header entry size the loader refuses: 0)
cp "$VT_PRELOAD" be.so && printf '\002' | dd of=be.so bs=1 seek=5 conv=notrunc 2>/dev/null &&
    printf '\000\003\000\025' | dd of=be.so bs=1 seek=16 conv=notrunc 2>/dev/null
cp "$VT_PRELOAD" phent.so && printf '\000\000' | dd of=phent.so bs=1 seek=54 conv=notrunc 2>/dev/null
for bad in "$(command -v sh):a program" "cls32.so:for another machine" "arm.so:for another machine" \
    "be.so:for another machine" "phent.so:not a shared library" "pre.fifo:not a regular file"; do
    f=${bad%%:*} want=${bad#*:}
    rm -f ran.txt
    VRAMTRACE_PRELOAD="$f" timeout 20 "$VT" run -- sh -c 'echo ran >ran.txt' >out.txt 2>err.txt
    rc=$?
    [ $rc = 2 ] && [ ! -e ran.txt ] || fail "VRAMTRACE_PRELOAD=$f: exit $rc ($(cat err.txt))"
    grep -q "^vramtrace run: VRAMTRACE_PRELOAD=$f: .*$want.*the program would run untraced" err.txt ||
        fail "VRAMTRACE_PRELOAD=$f: $(cat err.txt)"
done
VRAMTRACE_PRELOAD=/nonexistent/lib.so "$VT" run -- true >out.txt 2>err.txt
[ $? = 2 ] && grep -qxF "vramtrace run: VRAMTRACE_PRELOAD=/nonexistent/lib.so: No such file or directory" err.txt ||
    fail "VRAMTRACE_PRELOAD missing: $(cat err.txt)"
# a value past 64 bits is out of range like any other (it had been "is not used: an integer beyond
# 64 bits (Python's are unbounded; not evaluated)", the option's name dropped, with exit 2)
R="$ROOT/examples/traces/sim/resnet50_b128_fit.vt"
for c in "report --batch-size 99999999999999999999 $R" "predict --model gpt2 --batch-size 99999999999999999999"; do
    "$VT" $c >out.txt 2>err.txt
    [ $? = 2 ] && grep -q "batch_size = 99999999999999999999 is out of range (must be a positive integer, at most 16777216)$" err.txt &&
        ! grep -q "Python" err.txt || fail "$c: $(cat err.txt)"
done
# a configuration past 64 PiB, each value in range, is refused (rows held at 65536 TiB, sums
# wrapped to 0 in the JSON, had been printed with exit 0)
for j in "" --json; do
    "$VT" predict --model gpt2 --batch-size 16777216 --block-size 16777216 $j >out.txt 2>err.txt
    [ $? = 2 ] && [ ! -s out.txt ] && grep -q "this configuration's bytes pass 64 PiB (2^56), beyond any device: not predicted" err.txt ||
        fail "predict past 64 PiB $j: $(cat err.txt out.txt | head -n 3)"
done
"$VT" predict --model gpt2 --batch-size 4096 --block-size 4096 >out.txt 2>&1 || fail "predict of a large configuration in range: $(tail -n 1 out.txt)"
# an option given twice with two values is refused, by every command (the last had been taken)
for c in "report --card 12GiB --card 24GiB $R:report: --card given twice (12GiB, then 24GiB): give one" \
    "run -o a1.vt -o a2.vt -- true:run: --output given twice (a1.vt, then a2.vt): give one" \
    "run --stacks none --stacks all -- true:run: --stacks given twice (none, then all): give one" \
    "predict --model gpt2 --batch-size 4 --batch-size 8:predict: --batch-size given twice (4, then 8): give one" \
    "predict --model gpt2 --model gpt2-xl:predict: --model given twice (gpt2, then gpt2-xl): give one"; do
    "$VT" ${c%%:*} >out.txt 2>err.txt
    [ $? = 2 ] && grep -qF "vramtrace ${c#*:}" err.txt || fail "${c%%:*}: $(cat err.txt | head -n 2)"
done
[ ! -e a1.vt ] && [ ! -e a2.vt ] || fail "run -o twice ran the command"
"$VT" report --card 12GiB --card 12GiB "$R" >/dev/null 2>err.txt || fail "the same value twice: $(cat err.txt)"
# ... so is an output or a trace given twice alike (--html, --from had been refused, where the
# README said the same value twice is taken)
"$VT" report --html same.html --html same.html "$R" >/dev/null 2>err.txt && [ -s same.html ] ||
    fail "report --html twice alike: $(cat err.txt)"
"$VT" export --html same2.html --html same2.html "$R" >/dev/null 2>err.txt && [ -s same2.html ] ||
    fail "export --html twice alike: $(cat err.txt)"
"$VT" predict --from "$R" --from "$R" >/dev/null 2>err.txt || fail "predict --from twice alike: $(cat err.txt)"
"$VT" predict --from "$R" --from same.html >/dev/null 2>err.txt
[ $? = 2 ] && grep -q "given twice" err.txt || fail "predict --from two files: $(cat err.txt)"
# report's two spellings of one override, with two values: refused too; a number of 64 digits is
# out of range (it had been "not an integer"); a refused flag is never "not used"
"$VT" report "$R" --batch-size 16 --batch_size=32 >out.txt 2>err.txt
[ $? = 2 ] && grep -q "batch_size given twice (--batch-size 16, then batch_size=32): give one" err.txt ||
    fail "report --batch-size 16 --batch_size=32: $(cat err.txt)"
"$VT" report "$R" --batch-size "$(python3 -c "print('9' * 64)")" >out.txt 2>err.txt
[ $? = 2 ] && grep -q "is out of range (must be a positive integer, at most 16777216)" err.txt ||
    fail "a 64-digit batch size: $(cat err.txt)"
"$VT" report "$R" --dtype=99999999999999999999 >out.txt 2>err.txt
[ $? = 2 ] && grep -q "is refused" err.txt && ! grep -q "not used" err.txt || fail "--dtype=<huge>: $(cat err.txt)"
# an override of a value the program gave is said (ResNet-50's --batch-size 128 had become 64 in
# silence); one the program did not give, or gave alike, is not
"$VT" report --batch-size 64 --no-color "$R" >ov.txt 2>&1 && "$VT" report --batch-size 64 --json "$R" >ov.json &&
    "$VT" report --batch-size 128 --no-color "$R" >same.txt 2>&1 || fail "report with an override"
# (said in the program's words, as typed: a ResNet's had been told nanoGPT's batch_size=64)
grep -q "note: micro-batch B: the program's own value (--batch-size 128) left unused: --batch-size 64 given on vramtrace's command line" ov.txt ||
    fail "override: $(grep -n 'batch' ov.txt | head -n 3)"
grep -q "left unused: --batch-size 64" ov.json || fail "override: not in the JSON's config_warnings"
grep -q "left unused" same.txt && fail "an override equal to the program's value said as unused"
# an option's value left out takes the trace as its value: said so (it had been "no trace file
# given" alone, beside the file the user gave)
"$VT" report --grad-accum "$R" >out.txt 2>err.txt
[ $? = 2 ] && grep -qF "vramtrace report: --grad-accum $R: a number expected, not a file: no trace file given" err.txt ||
    fail "--grad-accum FILE: $(cat err.txt)"
exit 0
