#!/bin/sh
# free_paths.sh — every free path of every API (cudaFree, cudaFreeAsync, cuMemFree,
# cuMemFreeAsync, cuMemUnmap + cuMemRelease) at addresses the fake CUDA never hands out again
# (FAKECUDA_NO_REUSE=1), so a missed free cannot hide behind the next allocation: the run fits a
# card of exactly its need (--card 640MiB) and not one byte less; the report's peaks equal the
# hand-computed ones and those of an independent replay of `vramtrace dump` (tests/python/
# replay_dump.py). And the emulated card's edge on the driver path, to the byte (cuMemAlloc,
# cuMemCreate: what cuMemGetInfo says is free fits, one byte or one block more does not).
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/free_paths"
fail() { echo "free_paths: $*"; exit 1; }
MiB=1048576
# the need, by hand: the context (FAKECUDA_CONTEXT, 300 MiB) + one live block per API:
# 64 (cudaMalloc) + 66 (cudaMallocAsync) + 68 (cuMemAlloc) + 70 (cuMemAllocAsync) + 72 (cuMemCreate)
NEED=$(((300 + 64 + 66 + 68 + 70 + 72) * MiB))
export FAKECUDA_NO_REUSE=1 FAKECUDA_MEM=4G FAKECUDA_CONTEXT=300M

"$VT" run -q --card "${NEED}B" -o f.vt -- "$P" frees >f.out 2>&1 ||
    { cat f.out; fail "a free was not returned to the emulated card (${NEED} B, exactly the need)"; }
grep -qx 'all freed' f.out || { cat f.out; fail "the program did not finish"; }
"$VT" run -q --card "$((NEED - 1))B" -o short.vt -- "$P" frees >short.out 2>&1 &&
    fail "a card one byte short of the need admitted everything"
grep -q '^failed cuMemCreate' short.out || { cat short.out; fail "one byte short: the last block (cuMemCreate) should fail"; }

"$VT" dump --no-resolve f.vt >f.jsonl || fail "dump f.vt"
"$VT" report --json f.vt >f.json || fail "report f.vt"
python3 - f.jsonl f.json "$NEED" "$ROOT/tests/python" <<'PYEOF' || fail "peaks (see above)"
import json, sys
sys.path.insert(0, sys.argv[4])
import replay_dump
ev = [json.loads(l) for l in open(sys.argv[1]) if '"type":"alloc"' in l or '"type":"free"' in l]
rep, need, MiB = json.load(open(sys.argv[2])), int(sys.argv[3]), 1 << 20
# the fake CUDA kept its word: no device address (nor VMM handle) handed out twice
addrs = [(o["api"] == "cuMemCreate", o["addr"]) for o in ev if o["type"] == "alloc" and o["kind"] == "ALLOC"]
assert len(addrs) == len(set(addrs)) == 10, addrs
frees = sorted(o["api"] for o in ev if o["type"] == "free")
assert frees == sorted(["cudaFree", "cudaFreeAsync", "cuMemFree", "cuMemFreeAsync", "cuMemUnmap",
                        "cuMemRelease"] * 2), frees
# by hand: tensors = the two stream-ordered blocks; reserved = those + cudaMalloc + cuMemCreate
want = {"allocated_bytes": (66 + 70) * MiB, "reserved_bytes": (66 + 70 + 64 + 72) * MiB,
        "process_bytes": need}
ind = replay_dump.replay(open(sys.argv[1]))
for k, v in want.items():
    assert rep["peak"][k] == v, "report %s %d, by hand %d" % (k, rep["peak"][k], v)
    assert ind[k] == v, "independent replay %s %d, by hand %d" % (k, ind[k], v)
assert ind["process_at_end"] == 300 * MiB, ind  # everything freed but the context
c = rep["categories"]
assert c["external"] == 68 * MiB, "external at the peak %d, by hand 68 MiB (cuMemAlloc)" % c["external"]
assert c["cuda_context"] == 300 * MiB and sum(c.values()) == need, c
PYEOF

# the card's edge on the driver path: 1 GiB, 300 MiB of context
"$VT" run -q --card 1GiB -o e.vt -- "$P" edge >e.out 2>&1 || { cat e.out; fail "edge run failed"; }
free=$(((1024 - 300) * MiB))
for want in "free $free total $((1024 * MiB))" "alloc_free_plus_1 2" "alloc_free 0" "alloc_1_more 2" \
    "create_free_plus_2mib 2" "create_free 0" "create_2mib_more 2" "alloc_free_again 0"; do
    grep -qx "$want" e.out || { cat e.out; fail "card edge: want the line '$want'"; }
done
echo ok
