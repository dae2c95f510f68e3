#!/bin/sh
# dlopen_ctor.sh — a library's constructor allocating inside dlopen (the loader's lock held)
# while another thread's hook records a stack not seen before (its SYMBOL records: dladdr, which
# takes the loader's lock): the program must finish, as it does without the preload, and its
# three allocations be in the trace with their symbols. Before the fix the hook called dladdr
# holding the stack table's lock, which the constructor's hook waited for: it hung every run.
set -u
P="$BUILD/tests/prog/dlopen_ctor"
fail() { echo "dlopen_ctor: $*"; exit 1; }
cc -std=gnu11 -Wall -Wextra -fPIC -shared -DVT_DLOPEN_CTOR_LIB -o ctor.so \
    "$ROOT/tests/prog/dlopen_ctor.c" -L"$FAKE" -Wl,-rpath,"$FAKE" -lcudart ||
    fail "the constructor's library does not build"
LD_LIBRARY_PATH="$FAKE" timeout 30 "$P" "$PWD/ctor.so" >plain.log 2>&1 ||
    { cat plain.log; fail "the program fails without the preload"; }
for run in 1 2 3; do
    rm -f t.*.vt
    VRAMTRACE_OUTPUT="$PWD/t.%p.vt" LD_PRELOAD="$VT_PRELOAD" LD_LIBRARY_PATH="$FAKE" \
        timeout 30 "$P" "$PWD/ctor.so" >run.log 2>&1
    rc=$?
    [ "$rc" -eq 124 ] && fail "run $run: hung (killed after 30 s)"
    [ "$rc" -eq 0 ] && grep -q '^done$' run.log || { cat run.log; fail "run $run: exit $rc"; }
    set -- t.*.vt
    [ $# -eq 1 ] && [ -f "$1" ] || fail "run $run: expected one trace, got: $*"
    "$VT" dump "$1" >dump.jsonl || fail "run $run: vramtrace dump"
    for size in 1048576 5242880 3145728; do
        grep -E '"type": ?"alloc"' dump.jsonl | grep -Eq "\"size\": ?$size[,}]" ||
            fail "run $run: the $size-byte allocation is not in the trace"
    done
    for sym in fresh_site dlopen_ctor_alloc; do
        grep -E '"type": ?"symbol"' dump.jsonl | grep -q "\"$sym\"" ||
            fail "run $run: no SYMBOL record names $sym"
    done
done
echo "ok: 3 runs, a constructor's allocation inside dlopen beside a new stack's"
