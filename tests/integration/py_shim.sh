#!/bin/sh
# py_shim.sh — preload/stacks/pyframes.c alone (tests/pyprobe/shim.c stands in for the writer),
# called from real Python code through ctypes.CDLL on every installed CPython 3.10-3.13:
# every frame's file, qualname, line, first line and line table must match the interpreter's
# own view (tests/python/shim_check.py), including threads, recycled code objects, the
# autograd hand-over and a capped deep stack. Needs no other part of vramtrace.
set -u
. "$ROOT/tests/python/pythons.sh"
list=$(vt_pythons)
[ -n "$list" ] || { echo "no CPython 3.10-3.13 under \$(pyenv root)/versions"; exit 77; }
# shim.so walks through the offsets as the preload does (a version's own table, constants in
# the walk); shim_generic.so through the offsets read at run time (-DVT__PY_WALK_GENERIC: what
# a 3.13 whose debug offsets are not pyoffsets.h's table gets)
for v in shim:"" shim_generic:-DVT__PY_WALK_GENERIC; do
    cc -std=gnu11 -pthread -D_GNU_SOURCE ${v#*:} -I"$ROOT/include" -Wall -Wextra -fPIC \
        -fvisibility=hidden -O2 -g -shared -o "${v%%:*}.so" "$ROOT/tests/pyprobe/shim.c" \
        "$ROOT/preload/stacks/pyframes.c" "$ROOT/preload/stacks/pycodes.c" -ldl \
        || { echo "FAIL: ${v%%:*}.so does not build"; exit 1; }
done
echo "$list" | while read -r prefix mm; do
    for so in shim shim_generic; do
        if ! timeout 120 "$prefix/bin/python$mm" "$ROOT/tests/python/shim_check.py" "$PWD/$so.so"; then
            echo "FAIL: CPython $mm ($prefix), $so.so"; exit 1
        fi
    done
done
