#!/bin/sh
# flame_spine.sh — stacks people read, on all 24 committed traces: in `flame` (at the peak and
# over the run), the HTML icicle and the memory_viz export the Python stack is the spine (the
# script's <module> first, every Python frame before any native one), no root and no frame is
# CPython's own (_PyEval_EvalFrameDefault, python3+0x...), native frames come below the
# innermost Python frame, a run of unnamed frames of one module is one box, and flame says on
# stderr why frames stay module+0xoffset (their files are not on this machine).
set -u
fail() { echo "flame_spine: $*"; exit 1; }
n=0
for f in "$ROOT"/examples/traces/*.vt "$ROOT"/examples/traces/h100-torch2.11/*.vt; do
    t=$(basename "$f" .vt)
    "$VT" flame "$f" >"$t.peak" 2>"$t.err" || fail "$t: flame exit $?"
    "$VT" flame --at all "$f" >"$t.all" 2>/dev/null || fail "$t: flame --at all exit $?"
    "$VT" export --html "$t.html" --memory-viz "$t.pickle" "$f" >/dev/null 2>&1 || fail "$t: export exit $?"
    "$VT" dump "$f" | head -n 2 >"$t.head" || fail "$t: dump"
    python3 - "$t" "$t.peak" "$t.all" "$t.html" "$t.pickle" "$t.head" "$t.err" <<'PY' || exit 1
import json, pickle, re, sys
name, peak, allr, page, pick, head, err = sys.argv[1:]
proc = [json.loads(l) for l in open(head)][1]
assert proc["type"] == "process", proc
script = [a for a in proc["argv"] if a.endswith(".py")][0].rsplit("/", 1)[-1]
py = re.compile(r"^\S+:(\d+|\?) \S")  # "file:line function"
interp = re.compile(r"^(_?Py[A-Z_]|python3?[.0-9]*\+0x|libpython|\[CPython\])")
def spine(frames, where):
    """the frames of one stack, outermost first: the Python spine, then no Python frame"""
    pys = [i for i, x in enumerate(frames) if py.match(x)]
    for x in frames:
        assert not interp.match(x), "%s: %s: an interpreter frame %r in %s" % (name, where, x, frames[:3])
    if not pys:
        return
    assert pys == list(range(len(pys))), "%s: %s: a native frame above a Python frame: %s" % (name, where, frames[:pys[-1] + 1])
    root = frames[0]
    assert re.match(r"^\S*%s:\d+ <module>$" % re.escape(script), root), "%s: %s: root %r is not %s's <module>" % (name, where, root, script)
for path in (peak, allr):
    for line in open(path).read().splitlines():
        stack, _, size = line.rpartition(" ")
        frames = stack.split(";")
        assert frames[-1].startswith("[") and int(size) > 0, line[:200]
        spine(frames[:-1], path)
        for a, b in zip(frames, frames[1:]):  # unnamed frames of one module: one box
            ma, mb = re.match(r"^(\S+)(\+0x| \()", a), re.match(r"^(\S+)(\+0x| \()", b)
            assert not (ma and mb and ma.group(1) == mb.group(1)), "%s: two unnamed boxes of %s in a row" % (name, ma.group(1))
# the HTML icicle: the same stacks as a tree; the root's children are the script's <module>
s = open(page, encoding="utf-8").read()
d = json.loads(re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', s, re.S).group(1))
nodes, names = d["flame"]["nodes"], d["flame"]["names"]
tops = {names[nd[1]] for nd in nodes if nd[0] == 0}
assert tops and all(re.match(r"^\S*%s:\d+ <module>$" % re.escape(script), x) for x in tops), (name, tops)
for nd in nodes[1:]:
    assert not interp.match(names[nd[1]]), (name, "icicle", names[nd[1]])
# memory_viz: frames innermost first, so reversed they follow the same spine
snap = pickle.load(open(pick, "rb"))
blocks = [b for sg in snap["segments"] for b in sg["blocks"] if b["frames"]]
assert blocks, name + ": no frames in the memory_viz export"
for b in blocks:
    fr = b["frames"][::-1]
    assert not any(x["name"].startswith("_PyEval") or re.match(r"^python3?[.0-9]*\+0x", x["name"]) for x in fr), (name, "memory_viz", [x["name"] for x in fr][:5])
    if any(x["filename"].endswith(".py") for x in fr):
        assert fr[0]["filename"].endswith(script) and fr[0]["name"] == "<module>", (name, "memory_viz root", fr[0])
# said, not invented: why frames stay module+0xoffset
if any("+0x" in l or "unnamed frames" in l for l in open(peak)):
    e = open(err).read()
    assert "not on this machine" in e or "no build-id" in e, (name, "no note on the unnamed frames", e[:300])
PY
    n=$((n + 1))
done
[ "$n" = 24 ] || fail "expected the 24 committed traces, found $n"
exit 0
