#!/bin/sh
# long_bounded.sh — a bounded trace (run --max-size) of a long run that rolls its window several
# times, held to a plain trace of the same run (tests/prog/long_prog: the fake allocator, a
# backward on pt_autograd_0, a leak of 1 MiB every 50 steps, an evaluation at the end that the
# 2 GiB card refuses; deterministic, so both traces record the same events): the file stays
# under its bound; its summaries hold every step of the run, numbered 1..N; the events after the
# snapshot the replay starts from are exactly the plain trace's last events, and the snapshot
# is exactly what was alive at that point (an independent pairing by (space, addr), the
# format's rule); the report of the bounded trace finds the OOM at the end with the plain
# report's cause and live bytes, and the leak at its true rate. The same run compressed but not
# bounded (--compress) reports as the plain one, at a fraction of its size. Damaged chunks
# (a zstd frame that does not decompress to its size, a chunk longer than any, a slot grid that
# makes no sense) are malformed traces (exit 3), never a crash.
# runs: early (long bounded runs rolling their window: about 1.5 minutes)
set -u
# no device address handed out twice: an allocation alive at the run's beginning and freed in
# the dropped part (long_prog's probe) cannot hide behind a later one at the same address
export LD_LIBRARY_PATH="$FAKE" FAKECUDA_NO_REUSE=1
fail() { echo "long_bounded: $*"; exit 1; }
P="$BUILD/tests/prog/long_prog"
C10="$FAKE/c10/cda/libc10_cuda.so"
[ -f "$C10" ] || { echo "no $C10 (make fake)"; exit 77; }
# 20 us of "computation" per step: a real run's rate of events (a loop with none outruns the
# packer on this 2-core machine; what it cannot keep is counted: long_kill.sh)
EVENTS=6000000 LEAK=50 EVAL=4294967296 PAUSE=20 MAX=8MiB
# A run whose capture could not keep every event (a machine loaded past what the 20 us steps
# leave the packer: CI beside five builds lost 7,827 of 6,000,033, counted as lost_events) is not
# the plain run's event for event: it is run once more, the count said; twice is a failure.
for t in plain bounded compressed; do
    case $t in
    plain) opt="" ;;
    bounded) opt="--max-size $MAX" ;;
    compressed) opt="--compress" ;;
    esac
    for try in 1 2; do
        rm -f $t.vt
        # shellcheck disable=SC2086
        "$VT" run -q --card 2GiB $opt -o $t.vt -- "$P" "$C10" $EVENTS $LEAK $EVAL $PAUSE >$t.out 2>$t.err
        [ $? -eq 1 ] || { cat $t.err; fail "$t: long_prog should end in an out-of-memory error (exit 1)"; }
        "$VT" report --json $t.vt >$t.json 2>$t.rerr || { cat $t.rerr; fail "report --json $t"; }
        lost=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['lost_events'])" $t.json)
        [ "$lost" = 0 ] && break
        echo "long_bounded: $t: the capture lost $lost events (a loaded machine): run again"
        [ $try = 2 ] && fail "$t: the capture lost $lost events twice"
    done
    "$VT" dump --no-resolve $t.vt >$t.jsonl || fail "dump $t"
done
size=$(wc -c <bounded.vt)
[ "$size" -le $((8 << 20)) ] || fail "the bounded trace is $size bytes, over its 8 MiB"

python3 - "$ROOT/tests/python" <<'PYEOF' || exit 1
import json, sys
sys.path.insert(0, sys.argv[1])
import replay_dump
table = replay_dump.api_table()
truth = json.loads(open("plain.out").read())
bad = []
# Read event by event, kept as small tuples (6M events as dicts would take gigabytes): the
# bounded trace whole (its beginning, snapshot and window), the plain one streamed against it.
SEGS = {"torchSegmentAlloc": "SEG", "torchSegmentFree": "SEG", "torchSegmentMap": "MAP",
        "torchSegmentUnmap": "MAP"}
def key(o):  # an event as both traces record it (a context's handle is a host pointer: ASLR)
    addr = o["addr"] if o["api"] != "cuDevicePrimaryCtxRetain" else "ctx"
    return (o["type"], o["api"], addr, o.get("size"), o["stack_id"], o["thread"], o["failed"])
class Live:  # an independent pairing by (space, addr): the format's rule
    def __init__(self):
        self.live = {}
    def add(self, k):
        typ, api, addr, size, failed = k[0], k[1], k[2], k[3], k[6]
        if failed:
            return
        kind, space = table[api]
        seg = SEGS.get(api)
        if typ == "free" or api in ("torchSegmentFree", "torchSegmentUnmap"):
            self.live.pop((seg or space, addr), None)
        elif seg or (space != "NONE" and kind not in ("RETAIN", "INFO", "TRIM", "OTHER") and addr != "0x0"):
            self.live[(seg or space, addr)] = k
def lines(name):
    for line in open(name + ".jsonl"):
        yield json.loads(line)
bounded, snap, steps, n_snap = [], None, [], 0
for o in lines("bounded"):
    if o["type"] == "snapshot":
        snap, n_snap = o, o["n_allocs"]
        snap["start"] = len(bounded)
    elif o["type"] in ("alloc", "free"):
        bounded.append(key(o))
        n_snap -= 1 if n_snap else 0
        if snap is not None and n_snap == 0 and "end" not in snap:
            snap["end"] = len(bounded)
    elif o["type"] == "step":
        steps.append(o["step"])
if snap is None:
    sys.exit("no snapshot in the bounded trace: its window never rolled")
snap.setdefault("end", snap["start"])
# every step of the run summarized, in order
if steps != list(range(1, len(steps) + 1)) or len(steps) < truth["steps"]:
    bad.append("steps summarized: %d (1..N: %s), the run made %d" % (len(steps), steps[:3], truth["steps"]))
cut, nhead, end = snap["events_before"], snap["start"], snap["end"]
plain_live, head_same, window_same, probe_freed, n_plain, want = Live(), True, True, False, 0, None
for o in lines("plain"):
    if o["type"] not in ("alloc", "free"):
        continue
    k, i = key(o), n_plain
    n_plain += 1
    if i == cut:
        want = dict(plain_live.live)
    if i < nhead:  # the beginning: kept in full
        head_same = head_same and i < len(bounded) and bounded[i] == k
    elif i < cut:
        probe_freed = probe_freed or o["api"] == "cudaFree"
    else:  # the window: the plain trace's last events, exactly
        j = end + i - cut
        window_same = window_same and j < len(bounded) and bounded[j] == k
    if i < cut:
        plain_live.add(k)
if want is None:
    want = dict(plain_live.live)
if not head_same:
    bad.append("the first %d events are not the run's first events" % nhead)
if not window_same or len(bounded) - end != n_plain - cut:
    bad.append("the events after the snapshot are not the plain trace's events %d.." % cut)
if n_plain - cut < 100000:
    bad.append("the window kept only %d events" % (n_plain - cut))
dropped = cut - nhead
if dropped < 2 * (n_plain - cut):
    bad.append("only %d events dropped for a window of %d: the window did not roll several times" % (dropped, n_plain - cut))
# the snapshot: after it, what was alive at the cut in the run, exactly
got_live = Live()
for k in bounded[:end]:
    got_live.add(k)
want_keys, got = sorted(want.values()), sorted(got_live.live.values())
if not probe_freed:
    bad.append("the probe (cudaMalloc'ed first, freed halfway) was not freed in the dropped part")
if want_keys != got:
    bad.append("after the snapshot %d allocations are alive, %d were in the run (first difference: %s)" % (
        len(got), len(want_keys), next((a, b) for a, b in zip(got + [None] * len(want_keys), want_keys + [None] * len(got)) if a != b)))
if snap["live_bytes"] != sum(k[3] for k in want.values()):
    bad.append("the snapshot's live_bytes %d, the run had %d alive" % (snap["live_bytes"], sum(k[3] for k in want.values())))
# the reports: the OOM at the end with its cause; the leak; the compressed one as the plain one
rp, rb, rc = (json.load(open(n + ".json")) for n in ("plain", "bounded", "compressed"))
for name, r in (("bounded", rb), ("compressed", rc)):
    if not r["oom"] or r["oom"].get("cause") != rp["oom"].get("cause"):
        bad.append("%s: OOM %s, the plain trace's %s" % (name, r["oom"] and r["oom"].get("cause"), rp["oom"].get("cause")))
    elif r["oom"]["live_by_category"] != rp["oom"]["live_by_category"] or r["oom"]["requested_bytes"] != rp["oom"]["requested_bytes"]:
        bad.append("%s: live at the OOM differs from the plain trace's" % name)
    g = r["growth"]
    if not g["growing"] or abs(g["bytes_per_step"] - truth["leak_bytes_per_step"]) > 0.05 * truth["leak_bytes_per_step"]:
        bad.append("%s: growth %s B/step, the program leaks %.1f" % (name, g["bytes_per_step"], truth["leak_bytes_per_step"]))
for k in ("peak", "categories", "events", "mode"):
    if k == "peak":  # the same bytes; when is each run's own
        rc[k].pop("time_ns"), rp[k].pop("time_ns")
    if rc[k] != rp[k]:
        bad.append("compressed: %s differs from the plain trace's: %s / %s" % (k, rc[k], rp[k]))
b = rb["bounded"]
if not b or b["dropped_events"] != dropped or b["run_events"] != n_plain:
    bad.append("bounded: says %s dropped of %s, the files say %d of %d" % (b and b["dropped_events"], b and b["run_events"], dropped, n_plain))
if rp["bounded"] is not None or rc["bounded"]["dropped_events"] != 0:
    bad.append("plain / compressed: bounded %s / %s" % (rp["bounded"], rc["bounded"]))
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("long_bounded: %d events, %d dropped, window %d exact, %d alive at the snapshot, %d steps" % (
    n_plain, dropped, n_plain - cut, len(got), len(steps)))
PYEOF
ps=$(wc -c <plain.vt) cs=$(wc -c <compressed.vt)
[ $((ps / cs)) -ge 3 ] || fail "compressed $cs bytes, plain $ps: less than 3 times smaller"
"$VT" report --no-color bounded.vt >bounded.txt 2>/dev/null || fail "report bounded"
grep -q "^  dropped  [0-9]* events of $(python3 -c 'import json;print(json.load(open("bounded.json"))["bounded"]["run_events"])')" bounded.txt ||
    fail "the text report does not say what was dropped"

# damaged chunks: exit 3 with the reason, never a crash (or a huge allocation)
python3 - <<'PYEOF' || exit 1
import struct
d = bytearray(open("bounded.vt", "rb").read())
S = struct.unpack_from("<Q", d, 48)[0]
def chunks(kind=None):
    for i in range(len(d) // S):
        off = 32 if i == 0 else i * S
        if struct.unpack_from("<H", d, off)[0] != 16:
            continue
        if kind is not None and struct.unpack_from("<I", d, off + 32)[0] != kind:
            continue
        p = off + 48
        while p + 64 <= (i + 1) * S:
            t, _, sz = struct.unpack_from("<HHI", d, p)
            if t != 17:
                break
            yield p
            p += sz
zstd = next(p for p in chunks() if struct.unpack_from("<I", d, p + 20)[0] == 1)
a = bytearray(d); a[zstd + 64 + 20:zstd + 64 + 60] = b"\xa5" * 40          # the frame's body
b = bytearray(d); struct.pack_into("<I", b, zstd + 24, 0x7fffffff)         # raw_len past any
c = bytearray(d); struct.pack_into("<Q", c, 48, 12345)                    # a slot size of nothing
e = bytearray(d); struct.pack_into("<I", e, zstd + 24, struct.unpack_from("<I", d, zstd + 24)[0] - 8)  # one record short
# the same in a SUMMARY slot's chunk (kind 3): never taken for a slot its writer reused (a
# summary slot is not reused), so malformed, not "still running"
zs = next(p for p in chunks(3) if struct.unpack_from("<I", d, p + 20)[0] == 1)
f = bytearray(d); struct.pack_into("<I", f, zs + 24, struct.unpack_from("<I", d, zs + 24)[0] - 8)
for name, x in (("frame", a), ("rawlen", b), ("grid", c), ("short", e), ("sumshort", f)):
    open("bad_%s.vt" % name, "wb").write(x)
PYEOF
for b in frame rawlen grid short sumshort; do
    "$VT" report bad_$b.vt >/dev/null 2>bad_$b.err
    rc=$?
    [ $rc -eq 3 ] || { cat bad_$b.err; fail "damaged chunk ($b): exit $rc, not 3"; }
    grep -q "malformed trace" bad_$b.err || { cat bad_$b.err; fail "damaged chunk ($b): no reason given"; }
done
# report on a bounded trace still being written: a slot the writer reuses while it is read ends
# the trace there, as a plain one still running ("truncated ... still running", exit 0); it had
# been "malformed trace ... a compressed chunk ... does not decompress to its size" (exit 3) in
# 4 of 10 reads (a damaged chunk in a slot no writer touched stays malformed: above)
rm -f live.vt*
LD_PRELOAD="$VT_PRELOAD" VRAMTRACE_OUTPUT=live.vt VRAMTRACE_MAX_SIZE=8388608 \
    "$BUILD/tests/prog/rt_cases" threads 1 3000000 >/dev/null 2>&1 &
W=$!
i=0 # (its header written: a loaded machine may take longer than the 0.5 s it had waited)
while [ ! -s live.vt ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    "$VT" report live.vt >/dev/null 2>live.err
    rc=$?
    [ $rc = 0 ] || { kill $W 2>/dev/null; cat live.err; fail "report of a live bounded trace: exit $rc"; }
    grep -q malformed live.err && { kill $W 2>/dev/null; cat live.err; fail "a live bounded trace called malformed"; }
done
wait $W
echo "long_bounded: plain $ps bytes, compressed $cs ($((ps / cs))x smaller), bounded $size"
