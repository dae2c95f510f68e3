#!/bin/sh
# flame_views.sh — `vramtrace flame` on real H100 traces: every line is `frames bytes` with
# the category as the innermost frame, the bytes at the peak sum to the report's process peak
# and per category to the report's breakdown, also on the 17 runs of programs we did not write,
# each stack rooted in the program's script; --at oom needs an OOM; bad options are exit 2.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "flame_views: $*"; exit 1; }
"$VT" flame "$D/hf_gpt2_eager_b4.vt" >f.txt 2>err.txt || fail "flame exit $?: $(cat err.txt)"
"$VT" report --json "$D/hf_gpt2_eager_b4.vt" >r.json || fail "report failed"
python3 - f.txt r.json <<'PY' || exit 1
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
rep = json.load(open(sys.argv[2]))
assert lines, "no folded stacks"
by_cat, total = {}, 0
for l in lines:
    m = re.fullmatch(r"(.+);\[([a-z_]+)\] ([0-9]+)", l)
    assert m, "not folded: %r" % l[:200]
    assert int(m.group(3)) > 0, "a zero-byte line"
    by_cat[m.group(2)] = by_cat.get(m.group(2), 0) + int(m.group(3))
    total += int(m.group(3))
assert total == rep["peak"]["process_bytes"], (total, rep["peak"])
for k, v in rep["categories"].items():
    assert by_cat.get(k, 0) == v, (k, by_cat.get(k, 0), v)
assert all(re.match(r"^\S*hf_train\.py:\d+ <module>$", l.split(";")[0]) for l in lines), "outermost frame is not the script's"
assert any("at::_ops::" in l for l in lines), "no named native frame"
PY
# the runs of programs we did not write (BERT, T5, ResNet, ViT, LoRA, Lightning, ...): the same
# sums, each stack rooted in the program's own script, not in an interpreter frame
for f in "$ROOT"/examples/traces/h100-torch2.11-beyond/*.vt; do
    t=$(basename "$f" .vt)
    "$VT" flame "$f" >"$t.f" 2>err.txt || fail "$t: flame exit $?: $(cat err.txt)"
    "$VT" report --json "$f" >"$t.r" || fail "$t: report failed"
    python3 - "$t.f" "$t.r" "$t" <<'PY' || exit 1
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
rep, t = json.load(open(sys.argv[2])), sys.argv[3]
script = rep["run"]["argv"][1].rsplit("/", 1)[-1]
by_cat, total = {}, 0
for l in lines:
    m = re.fullmatch(r"(.+);\[([a-z_]+)\] ([0-9]+)", l)
    assert m, "%s: not folded: %r" % (t, l[:200])
    by_cat[m.group(2)] = by_cat.get(m.group(2), 0) + int(m.group(3))
    total += int(m.group(3))
    root = l.split(";")[0]
    assert root.startswith("[") or re.search(re.escape(script) + r":\d+ <module>$", root), \
        "%s: a stack rooted in %r, not %s" % (t, root, script)
assert total == rep["peak"]["process_bytes"], (t, total, rep["peak"])
for k, v in rep["categories"].items():
    assert by_cat.get(k, 0) == v, (t, k, by_cat.get(k, 0), v)
PY
done
# an OOM run: the bytes at the OOM, the category breakdown the report gives for it
"$VT" flame --at oom "$D/hf_gpt2_eager_b16.vt" >o.txt 2>err.txt || fail "--at oom exit $?: $(cat err.txt)"
[ -s o.txt ] || fail "--at oom printed nothing"
"$VT" flame --at oom "$D/hf_gpt2_eager_b4.vt" >/dev/null 2>err.txt
[ $? = 2 ] || fail "--at oom on a run without OOM: expected exit 2"
grep -q 'did not run out of memory' err.txt || fail "no message: $(cat err.txt)"
# --at all: every allocation of the run; at least what was live at the peak, per category for
# the ones allocated once (parameters, optimizer state)
"$VT" flame --at all "$D/hf_gpt2_eager_b4.vt" >a.txt 2>err.txt || fail "--at all exit $?: $(cat err.txt)"
python3 - a.txt f.txt r.json <<'PY' || exit 1
import json, re, sys
def fold(path):
    by, n = {}, 0
    for l in open(path).read().splitlines():
        m = re.fullmatch(r"(.+);\[([a-z_]+)\] ([0-9]+)", l)
        assert m, "not folded: %r" % l[:200]
        by[m.group(2)] = by.get(m.group(2), 0) + int(m.group(3))
        n += 1
    return by, n
a, na = fold(sys.argv[1])
p, npk = fold(sys.argv[2])
rep = json.load(open(sys.argv[3]))
assert sum(a.values()) > rep["peak"]["allocated_bytes"], (sum(a.values()), rep["peak"])
for k in ("parameters", "optimizer", "gradients", "activations"):
    assert a.get(k, 0) >= p.get(k, 0) > 0, (k, a.get(k), p.get(k))
assert a["activations"] > 2 * p["activations"], "activations of 4 steps, not one"
PY
"$VT" flame --at nowhere "$D/hf_gpt2_eager_b4.vt" >/dev/null 2>&1
[ $? = 2 ] || fail "--at nowhere: expected exit 2"
"$VT" flame "$D/no_such.vt" >/dev/null 2>&1
[ $? = 2 ] || fail "missing file: expected exit 2"
"$VT" flame --help | grep -q 'usage: vramtrace flame' || fail "--help"
# hostile and fuzzed traces: every line is printable ASCII ending in " BYTES", never a crash
# (a malformed one, such as stack ids out of order, is exit 3 saying so)
for f in "$ROOT"/tests/data/*.vt; do
    timeout 60 "$VT" flame "$f" >h.txt 2>h.err
    rc=$?
    [ $rc = 0 ] || { [ $rc = 3 ] && grep -q 'malformed trace' h.err; } || fail "$f: exit $rc: $(head -c 300 h.err)"
    grep -vEq '^[ -~]+;\[[a-z_]+\] [0-9]+$' h.txt && fail "$f: a line not folded: $(grep -vE '^[ -~]+ [0-9]+$' h.txt | head -1)"
done
exit 0
