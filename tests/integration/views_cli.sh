#!/bin/sh
# views_cli.sh — the first hour with export, report --html, flame, diff and predict: a command
# that writes a file prints its path; every JSON output carries the schema_version the README
# documents for it; diff speaks the report's category names and never prints "-0.0"; every
# command warns on a truncated trace; an error carries the system's reason ("Is a directory",
# "No space left on device"); dump writes the types and fields its --help and the README say.
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
# 6. dump: every type it writes is named in its --help and the README's section, an event's and
# an oom line's keys are their README entry's (an oom has no addr / size / stream), and aux is
# on the alloc lines of the calls the README names, no others (a VMM run on the fake driver, a
# compressed run with step records, two committed traces with file and oom records)
P="$BUILD/tests/prog"
LD_LIBRARY_PATH="$FAKE" "$VT" run -q -o vmm.vt -- "$P/rt_cases" vmm >/dev/null 2>&1 || fail "run rt_cases vmm"
LD_LIBRARY_PATH="$FAKE" "$VT" run -q --compress -o steps.vt -- "$P/long_prog" "$FAKE/c10/cda/libc10_cuda.so" 20000 50 \
    >/dev/null 2>&1 || fail "run long_prog --compress"
for t in vmm.vt steps.vt "$ROOT/examples/traces/sim/resnet50_b320_oom_forward.vt" "$T"; do
    "$VT" dump --no-resolve "$t" || fail "dump $t"
done >all.jsonl
"$VT" dump --help >dump_help.txt
python3 - "$ROOT/README.md" dump_help.txt all.jsonl <<'PY' || fail "dump's documentation (above)"
import json, re, sys
readme, helpf, dumpf = sys.argv[1:4]
sec = re.search(r"^### `vramtrace dump\b.*?(?=^### |^## )", open(readme, encoding="utf-8").read(), re.S | re.M).group(0)
hlp = open(helpf).read()
def entry(start):  # the README bullet that starts "- START", its `words`
    m = re.search(r"^- %s.*?(?=^- |^\n)" % re.escape(start), sec, re.S | re.M)
    assert m, "the README's dump section has no entry '- %s'" % start
    return set(re.findall(r"`([^`]+)`", m.group(0)))
keys, aux_apis, plain_apis = {}, set(), set()
for line in open(dumpf):
    o = json.loads(line)
    keys.setdefault(o["type"], set()).update(o)
    if o["type"] == "alloc":
        (aux_apis if "aux" in o else plain_apis).add(o["api"])
# the lists of types: the README's first paragraph, the help's parenthesis ("file" is a field of
# symbol lines too: named elsewhere is not named there)
rlist = re.search(r"binary format:(.*?)\{\"type\":\"status\"", sec, re.S).group(1)
hlist = re.search(r"the records \(\"type\": (.*?)\), then", hlp, re.S).group(1)
for t in set(keys) - {"header", "status"}:
    assert "`%s`" % t in rlist, "dump writes %r lines; the README's list of types does not name them" % t
    assert re.search(r"\b%s\b" % t, hlist), "dump writes %r lines; dump --help's list of types does not name them" % t
for need in ("file", "oom", "step", "alloc"):
    assert need in keys, "no %r line in the dumps: the test lost its input" % need
ev, oom = entry("events"), entry("`oom`")
for t in ("alloc", "free"):
    missing = keys[t] - ev - {"type"}
    assert not missing, "%s lines carry %s, not in the README's events entry" % (t, sorted(missing))
assert keys["oom"] - {"type"} <= oom, "oom keys not in the README: %s" % sorted(keys["oom"] - oom)
extra = oom - keys["oom"] - {"oom", "alloc"}
assert not extra, "the README's oom entry names %s, which an oom line does not have" % sorted(extra)
m = re.search(r"`aux`[^;]*", sec)  # the README's sentence on aux, to its first ';'
assert m, "the README's dump section does not say when lines carry aux"
named = set(re.findall(r"`([^`]+)`", m.group(0)))
assert aux_apis and aux_apis <= named, "aux on %s; the README names %s" % (sorted(aux_apis), sorted(named))
assert not (plain_apis & named), "the README names %s for aux, whose lines have none" % sorted(plain_apis & named)
for api in aux_apis:
    assert api in hlp, "dump --help does not say %s lines carry aux" % api
print("dump docs: types %s; aux on %s" % (sorted(keys), sorted(aux_apis)))
PY
# an output is never written over a trace: the one being read (`report --html a.vt a.vt`), or a
# second rank's given where the page's name goes (`report --html a.vt b.vt` had replaced a.vt
# with the page and said "wrote a.vt"); refused before reading, exit 2, both traces intact; an
# existing file that is not a trace is written over as asked
cp "$ROOT/examples/traces/b_oom_12gib.vt" ow_a.vt && cp ow_a.vt ow_b.vt || exit 1
for args in "report --html ow_a.vt ow_a.vt" "report --html ow_a.vt ow_b.vt" \
    "export --perfetto ow_b.vt ow_a.vt" "export --memory-viz ow_a.vt ow_a.vt" \
    "export --html x.html --perfetto ow_b.vt ow_a.vt"; do
    "$VT" $args >ow.out 2>ow.err
    rc=$?
    [ $rc = 2 ] || { echo "$args: exit $rc, expected 2"; exit 1; }
    grep -q "is a vramtrace trace: not overwritten" ow.err || { echo "$args: not said: $(cat ow.err)"; exit 1; }
    cmp -s ow_a.vt "$ROOT/examples/traces/b_oom_12gib.vt" && cmp -s ow_b.vt ow_a.vt ||
        { echo "$args: a trace was overwritten"; exit 1; }
    [ ! -e x.html ] || { echo "$args: an output written before the refusal"; exit 1; }
done
echo "not a trace" >ow.html
"$VT" report --html ow.html ow_a.vt >/dev/null 2>&1 && grep -q "<!doctype html>" ow.html ||
    { echo "an existing non-trace output not written"; exit 1; }
# "-" is standard output: the output alone there, the other outputs' "wrote" lines on stderr (it
# wrote a file named "-")
"$VT" export --perfetto - --html dash.html ow_a.vt >dash.json 2>dash.err ||
    { cat dash.err; echo "export --perfetto -: failed"; exit 1; }
[ ! -e ./- ] || { echo "export --perfetto -: wrote a file named -"; exit 1; }
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' dash.json ||
    { echo "export --perfetto -: stdout is not the JSON alone"; exit 1; }
grep -q "^wrote dash.html (HTML page" dash.err || { cat dash.err; echo "export: the wrote line not on stderr"; exit 1; }
"$VT" report --html - ow_a.vt >dash_page.html 2>/dev/null && grep -q "<!doctype html>" dash_page.html &&
    ! grep -q "^wrote" dash_page.html || { echo "report --html -: not the page alone on stdout"; exit 1; }
# a file under a KiB is said in bytes (a 399-byte Perfetto file of a cut trace had been "0 KiB")
head -c 300 ow_a.vt >cut.vt
"$VT" export --perfetto tiny.json cut.vt >tiny.out 2>/dev/null || fail "export of a cut trace"
n=$(wc -c <tiny.json | tr -d ' ')
[ "$n" -lt 1024 ] && grep -q "^wrote tiny.json (Perfetto trace JSON, $n B)$" tiny.out ||
    fail "a file of $n bytes: $(cat tiny.out)"
exit 0
