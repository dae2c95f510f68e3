#!/bin/sh
# output_env.sh — no quiet loss. `run -o` a directory, a name ending in '/', a device, a missing
# or read-only directory, one where no file can be made (/proc, for root too), a name past
# PATH_MAX (once made absolute): refused before the program starts (exit 2, one clear line);
# the preload alone never writes DIR.1 or
# /dev/null.1 beside them; a trace that cannot be created after the start is named by `run`
# with the reason, never "no CUDA allocation was made".
# VRAMTRACE_* values outside their range (STACK_DEPTH=129, 2^64-1) and flags other than 0/1
# (VRAMTRACE_DISABLE=false still traces) give one warning each, escaped, and the default. The
# warnings go to the program's stderr only while fd 2 is still it.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "output_env: $*"; exit 1; }
unset VRAMTRACE_OUTPUT VRAMTRACE_STACK_DEPTH VRAMTRACE_DISABLE VRAMTRACE_SAMPLE_MS VRAMTRACE_CARD_BYTES

# refused PATTERN -o VALUE: exit 2 before the program ran (it would write ran.txt), one line
refused() {
    want=$1
    shift
    rm -f ran.txt
    "$VT" run "$@" -- sh -c 'echo ran >ran.txt' >out 2>err
    rc=$?
    [ $rc = 2 ] || { cat err; fail "$*: exit $rc, want 2"; }
    [ ! -e ran.txt ] || fail "$*: the program ran"
    [ "$(wc -l <err)" = 1 ] && grep -q "$want" err || { cat err; fail "$*: want one line saying '$want'"; }
    echo "refused $*: $(cat err)"
}
mkdir -p dir
refused "is a directory; the output is a file name (e.g. dir/vramtrace.%p.vt)" -o dir
refused "not a file name" -o dir/
refused "/dev/null: exists and is not a regular file" -o /dev/null
refused "the directory nodir: No such file or directory" -o nodir/t.vt
VRAMTRACE_OUTPUT=dir refused "VRAMTRACE_OUTPUT dir: is a directory"
[ ! -e dir.1 ] || fail "dir.1 written"
# a name past PATH_MAX, or past it once made absolute: too long, before the start (its first
# 4078 bytes, here a directory, had been said as "is a directory"; a long file name had run)
long=$(python3 -c 'print("dir/" + "./" * 2100 + "t.vt")')
refused "dir/\./\./.*: File name too long (a trace's name, made absolute, is at most 4095 bytes)" -o "$long"
refused "File name too long" -o "$(python3 -c 'print("a" * 4200 + ".vt")')"
long=$(python3 -c 'import os; print("dir/" + "./" * ((4088 - len(os.getcwd())) // 2) + "t.vt")')
[ ${#long} -lt 4096 ] || fail "the relative name is itself too long"
refused "File name too long" -o "$long"

# a read-only directory: a read-only tmpfs (root may mount one) or, for another user, mode 0555
mkdir -p ro
if mount -t tmpfs -o ro,size=64k vt-ro ro 2>/dev/null; then
    trap 'umount "$TESTDIR/ro" 2>/dev/null' EXIT
    refused "cannot write traces in ro: Read-only file system" -o ro/t.%p.vt
elif [ "$(id -u)" != 0 ]; then
    chmod 0555 ro
    refused "cannot write traces in ro: Permission denied" -o ro/t.%p.vt
else
    echo "read-only directory: skipped (root, and no tmpfs mount allowed)"
fi
# /proc: access() lets root write there, yet no file can be made: refused before the start too
if [ "$(id -u)" = 0 ]; then
    refused "cannot write traces in /proc: its file system takes no new file" -o /proc/t.vt
else
    refused "cannot write traces in /proc: Permission denied" -o /proc/t.vt
fi
# ... and where one can, the look leaves nothing there (an unnamed file, or one made and removed)
mkdir -p probed
"$VT" run -o probed/t.vt -- true >out 2>err || fail "a writable directory: exit $?: $(cat err)"
[ -z "$(ls -A probed)" ] || fail "left in the output's directory: $(ls -A probed)"
# ... and one only known in the process (%p in the directory): the preload's reason, via run
"$VT" run -o 'per-%p/t.vt' -- "$P" basic >out 2>err
rc=$?
[ $rc = 0 ] || { cat err; fail "per-%p: exit $rc"; }
grep -q "wrote no trace: cannot create [^ ]*/per-[0-9]*/t.vt: No such file or directory" err ||
    { cat err; fail "per-%p: run does not say why no trace was written"; }
grep -q "no CUDA allocation" err && fail "per-%p: run blames the program"

# the preload alone: a directory or a device is refused with one warning, nothing beside it
null1=0
[ -e /dev/null.1 ] && null1=1
for o in dir /dev/null; do
    LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=$o "$P" basic >out 2>err || { cat err; fail "$o: program failed"; }
    [ "$(grep -c 'tracing stopped' err)" = 1 ] || { cat err; fail "$o: want one warning"; }
    grep -q "cannot create $o: .*not a regular file\|cannot create $o: is a directory" err || { cat err; fail "$o: warning"; }
done
[ ! -e dir.1 ] || fail "the preload wrote dir.1"
[ $null1 = 1 ] || [ ! -e /dev/null.1 ] || fail "the preload wrote /dev/null.1"
# a VRAMTRACE_OUTPUT past 4095 bytes (set by the program, under run): no trace, one warning,
# and run says why (it had been cut, here to cut.v, the trace written under that name)
long=$(python3 -c 'print("./" * 2045 + "cut.vt")')
"$VT" run -- env VRAMTRACE_OUTPUT="$long" "$P" basic >out 2>err || { cat err; fail "a long VRAMTRACE_OUTPUT: run failed"; }
[ ! -e cut.v ] && [ ! -e cut.vt ] || fail "a long VRAMTRACE_OUTPUT: a trace was written under its start"
[ "$(grep -c 'tracing stopped' err)" = 1 ] || { cat err; fail "a long VRAMTRACE_OUTPUT: want one warning"; }
grep -q "wrote no trace: cannot create \./\./.*: File name too long (VRAMTRACE_OUTPUT is past 4095 bytes" err ||
    { cat err; fail "a long VRAMTRACE_OUTPUT: run does not say why no trace was written"; }

# values outside their range: one warning each, the default used, the trace written
VRAMTRACE_STACK_DEPTH=129 VRAMTRACE_SAMPLE_MS=18446744073709551615 VRAMTRACE_CARD_BYTES=18446744073709551615 \
    "$VT" run -q -o vals.vt -- "$P" basic >out 2>err || { cat err; fail "values: run failed"; }
for w in "VRAMTRACE_STACK_DEPTH=129 is not a whole number from 1 to 128; using 32" \
    "VRAMTRACE_SAMPLE_MS=18446744073709551615 is not a whole number from 0 to 3600000" \
    "VRAMTRACE_CARD_BYTES=18446744073709551615 is not a whole number from 0 to 4611686018427387904"; do
    [ "$(grep -c "$w" err)" = 1 ] || { cat err; fail "want one warning: $w"; }
done
# a bound under the smallest one, set by hand: the smallest bound, said (it had been silent)
VRAMTRACE_MAX_SIZE=100 VRAMTRACE_OUTPUT=small.vt LD_PRELOAD="$VT_PRELOAD" "$P" basic >out 2>err ||
    { cat err; fail "MAX_SIZE=100: the program failed"; }
[ "$(grep -c 'VRAMTRACE_MAX_SIZE=100 is not 0 or at least the smallest bound; using 8388608' err)" = 1 ] ||
    { cat err; fail "MAX_SIZE=100: want one warning"; }
"$VT" dump vals.vt | grep -q '"type":"config","card_bytes":0,.*"stack_depth":32,"sample_ms":0' ||
    fail "vals.vt: defaults not used"
# VRAMTRACE_DISABLE (`run` clears it; the preload alone reads it): only 1 disables
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_DISABLE=false VRAMTRACE_OUTPUT=on.vt "$P" basic >out 2>err
[ -f on.vt ] || { cat err; fail "VRAMTRACE_DISABLE=false disabled tracing"; }
[ "$(grep -c 'VRAMTRACE_DISABLE=false is not 0 or 1; using 0' err)" = 1 ] || { cat err; fail "DISABLE=false: one warning"; }
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_DISABLE=1 VRAMTRACE_OUTPUT=off.vt "$P" basic >out 2>err
[ ! -e off.vt ] && [ ! -s err ] || fail "VRAMTRACE_DISABLE=1 wrote a trace or warned"

# escaped: an escape sequence in a value reaches stderr as text, never as bytes
esc=$(printf '\033]0;owned\007\033[2J')
VRAMTRACE_STACKS="$esc" VRAMTRACE_OUTPUT="x$esc.vt" LD_PRELOAD="$VT_PRELOAD" "$P" basic >out 2>err
python3 - err <<'PYEOF' || fail "raw bytes from the environment on stderr"
import sys
b = open(sys.argv[1], "rb").read()
assert b"\x1b" not in b and b"\x07" not in b, b
assert b"VRAMTRACE_STACKS=\\x1b]0;owned\\x07\\x1b[2J is not" in b, b
print("escaped:", b.decode().strip())
PYEOF
"$VT" run -o "y$esc.vt" -- "$P" basic >out 2>err
python3 -c 'import sys; b = open("err", "rb").read(); assert b"\x1b" not in b, b' || fail "run printed a raw escape"
# a TMPDIR where run's list of traces cannot be made: said escaped, exit 2 (printed raw until
# 2026-12-04)
TMPDIR="/nonexistent$esc" "$VT" run -o z.vt -- "$P" basic >out 2>err
rc=$?
[ $rc = 2 ] || fail "an unwritable TMPDIR: exit $rc"
python3 -c 'import sys; b = open("err", "rb").read(); assert b"\x1b" not in b and b"cannot create /nonexistent\\x1b" in b, b' ||
    fail "run printed TMPDIR raw"
# run --tensors with PYTORCH_CUDA_ALLOC_CONF choosing another backend: its value said escaped
# (printed raw until 2026-12-06: a terminal's title set)
PYTORCH_CUDA_ALLOC_CONF="backend:native$esc" "$VT" run -q --tensors -o t.vt -- "$P" basic >out 2>err ||
    fail "--tensors with another backend: exit $?"
python3 -c 'import sys; b = open("err", "rb").read(); assert b"\x1b" not in b and b"\x07" not in b and b"(backend:native\\x1b]0;owned\\x07" in b, b' ||
    fail "run --tensors printed PYTORCH_CUDA_ALLOC_CONF raw"
# a program that closed its stderr and opened a file of its own, which took fd 2: the preload's
# warnings never go into that file (they had: "hello", then "vramtrace: VRAMTRACE_STACK_DEPTH=129
# is not ..." and "cannot create nodir/x.vt ..."); a program started with fd 2 closed gets none
if command -v python3 >/dev/null 2>&1; then
    cat >fd2.py <<'PYEOF'
import ctypes, os, sys
if sys.argv[1] == "reopen":
    os.close(2)
    f = os.open("d2.txt", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    assert f == 2, f
    os.write(f, b"hello\n")
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
rt.cudaFree(p)
PYEOF
    VRAMTRACE_STACK_DEPTH=129 VRAMTRACE_OUTPUT=nodir/x.vt LD_PRELOAD="$VT_PRELOAD" python3 fd2.py reopen ||
        fail "fd 2 reopened: the program failed"
    [ "$(cat d2.txt)" = hello ] || { cat d2.txt; fail "the preload wrote into the program's file on fd 2"; }
    VRAMTRACE_STACK_DEPTH=129 VRAMTRACE_OUTPUT=nodir/x.vt LD_PRELOAD="$VT_PRELOAD" python3 fd2.py same \
        2>err || fail "fd 2 kept: the program failed"
    [ "$(grep -c 'vramtrace: ' err)" = 2 ] || { cat err; fail "fd 2 kept: want the two warnings"; }
fi
# a program that clears or edits its environment before its first CUDA call: its trace is still
# where run said, listed (it had gone to ./vramtrace.PID.vt, run saying "no CUDA allocation was
# made"): the settings are those the process started with
if command -v python3 >/dev/null 2>&1; then
    mkdir -p ce/out
    cat >ce/ce.py <<'PYEOF'
import ctypes, os, sys
rt = ctypes.CDLL("libcudart.so.13")
if sys.argv[1] == "clear":
    os.environ.clear()
else:
    os.environ["VRAMTRACE_OUTPUT"] = "moved.vt"
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
rt.cudaFree(p)
PYEOF
    for how in clear edit; do
        (cd ce && "$VT" run -o out/$how.vt -- python3 ce.py $how >out.txt 2>err.txt) ||
            { cat ce/err.txt; fail "environment $how: exit $?"; }
        [ -f ce/out/$how.vt ] || fail "environment $how: no trace where run said ($(ls ce); $(cat ce/err.txt))"
        ls ce | grep -q '\.vt$' && fail "environment $how: a trace in the working directory: $(ls ce)"
        grep -q "no CUDA allocation" ce/err.txt && fail "environment $how: run says no CUDA allocation"
        # the PROCESS record lists the settings' variables that applied, not the edited ones
        "$VT" dump ce/out/$how.vt | python3 -c "
import json, sys
p = [json.loads(l) for l in sys.stdin if '\"process\"' in l][0]
out = [e for e in p['env'] if e.startswith('VRAMTRACE_OUTPUT=')]
assert len(out) == 1 and out[0].endswith('out/$how.vt'), p['env']" ||
            fail "environment $how: the trace's PROCESS record lists settings that did not apply"
    done
fi
echo "output_env: ok"
