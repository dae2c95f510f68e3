#!/bin/sh
# html_browser.sh — the HTML report opened in a real headless Chromium: the page's script ran
# to its end with no error (none caught by the page, none on the console), the timeline drew
# every category that ever held bytes, the icicle every category over 1 % of the peak; a
# screenshot goes to $BUILD/html_report.png. Chromium comes from the Debian packages: installed
# here when missing (the command is printed; VRAMTRACE_NO_INSTALL=1 never installs); when it
# cannot be had the test says why and is skipped (exit 77), never passed.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "html_browser: $*"; exit 1; }
skip() { echo "SKIP html_browser: $*"; exit 77; }
CHROME=""
for c in chromium chromium-browser google-chrome; do
    command -v "$c" >/dev/null 2>&1 && { CHROME=$c; break; }
done
if [ -z "$CHROME" ]; then
    [ "${VRAMTRACE_NO_INSTALL:-0}" = 1 ] && skip "no chromium, and VRAMTRACE_NO_INSTALL=1 (apt-get install chromium)"
    command -v apt-get >/dev/null 2>&1 || skip "no chromium and no apt-get to install it"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
    echo "html_browser: running: ${SUDO:+$SUDO }apt-get update && ${SUDO:+$SUDO }apt-get install -y chromium"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } >apt.log 2>&1 ||
        skip "apt-get install chromium failed: $(tail -n 2 apt.log | tr '\n' ' ')"
    command -v chromium >/dev/null 2>&1 || skip "chromium installed but not on PATH"
    CHROME=chromium
fi
run_chrome() { # run_chrome URL ARGS...: headless, no sandbox (root in containers), own profile
    u=$1; shift
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$TESTDIR/profile" --window-size=1400,2200 --enable-logging=stderr --v=0 "$@" "$u"
}
for t in hf_gpt2_eager_b4 hf_gpt2_eager_b16; do
    "$VT" export --html "$t.html" "$D/$t.vt" || fail "$t: export exit $?"
    "$VT" report --json "$D/$t.vt" >"$t.json" || fail "$t: report failed"
    run_chrome "file://$TESTDIR/$t.html" --virtual-time-budget=5000 --dump-dom >"$t.dom" 2>"$t.log" ||
        fail "$t: chromium exit $?: $(tail -n 3 "$t.log")"
    grep -E 'CONSOLE|Uncaught' "$t.log" | grep -qiE 'error|uncaught' && fail "$t: console error: $(grep -E 'CONSOLE|Uncaught' "$t.log" | head -n 3)"
    python3 - "$t.dom" "$t.json" <<'PY' || fail "$t: the drawing"
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
rep = json.load(open(sys.argv[2]))
assert re.search(r'<body[^>]*data-ready="1"', dom), "the page's script did not finish"
errs = re.search(r'<pre id="vt-errors">(.*?)</pre>', dom, re.S).group(1)
assert not errs.strip(), "errors in the page: " + errs[:300]
tl = set(re.search(r'<canvas id="tl"[^>]*data-drawn="([^"]*)"', dom).group(1).split())
want = {k for k, v in rep["category_peaks"].items() if v["bytes"]}
assert want and want <= tl, ("not drawn in the timeline", sorted(want - tl))
fl = set(re.search(r'<canvas id="flame"[^>]*data-drawn="([^"]*)"', dom).group(1).split())
total = sum(rep["categories"].values())
big = {k for k, v in rep["categories"].items() if v * 100 >= total}
assert big and big <= fl, ("not drawn in the icicle", sorted(big - fl))
legend = set(re.findall(r'<span data-cat="([a-z_]+)"', dom))
assert want <= legend, ("legend", sorted(want - legend))
PY
done
# a segment-only trace (no category timeline) and one without a PROCESS record: the script
# still runs to its end without an error
for f in report_truncated hostile_no_process; do
    "$VT" export --html "$f.html" "$ROOT/tests/data/$f.vt" || fail "$f: export exit $?"
    run_chrome "file://$TESTDIR/$f.html" --virtual-time-budget=5000 --dump-dom >"$f.dom" 2>"$f.log" ||
        fail "$f: chromium exit $?"
    grep -q '<body data-ready="1">' "$f.dom" || fail "$f: the page's script did not finish: $(grep -o '<pre id="vt-errors">[^<]*' "$f.dom")"
    grep -q '<pre id="vt-errors"></pre>' "$f.dom" || fail "$f: errors in the page"
done
run_chrome "file://$TESTDIR/hf_gpt2_eager_b4.html" --virtual-time-budget=5000 --screenshot="$BUILD/html_report.png" \
    >shot.log 2>&1 || fail "screenshot: $(tail -n 3 shot.log)"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); assert d[:8]==b"\x89PNG\r\n\x1a\n" and len(d)>20000, len(d)' \
    "$BUILD/html_report.png" || fail "no screenshot in $BUILD/html_report.png"
exit 0
