#!/bin/sh
# py_offsets.sh — preload/stacks/pyoffsets.h against each installed CPython's own internal headers:
# tests/pyprobe/probe.c is compiled with -DPy_BUILD_CORE against include/python3.X(/internal)
# of every CPython 3.10-3.13 found and must agree on every offset (a wrong table fails here).
set -u
. "$ROOT/tests/python/pythons.sh"
list=$(vt_pythons)
[ -n "$list" ] || { echo "no CPython 3.10-3.13 under \$(pyenv root)/versions"; exit 77; }
status=0
echo "$list" | while read -r prefix mm; do
    inc="$prefix/include/python$mm"
    if ! cc -std=gnu11 -Wall -Wextra -DPy_BUILD_CORE -I"$inc" -I"$inc/internal" \
        "$ROOT/tests/pyprobe/probe.c" -o "probe$mm"; then
        echo "FAIL: probe does not compile against $inc"; exit 1
    fi
    if ./"probe$mm" > "probe$mm.out"; then
        echo "ok: CPython $mm ($prefix): $(grep -c '^ok' "probe$mm.out") fields agree"
    else
        cat "probe$mm.out"; echo "FAIL: preload/stacks/pyoffsets.h disagrees with $inc"; exit 1
    fi
done || status=1
exit $status
