#!/bin/sh
# pylines_dump.sh — line numbers end to end, independent of the preload: for every CPython
# 3.10-3.13 installed, a Python script captures real frames (sys._getframe: code object,
# f_lasti byte offset, f_lineno) from nested functions, a method, a lambda, a generator, a
# comprehension and a long function, writes them as a trace (PYINFO, CODE with the real
# co_linetable, STACK, ALLOC), and `vramtrace dump` must name the same file:line function
# for every frame, innermost first.
set -u
. "$ROOT/tests/python/pythons.sh"
list=$(vt_pythons)
[ -n "$list" ] || { echo "no CPython 3.10-3.13 under \$(pyenv root)/versions"; exit 77; }
cat >capture.py <<'PY'
import json, struct, sys
out, exp_path = sys.argv[1], sys.argv[2]

def grab():
    f, frames = sys._getframe(1), []
    while f is not None:
        frames.append((f.f_code, f.f_lasti, f.f_lineno))
        f = f.f_back
    return frames

def leaf(x):
    y = x + 1
    return grab()

def middle(a,
           b):
    if a:
        r = leaf(
            b)
    else:
        r = None
    return r

class Model:
    def forward(self, x):
        try:
            return middle(x, 2)
        finally:
            pass

def gen():
    for i in range(2):
        yield (lambda q: leaf(q))(i)

def far():
    a = 1
PY
# a long function: line deltas above 127 and long-form location entries
python3 -c 'print("    b = 2\n" + "\n" * 300 + "    return grab()\n")' >>capture.py
cat >>capture.py <<'PY'
stacks = [leaf(1), Model().forward(1), next(gen()), [grab() for _ in range(1)][0], far()]

codes, recs = {}, []
def rec(t, payload):
    payload += b"\0" * (-len(payload) % 8)
    recs.append(struct.pack("<HHI", t, 0, 8 + len(payload)) + payload)
def s(b):
    return struct.pack("<I", len(b)) + b
v = sys.version_info
rec(13, struct.pack("<IIII", v[0], v[1], v[2], 1))
expected = []
for sid, st in enumerate(stacks, 1):
    frames = []
    for code, lasti, line in st:
        if code not in codes:
            codes[code] = cid = len(codes) + 1
            name = getattr(code, "co_qualname", code.co_name)
            rec(8, struct.pack("<II", cid, code.co_firstlineno) + s(code.co_filename.encode())
                + s(name.encode()) + s(code.co_linetable))
        frames.append(codes[code] << 32 | lasti)
    rec(7, struct.pack("<IHH", sid, 0, len(frames)) + struct.pack("<%dQ" % len(frames), *frames))
    rec(5, struct.pack("<QQQIHh", 1000 * sid, 0x1000 * sid, 512 * sid, sid, 0, 0))
    expected.append([[c.co_filename, getattr(c, "co_qualname", c.co_name), l] for c, _, l in st])
rec(14, struct.pack("<QQQQII", 0, len(stacks), 0, len(recs), 0, 0))
with open(out, "wb") as f:
    f.write(b"VRAMTRC\n" + struct.pack("<HHIQQ", 1, 0, 32, 0, 0) + b"".join(recs))
json.dump(expected, open(exp_path, "w"))
PY
echo "$list" | while read -r prefix mm; do
    "$prefix/bin/python$mm" capture.py "t$mm.vt" "exp$mm.json" || { echo "FAIL: capture.py on $mm"; exit 1; }
    "$VT" dump "t$mm.vt" >"d$mm.jsonl" || { echo "FAIL: dump of the $mm trace"; exit 1; }
    PYTHONPATH="$ROOT/tests/python" python3 - "exp$mm.json" "d$mm.jsonl" "$mm" <<'PY' || exit 1
import json, sys
import vtdump
exp = json.load(open(sys.argv[1]))
recs, stacks = vtdump.load(sys.argv[2])
got = [[[f["file"], f["function"], f["line"]] for f in stacks[r["stack_id"]]]
       for r in recs if r["type"] == "alloc"]
assert len(got) == len(exp) == 5, (len(got), len(exp))
bad = [(i, e, g) for i, (e, g) in enumerate(zip(exp, got)) if e != g]
for i, e, g in bad:
    print("MISMATCH stack", i + 1, "\n  want", e, "\n  got ", g)
n = sum(len(e) for e in exp)
print(f"CPython {sys.argv[3]}: {n} frames, {len(bad)} stacks differ")
assert any(l > 300 for st in exp for _, _, l in st), "the long function was not captured"
sys.exit(1 if bad else 0)
PY
done
