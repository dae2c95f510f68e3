#!/bin/sh
# run_one.sh — one test for tests/run.sh, which runs several at once: `run_one.sh unit BIN` (a
# cmocka binary) or `run_one.sh script FILE` (an integration script). It runs the test with a
# TMPDIR of its own (and a script in a work folder of its own, $TESTDIR), writes what it printed
# to "$RES/<name>.out" and its result ("pass", "hygiene", "skip" or "fail", then the name) to
# "$RES/<name>.res", and prints the .out whole while holding "$RES/lock" so that the lines of two
# tests ending at once do not interleave. It always exits 0 (a failure is in its .res).
set -u
what=$1 t=$2
case $what in
unit) name=$(basename "$t") ;;
*) name=$(basename "$t" .sh) ;;
esac
res=$RES/$what.$name
printed() {
    if command -v flock >/dev/null 2>&1; then flock "$RES/lock" cat "$res.out"; else cat "$res.out"; fi
}
if [ "$what" = unit ]; then
    # a unit binary that leaves a file in its TMPDIR fails (its temporary traces are its own to
    # remove)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/vt-unit.XXXXXX")
    if out=$(TMPDIR="$tmp" timeout "$TEST_TIMEOUT" "$t" 2>&1); then
        if [ -n "$(ls -A "$tmp")" ]; then
            echo "fail $name" >"$res.res"
            echo "FAIL $name: left files in its TMPDIR: $(ls -A "$tmp" | head -n 5 | tr '\n' ' ')" >"$res.out"
        else
            echo "pass $name" >"$res.res"
            echo "PASS $name" >"$res.out"
        fi
    else
        echo "fail $name" >"$res.res"
        { echo "FAIL $name"; printf '%s\n' "$out" | tail -n 40; } >"$res.out"
    fi
    rm -rf "$tmp"
    printed
    exit 0
fi
# a script with a line "# kind: hygiene ..." in its header checks the code's shape, not what
# vramtrace does; what its runs leave behind in TMPDIR (a killed run's list of traces) goes with
# its folder
kind=behaviour
head -n 12 "$t" | grep -q '^# kind: hygiene' && kind=hygiene
work=$(mktemp -d "${TMPDIR:-/tmp}/vt-test.XXXXXX")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vt-test-tmp.XXXXXX")
t0=$(date +%s)
out=$(cd "$work" && TESTDIR="$work" TMPDIR="$tmp" timeout "$TEST_TIMEOUT" sh "$t" 2>&1)
rc=$?
took="[$(($(date +%s) - t0)) s]"
rm -rf "$tmp"
case $rc in
0)
    if [ $kind = hygiene ]; then
        echo "hygiene $name" >"$res.res"
        echo "PASS $name (hygiene) $took" >"$res.out"
    else
        echo "pass $name" >"$res.res"
        echo "PASS $name $took" >"$res.out"
    fi
    rm -rf "$work" ;;
77)
    echo "skip $name" >"$res.res"
    echo "SKIP $name: $(printf '%s\n' "$out" | tail -n 1)" >"$res.out"
    rm -rf "$work" ;;
*)
    echo "fail $name" >"$res.res"
    if [ "${KEEP_FAILED:-1}" = 0 ]; then
        rm -rf "$work"
        line="FAIL $name (exit $rc) $took"
    else
        line="FAIL $name (exit $rc, kept $work) $took"
    fi
    { echo "$line"; printf '%s\n' "$out" | tail -n 60; } >"$res.out" ;;
esac
printed
exit 0
