#!/bin/sh
# json_utf8.sh — a traced command line whose bytes are not UTF-8 (`--mo\xffdel=x`, made by
# tests/data/hostile.py) gives JSON that is valid UTF-8 everywhere: report --json and predict
# --json --from write such bytes as dump and the argv do ("\xff", four characters), in the
# configuration's notes as in every other string. Until 2026-12-01 config_warnings held the raw
# bytes: "unknown config key 'mo\xffdel' in '--mo\xffdel=x'" was not UTF-8, and strict readers
# (Python's json.load on the bytes) refused the whole document. C1 controls (U+009B: a CSI to
# some terminals) are written \u009b by every JSON output, the value kept.
set -u
fail() { echo "json_utf8: $*"; exit 1; }
H="$ROOT/tests/data/hostile.py"
A="$ROOT/examples/traces/a_tensors_eager.vt"
bad1=$(printf -- '--mo\377del=x') bad2=$(printf -- '--n_layer=\376') bad3=$(printf -- '--dtype=b\377f16')
python3 "$H" "$A" bad.vt argv python3 /work/main/examples/gpt/train.py \
    /work/main/examples/gpt/config/nanogpt-30m-4070.py --max_iters=8 "$bad1" "$bad2" "$bad3" ||
    fail "hostile.py argv"
python3 "$H" "$ROOT/tests/data/dump_small.vt" small.vt argv python3 train.py "$bad1" "$bad2" ||
    fail "hostile.py argv (dump_small)"
"$VT" report --json bad.vt >bad.json 2>bad.err || fail "report --json: exit $?: $(tail -n 2 bad.err)"
"$VT" report --json small.vt >small.json 2>/dev/null || fail "report --json small.vt: exit $?"
"$VT" predict --json --from bad.vt >pred.json 2>/dev/null || fail "predict --json --from: exit $?"
"$VT" dump bad.vt >dump.jsonl 2>/dev/null || fail "dump: exit $?"
python3 - <<'PY' || fail "not valid UTF-8 JSON (above)"
import json
def strings(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)
    elif isinstance(o, str):
        yield o
for name in ("bad.json", "small.json", "pred.json"):
    raw = open(name, "rb").read()
    try:
        doc = json.loads(raw.decode("utf-8"))  # strict: no byte that is not UTF-8
    except UnicodeDecodeError as e:
        raise SystemExit("%s: %s: ...%r..." % (name, e, raw[max(0, e.start - 60):e.start + 20]))
    joined = "\n".join(strings(doc))
    assert "\ufffd" not in joined, name
for name in ("bad.json", "small.json"):
    r = json.load(open(name, encoding="utf-8"))
    w = r["config_warnings"]
    # the bytes as dump and the argv write them, in the note that quotes them
    assert any("'mo\\xffdel' in '--mo\\xffdel=x'" in x for x in w), (name, w)
    assert any("n_layer = \\xfe is not an integer" in x for x in w), (name, w)
    assert "--mo\\xffdel=x" in r["run"]["argv"], r["run"]["argv"]
dump = [json.loads(l) for l in open("dump.jsonl", encoding="utf-8")]
argv = next(r["argv"] for r in dump if r["type"] == "process")
assert "--mo\\xffdel=x" in argv, argv
PY
# C1 controls (U+009B is a CSI to some terminals): JSON lets them through raw, every JSON of
# vramtrace writes them as \u009b, the value kept (dump had sent them to the terminal as bytes)
c1=$(printf '\302\2332J\302\23331mRED')
python3 "$H" "$A" c1.vt argv python3 "$c1" || fail "hostile.py argv (C1)"
for c in "report --json c1.vt" "dump c1.vt" "predict --json --from c1.vt" "diff --json c1.vt c1.vt" \
    "export --perfetto - c1.vt"; do
    # shellcheck disable=SC2086
    "$VT" $c >c1.out 2>/dev/null || fail "$c: exit $?"
    if LC_ALL=C grep -q "$(printf '\302\233')" c1.out; then fail "$c: a raw C1 control"; fi
done
"$VT" report --json c1.vt >c1.json && "$VT" dump c1.vt >c1.jsonl || fail "report --json / dump"
grep -q '\\u009b2J\\u009b31mRED' c1.json || fail "report --json: the C1 controls not as \\u009b"
python3 - <<'PY' || fail "the C1 controls' value not kept (above)"
import json
r = json.load(open("c1.json", encoding="utf-8"))
assert r["run"]["argv"][-1] == "\x9b2J\x9b31mRED", r["run"]["argv"]
dump = [json.loads(l) for l in open("c1.jsonl", encoding="utf-8")]
assert next(x["argv"] for x in dump if x["type"] == "process")[-1] == "\x9b2J\x9b31mRED"
PY
echo ok
