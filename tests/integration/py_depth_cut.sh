#!/bin/sh
# py_depth_cut.sh — a Python stack deeper than the 128 frames a stack keeps (the innermost;
# docs/capture.md, "Stacks"): real CPython under `vramtrace run`, fake CUDA, allocates under recursions
# 200 and 126 deep and from three stacks of at most 128 frames. The deep stacks' STACK records say
# their outer frames were not recorded (dump: "python_cut": true), and `flame` (at the peak, over
# the run), the HTML icicle and the memory_viz export (as its last frame) root them at "[outer
# Python frames not recorded]", never at their outermost recorded frame as if that were the
# program's top (they had been rooted at a mid-recursion frame, "deep_cut.py:11 down", beside the
# complete stacks' "deep_cut.py:17 <module>"; the 129-frame one with its <module> alone left out).
# The others, one of exactly 128 frames among them, have neither: rooted at the script's <module>.
set -u
fail() { echo "py_depth_cut: $*"; exit 1; }
. "$ROOT/tests/python/pythons.sh"
list=$(vt_pythons)
[ -n "$list" ] || { echo "no CPython 3.10-3.13 under \$(pyenv root)/versions"; exit 77; }
cat >deep_cut.py <<'PY'
import ctypes, os, sys
rt = ctypes.CDLL(os.path.join(os.environ["FAKE"], "libcudart.so.13"))
keep = []
def alloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n) == 0
    keep.append(p)
def down(k, n):
    if k == 0:
        return alloc(n)
    return down(k - 1, n)
def shallow(n):
    return alloc(n)
sys.setrecursionlimit(1000)
shallow(1 << 20)     # 3 Python frames: complete
down(200, 4 << 20)   # 203 Python frames: the outer 75 are not kept
down(20, 2 << 20)    # 23: complete
down(125, 3 << 20)   # 128: all kept, complete
down(126, 5 << 20)   # 129: <module> is not kept
PY
echo "$list" | while read -r prefix mm; do
    py="$prefix/bin/python$mm"
    rm -f t.vt
    "$VT" run -o t.vt -- "$py" deep_cut.py >"run$mm.out" 2>&1 || { rc=$?; cat "run$mm.out"; fail "$mm: run exit $rc"; }
    [ -f t.vt ] || { cat "run$mm.out"; fail "$mm: no trace"; }
    "$VT" dump t.vt >"dump$mm.jsonl" || fail "$mm: dump exit $?"
    "$VT" flame t.vt >"peak$mm.txt" 2>/dev/null || fail "$mm: flame exit $?"
    "$VT" flame --at all t.vt >"all$mm.txt" 2>/dev/null || fail "$mm: flame --at all exit $?"
    "$VT" export --html "t$mm.html" --memory-viz "t$mm.pickle" t.vt >/dev/null 2>&1 ||
        fail "$mm: export exit $?"
    python3 - "$mm" "dump$mm.jsonl" "peak$mm.txt" "all$mm.txt" "t$mm.html" "t$mm.pickle" <<'PY' || exit 1
import json, pickle, re, sys
mm, dump, peak, allr, page, pick = sys.argv[1:]
MARK = "[outer Python frames not recorded]"
recs = [json.loads(l) for l in open(dump)]
stacks = {r["stack_id"]: r for r in recs if r["type"] == "stack"}
CUT = (4 << 20, 5 << 20)
allocs = [r for r in recs if r["type"] == "alloc" and r.get("size") in (1 << 20, 2 << 20, 3 << 20) + CUT]
assert len(allocs) == 5, (mm, "allocations", [(a.get("api"), a.get("size")) for a in allocs])
for a in allocs:
    s = stacks[a["stack_id"]]
    npy = len(s["python"])
    if a["size"] in CUT:
        assert npy == 128, (mm, "the deep stack keeps", npy, "Python frames")
        assert s.get("python_cut") is True, (mm, "deep stack: no python_cut", sorted(s))
    else:
        assert 0 < npy <= 128 and (npy == 128) == (a["size"] == 3 << 20), (mm, a["size"], npy)
        assert "python_cut" not in s, (mm, "a complete stack said cut", a["size"], npy)
def roots(path):
    out = {}
    for line in open(path).read().splitlines():
        stack, _, size = line.rpartition(" ")
        frames = stack.split(";")
        out.setdefault(frames[0], []).append((frames, int(size)))
    return out
for path in (peak, allr):
    r = roots(path)
    assert MARK in r, (mm, path, "no stack rooted at the marker", list(r))
    assert sum(s for _, s in r[MARK]) == sum(CUT), (mm, path, "under the marker", r[MARK])
    for frames, size in r[MARK]:
        assert re.match(r"^\S*deep_cut\.py:\d+ down$", frames[1]), (mm, path, frames[:3])
        assert not any("<module>" in f for f in frames), (mm, path, "a cut stack shows <module>")
    others = [k for k in r if k != MARK]
    assert others and all(re.match(r"^\S*deep_cut\.py:\d+ <module>$", k) for k in others), (mm, path, others)
    assert all(s not in CUT for k in others for _, s in r[k]), (mm, path, "a cut stack under <module>")
    assert any(s == 3 << 20 for k in others for _, s in r[k]), (mm, path, "the 128-frame stack")
    assert all(f != MARK for k in others for fr, _ in r[k] for f in fr), (mm, path, "a marker inside")
s = open(page, encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', s, re.S).group(1))
nodes, names = d["flame"]["nodes"], d["flame"]["names"]
tops = sorted(names[nd[1]] for nd in nodes if nd[0] == 0)
assert MARK in tops, (mm, "icicle roots", tops)
assert all(t == MARK or re.match(r"^\S*deep_cut\.py:\d+ <module>$", t) for t in tops), (mm, tops)
# memory_viz: frames innermost first; the last is where the stack begins
blocks = [b for sg in pickle.load(open(pick, "rb"))["segments"] for b in sg["blocks"] if b["frames"]]
ends = {b["size"]: b["frames"][-1]["name"] for b in blocks if b["size"] in (1 << 20, 2 << 20, 3 << 20) + CUT}
assert ends == {1 << 20: "<module>", 2 << 20: "<module>", 3 << 20: "<module>",
                4 << 20: MARK, 5 << 20: MARK}, (mm, "memory_viz", ends)
print("ok: CPython %s: the 203- and 129-frame stacks python_cut, rooted at the marker; 128 and fewer complete" % mm)
PY
done || exit 1
exit 0
