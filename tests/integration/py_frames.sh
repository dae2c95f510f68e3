#!/bin/sh
# py_frames.sh — real CPython under the preload, fake CUDA: for every CPython 3.10-3.13
# installed, tests/python/frames_prog.py allocates through ctypes from many code shapes and
# threads (plus a C pt_autograd_0 thread); `vramtrace dump` must show every allocation's
# Python frames (file, function, line) exactly as the interpreter saw them, innermost first
# (tests/python/check_frames.py). Then an unsupported CPython (3.9 or older, when installed)
# must run fine with native stacks only, one warning and PYINFO supported=0.
set -u
. "$ROOT/tests/python/pythons.sh"
list=$(vt_pythons)
[ -n "$list" ] || { echo "no CPython 3.10-3.13 under \$(pyenv root)/versions"; exit 77; }
if command -v nm >/dev/null 2>&1 && ! nm -D --defined-only "$VT_PRELOAD" | grep -q ' cudaMalloc$'; then
    echo "the preload exports no cudaMalloc hook (yet): nothing to capture"; exit 77
fi
cc -std=gnu11 -Wall -Wextra -fPIC -shared -pthread -o autograd.so "$ROOT/tests/pyprobe/autograd.c" \
    -L"$FAKE" -Wl,-rpath,"$FAKE" -lcudart || { echo "FAIL: autograd.so does not build"; exit 1; }
checker=$(echo "$list" | tail -n 1 | cut -d' ' -f1)/bin/python3
echo "$list" | while read -r prefix mm; do
    rm -f trace.*.vt
    if ! VRAMTRACE_OUTPUT="$PWD/trace.%p.vt" VRAMTRACE_STACKS=all LD_PRELOAD="$VT_PRELOAD" \
        timeout 120 "$prefix/bin/python$mm" "$ROOT/tests/python/frames_prog.py" \
        "exp$mm.json" "$PWD/autograd.so" > "prog$mm.log" 2>&1; then
        cat "prog$mm.log"; echo "FAIL: frames_prog.py under the preload, CPython $mm"; exit 1
    fi
    if grep -q 'vramtrace:' "prog$mm.log"; then
        cat "prog$mm.log"; echo "FAIL: the preload warned under CPython $mm"; exit 1
    fi
    set -- trace.*.vt
    [ $# -eq 1 ] && [ -f "$1" ] || { echo "FAIL: expected one trace, got: $*"; exit 1; }
    "$VT" dump "$1" > "dump$mm.jsonl" || { echo "FAIL: vramtrace dump $1"; exit 1; }
    grep -Eq '"type": ?"pyinfo"' "dump$mm.jsonl" || { echo "FAIL: no PYINFO record (CPython $mm)"; exit 1; }
    "$checker" "$ROOT/tests/python/check_frames.py" "exp$mm.json" "dump$mm.jsonl" || {
        echo "FAIL: Python frames in the trace differ from the interpreter's (CPython $mm)"; exit 1; }
done || exit 1

# An unsupported version: no Python frames, exactly one warning, everything else works.
root=$(dirname "$(echo "$list" | head -n 1 | cut -d' ' -f1)")
old=$(ls -d "$root"/3.9.* "$root"/3.8.* 2>/dev/null | head -n 1)
if [ -n "$old" ]; then
    rm -f trace.*.vt
    VRAMTRACE_OUTPUT="$PWD/trace.%p.vt" LD_PRELOAD="$VT_PRELOAD" timeout 60 "$old/bin/python3" -c '
import ctypes, os
rt = ctypes.CDLL(os.path.join(os.environ["FAKE"], "libcudart.so.13"))
p = ctypes.c_void_p()
for i in range(3):
    assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
    rt.cudaFree(p)
' > old.log 2>&1 || { cat old.log; echo "FAIL: unsupported CPython ($old) under the preload"; exit 1; }
    n=$(grep -c 'not supported for Python stacks' old.log)
    [ "$n" -eq 1 ] || { cat old.log; echo "FAIL: want one 'not supported' warning, got $n"; exit 1; }
    "$VT" dump trace.*.vt > old.jsonl || { echo "FAIL: dump of the $old trace"; exit 1; }
    grep -E '"type": ?"pyinfo"' old.jsonl | grep -Eq '"supported": ?(false|0)' \
        || { grep pyinfo old.jsonl; echo "FAIL: PYINFO supported=0 missing ($old)"; exit 1; }
    [ "$(grep -Ec '"type": ?"alloc"' old.jsonl)" -ge 3 ] || { echo "FAIL: allocations missing ($old)"; exit 1; }
    ! grep -E '"type": ?"alloc"' old.jsonl | grep -Eq '"kind": ?"python"' \
        || { echo "FAIL: Python frames recorded for an unsupported version"; exit 1; }
    echo "ok: unsupported $(basename "$old"): native stacks only, one warning"
fi
