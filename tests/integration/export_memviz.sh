#!/bin/sh
# export_memviz.sh — `vramtrace export --memory-viz`: the pickle loads with Python's pickle;
# segments and blocks as torch.cuda.memory._snapshot() gives them (blocks tile each segment
# exactly, allocated_size = the active blocks; segments by device and address), the state after
# the trace's last action; device_traces replay like _memory_viz's trace
# view (a free matches its allocation's size, no address allocated twice); the real
# tensor+segment trace gives PyTorch's segments with tensors inside, a segment-only trace
# segments of one block each, a tensor-mode trace (cudaMallocAsync) a segment for each tensor.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "export_memviz: $*"; exit 1; }
"$VT" export --memory-viz t.pickle "$D/hf_gpt2_eager_b4.vt" 2>err.txt || fail "exit $?: $(cat err.txt)"
"$VT" export --memory-viz s.pickle "$ROOT/tests/data/report_truncated.vt" 2>err.txt || fail "segment-only: exit $?: $(cat err.txt)"
python3 - t.pickle s.pickle <<'PY' || exit 1
import pickle, sys

def check(path):
    snap = pickle.load(open(path, "rb"))
    assert set(snap) >= {"segments", "device_traces"}, snap.keys()
    for s in snap["segments"]:
        for k in ("device", "address", "total_size", "allocated_size", "stream", "segment_type", "blocks", "frames"):
            assert k in s, (k, s.keys())
        at = s["address"]
        for b in s["blocks"]:
            assert b["address"] == at, "blocks do not tile the segment"
            assert b["state"] in ("active_allocated", "inactive") and b["size"] > 0
            assert b["requested_size"] <= b["size"]
            for f in b["frames"]:
                assert isinstance(f["filename"], str) and isinstance(f["line"], int) and isinstance(f["name"], str)
            at += b["size"]
        assert at == s["address"] + s["total_size"], "blocks do not add up to total_size"
        assert s["allocated_size"] == sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated")
    # as PyTorch's snapshot lists them: each device's segments by address, the devices in order
    # (plain cudaMalloc blocks had come first, in the order they were made)
    order = [(s["device"], s["address"]) for s in snap["segments"]]
    assert order == sorted(order), "segments not by device and address"
    # _memory_viz's segsum: allocated + internal + external free == reserved, per segment and in all
    reserved = allocated = internal = external = 0
    for s in snap["segments"]:
        a = sum(b["requested_size"] for b in s["blocks"] if b["state"] == "active_allocated")
        i = sum(b["size"] - b["requested_size"] for b in s["blocks"] if b["state"] == "active_allocated")
        x = sum(b["size"] for b in s["blocks"] if b["state"] != "active_allocated")
        assert a + i + x == s["total_size"]
        reserved += s["total_size"]; allocated += a; internal += i; external += x
    assert allocated + internal + external == reserved
    live = {}
    for dev in snap["device_traces"]:
        for e in dev:
            assert e["action"] in ("alloc", "free_completed", "segment_alloc", "segment_free", "oom"), e["action"]
            assert isinstance(e["frames"], list) and e["time_us"] >= 0 and e["size"] >= 0
            assert e["action"] != "oom" or isinstance(e["device_free"], int), "oom without device_free"
            if e["action"] == "alloc":
                assert e["addr"] not in live, "allocated twice: %x" % e["addr"]
                live[e["addr"]] = e["size"]
            elif e["action"] == "free_completed" and e["addr"] in live:
                assert live.pop(e["addr"]) == e["size"], "a free's size differs from its allocation's"
    return snap

t = check(sys.argv[1])
torch_segs = [s for s in t["segments"] if len(s["blocks"]) > 1]
assert torch_segs, "no segment holds several tensors"
assert any(b["state"] == "inactive" for s in torch_segs for b in s["blocks"]), "no cached (inactive) block"
frames = [f for s in torch_segs for b in s["blocks"] for f in b["frames"]]
assert any(f["filename"].endswith("hf_train.py") and f["line"] > 0 for f in frames), "no Python frame of the script"
assert any(f["name"].startswith("at::_ops::") for f in frames), "no named native frame"
acts = [e["action"] for e in t["device_traces"][0]]
assert acts.count("alloc") > 1000 and acts.count("free_completed") > 1000, "no device trace"
s = check(sys.argv[2])
assert s["segments"] and all(len(x["blocks"]) == 1 for x in s["segments"]), "segment-only: one block per segment"
PY
# a segment-only trace's segments are PyTorch's too: a library's own cudaMalloc (cuBLAS's and
# cuDNN's handles, the report's external row) is none of them, so what is live at the end never
# passes the report's reserved peak (until 2026-12-06 they were in: the three committed
# segment-only traces' segments summed to the reserved peak plus 134.5 / 67.3 / 134.5 MB)
for n in a_native_compile b_oom_12gib b_recommended_12gib; do
    "$VT" export --memory-viz "so_$n.pickle" "$ROOT/examples/traces/$n.vt" >/dev/null || fail "$n: exit $?"
    "$VT" report --json "$ROOT/examples/traces/$n.vt" >"so_$n.json" || fail "$n: report"
    python3 - "so_$n.pickle" "so_$n.json" <<'PY' || fail "$n: see above"
import json, pickle, sys
snap, r = pickle.load(open(sys.argv[1], "rb")), json.load(open(sys.argv[2]))
assert r["mode"] == "segment", r["mode"]
assert r["categories"]["external"] > 0, "no external bytes to leave out"
total = sum(s["total_size"] for s in snap["segments"])
assert total <= r["peak"]["reserved_bytes"], "segments %d past the reserved peak %d (external %d)" % (
    total, r["peak"]["reserved_bytes"], r["categories"]["external"])
PY
done
# the snapshot is the state after device_traces' last action, as PyTorch's is: the allocations
# live after replaying the trace are its active blocks, and no active block is one the trace
# freed (memory_viz counts such a block as made before the trace, and again when the trace makes
# it: the peak's live set had put its timeline at 1.9-2.0x the allocated peak); with the whole
# run in the trace (b_oom_12gib: 1,962 actions), its timeline's highest is the report's allocated
# peak and its segments' the reserved peak
"$VT" export --memory-viz e.pickle "$D/b_oom_12gib.vt" >/dev/null || fail "b_oom exit $?"
"$VT" report --json "$D/b_oom_12gib.vt" >e.json || fail "b_oom report"
python3 - t.pickle e.pickle e.json <<'PY' || exit 1
import json, pickle, sys

def end_state(path):
    snap = pickle.load(open(path, "rb"))
    active = {b["address"]: b["size"] for s in snap["segments"] for b in s["blocks"]
              if b["state"] == "active_allocated"}
    live, made, acts = {}, set(), [e for d in snap["device_traces"] for e in d]
    for e in acts:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            made.add(e["addr"])
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    assert all(active.get(a) == n for a, n in live.items()), "live after the trace, not in the snapshot"
    twice = [a for a in active if a in made and a not in live]
    assert not twice, "%d blocks the trace freed are active in the snapshot" % len(twice)
    return active, made, acts

end_state(sys.argv[1])
# each segment the trace made is as large as it made it, and no two overlap (the end's live set
# unreduced had put a 32 MiB segment's tensor on top of its full size: 64 MiB, overlapping)
snap = pickle.load(open(sys.argv[1], "rb"))
made_seg = {e["addr"]: e["size"] for d in snap["device_traces"] for e in d if e["action"] == "segment_alloc"}
wrong = [s["address"] for s in snap["segments"] if s["address"] in made_seg and s["total_size"] != made_seg[s["address"]]]
assert not wrong, "%d segments not of the size the trace made them" % len(wrong)
spans = sorted((s["device"], s["address"], s["address"] + s["total_size"]) for s in snap["segments"])
assert all(a[0] != b[0] or b[1] >= a[2] for a, b in zip(spans, spans[1:])), "segments overlap"
active, made, acts = end_state(sys.argv[2])
before = sum(n for a, n in active.items() if a not in made)
cur = top = before
for e in acts:
    cur += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
    top = max(top, cur)
rep = json.load(open(sys.argv[3]))["peak"]
want = rep["allocated_bytes"]
# no block made before the trace: a library's own cudaMalloc (cuBLAS's, cuDNN's handles: the
# report's external row) is no PyTorch block, and its viewer had drawn 128.3 MiB of them live
# from the start, the timeline above the report's peak on 37 of 38 H100 traces
assert before == 0, "%d B of active blocks made before the trace" % before
assert top == want, "timeline's highest %d, the report's allocated peak %d" % (top, want)
snap = pickle.load(open(sys.argv[2], "rb"))  # ... and the segments' timeline its reserved peak
made_seg = {e["addr"] for e in acts if e["action"] == "segment_alloc"}
cur = seg_top = sum(s["total_size"] for s in snap["segments"] if s["address"] not in made_seg)
assert cur == 0, "%d B of segments made before the trace" % cur
for e in acts:
    cur += e["size"] if e["action"] == "segment_alloc" else -e["size"] if e["action"] == "segment_free" else 0
    seg_top = max(seg_top, cur)
assert seg_top == rep["reserved_bytes"], "segments' highest %d, the report's reserved %d" % (seg_top, rep["reserved_bytes"])
PY
# a tensor-mode trace (run --tensors: cudaMallocAsync, whose pool's segments no trace sees): each
# tensor a segment of its own in device_traces too (segment_alloc, alloc ... free_completed,
# segment_free: memory_viz's allocator-state view puts every block in a segment, walking back
# from the snapshot); its timeline's highest is the report's allocated peak (the actions had
# been PyTorch's tracker's alone: an empty trace, the timeline flat at 192 MiB beside 5.83 GiB;
# then, 20,000 actions kept, the last 0.9 s of the run, after its peak)
A="$ROOT/examples/traces/a_tensors_eager.vt"
"$VT" export --memory-viz a.pickle "$A" >/dev/null || fail "tensor mode: exit $?"
"$VT" report --json "$A" >a.json || fail "tensor-mode report"
python3 - a.pickle a.json e.pickle <<'PY' || exit 1
import bisect, json, pickle, sys

def state_view(snap):
    """memory_viz's allocator-state view, walked back from the snapshot over every action: each
    block lies inside a segment, and no segment goes while a block is inside it"""
    for dev in range(len(snap["device_traces"])):
        segs = {s["address"]: s["total_size"] for s in snap["segments"] if s["device"] == dev}
        blocks = {b["address"]: b["size"] for s in snap["segments"] if s["device"] == dev
                  for b in s["blocks"] if b["state"] == "active_allocated"}
        def inside(a):
            starts = sorted(segs)
            i = bisect.bisect_right(starts, a) - 1
            return i >= 0 and a < starts[i] + segs[starts[i]]
        for e in reversed(snap["device_traces"][dev]):
            if e["action"] == "free_completed":
                assert inside(e["addr"]), "a block in no segment: %x" % e["addr"]
                blocks[e["addr"]] = e["size"]
            elif e["action"] == "alloc":
                blocks.pop(e["addr"], None)
            elif e["action"] == "segment_free":
                segs[e["addr"]] = e["size"]
            elif e["action"] == "segment_alloc":
                end = e["addr"] + segs.pop(e["addr"])
                assert not [b for b in blocks if e["addr"] <= b < end], "a segment goes with a block in it"

snap = pickle.load(open(sys.argv[1], "rb"))
acts = [e for d in snap["device_traces"] for e in d]
n = {k: sum(1 for e in acts if e["action"] == k) for k in ("alloc", "free_completed", "segment_alloc", "segment_free")}
assert n["alloc"] > 10000 and n["alloc"] == n["segment_alloc"] and n["free_completed"] == n["segment_free"], n
assert len([d for d in snap["device_traces"] if d]) == 1, "the frees on another device than their allocations"
active = {b["address"]: b["size"] for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated"}
made, live, cur = {e["addr"] for e in acts if e["action"] == "alloc"}, {}, 0
before = top = cur = sum(n for a, n in active.items() if a not in made)
for e in acts:
    if e["action"] == "alloc":
        assert e["addr"] not in live, "allocated twice: %x" % e["addr"]
        live[e["addr"]] = e["size"]
        cur += e["size"]
    elif e["action"] == "free_completed" and e["addr"] in live:
        cur -= live.pop(e["addr"])
    top = max(top, cur)
assert all(active.get(a) == n for a, n in live.items()), "live after the trace, not in the snapshot"
want = json.load(open(sys.argv[2]))["peak"]["allocated_bytes"]
assert top - before == want, "tensor mode: the timeline's highest %d above the blocks before, the report's %d" % (top - before, want)
state_view(snap)
state_view(pickle.load(open(sys.argv[3], "rb")))  # (PyTorch's tracker: its own segments)
PY
# a tensor-mode OOM (a failed cudaMallocAsync): an oom action of the request, the card less what
# the process held as the device's free bytes (PyTorch's tracker's OOM had been the only one)
"$BUILD/tests/prog/vtgen" -o to.vt --tensor --oom --card 12884901888 --no-extras --events 200 --live 20 >/dev/null ||
    fail "vtgen --tensor --oom"
"$VT" export --memory-viz to.pickle to.vt >/dev/null || fail "tensor-mode OOM: exit $?"
"$VT" report --json to.vt >to.json || fail "tensor-mode OOM report"
python3 - to.pickle to.json <<'PY' || fail "tensor-mode OOM"
import json, pickle, sys
ooms = [e for t in pickle.load(open(sys.argv[1], "rb"))["device_traces"] for e in t if e["action"] == "oom"]
r = json.load(open(sys.argv[2]))
assert len(ooms) == 1 and ooms[0]["size"] == r["oom"]["requested_bytes"], ooms
held = sum(r["oom"]["live_by_category"].values())  # (what the process held at the OOM)
assert ooms[0]["device_free"] == r["oom"]["capacity_bytes"] - held, (ooms[0]["device_free"], held)
PY
# the OOM run: an oom action in the device trace
"$VT" export --memory-viz o.pickle "$D/hf_gpt2_eager_b16.vt" || fail "b16 exit $?"
python3 -c 'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); assert any(e["action"]=="oom" for t in d["device_traces"] for e in t), "no oom action"' o.pickle || fail "no oom in the device trace"
for f in "$ROOT"/tests/data/*.vt; do
    timeout 60 "$VT" export --memory-viz h.pickle "$f" >/dev/null 2>&1
    rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || [ $rc = 2 ] || fail "$f: exit $rc"
    [ $rc = 0 ] && { python3 -c 'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' h.pickle || fail "$f: not a pickle"; }
done
exit 0
