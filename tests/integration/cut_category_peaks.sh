#!/bin/sh
# cut_category_peaks.sh — a run killed before its exit (every committed trace cut at 70, 85 and
# 95 % of its bytes, as SIGKILL leaves one) keeps the report's invariant: each category's largest
# live bytes over the run are at least what the breakdown at the process peak holds of it. An
# optimizer step's tensor alive at the end had counted nowhere in the largest over the run while
# the peak's breakdown counted it (220 of 417 cuts: s_nano_eager_b8 at 85 %, 948.9 MiB of AdamW
# state at the peak, none over the run, the bytes drawn as allocator cache in Perfetto).
# flame --at all of the 85 % cuts holds exactly the allocations the cut run made: its optimizer
# state alive at the end had been left out (82 cuts); a segment the cut took before the
# tracker's SEGMENT_ALLOC had counted as a tensor, 16 MiB to 786 MiB more than made (3 cuts of
# runs out of memory in their first forward: s_hf_gpt2_eager_b12, gpt2m_fp32_b4_oom_forward,
# trainer_gpt2m_oom_forward).
# A run cut before its first tensor, after a segment PyTorch's tracker named (llama160m_b4_fit at
# 5 %: 4 events) is in allocator mode: its breakdown at the peak holds in tensor categories only
# the tensors live then (none: the segment is the allocator's cache, as flame leaves it out); it
# had been read as segment mode, the segment 94 MiB of parameters (5 of the 2,698 cuts of the
# committed traces at 5 to 95 %).
# A trace the capture stopped on a full disk (tests/data/disk_full_segment.vt: sim_hf.py, GPT-2
# medium, `ulimit -f 72`) ends on a cudaMalloc its SEGMENT_ALLOC never followed, as a cut does:
# flame --at all had counted it as a tensor, 2 MiB more than made.
# runs: early (about 418 reports)
set -u
fail() { echo "cut_category_peaks: $*"; exit 1; }
python3 - "$VT" "$ROOT" <<'PY' || fail "see above"
import glob, json, os, subprocess, sys
vt, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "tests/python"))
import replay_dump
table = replay_dump.api_table()
TOOLS = ("allocator_cache", "cuda_context", "kernel_code", "external", "unknown")
checked, bad = 0, []
def cuts():
    """(name, percent, bytes): each committed trace at 70, 85, 95 % (llama160m_b4_fit at 5 % too),
    then a trace the capture stopped early on a full disk, whole (100)"""
    for f in sorted(glob.glob(os.path.join(root, "examples/traces/**/*.vt"), recursive=True)):
        data, n = open(f, "rb").read(), os.path.basename(f)
        for p in (70, 85, 95) + ((5,) if n == "llama160m_b4_fit.vt" else ()):
            yield n, p, data[:len(data) * p // 100]
    f = os.path.join(root, "tests/data/disk_full_segment.vt")
    yield os.path.basename(f), 100, open(f, "rb").read()
for name, p, data in cuts():
    with open("cut.vt", "wb") as o:
        o.write(data)
    r = subprocess.run([vt, "report", "--json", "cut.vt"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        bad.append(f"{name} at {p} %: exit {r.returncode}: {r.stderr[-200:]}")
        continue
    d = json.loads(r.stdout)
    cp = d.get("category_peaks") or {}
    checked += bool(cp)
    for k, v in d["categories"].items() if cp else ():
        if k not in TOOLS and v > cp[k]["bytes"]:
            bad.append(f"{name} at {p} %: {k} {v} B at the peak, {cp[k]['bytes']} over the run")
    if p not in (85, 5, 100):
        continue
    # flame --at all holds every allocation of the cut run, each once, PyTorch's segments
    # not among them (its optimizer state alive at the end had been left out of flame's
    # totals, as of the largest over the run; its last segment, named by no SEGMENT_ALLOC
    # before the cut, counted as a tensor)
    dump = subprocess.run([vt, "dump", "--no-resolve", "cut.vt"], capture_output=True, text=True).stdout.splitlines()
    ind = replay_dump.replay(dump)
    allocs = [json.loads(l) for l in dump if '"type":"alloc"' in l]
    # PyTorch's segments: those of a run with tensors, or whose tracker named one
    tracked = any(o["api"] in ("torchSegmentAlloc", "torchSegmentMap") for o in allocs)
    made = 0
    for o in allocs:
        if o["failed"] or o["api"] not in table or o["addr"] in ("0x0", 0):
            continue
        lv = replay_dump.level(o["api"], *table[o["api"]])
        if lv is not None and not (lv == "segment" and (ind["allocated_bytes"] or tracked)):
            made += o["size"]
    held = sum(v for k, v in d["categories"].items() if k not in TOOLS)
    if tracked and held != ind["process_tensors"]:
        bad.append(f"{name} at {p} % ({d['mode']}): tensor categories {held} B "
                   f"at the peak, its tensors {ind['process_tensors']}")
    fl = subprocess.run([vt, "flame", "--at", "all", "cut.vt"], capture_output=True, text=True).stdout
    tot = sum(int(l.rpartition(" ")[2]) for l in fl.splitlines())
    if tot != made:
        bad.append(f"{name} at {p} %: flame --at all holds {tot} B, the run's allocations {made}")
assert checked >= 300, f"only {checked} cuts with category peaks"
assert not bad, "\n".join(bad[:10]) + f"\n({len(bad)} in all)"
PY
exit 0
