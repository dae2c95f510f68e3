#!/bin/sh
# diff_views.sh — `vramtrace diff A B` on two real H100 runs (HF GPT-2 eager, batch 4 and 6):
# the JSON's peaks and categories are each run's report figures and their difference, the
# sites' changes sum to the process peak's change; a run against itself changes nothing.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
A="$D/hf_gpt2_eager_b4.vt" B="$D/s_hf_gpt2_eager_b6.vt"
fail() { echo "diff_views: $*"; exit 1; }
"$VT" diff --json --top 100000 "$A" "$B" >d.json 2>err.txt || fail "diff exit $?: $(cat err.txt)"
"$VT" report --json "$A" >a.json && "$VT" report --json "$B" >b.json || fail "report failed"
python3 - d.json a.json b.json <<'PY' || exit 1
import json, sys
d, a, b = (json.load(open(p)) for p in sys.argv[1:4])
for k in ("allocated_bytes", "reserved_bytes", "process_bytes"):
    p = d["peak"][k]
    assert (p["a"], p["b"]) == (a["peak"][k], b["peak"][k]), (k, p)
    assert p["change"] == p["b"] - p["a"]
for k in set(a["categories"]) | set(b["categories"]):
    x, y = a["categories"].get(k, 0), b["categories"].get(k, 0)
    if x or y:
        assert d["categories"][k] == {"a": x, "b": y, "change": y - x}, (k, d["categories"].get(k))
s = d["sites"]
assert sum(e["change"] for e in s) == d["peak"]["process_bytes"]["change"], "sites do not add up"
ch = [abs(e["change"]) for e in s]
assert ch == sorted(ch, reverse=True), "sites not by change"
assert any("hf_train.py" in e["site"] for e in s[:5]), [e["site"] for e in s[:5]]
PY
"$VT" diff --json "$A" "$A" >same.json || fail "diff A A failed"
python3 -c "
import json,sys; d=json.load(open('same.json'))
assert all(v['change']==0 for v in d['peak'].values()) and all(v['change']==0 for v in d['categories'].values())
assert all(e['change']==0 for e in d['sites'])" || fail "a run against itself changed"
"$VT" diff "$A" "$B" >d.txt || fail "text diff failed"
grep -q '^activations ' d.txt || fail "no category row: $(head -20 d.txt)"
grep -q 'sites that changed most' d.txt || fail "no sites in the text"
"$VT" diff "$A" >/dev/null 2>&1; [ $? = 2 ] || fail "one file: expected exit 2"
# a tensor-mode run against a segment-mode one: no 'allocated' for the segment side (the report
# says it is not visible there), and the two ways of sorting categories are named
T="$ROOT/examples/traces/a_tensors_eager.vt" S="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" diff --json "$T" "$S" >m.json && "$VT" diff "$T" "$S" >m.txt || fail "mixed diff failed"
python3 -c "
import json; d=json.load(open('m.json'))
assert d['peak']['allocated_bytes']['b'] is None and d['peak']['allocated_bytes']['change'] is None, d['peak']
assert d['peak']['allocated_bytes']['a'] > 0
assert d['category_basis'] == {'a': 'tensors', 'b': 'segments'}, d['category_basis']" || fail "mixed modes: $(cat m.json | head -c 300)"
grep -Eq '^allocated +[0-9.]+ +- +-$' m.txt || fail "mixed modes: the allocated row $(grep ^allocated m.txt)"
grep -q "B's segments under the phase that grew them" m.txt || fail "mixed modes: not said"
grep -q "category_basis" same.json || fail "no category_basis"
grep -q "ways of sorting" d.txt && fail "same modes said to differ"
"$VT" diff --top x "$A" "$B" >/dev/null 2>&1; [ $? = 2 ] || fail "--top x: expected exit 2"
"$VT" diff "$A" "$D/no_such.vt" >/dev/null 2>&1; [ $? = 2 ] || fail "missing file: expected exit 2"
exit 0
