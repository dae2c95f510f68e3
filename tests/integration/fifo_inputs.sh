#!/bin/sh
# fifo_inputs.sh — every command reads its input once (issue 23): a trace given as a FIFO or a
# pipe gives what the file gives — report (text, JSON, --html), predict --from (a trace and a
# report's JSON), export, flame, diff, dump — category_peaks included, and nothing hangs.
set -u
T="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
fail() { echo "fifo_inputs: $*"; exit 1; }
mkfifo f1 f2 || exit 77
# run NAME CMD...: CMD with f1 (and f2) fed the trace by writers of their own; out.NAME
run() {
    name=$1
    shift
    cat "$T" >f1 &
    w1=$!
    cat "$T" >f2 &
    w2=$!
    timeout 60 "$@" >"out.$name" 2>"err.$name"
    rc=$?
    kill "$w1" "$w2" 2>/dev/null # a command that did not open f2 leaves its writer waiting
    wait "$w1" "$w2" 2>/dev/null
    [ "$rc" = 124 ] && fail "$name: hung on a FIFO"
    [ "$rc" = 0 ] || fail "$name: exit $rc: $(cat "err.$name")"
}
# same NAME CMD...: the output of CMD with the file in place of f1 equals the FIFO's (the path
# itself, and the HTML page's, written as they were given)
same() {
    name=$1
    shift
    run "$name" "$@"
    args=""
    for a in "$@"; do
        [ "$a" = f1 ] && a=$T
        [ "$a" = f2 ] && a=$T
        args="$args '$a'"
    done
    eval "timeout 60 $args" >"file.$name" 2>/dev/null || fail "$name on the file failed"
    sed "s|$T|f1|g" "file.$name" | cmp -s - "out.$name" ||
        { sed "s|$T|f1|g" "file.$name" | diff - "out.$name" | head -5; fail "$name: FIFO differs"; }
}
same report "$VT" report --no-color f1
same json "$VT" report --json f1
grep -q '"category_peaks":{' out.json || fail "no category_peaks from a FIFO"
same flame "$VT" flame f1
same flame_all "$VT" flame --at all f1
same dump "$VT" dump f1
run diff "$VT" diff --json f1 f2
run html "$VT" report --html page.html f1
grep -q 'id="vt-data"' page.html || fail "report --html wrote no page from a FIFO"
run export "$VT" export --perfetto p.json f1
python3 -c 'import json,sys; json.load(open("p.json"))' || fail "export --perfetto: not JSON"
run predict "$VT" predict --from f1
"$VT" predict --from "$T" >file.predict 2>/dev/null || fail "predict --from the file failed"
sed "s|$T|f1|" file.predict | cmp -s - out.predict || fail "predict --from a FIFO differs"
"$VT" report --json "$T" >r.json || fail "report --json failed"
cat r.json >f1 &
timeout 60 "$VT" predict --from f1 >out.pj 2>err.pj || fail "predict --from a FIFO of JSON: $(cat err.pj)"
wait
"$VT" predict --from r.json | sed 's|r\.json|f1|' | cmp -s - out.pj || fail "predict --from JSON differs"
# a pipe: the same report
"$VT" report --json /dev/stdin <"$T" >pipe.json 2>/dev/null || fail "report from a pipe failed"
cat "$T" | "$VT" report --json /dev/stdin >pipe2.json 2>/dev/null || fail "report from a pipe failed"
cmp -s pipe.json pipe2.json || fail "a pipe and a redirected file differ"
exit 0
