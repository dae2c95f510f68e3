#!/bin/sh
# alloc_settings.sh — the capture stays exact under each allocator setting of the fake
# libc10_cuda.so (tests/fakecuda/c10/fake_settings.h): garbage_collection_threshold (cached
# segments released before new ones), max_split_size_mb (oversize blocks not split, used whole,
# released first when a segment does not fit) and record_stream (a free completed only once the
# other stream's work is done). For each, tests/prog/alloc_prog runs a sequence whose reserved
# peak the setting changes (checked against the same run under default settings) under
# `vramtrace run`, and `report --json`'s reserved and allocated peaks must equal the fake's own
# max_memory_reserved and requested_bytes peaks to the byte, the allocated peak in blocks its
# allocated_bytes peak (max_memory_allocated) — under record_stream too, where the free the
# allocator requested and completes later is recorded (torchFreeRequested) and the blocks peak
# falls with it, as allocated_bytes does at FREE_REQUESTED; an ordinary free stays one record.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/alloc_prog"
LIB="$FAKE/c10/cda/libc10_cuda.so"
fail() { echo "alloc_settings: $*"; exit 1; }
MiB=1048576

# case NAME SCENARIO ARG [ENV...]: one untraced and one traced run, checked against the fake
case_run() {
    name=$1 scen=$2 arg=$3
    shift 3
    env "$@" "$P" "$LIB" "$scen" $arg >"$name.plain" 2>"$name.plainerr" ||
        { cat "$name.plainerr"; fail "$name: untraced run failed"; }
    env "$@" "$VT" run -q -o "$name.vt" -- "$P" "$LIB" "$scen" $arg >"$name.out" 2>"$name.err" ||
        { cat "$name.err"; fail "$name: traced run failed"; }
    cmp -s "$name.plain" "$name.out" || fail "$name: the fake's counters changed under the tracer"
    "$VT" report --json "$name.vt" >"$name.json" || fail "$name: report failed"
    "$VT" dump "$name.vt" >"$name.jsonl" || fail "$name: dump failed"
    PYTHONPATH="$ROOT/tests/python" python3 - "$name" <<'PYEOF' || fail "$name: the report differs from the fake's counters"
import json, sys
import vtdump
name = sys.argv[1]
fake = json.loads(open(name + ".out").read().strip().splitlines()[-1])
rep = json.load(open(name + ".json"))
pk = rep["peak"]
print("%s: reserved %d (fake %d), allocated %d (fake requested %d), blocks %d (fake %d)" % (
    name, pk["reserved_bytes"], fake["peak_reserved"], pk["allocated_bytes"],
    fake["peak_requested"], pk["allocated_blocks_bytes"], fake["peak_allocated"]))
assert rep["mode"] == "tensor+segment" and "tracker_note" not in rep, rep.get("tracker_note")
assert pk["reserved_bytes"] == fake["peak_reserved"], (pk, fake)
assert pk["allocated_bytes"] == fake["peak_requested"], (pk, fake)
assert pk["allocated_blocks_bytes"] == fake["peak_allocated"], (pk, fake)
# the tracker's segments are the hook's, one for one, made and released (the GC's, the
# oversize release's and empty_cache's cudaFree)
ev, _ = vtdump.load(name + ".jsonl")
def of(api, kind):
    return sorted(o["addr"] for o in ev if o.get("api") == api and o["type"] == kind and not o["failed"])
assert of("torchSegmentAlloc", "alloc") == of("cudaMalloc", "alloc"), name
assert of("torchSegmentFree", "alloc") == of("cudaFree", "free"), name
assert len(of("cudaFree", "free")) == fake["device_frees"], (len(of("cudaFree", "free")), fake)
PYEOF
}

# field NAME KEY: one of the fake's counters of a run
field() {
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1.out" "$2"
}

# garbage_collection_threshold:0.1 of a 1 GiB limit: cached segments go before reserved passes
# 102.4 MiB (without it, 222 MiB: every size cached)
LIMIT=$((1024 * MiB))
case_run gc_default gc "" FAKE_C10_MEM_FRACTION=$LIMIT
case_run gc_on gc "" FAKE_C10_MEM_FRACTION=$LIMIT PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.1
[ "$(field gc_on peak_reserved)" -lt "$(field gc_default peak_reserved)" ] ||
    fail "gc: the threshold did not lower the reserved peak"
[ "$(field gc_on peak_reserved)" -le $((LIMIT / 10 + 30 * MiB)) ] ||
    fail "gc: reserved went past the threshold by more than one request"
# without a memory limit, PyTorch's collector never runs
case_run gc_nolimit gc "" PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.1
[ "$(field gc_nolimit peak_reserved)" = "$(field gc_default peak_reserved)" ] ||
    fail "gc: the collector ran without a memory limit"

# max_split_size_mb:64 under a 200 MiB limit: the cached 100 MiB block is not split for 30 MiB,
# serves 90 MiB whole (a 100 MiB block: the blocks peak above the requested one), and is
# released alone (no full retry) when the 80 MiB segment does not fit
case_run split_default split "" FAKE_C10_MEM_FRACTION=$((200 * MiB))
case_run split_on split "" FAKE_C10_MEM_FRACTION=$((200 * MiB)) PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64
[ "$(field split_on peak_reserved)" -ne "$(field split_default peak_reserved)" ] ||
    fail "split: max_split_size_mb did not change the reserved peak"
[ "$(field split_on retries)" = 0 ] && [ "$(field split_on device_frees)" = 3 ] ||
    fail "split: the oversize segment was not released on its own"
[ "$(field split_on peak_allocated)" -gt "$(field split_on peak_requested)" ] ||
    fail "split: no oversize block used whole"
# PYTORCH_ALLOC_CONF, the newer name, is read the same way
case_run split_new split "" FAKE_C10_MEM_FRACTION=$((200 * MiB)) PYTORCH_ALLOC_CONF=max_split_size_mb:64
[ "$(field split_new peak_reserved)" = "$(field split_on peak_reserved)" ] ||
    fail "split: PYTORCH_ALLOC_CONF not read"

# record_stream: a's block is not reused while stream 7 works, so b needs a segment of its own
case_run stream_off stream ""
case_run stream_on stream on
[ "$(field stream_on peak_reserved)" -gt "$(field stream_off peak_reserved)" ] ||
    fail "stream: record_stream did not keep the block from reuse"
[ "$(field stream_on peak_requested)" -gt "$(field stream_on peak_allocated)" ] ||
    fail "stream: requested bytes did not wait for the stream"
# the deferred free's request is in the trace, once; no ordinary free left one
for n in stream_on stream_off gc_on split_on; do
    grep -c '"api":"torchFreeRequested"' "$n.jsonl" >"$n.req"
done
[ "$(cat stream_on.req)" -ge 1 ] || fail "stream: no torchFreeRequested recorded for the deferred free"
for n in stream_off gc_on split_on; do
    [ "$(cat $n.req)" = 0 ] || fail "$n: $(cat $n.req) torchFreeRequested records for frees completed at once"
done
exit 0
