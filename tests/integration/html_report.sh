#!/bin/sh
# html_report.sh — `vramtrace export --html` / `report --html` without a browser: one
# self-contained page (no external script, style, image or link), the report's numbers in its
# tables, the drawing data as valid JSON whose series keep each category's peak exactly, and
# a trace whose command line is markup stays text (escaped), never markup.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "html_report: $*"; exit 1; }
"$VT" export --html p.html "$D/hf_gpt2_eager_b16.vt" 2>err.txt || fail "exit $?: $(cat err.txt)"
"$VT" report --json "$D/hf_gpt2_eager_b16.vt" >r.json || fail "report failed"
python3 - p.html r.json <<'PY' || exit 1
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2]))
assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
assert not re.search(r"<(script|img|iframe|link)[^>]*\s(src|href)=", page, re.I), "an external resource"
assert page.count("<script") == 2, "a script beyond the data block and the page's own"
m = re.search(r'<script type="application/json" id="vt-data">(.*?)</script>', page, re.S)
d = json.loads(m.group(1))
peaks = {k: v["bytes"] for k, v in rep["category_peaks"].items() if v["bytes"]}
assert set(peaks) == {k for k in d["v"] if k != "_"}, (sorted(peaks), sorted(d["v"]))
for k, v in peaks.items():
    assert max(d["v"][k]) == v, (k, max(d["v"][k]), v)
    assert len(d["v"][k]) == len(d["t"]) <= 2000
assert d["t"] == sorted(d["t"])
assert d["oom"] and d["oom"]["requested"] == rep["oom"]["requested_bytes"]
assert d["peak"]["bytes"] == rep["peak"]["process_bytes"]
nodes = d["flame"]["nodes"]
assert nodes[0][0] == -1 and all(0 <= n[0] < i for i, n in enumerate(nodes) if i), "not a tree in pre-order"
assert nodes[0][2] == rep["peak"]["process_bytes"], "the icicle's root is not the peak"
for i, n in enumerate(nodes):  # children never hold more than their parent
    if i:
        assert n[2] <= nodes[n[0]][2]
assert "out of memory" in page and 'id="breakdown"' in page and 'id="sites"' in page
for k, v in rep["categories"].items():
    if v:
        assert 'data-cat="%s"' % k in page, "breakdown row missing: " + k
PY
# a command line that is markup: the page shows it as text
python3 "$ROOT/tests/data/hostile.py" "$ROOT/tests/data/dump_small.vt" evil.vt argv --cwd "$TESTDIR" \
    python3 '</script><script>alert(1)</script>' '<img src=x onerror=alert(2)>' || fail "hostile.py"
"$VT" report --html e.html evil.vt >/dev/null 2>err.txt || fail "report --html exit $?: $(cat err.txt)"
[ "$(grep -c '<script' e.html)" = 2 ] || fail "the trace's text became a script"
grep -q '<img' e.html && fail "the trace's text became markup"
grep -q '&lt;/script&gt;&lt;script&gt;alert(1)' e.html || fail "the command line is not shown escaped"
# report --html writes the same page as export --html
"$VT" report --html r.html "$D/hf_gpt2_eager_b16.vt" >/dev/null 2>err.txt || fail "report --html exit $?"
cmp -s p.html r.html || fail "report --html and export --html differ"
# every hostile and fuzzed trace: a page or a clean error
for f in "$ROOT"/tests/data/*.vt; do
    timeout 60 "$VT" export --html h.html "$f" >/dev/null 2>&1
    rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || [ $rc = 2 ] || fail "$f: exit $rc"
    if [ $rc = 0 ]; then
        python3 -c 'import re,sys,json; p=open(sys.argv[1],encoding="utf-8").read(); json.loads(re.search(r"id=\"vt-data\">(.*?)</script>", p, re.S).group(1))' h.html ||
            fail "$f: the data block is not JSON"
    fi
done
# the page's growth heading says what the text's does (micro-steps, optimizer steps, time)
"$VT" report --no-color "$ROOT/examples/traces/h100-torch2.11-beyond/gpt2m_b1_a2_fit.vt" >g.txt || fail "report failed"
"$VT" report --html g.html "$ROOT/examples/traces/h100-torch2.11-beyond/gpt2m_b1_a2_fit.vt" >/dev/null || fail "report --html failed"
want=$(sed -n 's/^Growth across steps (\([^;]*\);.*/\1/p' g.txt)
case $want in *"(one step timed)"*) ;; *) fail "gpt2m_b1_a2_fit: its time per step, from one step, not said so: $want" ;; esac
[ -n "$want" ] && grep -qF "<p class=sub>$want;" g.html || { echo "text: $want"; grep -o '<p class=sub>[0-9]* step[^<]*' g.html; fail "the page's growth heading differs from the text's"; }
# every optimizer step the report counts is a tick on the page inside an optimizer slice: fused
# AdamW's later steps allocate nothing and show at zero_grad's frees (gpt2m_b1_a2_fit's second
# step was a tick in a 1.49 s "other" slice until 2026-11-30)
python3 - g.html "$VT" "$ROOT/examples/traces/h100-torch2.11-beyond/gpt2m_b1_a2_fit.vt" <<'PY' || fail "the page's optimizer slices disagree with the report's steps or its optimizer phase"
import json, re, subprocess, sys
page = open(sys.argv[1], encoding="utf-8").read()
d = json.loads(re.search(r'id="vt-data">(.*?)</script>', page, re.S).group(1))
rep = json.loads(subprocess.run([sys.argv[2], "report", "--json", sys.argv[3]], capture_output=True,
                                text=True).stdout)
opt = d["phaseNames"].index("optimizer")
spans = [(a, b) for a, b, ph, _ in d["slices"] if ph == opt]
assert len(d["ticks"]) == rep["iterations"] == 2, (d["ticks"], rep["iterations"])
for t in d["ticks"]:
    assert any(a <= t <= b for a, b in spans), (t, spans)
# the autograd engine's backward slices end with each backward: none spans a forward or a step
# of the main thread (one had spanned 1106-1601 ms, 3 forwards and a step, until 2026-11-30)
bwd, fwd = d["phaseNames"].index("backward"), d["phaseNames"].index("forward")
for a, b, ph, th in d["slices"]:
    if ph == bwd and th != 0:
        for c, e, ph2, th2 in d["slices"]:
            assert not (th2 == 0 and ph2 in (fwd, opt) and min(b, e) - max(a, c) > 0), \
                ("a backward slice over the main thread's", (a, b), (c, e, d["phaseNames"][ph2]))
# the report's optimizer phase peak is the process level its slices show at their largest (the
# page's instants inside them): a fused step's level counts (6.87 GiB said where the page showed
# 9.51 GiB at the second step, until 2026-11-30)
cats = [c["key"] for c in d["cats"]]
inside = [sum(d["v"][k][i] for k in cats if k in d["v"]) for i, t in enumerate(d["t"])
          if any(a <= t <= b for a, b in spans)]
assert inside and rep["phases"]["optimizer"] == max(inside), (rep["phases"]["optimizer"], max(inside))
PY
# the page names the moments the text report names: the formula at the tensors' peak, the modules
# at the allocated peak with its time, the reserved peak with its own time; a lower bound is "at
# least" in the card and in every predicted peak of the advice table, as in the text; the
# configuration's rows not shown are counted on the page as in the text (T5's 7 were not)
for t in bert_b32_oom resnet50_b320_oom t5small_b8_fit; do
    f="$ROOT/examples/traces/h100-torch2.11-beyond/$t.vt"
    "$VT" report --no-color "$f" >m.txt && "$VT" report --html m.html "$f" >/dev/null || fail "$t: report failed"
    python3 - "$t" m.txt m.html <<'PY' || fail "$t: the page names other moments than the text"
import re, sys
t, text, page = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3], encoding="utf-8").read()
m = re.search(r"^formula comparison at the (tensors' peak|peak) ", text, re.M)
if m:
    assert "Formula comparison at the %s</h2>" % m.group(1) in page.replace("&#39;", "'"), m.group(1)
w = re.search(r"live (at the (?:allocated|process) peak \([0-9.]+ s\))", text)
assert w and w.group(1) in page, w and w.group(1)
r = re.search(r"^  reserved \(allocator\) +([0-9.]+ [KMG]iB) +at +([0-9.]+) s", text, re.M)
assert "the reserved peak %s at %s s" % r.groups() in page, r.groups()
h = re.search(r"; ([0-9]+) more not shown here", text)
assert (h and "; %s more not shown here" % h.group(1) in page) or (not h and "more not shown" not in page), h and h.group(1)
if "so they are lower bounds" in text:
    assert "needs ~" not in page and "needs at least" in page
    adv = page[page.index("<section id=advice"):]
    cells = re.findall(r"</td><td class=n>([^<]*)</td><td class=barcell>", adv[:adv.index("</section>")])
    assert cells and all(c.startswith("at least ") for c in cells), cells
PY
done
# a process peak of mostly allocator cache: the page says what the text says of it, word for word
f="$ROOT/examples/traces/sim/resnet50_b128_fit.vt"
"$VT" report --no-color "$f" >c.txt && "$VT" report --html c.html "$f" >/dev/null || fail "resnet50 sim: report failed"
python3 - c.txt c.html <<'PY' || fail "the page's allocator-cache note is not the text's"
import html, re, sys
text, page = open(sys.argv[1]).read(), html.unescape(open(sys.argv[2], encoding="utf-8").read())
m = re.search(r"^  \(allocator cache: (.*)\)$", text, re.M)
assert m, "no note in the text"
assert "Allocator cache: " + m.group(1) + "." in page, m.group(1)
PY
exit 0
