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
cc -std=gnu11 -pthread -D_GNU_SOURCE -I"$ROOT/include" -Wall -Wextra -fPIC -fvisibility=hidden \
    -O2 -g -shared -o shim.so "$ROOT/tests/pyprobe/shim.c" "$ROOT/preload/stacks/pyframes.c" -ldl \
    || { echo "FAIL: shim.so does not build"; exit 1; }
echo "$list" | while read -r prefix mm; do
    if ! timeout 120 "$prefix/bin/python$mm" "$ROOT/tests/python/shim_check.py" "$PWD/shim.so"; then
        echo "FAIL: CPython $mm ($prefix)"; exit 1
    fi
done
