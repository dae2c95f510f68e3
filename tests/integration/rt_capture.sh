#!/bin/sh
# rt_capture.sh — the capture core under `vramtrace run` on the fake CUDA: every runtime hook
# recorded once with its size/result and a stack naming the caller; 8 threads x 100k pairs with
# exact counts; fork (child file only if it uses CUDA); SIGKILL leaves a readable trace; two
# devices, each allocation on its own; an
# unwritable output warns once and changes nothing; no CUDA -> no file; exit codes; --tensors.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "rt_capture: $*"; exit 1; }
count() { # count FILE PYTHON-EXPR-ON-o : JSON lines of a dump for which the expression holds
    "$VT" dump "$1" | python3 -c "
import json, sys
n = 0
for line in sys.stdin:
    o = json.loads(line)
    n += bool($2)
print(n)"
}

# 1. every hooked runtime call once, with sizes, results and the caller's name on top
"$VT" run -q -o basic.vt -- "$P" basic >basic.out 2>&1 || { cat basic.out; fail "basic run failed"; }
"$VT" dump basic.vt >basic.jsonl || fail "dump basic.vt"
PYTHONPATH="$ROOT/tests/python" python3 - basic.jsonl <<'PYEOF' || fail "basic: events differ from the calls made"
import sys
import vtdump
ev, stacks = vtdump.load(sys.argv[1])
allocs = [o for o in ev if o["type"] == "alloc"]
def one(api, size, fn):
    m = [o for o in allocs if o["api"] == api and o["size"] == size]
    assert len(m) == 1, (api, size, len(m))
    top = [f for f in stacks[m[0]["stack_id"]] if f["kind"] == "native"][0]
    assert top["symbol"] == fn, (api, top)
one("cudaMalloc", 1000000, "vt_case_malloc")
one("cudaMallocAsync", 3000000, "vt_case_async")
one("cudaMallocFromPoolAsync", 4000000, "vt_case_pool")
one("cudaMallocManaged", 5000000, "vt_case_managed")
one("cudaHostAlloc", 7000000, "vt_case_host")
one("cudaMallocHost", 8000000, "vt_case_host")
one("cudaHostRegister", 9000000, "vt_case_host")
one("cudaMemPoolTrimTo", 0, "vt_case_pool")
assert sum(o["api"] == "cudaMallocPitch" for o in allocs) == 1
big = [o for o in allocs if o["size"] == 1 << 45]
assert len(big) == 1 and big[0]["failed"] and big[0]["result"] == 2, big
assert any(o["type"] == "oom" for o in ev), "no oom record"
assert not any(o["api"] in ("cuMemAlloc", "cuMemAllocAsync") for o in allocs), "double counted"
frees = [o for o in ev if o["type"] == "free"]
assert sum(o["api"] == "cudaFree" for o in frees) == 3 and sum(o["api"] == "cudaFreeHost" for o in frees) == 2
assert sum(o["type"] == "meminfo" and o["source"] == "app" for o in ev) == 1
assert ev[-1]["type"] == "status" and ev[-1]["status"] == "ok"
PYEOF

# 2. threads: 8 threads x 100k pairs -> exactly the 1.6M events made, none dropped
"$VT" run -q -o thr.vt -- "$P" threads 8 100000 >/dev/null 2>&1 || fail "threads run failed"
"$VT" dump --no-resolve thr.vt >thr.jsonl || fail "dump thr.vt"
n=$(grep -Ec '"type":"(alloc|free)","api":"cuda(Malloc|Free)"' thr.jsonl)
[ "$n" = 1600000 ] || fail "threads: $n events, want 1600000"
grep -q '"type":"trailer".*"n_dropped":0' thr.jsonl || fail "threads: dropped events or no trailer"
t=$(grep -c '"type":"thread"' thr.jsonl)
[ "$t" -ge 8 ] || fail "threads: $t THREAD records, want >= 8"
rm -f thr.jsonl thr.vt

# 3. fork: the parent's file has only the parent's events; the CUDA child has its own file
"$VT" run -o 'fork.%p.vt' -- "$P" fork >fork.out 2>fork.err || fail "fork run failed"
set -- fork.*.vt
[ $# = 2 ] || fail "fork: want 2 trace files (parent + CUDA child), got $*"
kids=$(sed -n 's/^children //p' fork.out)
a=${kids% *}; b=${kids#* }
[ -f "fork.$a.vt" ] || fail "fork: no trace for the CUDA child $a"
[ ! -e "fork.$b.vt" ] || fail "fork: the child that never used CUDA wrote a trace"
n=$(count "fork.$a.vt" "o['type'] == 'alloc' and o['api'] == 'cudaMalloc'")
[ "$n" = 1 ] || fail "fork: child trace has $n cudaMalloc, want 1"
n=$(count "fork.$a.vt" "o['type'] == 'process' and o['pid'] == $a")
[ "$n" = 1 ] || fail "fork: the child's PROCESS record does not carry its pid $a"
for f in fork.*.vt; do [ "$f" = "fork.$a.vt" ] || parent=$f; done
n=$(count "$parent" "o['type'] == 'alloc' and o['api'] == 'cudaMalloc'")
[ "$n" = 1 ] || fail "fork: parent trace has $n cudaMalloc, want 1 (the child's must not be there)"
n=$(count "$parent" "o['type'] == 'status' and o['status'] == 'ok'")
[ "$n" = 1 ] || fail "fork: the parent trace is not complete"
ppid=${parent#fork.}; ppid=${ppid%.vt}
n=$(count "fork.$a.vt" "o['type'] == 'process' and o['ppid'] == $ppid")
[ "$n" = 1 ] || fail "fork: the child's PROCESS ppid is not the parent $ppid"
n=$(count "$parent" "o['type'] == 'process' and o['pid'] == $ppid")
[ "$n" = 1 ] || fail "fork: the parent's PROCESS pid is not $ppid"
grep -c 'vramtrace: trace' fork.err | grep -qx 2 || fail "fork: vramtrace run did not list both traces"

# 4. SIGKILL: every complete record is still there, the status says truncated
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=killed.vt "$P" sleep 50 >sleep.out 2>&1 &
pid=$!
i=0
while ! grep -q ready sleep.out 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid; wait $pid 2>/dev/null
n=$(count killed.vt "o['type'] == 'alloc' and o['api'] == 'cudaMalloc'")
[ "$n" = 50 ] || fail "SIGKILL: $n allocations readable, want 50"
n=$(count killed.vt "o['type'] == 'status' and o['status'] == 'truncated'")
[ "$n" = 1 ] || fail "SIGKILL: the status is not 'truncated'"
"$VT" report killed.vt >/dev/null 2>killed.err || fail "report of a killed trace failed"
grep -q truncated killed.err || fail "report does not warn that the trace is truncated"

# 5. an unwritable output: one warning, the program's output and exit code unchanged
"$P" exit 0 >/dev/null
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=/nonexistent-dir/x.vt "$P" basic >unw.out 2>unw.err
rc=$?
[ $rc = 0 ] || fail "unwritable output changed the exit code to $rc"
n=$(grep -c '^vramtrace:' unw.err)
[ "$n" = 1 ] || { cat unw.err; fail "unwritable output: $n warnings, want exactly 1"; }
grep -q '^too_big 2$' unw.out || fail "unwritable output changed the program's behaviour"

# 5b. two devices: each allocation on the device the thread had set (the hook asks the driver's
# current device on every event: an answer of device 0 for every thread went unseen by any test)
FAKECUDA_DEVICES=2 "$VT" run -q -o dev2.vt -- "$P" devices >dev2.out 2>&1 || { cat dev2.out; fail "devices run failed"; }
"$VT" dump dev2.vt >dev2.jsonl || fail "dump dev2.vt"
python3 - dev2.jsonl <<'PYEOF' || fail "devices: an allocation is not on the device its thread had set"
import json, sys
got = sorted((o["size"], o["device"]) for o in map(json.loads, open(sys.argv[1]))
             if o.get("type") == "alloc" and o.get("api") == "cudaMalloc")
assert got == [(1 << 20, 0), (3 << 20, 1)], got
print("devices: 1 MiB on device 0, 3 MiB on device 1")
PYEOF

# 6. no CUDA call, no file; VRAMTRACE_DISABLE; exit codes; bad arguments
"$VT" run -o none.vt -- /bin/true 2>/dev/null || fail "run of /bin/true failed"
[ ! -e none.vt ] || fail "a process that never used CUDA wrote a trace"
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_DISABLE=1 VRAMTRACE_OUTPUT=dis.vt "$P" basic >/dev/null 2>&1
[ ! -e dis.vt ] || fail "VRAMTRACE_DISABLE=1 still wrote a trace"
"$VT" run -q -- "$P" exit 3 2>/dev/null; [ $? = 3 ] || fail "exit code 3 not propagated"
"$VT" run -q -- sh -c 'kill -TERM $$' 2>/dev/null; [ $? = 143 ] || fail "SIGTERM not reported as 143"
"$VT" run --stacks bogus -- true 2>err.txt; [ $? = 2 ] || fail "bad --stacks not exit 2"
grep -q '^vramtrace run: .*bogus' err.txt || fail "bad --stacks: no message naming the value"
"$VT" run 2>err.txt; [ $? = 2 ] || fail "run without a command not exit 2"
grep -q '^vramtrace run: ' err.txt || fail "run without a command: no message"
"$VT" dump does-not-exist.vt 2>err.txt; [ $? = 2 ] || fail "dump of a missing file not exit 2"
grep -q 'does-not-exist.vt' err.txt || fail "dump of a missing file: the message does not name it"
"$VT" report does-not-exist.vt 2>/dev/null; [ $? = 2 ] || fail "report of a missing file not exit 2"
v=$(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False "$VT" run -q --tensors -- sh -c 'echo $PYTORCH_CUDA_ALLOC_CONF')
[ "$v" = "expandable_segments:False,backend:cudaMallocAsync" ] || fail "--tensors merge gave '$v'"
stat -c %a basic.vt | grep -qx 600 || fail "trace file mode is not 0600"
echo ok
