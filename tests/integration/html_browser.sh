#!/bin/sh
# html_browser.sh — the HTML report opened in a real headless Chromium: the page's script ran
# to its end with no error (none caught by the page, none on the console), the timeline drew
# every category that ever held bytes with round axis ticks, the legend names them, hovering
# shows an instant's bytes by category adding up to its total, the icicle draws every category
# over 1 % of the peak, and the report's sections are there with the
# report's own content (configuration with each value's source, what was trained, the OOM's
# cause, the advice rows, the formula or why none applies, the activations by module); a
# screenshot goes to $BUILD/html_report.png and is checked: not blank, the palette's colours
# drawn. Chromium is a test tool `make test` installs (scripts/install-deps.sh --test); when it
# is missing the test says why and is skipped (exit 77), never passed.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "html_browser: $*"; exit 1; }
CHROME=""
for c in chromium chromium-browser google-chrome; do
    command -v "$c" >/dev/null 2>&1 && { CHROME=$c; break; }
done
[ -n "$CHROME" ] || {
    echo "SKIP html_browser: no chromium (make test installs it: sh scripts/install-deps.sh --test)"
    exit 77
}
run_chrome() { # run_chrome URL ARGS...: headless, no sandbox (root in containers), own profile
    u=$1; shift
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$TESTDIR/profile" --window-size=1400,2200 --enable-logging=stderr --v=0 "$@" "$u"
}
console_ok() { # console_ok LOG: no error on the console
    ! { grep -E 'CONSOLE|Uncaught' "$1" | grep -qiE 'error|uncaught'; }
}
cat >check.py <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2]))
full = sys.argv[3]  # 1: a tensor-mode run, whose timeline and icicle are checked in full
assert re.search(r'<body[^>]*data-ready="1"', dom), "the page's script did not finish"
errs = re.search(r'<pre id="vt-errors">(.*?)</pre>', dom, re.S).group(1)
assert not errs.strip(), "errors in the page: " + errs[:300]
want = {k for k, v in (rep["category_peaks"] or {}).items() if v["bytes"]}
canvas = re.search(r'<canvas id="tl"[^>]*>', dom).group(0)
tl = set(re.search(r'data-drawn="([^"]*)"', canvas).group(1).split())
assert full == "0" or want and want <= tl, ("not drawn in the timeline", sorted(want - tl))
# round ticks: whole multiples of 1, 2, 4 or 5 x 10^k of one unit, starting at 0
yt = re.search(r'data-yticks="([^"]*)"', canvas).group(1).split("|")
vals = [re.fullmatch(r"(\d+) (B|KiB|MiB|GiB|TiB)", y) for y in yt]
assert len(yt) >= 3 and all(vals) and len({v.group(2) for v in vals}) == 1, ("y ticks", yt)
nums = [int(v.group(1)) for v in vals]
step = nums[1] - nums[0]
lead = int(str(step)[0]) if str(step).rstrip("0") == str(step)[0] else 0
assert nums[0] == 0 and lead in (1, 2, 4, 5), ("y tick step", yt)
assert all(b - a == step for a, b in zip(nums, nums[1:])), ("y ticks not evenly spaced", yt)
xt = re.search(r'data-xticks="([^"]*)"', canvas).group(1).split("|")
assert len(xt) >= 3 and all(re.fullmatch(r"\d+(\.\d+)? (ms|s)", x) for x in xt), ("x ticks", xt)
fl = set(re.search(r'<canvas id="flame"[^>]*data-drawn="([^"]*)"', dom).group(1).split())
total = sum(rep["categories"].values())
big = {k for k, v in rep["categories"].items() if v * 100 >= total}
assert full == "0" or big and big <= fl, ("not drawn in the icicle", sorted(big - fl))
legend = set(re.findall(r'<span data-cat="([a-z_]+)"', dom))
assert want <= legend, ("legend", sorted(want - legend))
def section(sid):
    m = re.search(r'<section id="%s">(.*?)</section>' % sid, dom, re.S)
    assert m, "no section " + sid
    return m.group(1)
def text(s):
    return html.unescape(re.sub(r"<[^>]+>", "", s))
# the configuration: every key the page lists has the report's value source and where
cfg = section("config")
rows = re.findall(r'<tr data-key="([a-z_]+)">(.*?)</tr>', cfg, re.S)
assert len(rows) >= 3, "configuration rows"
for key, row in rows:
    c = rep["config"][key]
    src = re.search(r'class="src src-([a-z]+)"', row).group(1)
    assert src == c["source"], (key, src, c["source"])
    assert c["where"] in text(row), (key, c["where"])
# what was trained: the family and each feature's evidence
tr = text(section("trained"))
r = rep["recognized"]
assert r["family_text"] in tr and r["optimizer"]["where"] in tr, "family / optimizer"
for f in ("activation_checkpointing", "torch_compile", "cuda_graphs", "lora"):
    assert r[f]["where"] in tr, (f, r[f]["where"])
# the advice: one row per item, the recommended one marked, the assumptions said
adv = section("advice")
items = re.findall(r"<tr class=\"(recommended)?\">(.*?)</tr>", adv, re.S)
assert len(items) == len(rep["advice"]), ("advice rows", len(items), len(rep["advice"]))
for (rec, row), a in zip(items, rep["advice"]):
    assert (rec == "recommended") == a["recommended"] and a["change"] in text(row), a["change"]
if rep["prediction"]["gradients_kept_assumed"]:
    assert "gradient accumulation is not known" in adv, "accumulation note"
if rep["prediction"]["optimizer_state_assumed_adamw"]:
    assert "assume AdamW" in adv, "AdamW note"
# the formula, or why none applies
fo = text(section("formula"))
if rep["formula_applies"]:
    assert 'id="formula-table"' in section("formula"), "formula table"
else:
    assert rep["formula_note"] in fo, "why no formula"
# the OOM's cause and evidence
if rep["oom"]:
    oom = text(section("oom"))
    assert rep["oom"]["cause_text"] in oom and rep["oom"]["evidence"] in oom, "OOM cause"
# where the activations come from: the report's modules, in order
mods = rep["activations_by_module"]["at_peak"]
if mods:
    got = re.findall(r'<td class="site">([^<]*)</td>', re.search(r'<table id="modules-peak".*?</table>', dom, re.S).group(0))
    assert [html.unescape(g) for g in got] == [m["module"] for m in mods[:12]], ("modules", got[:3])
PY
page() { # page NAME TRACE FULL: exported, opened, its script ran, its sections checked
    "$VT" export --html "$1.html" "$2" 2>/dev/null || fail "$1: export exit $?"
    "$VT" report --json "$2" >"$1.json" 2>/dev/null || fail "$1: report failed"
    run_chrome "file://$TESTDIR/$1.html" --virtual-time-budget=5000 --dump-dom >"$1.dom" 2>"$1.log" ||
        fail "$1: chromium exit $?: $(tail -n 3 "$1.log")"
    console_ok "$1.log" || fail "$1: console error: $(grep -E 'CONSOLE|Uncaught' "$1.log" | head -n 3)"
    python3 check.py "$1.dom" "$1.json" "$3" || fail "$1: the page"
}
for t in hf_gpt2_eager_b4 hf_gpt2_eager_b16 s_nano_compile_b12; do
    page "$t" "$D/$t.vt" 1
done
# hover: a mouse move over the timeline shows that instant's bytes, category by category, adding
# up to the total it names (a script added to a copy of the page moves the mouse, then keeps
# the tooltip's lines in an attribute of the body)
sed 's|</body></html>|<script>(function () { var tl = document.getElementById("tl"), r = tl.getBoundingClientRect(); tl.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + r.width * 0.9, clientY: r.top + 100, bubbles: true })); document.body.setAttribute("data-tip", Array.prototype.map.call(document.getElementById("tip").children, function (d) { return d.textContent; }).join("\|")); })();</script></body></html>|' \
    hf_gpt2_eager_b16.html >hover.html
run_chrome "file://$TESTDIR/hover.html" --virtual-time-budget=5000 --dump-dom >hover.dom 2>hover.log || fail "hover: chromium exit $?"
python3 - hover.dom <<'PY' || fail "hover: the tooltip"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
tip = html.unescape(re.search(r'<body[^>]*data-tip="([^"]*)"', dom).group(1)).split("|")
units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
def b(t):
    v, u = t.split()
    return float(v) * units[u]
head = re.fullmatch(r"[\d.]+ m?s, \w+: ([\d.]+ \w+) live", tip[0])
assert head and len(tip) >= 3, tip
rows = [re.fullmatch(r"([a-zA-Z /]+): ([\d.]+ \w+)", t) for t in tip[1:]]
assert all(rows), tip
total, parts = b(head.group(1)), sum(b(r.group(2)) for r in rows)
assert abs(parts - total) <= 0.01 * total, (total, parts, tip)
print("hover:", " | ".join(tip[:4]))
PY
# an OOM and no formula (an unrecognized model): the sentence why, the cause
page report_rank1 "$ROOT/tests/data/report_rank1.vt" 0
grep -q '<section id="formula"><h2>Formula: not applied</h2>' report_rank1.dom || fail "report_rank1: no 'not applied'"
grep -q '<section id="modules">' report_rank1.dom || fail "report_rank1: no modules section"
# a segment-only trace (no category timeline), one without a PROCESS record, one cut before its
# first allocation: the script still runs to its end without an error
head -c 1000 "$D/hf_gpt2_eager_b4.vt" >cut.vt
for f in "$ROOT/tests/data/report_truncated.vt" "$ROOT/tests/data/hostile_no_process.vt" cut.vt; do
    n=$(basename "$f" .vt)
    "$VT" export --html "$n.html" "$f" 2>/dev/null || fail "$n: export exit $?"
    run_chrome "file://$TESTDIR/$n.html" --virtual-time-budget=5000 --dump-dom >"$n.dom" 2>"$n.log" ||
        fail "$n: chromium exit $?"
    console_ok "$n.log" || fail "$n: console error"
    grep -q '<body data-ready="1">' "$n.dom" || fail "$n: the page's script did not finish: $(grep -o '<pre id="vt-errors">[^<]*' "$n.dom")"
    grep -q '<pre id="vt-errors"></pre>' "$n.dom" || fail "$n: errors in the page"
done
grep -q 'id="too-short"' cut.dom || fail "cut: not told it is too short"
run_chrome "file://$TESTDIR/hf_gpt2_eager_b16.html" --virtual-time-budget=5000 --screenshot="$BUILD/html_report.png" \
    >shot.log 2>&1 || fail "screenshot: $(tail -n 3 shot.log)"
# the screenshot: a PNG, not blank, and the timeline's colours on it (decoded with the
# standard library: zlib and PNG's row filters)
python3 - "$BUILD/html_report.png" <<'PY' || fail "the screenshot $BUILD/html_report.png"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(d):
    n, kind = struct.unpack(">I4s", d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), ("PNG type", depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, count, white = bytearray(stride), {}, 0
for y in range(h):
    f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = row[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: row[i] = (row[i] + a) & 255
        elif f == 2: row[i] = (row[i] + b) & 255
        elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = row
    if y % 2:
        continue
    for x in range(0, w, 2):
        px = bytes(row[x * bpp:x * bpp + 3])
        count[px] = count.get(px, 0) + 1
total = sum(count.values())
white = count.get(b"\xff\xff\xff", 0)
assert total - white > total // 20, "blank: %d of %d sampled pixels not white" % (total - white, total)
for name, rgb in (("parameters", "0072B2"), ("activations", "009E73"), ("CUDA context", "4D4D4D")):
    n = count.get(bytes.fromhex(rgb), 0)
    assert n >= 200, "%s (#%s) hardly drawn: %d pixels" % (name, rgb, n)
print("screenshot %dx%d: %.0f %% not white, %d colours" % (w, h, 100.0 * (total - white) / total, len(count)))
PY
exit 0
