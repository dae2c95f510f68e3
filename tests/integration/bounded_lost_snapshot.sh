#!/bin/sh
# bounded_lost_snapshot.sh — a bounded trace whose snapshot lost its first piece (its SNAPSHOT
# record: that piece's slot dropped while the rest of its group stayed, as a kill in the writer's
# drop_oldest between two slots' wipes leaves it) is read with that snapshot skipped: the events
# after it are a gap up to the next snapshot, which the replay starts from exactly (report exit 0,
# "gaps 1"). The join had taken the first ALLOC records as the SNAPSHOT's fields (every allocation
# handed out freed, the snapshot's lost: process peak 420 -> 351 MiB, exit 0), then, once that was
# refused, called the whole trace malformed (exit 3).
set -u
export LD_LIBRARY_PATH="$FAKE" FAKECUDA_NO_REUSE=1
fail() { echo "bounded_lost_snapshot: $*"; exit 1; }
P="$BUILD/tests/prog/long_prog"
C10="$FAKE/c10/cda/libc10_cuda.so"
[ -f "$C10" ] || { echo "no $C10 (make fake)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP bounded_lost_snapshot: no python3"; exit 77; }
# stored chunks (--no-compress) to edit in place; 400k events roll an 8 MiB window several times
"$VT" run -q --card 2GiB --max-size 8MiB --no-compress -o b.vt -- "$P" "$C10" 400000 50 4294967296 0 \
    >run.out 2>&1
[ -f b.vt ] || { cat run.out; fail "no trace"; }
"$VT" report --json b.vt >whole.json 2>whole.err || { cat whole.err; fail "report of the trace"; }
# the first snapshot the reader needs (the lowest raw seq past what the HEAD chunks hold) loses
# its SNAPSHOT record: its chunk holds its ALLOC records alone
python3 - <<'PYEOF' || fail "could not make the trace"
import struct
d = bytearray(open("b.vt", "rb").read())
S = struct.unpack_from("<Q", d, 48)[0]
chunks = []  # (raw_seq, first_event, stream, slot, offset)
for i in range(len(d) // S):
    off = 32 if i == 0 else i * S
    if struct.unpack_from("<H", d, off)[0] != 16 or struct.unpack_from("<I", d, off + 32)[0] != 2:
        continue
    p = off + 48
    while p + 64 <= (i + 1) * S and struct.unpack_from("<H", d, p)[0] == 17:
        raw_seq, stream, method = struct.unpack_from("<QII", d, p + 8)
        events, first = struct.unpack_from("<Q", d, p + 32)[0], struct.unpack_from("<Q", d, p + 56)[0]
        assert method == 0, "a compressed chunk"
        chunks.append((raw_seq, first, stream, events, i, p))
        p += struct.unpack_from("<I", d, p + 4)[0]
head = max([c[1] + c[3] for c in chunks if c[2] == 1] + [0])
snap = min(c for c in chunks if c[2] == 4 and c[1] > head)
i, p = snap[4], snap[5]
size, raw_len = struct.unpack_from("<I", d, p + 4)[0], struct.unpack_from("<I", d, p + 24)[0]
body = bytes(d[p + 64:p + 64 + raw_len])
assert struct.unpack_from("<H", body, 0)[0] == 18 and raw_len > 64, "not a SNAPSHOT first"
body = body[64:]  # the ALLOC records alone, stored as they are (a record is 8-byte aligned)
struct.pack_into("<HHI", d, p, 17, 0, 64 + len(body))
struct.pack_into("<II", d, p + 24, len(body), len(body))
rest = bytes(d[p + size:(i + 1) * S])  # the slot's chunks after it, moved up
new = body + rest
d[p + 64:(i + 1) * S] = new + bytes((i + 1) * S - p - 64 - len(new))
open("lost.vt", "wb").write(d)
PYEOF
"$VT" report --json lost.vt >lost.json 2>lost.err
rc=$?
[ $rc = 0 ] || { cat lost.err; fail "report of the trace without its first snapshot: exit $rc"; }
python3 - <<'PYEOF' || fail "the lost snapshot was not read as a gap"
import json
w, l = json.load(open("whole.json"))["bounded"], json.load(open("lost.json"))["bounded"]
assert w["gaps"] == 0 and l["gaps"] >= 1, (w["gaps"], l["gaps"])
assert l["snapshot_allocations"] > 0, l  # the next snapshot, joined
assert l["dropped_events"] > w["dropped_events"], (l["dropped_events"], w["dropped_events"])
print("bounded_lost_snapshot: gaps %d, %d more events dropped, the replay from the next snapshot"
      % (l["gaps"], l["dropped_events"] - w["dropped_events"]))
PYEOF
echo "bounded_lost_snapshot: ok"
