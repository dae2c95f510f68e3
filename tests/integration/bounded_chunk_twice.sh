#!/bin/sh
# bounded_chunk_twice.sh — a compressed trace (run --max-size) holding one raw slot's HEAD chunk
# twice (a copy in a slot of its own) reports as the trace without the copy: the copy's events were
# handed out already, so it is skipped, as a second EVENTS chunk is. Read again, its events had
# pushed the reader's count past every later chunk's first event: 73,478 of 600,041 events skipped
# with no gap or drop said, the process peak 458 -> 461 MiB, parameters 15.6 -> 3.0 MiB (exit 0).
set -u
export LD_LIBRARY_PATH="$FAKE" FAKECUDA_NO_REUSE=1
fail() { echo "bounded_chunk_twice: $*"; exit 1; }
P="$BUILD/tests/prog/long_prog"
C10="$FAKE/c10/cda/libc10_cuda.so"
[ -f "$C10" ] || { echo "no $C10 (make fake)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP bounded_chunk_twice: no python3"; exit 77; }
"$VT" run -q --card 2GiB --max-size 8MiB -o b.vt -- "$P" "$C10" 600000 50 4294967296 0 >run.out 2>&1
[ -f b.vt ] || { cat run.out; fail "no trace"; }
python3 - <<'PYEOF' || fail "could not make the trace"
import struct
d = bytearray(open("b.vt", "rb").read())
S = struct.unpack_from("<Q", d, 48)[0]
heads = []  # (raw_seq, the CHUNK record's bytes)
for i in range(len(d) // S):
    off = 32 if i == 0 else i * S
    if struct.unpack_from("<H", d, off)[0] != 16 or struct.unpack_from("<I", d, off + 32)[0] != 2:
        continue
    p = off + 48
    while p + 64 <= (i + 1) * S and struct.unpack_from("<H", d, p)[0] == 17:
        size = struct.unpack_from("<I", d, p + 4)[0]
        raw_seq, stream = struct.unpack_from("<QI", d, p + 8)
        if stream == 1:
            heads.append((raw_seq, bytes(d[p:p + size])))
        p += size
assert len(heads) >= 2, "fewer than two HEAD chunks"
chunk = max(heads)[1]  # the last HEAD chunk, again, in a PACK slot of its own at the end
slot = bytearray(S)
slot[:48] = struct.pack("<HHIQQQIIQ", 16, 0, 48, 999, S, struct.unpack_from("<Q", d, 56)[0], 2, 1, 0)
slot[48:48 + len(chunk)] = chunk
open("twice.vt", "wb").write(d + slot)
PYEOF
"$VT" report --json b.vt >b.json 2>b.err || { cat b.err; fail "report of the trace"; }
"$VT" report --json twice.vt >twice.json 2>twice.err || { cat twice.err; fail "report of the copy"; }
python3 - <<'PYEOF' || fail "a HEAD chunk read twice changed the report"
import json
a, b = json.load(open("b.json")), json.load(open("twice.json"))
for k in ("events", "peak", "categories", "iterations"):
    assert a[k] == b[k], (k, a[k], b[k])
assert a["bounded"]["gaps"] == b["bounded"]["gaps"] == 0
print("bounded_chunk_twice: %d events, as without the copy" % b["events"])
PYEOF
echo "bounded_chunk_twice: ok"
