#!/bin/sh
# fork_threads.sh — a fork child of a multithreaded parent never blocks in a hook: 400 forks
# while other threads allocate (unwinding) and walk the loaded objects (holding the loader's
# lock: before the fix, a child's hook waited for ever on it, 18 of 40 children), each child
# calling cudaMalloc; none may hang or fail. Every child writes its own complete trace with its
# own allocations, and says that native frames were off (CONFIG: native_stacks false); a child
# of a single-threaded parent keeps them, also once the preload's own helper thread runs beside
# it (big: its only other thread, which never takes the loader's lock). Also the audit's case
# (only an allocating thread).
# runs: alone (400 forks race threads that allocate and walk the loaded objects; a hang is
# told by time)
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/fork_threads"
fail() { echo "fork_threads: $*"; exit 1; }

# check DIR N NATIVE: DIR holds the parent's trace and N children's, each complete (one
# trailer), each child with its 2 cudaMalloc events, CONFIG native bit = NATIVE and the
# VT_CONFIG_NATIVE_OFF_FORK flag = !NATIVE
check() {
    python3 - "$1" "$2" "$3" <<'PYEOF' || fail "$1: traces are not as expected (above)"
import os, struct, sys
d, n, native = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
files = sorted(os.listdir(d))
assert len(files) == n + 1, ("traces", len(files), "want", n + 1)
parent = children = 0
def records(f, b):
    """every record of the file, a 2.0 BLOCK's records in it (trace_blocks.h); the top level whole"""
    off = 32
    while off + 8 <= len(b):
        t, fl, size = struct.unpack_from("<HHI", b, off)
        assert t and size >= 8 and off + size <= len(b), (f, off, t, size)
        o, end = (off + 16, off + size) if t == 20 else (off, off + size)
        while t == 20 and o + 8 <= end:
            t2, fl2, size2 = struct.unpack_from("<HHI", b, o)
            if not t2:
                break
            assert size2 >= 8 and o + size2 <= end, (f, o, t2, size2)
            yield o, t2, fl2
            o += size2
        if t != 20:
            yield off, t, fl
        off += size
    assert off == len(b), (f, "not complete", off, len(b))
traces = {f: open(os.path.join(d, f), "rb").read() for f in files}
pids = {struct.unpack_from("<I", b, o + 8)[0] for f, b in traces.items() for o, t, fl in records(f, b) if t == 1}
for f in files:
    b = traces[f]
    ppid, mode, flags, mallocs, trailers = 0, None, None, 0, 0
    for off, t, fl in records(f, b):
        if t == 1:  # PROCESS, the first record: pid, ppid
            ppid = struct.unpack_from("<I", b, off + 12)[0]
        elif t == 2:
            mode, flags = struct.unpack_from("<I", b, off + 16)[0], struct.unpack_from("<I", b, off + 28)[0]
        elif t == 5 and fl & 0xFF == 1:
            mallocs += 1
        elif t == 14:
            trailers += 1
    assert trailers == 1, (f, "not complete", trailers)
    if ppid not in pids:  # the parent: the others' ppid
        parent += 1
        assert mode & 1 and not flags, (f, "parent", mode, flags)
        continue
    children += 1
    assert mallocs == 2, (f, "child cudaMalloc events", mallocs)
    assert bool(mode & 1) == bool(native) and bool(flags & 1) == (not native), (f, mode, flags)
assert parent == 1 and children == n, (parent, children)
print("%s: %d children, each complete with its 2 allocations, native frames %s" % (d, n, "on" if native else "off"))
PYEOF
}

# run MODE FORKS: FORKS forks under the preload (native + Python stacks), every trace in MODE/
run() {
    mkdir -p "$1"
    LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT="$1/t.%p.vt" "$P" "$2" "$1" 5000 >"$1.out" 2>&1
    rc=$?
    cat "$1.out"
    [ $rc = 0 ] || fail "$1: $(cat "$1.out") (exit $rc)"
    grep -q "^forks $2 hung 0 failed 0$" "$1.out" || fail "$1: $(cat "$1.out")"
}

start=$(date +%s)
run dl 400
check dl 400 0
run alloc 200
check alloc 200 0
run single 20
check single 20 1
grep -q "^threads 1$" single.out || fail "single: $(cat single.out)"
run big 20
check big 20 1
grep -q "^threads 2$" big.out || fail "big: the helper thread is not running: $(cat big.out)"
# one child through dump: the analyzer reads such a trace and shows the stacks it has
child=$(ls dl | sed -n 2p)
"$VT" dump "dl/$child" | grep -q '"type":"config".*"native_stacks":false' || fail "dump: native_stacks"
[ "$("$VT" dump "dl/$child" | grep -c '"api":"cudaMalloc"')" = 2 ] || fail "dump: allocations"
echo "fork_threads: ok in $(($(date +%s) - start)) s"
