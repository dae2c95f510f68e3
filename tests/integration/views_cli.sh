#!/bin/sh
# views_cli.sh — the first hour with export, report --html, flame, diff and predict: a command
# that writes a file prints its path; every JSON output carries the schema_version the README
# documents for it; diff speaks the report's category names and never prints "-0.0"; every
# command warns on a truncated trace; an error carries the system's reason ("Is a directory",
# "No space left on device").
set -u
D="$ROOT/examples/traces/h100-torch2.11"
T="$D/hf_gpt2_eager_b16.vt" CUT="$ROOT/tests/data/report_truncated.vt"
fail() { echo "views_cli: $*"; exit 1; }
# 1. every file written is named on stdout, with nothing else there
"$VT" export --html p.html --perfetto p.json --memory-viz p.pickle "$T" >out.txt 2>err.txt ||
    fail "export exit $?: $(cat err.txt)"
for f in p.html p.json p.pickle; do
    [ -s "$f" ] || fail "export did not write $f"
    grep -q "^wrote $f (" out.txt || fail "export did not print $f: $(cat out.txt)"
done
[ "$(wc -l <out.txt)" = 3 ] || fail "export printed more than the three paths: $(cat out.txt)"
"$VT" report --html r.html "$T" >out.txt 2>err.txt || fail "report --html exit $?: $(cat err.txt)"
grep -q '^wrote r.html (HTML page' out.txt || fail "report --html did not print its path: $(cat out.txt)"
# 2. schema_version: the value the README documents in each command's section
python3 - "$ROOT/README.md" "$VT" "$D/hf_gpt2_eager_b4.vt" "$D/s_hf_gpt2_eager_b6.vt" <<'PY' || exit 1
import json, re, subprocess, sys
readme, vt, a, b = sys.argv[1:5]
text = open(readme, encoding="utf-8").read()
def documented(cmd):
    sec = re.search(r"^### `vramtrace %s\b.*?(?=^### |^## )" % cmd, text, re.S | re.M)
    assert sec, "no README section for " + cmd
    m = re.search(r"schema_version\D{0,80}?(\d+)", sec.group(0))
    assert m, "the README's %s section documents no schema_version" % cmd
    return int(m.group(1))
def out(*args):
    return json.loads(subprocess.run([vt, *args], capture_output=True, check=True, text=True).stdout)
for cmd, args in (("diff", ["diff", "--json", a, b]), ("predict", ["predict", "--model", "gpt2", "--json"]),
                  ("predict", ["predict", "--from", a, "--json"]), ("report", ["report", "--json", a])):
    got = out(*args).get("schema_version")
    assert got == documented(cmd), "%s: schema_version %r, the README says %r" % (" ".join(args[:2]), got, documented(cmd))
PY
# 3. diff: the report's names ("logits/loss", "CUDA context"), no negative zero, no JSON keys
"$VT" diff "$D/hf_gpt2_eager_b4.vt" "$D/s_hf_gpt2_eager_b6.vt" >d.txt || fail "diff exit $?"
"$VT" diff "$D/hf_llama_fp16_b4.vt" "$D/s_llama_fp16_b8.vt" >>d.txt || fail "diff exit $?"
grep -q '^logits/loss ' d.txt || fail "no 'logits/loss' row: $(sed -n 8,24p d.txt)"
grep -q '^CUDA context ' d.txt || fail "no 'CUDA context' row"
grep -Eq '^(logits_loss|cuda_context|allocator_cache|kernel_code) ' d.txt && fail "a JSON key as a row name"
grep -Eq '(^|[^0-9.])[-+]0\.0([^0-9]|$)' d.txt && fail "a change printed as -0.0 or +0.0: $(grep -E '[-+]0\.0( |$)' d.txt | head -3)"
# 4. a truncated trace: every command says so
for c in "flame" "export --html c.html" "export --perfetto c.json" "report --html c2.html" "predict --json --from"; do
    # shellcheck disable=SC2086
    "$VT" $c "$CUT" >/dev/null 2>err.txt || fail "$c on a truncated trace: exit $?"
    grep -q "warning: .*report_truncated.vt is truncated" err.txt || fail "$c: no warning that the trace is truncated: $(cat err.txt)"
done
"$VT" diff "$CUT" "$T" >/dev/null 2>err.txt || fail "diff on a truncated trace: exit $?"
grep -q "is truncated" err.txt || fail "diff: no warning that the trace is truncated"
# 5. errors carry the system's reason
mkdir adir
check() { # check REASON COMMAND...: exit 2 and the reason on stderr
    want=$1; shift
    "$@" >/dev/null 2>err.txt
    rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, expected 2"
    grep -q "$want" err.txt || fail "$*: no '$want' in: $(cat err.txt)"
}
check "Is a directory" "$VT" predict --from adir
check "Is a directory" "$VT" flame adir
check "Is a directory" "$VT" export --html adir "$T"
check "Is a directory" "$VT" report --html adir "$T"
check "Is a directory" "$VT" diff "$T" adir
if [ -w /dev/full ]; then
    check "No space left on device" "$VT" export --perfetto /dev/full "$T"
    check "No space left on device" "$VT" report --html /dev/full "$T"
    check "No space left on device" sh -c '"$1" flame "$2" >/dev/full' sh "$VT" "$T"
    check "No space left on device" sh -c '"$1" diff --json "$2" "$2" >/dev/full' sh "$VT" "$T"
fi
exit 0
