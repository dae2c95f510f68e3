#!/bin/sh
# run.sh — the runner behind `make test`: each cmocka unit binary given as an argument, then
# every tests/integration/*.sh (unless UNIT_ONLY=1; ONLY="a b" runs just those scripts). An
# integration script exits 0 (pass), 77 (skip: say why on stdout) or anything else (fail).
# A script with a line "# kind: hygiene ..." in its header checks the code's shape (format, file
# sizes, layers, ...), not what vramtrace does: the summary counts those apart, as
# "N behaviour tests passed, M hygiene checks passed (names), F failed, S skipped".
# TEST_TIMEOUT (seconds, default 600) limits each test, unit binaries included. A failed
# script's work folder is kept for a look (its path printed) unless KEEP_FAILED=0 (make mutate,
# whose mutations make tests fail on purpose: a kept folder can hold gigabytes). Each script's
# line ends with the seconds it took ("PASS name [12 s]"): CI's whole run must stay well under
# 30 minutes, and these say where it goes.
set -u
BUILD=$(cd "${BUILD:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD ROOT
export VT="$BUILD/vramtrace" VT_PRELOAD="$BUILD/libvramtrace.so" FAKE="$BUILD/fakecuda"
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
pass=0 hyg=0 hygnames="" fail=0 skip=0 failed=""
# Each test gets a TMPDIR of its own, removed after it: a unit binary that leaves a file there
# fails (its temporary traces are its own to remove), and what an integration script's runs
# leave behind in TMPDIR (a killed run's list of traces) goes with its folder.
for t in "$@"; do
    name=$(basename "$t")
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/vt-unit.XXXXXX")
    if out=$(TMPDIR="$tmp" timeout "$TEST_TIMEOUT" "$t" 2>&1); then
        if [ -n "$(ls -A "$tmp")" ]; then
            fail=$((fail + 1)); failed="$failed $name"
            echo "FAIL $name: left files in its TMPDIR: $(ls -A "$tmp" | head -n 5 | tr '\n' ' ')"
        else
            pass=$((pass + 1)); echo "PASS $name"
        fi
    else
        fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name"; printf '%s\n' "$out" | tail -n 40
    fi
    rm -rf "$tmp"
done
if [ "${UNIT_ONLY:-0}" != 1 ]; then
    for t in "$ROOT"/tests/integration/*.sh; do
        [ -f "$t" ] || continue
        name=$(basename "$t" .sh)
        if [ -n "${ONLY:-}" ]; then
            case " $ONLY " in *" $name "*) ;; *) continue ;; esac
        fi
        kind=behaviour
        head -n 12 "$t" | grep -q '^# kind: hygiene' && kind=hygiene
        work=$(mktemp -d "${TMPDIR:-/tmp}/vt-test.XXXXXX")
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/vt-test-tmp.XXXXXX")
        t0=$(date +%s)
        out=$(cd "$work" && TESTDIR="$work" TMPDIR="$tmp" timeout "$TEST_TIMEOUT" sh "$t" 2>&1); rc=$?
        took="[$(($(date +%s) - t0)) s]"
        rm -rf "$tmp"
        case $rc in
        0)
            if [ $kind = hygiene ]; then
                hyg=$((hyg + 1)); hygnames="$hygnames${hygnames:+, }$name"; echo "PASS $name (hygiene) $took"
            else
                pass=$((pass + 1)); echo "PASS $name $took"
            fi
            rm -rf "$work" ;;
        77) skip=$((skip + 1)); echo "SKIP $name: $(printf '%s\n' "$out" | tail -n 1)"; rm -rf "$work" ;;
        *)
            fail=$((fail + 1)); failed="$failed $name"
            if [ "${KEEP_FAILED:-1}" = 0 ]; then
                rm -rf "$work"; echo "FAIL $name (exit $rc) $took"
            else
                echo "FAIL $name (exit $rc, kept $work) $took"
            fi
            printf '%s\n' "$out" | tail -n 60 ;;
        esac
    done
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass behaviour tests passed, $hyg hygiene checks passed${hygnames:+ ($hygnames)}, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
