#!/bin/sh
# torch_tracker.sh — the allocator tracker under `vramtrace run` on the fake libc10_cuda.so:
# both known TraceEntry layouts give one ALLOC / FREE per tensor with stacks, and peaks
# allocated and reserved equal to the fake allocator's own counters (mode tensor+segment);
# an unknown layout, a lying first segment and another backend fall back to segment mode
# (reserved still exact), say why (stderr, except the other backend, and a trace note), and
# the program's own results never change.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/torch_prog"
fail() { echo "torch_tracker: $*"; exit 1; }

# check NAME VARIANT WANT_MODE WANT_NOTE_CODE WANT_NOTE_DETAIL [ENV...]: one traced run, checked
# (ARGS: extra arguments of torch_prog, "steps threads")
check() {
    name=$1 variant=$2 mode=$3 code=$4 detail=$5
    shift 5
    lib="$FAKE/c10/$variant/libc10_cuda.so"
    env "$@" "$P" "$lib" ${ARGS:-} >"$name.plain" 2>"$name.plainerr" || fail "$name: untraced run failed"
    env "$@" "$VT" run -q -o "$name.vt" -- "$P" "$lib" ${ARGS:-} >"$name.out" 2>"$name.err" ||
        { cat "$name.err"; fail "$name: traced run failed"; }
    # single-threaded runs are deterministic: the tracer must not change what the program sees
    [ -n "${ARGS:-}" ] || cmp -s "$name.plain" "$name.out" || fail "$name: the program's output changed under the tracer"
    "$VT" report --json "$name.vt" >"$name.json" || fail "$name: report failed"
    "$VT" dump "$name.vt" >"$name.jsonl" || fail "$name: dump failed"
    PYTHONPATH="$ROOT/tests/python" python3 - "$name" "$mode" "$code" "$detail" <<'PYEOF' || fail "$name: trace differs from the fake's counters"
import json, sys
import vtdump
name, mode, code, detail = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fake = json.loads(open(name + ".out").read().strip().splitlines()[-1])
rep = json.load(open(name + ".json"))
ev, stacks = vtdump.load(name + ".jsonl")
assert rep["mode"] == mode, (rep["mode"], mode)
assert rep["peak"]["reserved_bytes"] == fake["peak_reserved"], (rep["peak"], fake)
notes = [o for o in ev if o.get("api") == "torchTrackerNote"]
# the last note is the outcome (a mismatch follows an ATTACHED note: it stops the tracker)
assert 1 <= len(notes) <= 2 and notes[-1]["size"] == code and int(notes[-1]["addr"], 16) == detail, notes
assert len(notes) == 1 or notes[0]["size"] == 1, notes
assert all(o["layer"] == "allocator" for o in notes)
allocs = [o for o in ev if o["type"] == "alloc" and o["api"] == "torchAlloc"]
frees = [o for o in ev if o["type"] == "free" and o["api"] == "torchFree"]
segs = [o for o in ev if o.get("api") == "torchSegmentAlloc"]
maps = [o for o in ev if o.get("api") == "torchSegmentMap"]
mallocs = [o for o in ev if o["type"] == "alloc" and o["api"] == "cudaMalloc" and not o["failed"]
           and o["size"] != (3 << 20) + 4096]  # TORCH_PROG_RAW: the program's own
creates = [o for o in ev if o["type"] == "alloc" and o["api"] == "cuMemCreate" and not o["failed"]]
if mode == "tensor+segment":
    assert rep["peak"]["allocated_bytes"] == fake["peak_allocated"], (rep["peak"], fake)
    assert len(allocs) == fake["allocs"] and len(frees) == fake["frees"], (len(allocs), len(frees), fake)
    assert all(o["layer"] == "allocator" and o["stack_id"] for o in allocs)
    # the allocating call site is on the stack, as for every other event
    named = [o for o in allocs if any(f.get("symbol") == "torch_prog_step" for f in stacks[o["stack_id"]])]
    assert named, "no tensor stack names torch_prog_step"
    # the tracker's segments are the hook's segments, one for one
    assert sorted((o["addr"], o["size"]) for o in segs) == sorted((o["addr"], o["size"]) for o in mallocs)
    # at the peak, every byte once: the tensors by category, the segments only for the part
    # their tensors leave unused (allocator cache), the context beside
    cats = rep["categories"]
    assert sum(cats.values()) == rep["peak"]["process_bytes"], (cats, rep["peak"])
    tensors = sum(v for k, v in cats.items() if k not in ("allocator_cache", "cuda_context"))
    assert tensors + cats["allocator_cache"] == rep["peak"]["reserved_bytes"], (cats, rep["peak"])
    # expandable segments: the mapped ranges add up to the physical chunks created
    assert sum(o["size"] for o in maps) == sum(o["size"] for o in creates), (len(maps), len(creates))
    assert "tracker_note" not in rep, rep["tracker_note"]
else:
    assert not allocs and not frees and not segs and not maps, (len(allocs), len(frees), len(segs))
    assert rep["tracker_note"].startswith("PyTorch's allocator trace hooks not used"), rep.get("tracker_note")
PYEOF
}

check cda cda tensor+segment 1 1
check cca cca tensor+segment 1 2
grep -q "allocator tracker" cda.err cca.err && fail "an attached tracker printed a warning"

# expandable segments (cuMemMap chunks, SEGMENT_MAP self-check); 4 threads sharing the allocator
check exp cda tensor+segment 1 1 FAKE_C10_EXPANDABLE=1
grep -q "allocator tracker" exp.err && fail "exp: an attached tracker printed a warning"
ARGS="3 4" check thr cca tensor+segment 1 2
ARGS="3 4" check thrx cda tensor+segment 1 1 FAKE_C10_EXPANDABLE=1

# a cudaMalloc that is not the allocator's comes first (its per-device allocators do not exist
# yet): the attach waits for initialized(), at the allocator's own first segment
check raw cda tensor+segment 1 1 TORCH_PROG_RAW=1
grep -q "allocator tracker" raw.err && fail "raw: the tracker refused a late but valid attach"

# PyTorch loaded after the process's own cudaMallocs (each of them looked for it, then only once a
# library was loaded): attached at the allocator's first segment all the same
check early cda tensor+segment 1 1 TORCH_PROG_EARLY=20000
grep -q "allocator tracker" early.err && fail "early: the tracker did not attach"

# no initialized() to ask: attach at the first segment; if that cudaMalloc was not the
# allocator's (the tracker is lost), its next one on the thread finds no tracker event: refuse
check noinit noinit tensor+segment 1 1
check noinitraw noinit segment 8 0 TORCH_PROG_RAW=1
grep -q "did not report" noinitraw.err || { cat noinitraw.err; fail "noinitraw: no reason on stderr"; }

check odd odd segment 4 0
grep -q "unknown TraceEntry layout" odd.err || { cat odd.err; fail "odd: no reason on stderr"; }
[ "$(grep -c 'allocator tracker' odd.err)" = 1 ] || fail "odd: the reason is not said exactly once"

check lie cda segment 7 0 FAKE_C10_LIE=1
grep -q "not the one the hook recorded" lie.err || { cat lie.err; fail "lie: no reason on stderr"; }

check lie2 cda segment 7 0 FAKE_C10_LIE=1 FAKE_C10_EXPANDABLE=1
grep -q "not the one the hook recorded" lie2.err || { cat lie2.err; fail "lie2: no reason on stderr"; }

check off cda segment 10 0 VRAMTRACE_TORCH_TRACKER=0
grep -q "allocator tracker" off.err && fail "off: turning the tracker off is not a warning"

check async cda segment 5 0 FAKE_C10_BACKEND=async
grep -q "allocator tracker" async.err && fail "async: the other backend is expected, not warned about"

# Python: a tensor allocated from Python (ctypes releases the GIL, as PyTorch's bindings do)
# carries the Python frames of the allocating thread, read inside the tracker's callback
. "$ROOT/tests/python/pythons.sh"
cat >pyprog.py <<'PYEOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
lib.fake_c10_malloc.restype, lib.fake_c10_malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
lib.fake_c10_free.argtypes = [ctypes.c_void_p]
def forward_layer(n):
    return lib.fake_c10_malloc(n)  # ALLOC-SITE
def train():
    w = [lib.fake_c10_malloc(1000003 + i) for i in range(4)]
    a = forward_layer(2222221)
    lib.fake_c10_free(a)
    for p in w:
        lib.fake_c10_free(p)
train()
PYEOF
vt_pythons | while read -r prefix mm; do
    rm -f py.vt
    "$VT" run -q -o py.vt -- "$prefix/bin/python$mm" pyprog.py "$FAKE/c10/cda/libc10_cuda.so" >py.log 2>&1 ||
        { cat py.log; fail "python $mm: traced run failed"; }
    "$VT" dump py.vt >py.jsonl || fail "python $mm: dump failed"
    PYTHONPATH="$ROOT/tests/python" python3 - "$mm" <<'PYEOF' || fail "python $mm: the tensor's Python frames are wrong"
import sys
import vtdump
line = [i + 1 for i, l in enumerate(open("pyprog.py")) if "ALLOC-SITE" in l][0]
ev, stacks = vtdump.load("py.jsonl")
t = [o for o in ev if o.get("api") == "torchAlloc" and o["size"] == 2222221]
assert len(t) == 1, len(t)
py = [(f["function"], f["line"]) for f in stacks[t[0]["stack_id"]] if f["kind"] == "python"]
assert py[:2] == [("forward_layer", line), ("train", line + 3)], py
assert sum(o.get("api") == "torchAlloc" for o in ev) == 5 and sum(o.get("api") == "torchFree" for o in ev) == 5
PYEOF
done || exit 1

# an OOM raised by the allocator itself (a memory-fraction limit: no failed CUDA call at all)
# is seen through the tracker: the report has the OOM, with the request that failed
check frac cda tensor+segment 1 1 FAKE_C10_MEM_FRACTION=300000000 TORCH_PROG_OOM=400000000
grep -q "out of memory (as asked)" frac.out || grep -q "out of memory (as asked)" frac.err || fail "frac: no OOM happened"
python3 - <<'PYEOF' || fail "frac: the allocator's OOM is not in the report"
import json
rep = json.load(open("frac.json"))
ev = [json.loads(l) for l in open("frac.jsonl")]
assert not any(o["type"] == "alloc" and o["failed"] for o in ev), "a CUDA call failed: not the case tested"
assert rep["oom"] and rep["oom"]["requested_bytes"] == 400000000, rep["oom"]
PYEOF

# the tracker off the table entirely: no libc10_cuda.so in the process -> no note, plain segments
"$VT" run -q -o none.vt -- "$BUILD/tests/prog/rt_cases" basic >/dev/null 2>&1 || fail "rt_cases basic failed"
"$VT" dump none.vt | grep -q torchTrackerNote && fail "a process without PyTorch got a tracker note"
exit 0
