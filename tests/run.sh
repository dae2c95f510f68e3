#!/bin/sh
# run.sh — the runner behind `make test`: each cmocka unit binary given as an argument, then
# every tests/integration/*.sh (unless UNIT_ONLY=1; ONLY="a b" runs just those scripts). An
# integration script exits 0 (pass), 77 (skip: say why on stdout) or anything else (fail).
# A script with a line "# kind: hygiene ..." in its header checks the code's shape (format, file
# sizes, layers, ...), not what vramtrace does: the summary counts those apart, as
# "N behaviour tests passed, M hygiene checks passed (names), F failed, S skipped".
# TEST_TIMEOUT (seconds, default 600) limits each test, unit binaries included. A failed script's
# work folder is kept for a look (its path printed) unless KEEP_FAILED=0 (make mutate, whose
# mutations make tests fail on purpose: a kept folder can hold gigabytes). Each script's line ends
# with the seconds it took ("PASS name [12 s]"): CI's whole run must stay well under 30 minutes, and
# these say where it goes. Tests run TEST_JOBS at a time (default: the machine's processors), each
# through tests/run_one.sh, its lines printed whole when it ends; a script with a line "# runs:
# alone (why)" in its opening comment (one whose check leans on time: a deadline, a race it
# provokes, a live view sampled while another program runs) runs after the others, with nothing
# beside it; one with "# runs: early (why)" (a script of minutes) starts before the others, so that
# the last to end is a short one.
set -u
BUILD=$(cd "${BUILD:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD ROOT
export VT="$BUILD/vramtrace" VT_PRELOAD="$BUILD/libvramtrace.so" FAKE="$BUILD/fakecuda"
# python3 through pyenv's shim (a bash script asking pyenv which version) takes ~0.4 s to start,
# the interpreter itself ~0.05 s, and the tests start it thousands of times: the interpreter's
# own folder goes first in PATH, as `pyenv exec` itself does (the same python3, its pip beside it)
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
    PATH=$(dirname "$py"):$PATH
    export PATH
fi
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
JOBS=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $JOBS in '' | *[!0-9]* | 0) JOBS=1 ;; esac
RES=$(mktemp -d "${TMPDIR:-/tmp}/vt-results.XXXXXX")
export TEST_TIMEOUT RES
# each list, newline-separated, through xargs: $1 the kind ("unit" or "script"), $2 at most how
# many at once
pool() {
    tr '\n' '\0' | xargs -0 -r -n 1 -P "$2" sh "$ROOT/tests/run_one.sh" "$1"
}
[ $# -gt 0 ] && printf '%s\n' "$@" | pool unit "$JOBS"
if [ "${UNIT_ONLY:-0}" != 1 ]; then
    early="" shared="" alone=""
    for t in "$ROOT"/tests/integration/*.sh; do
        [ -f "$t" ] || continue
        name=$(basename "$t" .sh)
        if [ -n "${ONLY:-}" ]; then
            case " $ONLY " in *" $name "*) ;; *) continue ;; esac
        fi
        runs=$(sed '/^[^#]/q' "$t" | sed -n 's/^# runs: \([a-z]*\).*/\1/p')
        if [ "$runs" = alone ]; then
            alone="$alone$t
"
        elif [ "$runs" = early ]; then
            early="$early$t
"
        else
            shared="$shared$t
"
        fi
    done
    printf '%s%s' "$early" "$shared" | pool script "$JOBS"
    printf '%s' "$alone" | pool script 1
fi
pass=0 hyg=0 hygnames="" fail=0 skip=0 failed=""
for r in "$RES"/*.res; do
    [ -f "$r" ] || continue
    read -r result name <"$r"
    case $result in
    pass) pass=$((pass + 1)) ;;
    hygiene) hyg=$((hyg + 1)); hygnames="$hygnames${hygnames:+, }$name" ;;
    skip) skip=$((skip + 1)) ;;
    *) fail=$((fail + 1)); failed="$failed $name" ;;
    esac
done
rm -rf "$RES"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass behaviour tests passed, $hyg hygiene checks passed${hygnames:+ ($hygnames)}, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
