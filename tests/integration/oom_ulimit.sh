#!/bin/sh
# oom_ulimit.sh — the analyzer under `ulimit -v` (issue 23: `report --json` of a large trace
# exited 0 with a smaller report): for limits from 64 MB down to 6 MB, each command on a
# 100,000-event tensor trace must give the answer of an unlimited run, or exit 2 saying "out
# of memory" — or not start at all (the loader cannot map the libraries, or the first thread's
# thread-local data, as the binary grows: exit 127 before main), in 1 MB
# steps, 250 KB below 12 MB. Every
# command must show both an answer and an exit 2 over the range. (From 40 MB until 2026-12-04:
# export --memory-viz keeps up to 131,072 allocator actions now, 4 MiB, made when its first comes,
# and the heap's growth past it asks for 16 MiB more address space: it answers from ~50 MB on.)
set -u
GEN="$BUILD/tests/prog/vtgen"
[ -x "$GEN" ] || { echo "vtgen not built ($GEN)"; exit 1; }
"$GEN" -o t.vt --tensor --events 100000 --stacks 64 --python=3.12 --live 200 >/dev/null
bad=0

check() {
    name=$1
    shift
    "$VT" "$@" >ref.out 2>/dev/null || { echo "FAIL $name: fails without a limit"; bad=1; return; }
    same=0 oom=0 nostart=0 v=64000
    while [ $v -ge 6000 ]; do
        (ulimit -v $v && exec "$VT" "$@") >got.out 2>got.err
        rc=$?
        if [ $rc -eq 0 ] && cmp -s got.out ref.out; then
            same=$((same + 1))
        elif [ $rc -eq 2 ] && grep -q 'out of memory\|Cannot allocate memory' got.err; then
            oom=$((oom + 1))
        elif [ $rc -eq 127 ] && grep -q 'error while loading shared libraries\|cannot allocate TLS data structures for initial thread' got.err; then
            nostart=$((nostart + 1))
        else
            echo "FAIL $name: ulimit -v $v: exit $rc, $(head -c 200 got.err)"
            bad=1
        fi
        # 1 MB steps, then 250 KB below 12 MB: dump needs little more than the libraries it
        # loads (libzstd among them), so its band of "out of memory" is under 1 MB wide
        if [ $v -gt 12000 ]; then v=$((v - 1000)); else v=$((v - 250)); fi
    done
    echo "$name: $same the same answer, $oom exit 2 out of memory, $nostart could not start"
    [ $same -gt 0 ] && [ $oom -gt 0 ] || { echo "FAIL $name: the range missed a case"; bad=1; }
}

check report_json report --json t.vt
check dump dump t.vt
check flame_all flame --at all t.vt
check export export --perfetto p.json --memory-viz m.pickle t.vt
exit $bad
