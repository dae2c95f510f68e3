#!/bin/sh
# drv_layer.sh — the driver layer on the fake CUDA: the runtime reaches the driver through
# cuGetProcAddress (one event per cudaMalloc, not two); a program using cuGetProcAddress_v2 the
# way cudart does (re-fetches at 11030 / 12000, _ptsz variants) has every allocation recorded
# once; RTLD_NEXT keeps its meaning; PyTorch's expandable-segments VMM path through
# cudaGetDriverEntryPointByVersion; contexts sized; card emulation (--card 1GiB); the sampler.
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "drv_layer: $*"; exit 1; }
"$VT" run -q -o pa.vt -- "$P" procaddr >pa.out 2>&1 || { cat pa.out; fail "procaddr run failed"; }
grep -qx 'rtld_next_same 1' pa.out || fail "dlsym(RTLD_NEXT) from the program changed meaning"
"$VT" dump --no-resolve pa.vt >pa.jsonl || fail "dump pa.vt"
python3 - pa.jsonl <<'PYEOF' || fail "procaddr: wrong events"
import json, sys, collections
ev = [json.loads(l) for l in open(sys.argv[1])]
c = collections.Counter((o["type"], o["api"]) for o in ev if o["type"] in ("alloc", "free"))
want = {("alloc", "cudaMalloc"): 1, ("free", "cudaFree"): 1, ("alloc", "cuMemAlloc"): 3,
        ("alloc", "cuModuleLoadData"): 1, ("free", "cuModuleUnload"): 1,
        ("free", "cuMemFree"): 3, ("alloc", "cuMemAllocAsync"): 2, ("free", "cuMemFreeAsync"): 2,
        ("alloc", "cuDevicePrimaryCtxRetain"): 1}
assert dict(c) == want, dict(c)
sizes = sorted(o["size"] for o in ev if o["type"] == "alloc" and o["api"] == "cuMemAlloc")
assert sizes == [2000000, 2000001, 2000002], sizes
ctx = [o for o in ev if o["type"] == "alloc" and o["api"] == "cuDevicePrimaryCtxRetain"][0]
assert ctx["size"] == 300 << 20, ctx  # FAKECUDA_CONTEXT default 300M
ptx = int([l.split()[1] for l in open("pa.out") if l.startswith("ptx_bytes")][0])
mod = [o for o in ev if o["type"] == "alloc" and o["api"] == "cuModuleLoadData"][0]
assert mod["size"] == ptx and mod["kind"] == "LOAD", (mod, ptx)
PYEOF
"$VT" run -q -o vmm.vt -- "$P" vmm >vmm.out 2>&1 || { cat vmm.out; fail "vmm run failed"; }
"$VT" report --json vmm.vt >vmm.json || fail "report vmm.vt"
python3 - vmm.json vmm.vt <<'PYEOF' || fail "vmm: physical bytes differ"
import json, sys
r = json.load(open(sys.argv[1]))
# 4 x 2 MiB + 4 x 20 MiB created and mapped; the reserved 18 GiB of address space is not memory
assert r["peak"]["reserved_bytes"] == 4 * (2 + 20) << 20, r["peak"]
assert r["peak"]["process_bytes"] == (4 * (2 + 20) << 20) + (300 << 20), r["peak"]  # the 512 B were freed first
PYEOF
FAKECUDA_MEM=4G "$VT" run -q --card 1GiB -o card.vt -- "$P" card >card.out 2>&1 || { cat card.out; fail "card run failed"; }
grep -q '^total 1073741824 ' card.out || fail "cudaMemGetInfo did not report the emulated 1 GiB"
grep -q ' chunks 7 rc 2$' card.out || { cat card.out; fail "want 7 x 100 MiB then out of memory (1 GiB - 300 MiB context)"; }
"$VT" dump --no-resolve card.vt >card.jsonl
python3 - card.jsonl <<'PYEOF' || fail "card: no emulated OOM in the trace"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
bad = [o for o in ev if o["type"] == "alloc" and o["failed"]]
assert len(bad) == 1 and bad[0]["emulated"] and bad[0]["result"] == 2, bad
oom = [o for o in ev if o["type"] == "oom"]
assert len(oom) == 1 and oom[0]["capacity"] == 1 << 30, oom
cfg = [o for o in ev if o["type"] == "config"][0]
assert cfg["card_bytes"] == 1 << 30, cfg
PYEOF
# the background sampler: MEMINFO records (source sampler) with the emulated total
FAKECUDA_MEM=4G "$VT" run -q --sample-ms 1 --card 1GiB -o smp.vt -- "$P" threads 2 200000 >/dev/null 2>&1 || fail "sampler run failed"
"$VT" dump --no-resolve smp.vt >smp.jsonl || fail "dump smp.vt"
n=$(grep -c '"source":"sampler"' smp.jsonl)
[ "$n" -ge 1 ] || fail "no sampler records with --sample-ms 1"
! grep '"source":"sampler"' smp.jsonl | grep -vq '"total_bytes":1073741824' || fail "a sample without the emulated total"
"$VT" run -q -o nosmp.vt -- "$P" threads 1 1000 >/dev/null 2>&1
! "$VT" dump --no-resolve nosmp.vt | grep -q '"source":"sampler"' || fail "sampler records without --sample-ms"
echo ok
