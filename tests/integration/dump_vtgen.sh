#!/bin/sh
# dump_vtgen.sh — `vramtrace dump` on traces from tests/prog/vtgen: every line is JSON, every
# record type appears with its fields, each stack is written once, before the events naming it
# by id, and resolves (with its code and symbol lines: tests/python/vtdump.py) to the
# generator's files/lines/symbols, truncated tails keep every complete record, malformed
# traces exit 3 with a message.
set -eu
GEN="$BUILD/tests/prog/vtgen"
[ -x "$GEN" ] || { echo "vtgen not built ($GEN)"; exit 1; }

"$GEN" -o full.vt --events 400 --live 40 --stacks 12 --python=3.11 --oom --card 12884901888 \
    --rank 1 --pid 777 >/dev/null
"$VT" dump full.vt >full.jsonl
"$VT" dump --no-resolve full.vt >nores.jsonl
"$GEN" -o py310.vt --events 50 --live 10 --stacks 4 --python=3.10 >/dev/null
"$VT" dump py310.vt >py310.jsonl

PYTHONPATH="$ROOT/tests/python" python3 - <<'PY'
import collections
import vtdump
load = vtdump.records
recs, stacks = vtdump.load("full.jsonl")
types = collections.Counter(r["type"] for r in recs)
for t in ("header", "process", "config", "device", "thread", "alloc", "free", "stack", "code",
          "symbol", "module", "meminfo", "oom", "pyinfo", "trailer", "unknown", "status"):
    assert types[t] > 0, f"no {t} record"
assert recs[0]["type"] == "header" and recs[-1] == {"type": "status", "status": "ok",
        "records": len(recs) - 2}, recs[-1]
proc = next(r for r in recs if r["type"] == "process")
assert proc["pid"] == 777 and "RANK=1" in proc["env"] and proc["argv"][1] == "train.py", proc
cfg = next(r for r in recs if r["type"] == "config")
assert cfg["card_bytes"] == 12884901888 and cfg["card"] == "rtx4070", cfg
trailer = next(r for r in recs if r["type"] == "trailer")
events = [r for r in recs if r["type"] in ("alloc", "free")]
assert trailer["n_events"] == len(events), (trailer, len(events))
assert trailer["n_records"] == len(recs) - 3, trailer
codes = {r["code_id"]: r for r in recs if r["type"] == "code"}
syms = {r["ip"]: r for r in recs if r["type"] == "symbol"}
mods = {r["module_id"]: r for r in recs if r["type"] == "module"}
body = [r for r in events if r["api"] in ("cudaMalloc", "cudaFree")]
assert len(body) >= 400
checked = 0
for r in events:
    for k in ("api", "layer", "device", "failed", "backward", "emulated", "result", "addr",
              "time_ns", "thread", "stack_id"):
        assert k in r, (k, r)
    assert r["addr"].startswith("0x")
    if r["type"] == "alloc":
        assert isinstance(r["size"], int) and r["size"] > 0 or r["failed"], r
    assert r["backward"] == (r["thread"] == 1), r
    assert "stack" not in r, r                # the stack is on its own line, once
    if r["stack_id"]:
        st = stacks[r["stack_id"]]
        assert [f["kind"] for f in st] == ["native"] * 4 + ["python"] * 3, st
        for f in st[:4]:
            s = syms[f["ip"]]
            assert f["module"] == mods[s["module_id"]]["path"]
            assert f["offset"] == s["offset"] and f["symbol_offset"] == s["symbol_offset"]
            assert f["symbol"] == s.get("demangled", s["name"]) == s["symbol"]
        for f in st[4:]:
            c = codes[f["code_id"]]
            # vtgen's line tables: line = first_line + byte offset // 16
            assert f["file"] == c["filename"] and f["function"] == c["qualname"]
            assert f["line"] == c["first_line"] + f["offset"] // 16, (f, c)
            checked += 1
assert checked > 100, checked
assert any("::" in f["symbol"] for st in stacks.values() for f in st if f["kind"] == "native"), "no demangled symbol"
ids = [r["stack_id"] for r in recs if r["type"] == "stack"]
assert len(ids) == len(set(ids)) > 0, "a stack written twice"
seen = set()
for r in recs:                                # a stack's line comes before its first use
    if r["type"] == "stack":
        seen.add(r["stack_id"])
    elif r["type"] in ("alloc", "free", "oom") and r["stack_id"]:
        assert r["stack_id"] in seen, r
ctx = events[0]
assert ctx["api"] == "cuDevicePrimaryCtxRetain" and ctx["layer"] == "driver" and ctx["kind"] == "CONTEXT"
assert any(r["api"] == "cudaMalloc" and r["layer"] == "runtime" for r in events)
mp = next(r for r in events if r["api"] == "cuMemMap")
assert mp["aux"] == "0x9001" and mp["size"] == 32 << 20
oom = next(r for r in recs if r["type"] == "oom")
assert oom["requested"] == 12884901888 and oom["capacity"] == 12884901888 and oom["emulated"] is True
assert stacks[oom["stack_id"]][0]["kind"] == "native"
failed = [r for r in events if r["failed"]]
assert {r["api"] for r in failed} == {"cudaFree", "cudaMalloc"}, failed
unk = next(r for r in recs if r["type"] == "unknown")
assert unk["record_type"] == 200 and unk["size"] == 24
nores = load("nores.jsonl")
# --no-resolve: the same lines, but no line numbers, no traceback order, no symbol files looked at
assert len(nores) == len(recs)
for a, b in zip(recs, nores):
    if a["type"] == "stack":
        assert "native_before_python" not in b and not any("line" in p for p in b["python"]), b
        b = dict(b, python=[dict(p, line=a["python"][i]["line"]) for i, p in enumerate(b["python"])])
        b["native_before_python"] = a["native_before_python"]
    elif a["type"] == "symbol":
        assert "symbol" not in b, b
        b = dict(b, symbol=a["symbol"])
    assert a == b, (a, b)
p310, s310 = vtdump.load("py310.jsonl")
n310 = 0
codes = {r["code_id"]: r for r in p310 if r["type"] == "code"}
for st in s310.values():
    for f in st:
        if f["kind"] == "python":
            assert f["line"] == codes[f["code_id"]]["first_line"] + f["offset"] // 16
            n310 += 1
assert n310 > 0
print("dump JSON ok:", len(recs), "records,", checked, "python frames")
PY

# truncated tails: status truncated, exit 0, every complete record kept
"$GEN" -o base.vt --events 300 --tail none >/dev/null
"$VT" dump base.vt >base.jsonl
n=$(grep -c '"type":"alloc"\|"type":"free"' base.jsonl)
for tail in zero cut; do
    "$GEN" -o t.vt --events 300 --tail "$tail" >/dev/null
    "$VT" dump t.vt >t.jsonl
    tail -n 1 t.jsonl | grep -q '"status":"truncated"'
    [ "$(grep -c '"type":"alloc"\|"type":"free"' t.jsonl)" -eq "$n" ]
done
tail -n 1 base.jsonl | grep -q '"status":"truncated"'

# malformed: exit 3, records before the damage printed, message on stderr
for kind in magic major size0 size-odd size-past-eof string huge type0; do
    "$GEN" -o bad.vt --events 100 --corrupt "$kind" >/dev/null
    rc=0
    "$VT" dump bad.vt >bad.jsonl 2>bad.err || rc=$?
    [ "$rc" -eq 3 ] || { echo "corrupt=$kind: exit $rc, want 3"; exit 1; }
    case $kind in # a bad header is named as such (reader_describe), other damage by offset
    magic) want="^vramtrace dump: bad.vt: not a vramtrace trace (bad magic)$" ;;
    major) want="^vramtrace dump: bad.vt: trace format version [0-9]*\.[0-9]*, this vramtrace reads" ;;
    *) want="^vramtrace dump: bad.vt: malformed trace at byte [0-9]*: ." ;;
    esac
    grep -q "$want" bad.err ||
        { echo "corrupt=$kind: bad message"; cat bad.err; exit 1; }
    python3 -c 'import json,sys; [json.loads(l) for l in open("bad.jsonl")]'
    case $kind in
    magic|major) [ "$(wc -l <bad.jsonl)" -eq 1 ]; grep -q '"status":"malformed","records":0' bad.jsonl ;;
    *) [ "$(grep -c '"type":"alloc"' bad.jsonl)" -ge 10 ]; tail -n 1 bad.jsonl | grep -q '"status":"malformed"' ;;
    esac
done
"$GEN" -o g.vt --events 100 --tail garbage >/dev/null
rc=0; "$VT" dump g.vt >/dev/null 2>&1 || rc=$?; [ "$rc" -eq 3 ]

# usage: missing file 2, no file 2, unknown option 2, --help 0; several files in one call
rc=0; "$VT" dump missing.vt >/dev/null 2>err.txt || rc=$?; [ "$rc" -eq 2 ]; grep -q "missing.vt" err.txt
rc=0; "$VT" dump >/dev/null 2>&1 || rc=$?; [ "$rc" -eq 2 ]
rc=0; "$VT" dump --bogus full.vt >/dev/null 2>&1 || rc=$?; [ "$rc" -eq 2 ]
"$VT" dump --help | grep -q "no-resolve"
"$VT" dump full.vt py310.vt >two.jsonl
[ "$(grep -c '"type":"status"' two.jsonl)" -eq 2 ]
rc=0; "$VT" dump full.vt bad.vt >/dev/null 2>&1 || rc=$?; [ "$rc" -eq 3 ]
# random corruption: exit 0 or 3 (never a crash), and stdout stays valid JSON lines even when
# strings hold invalid UTF-8 or control bytes
python3 - "$VT" <<'PY'
import json, random, subprocess, sys
data = bytearray(open("py310.vt", "rb").read())
rnd = random.Random(7)
codes = {}
for i in range(150):
    m = bytearray(data)
    for _ in range(rnd.randint(1, 8)):
        m[rnd.randrange(32, len(m))] = rnd.choice([0, 0xff, 0x1b, 0x80, rnd.randrange(256)])
    open("fuzz.vt", "wb").write(m)
    p = subprocess.run([sys.argv[1], "dump", "fuzz.vt"], capture_output=True)
    assert p.returncode in (0, 3), (i, p.returncode, p.stderr[-300:])
    for line in p.stdout.decode("utf-8").splitlines():
        json.loads(line)
    codes[p.returncode] = codes.get(p.returncode, 0) + 1
assert len(codes) == 2, codes
print("fuzz:", codes)
PY
# bounded: each stack once, so 100,000 distinct Python stacks under 200,000 events make about
# 5 bytes of JSON per byte of trace (13 when every event repeated its stack) and the memory
# dump needs does not grow with the stacks (150 MB before; about 14 MB)
"$GEN" -o many.vt --events 200000 --stacks 100000 --python=3.12 --live 1000 >/dev/null
python3 - "$VT" <<'PY'
import os, resource, subprocess, sys
out = subprocess.run([sys.argv[1], "dump", "many.vt"], stdout=subprocess.PIPE, check=True).stdout
ratio = len(out) / os.path.getsize("many.vt")
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"dump of {os.path.getsize('many.vt')} bytes: {len(out)} bytes ({ratio:.1f}x), {rss_mb:.0f} MB resident")
assert ratio < 7, ratio
assert rss_mb < 64, rss_mb
assert out.count(b'"type":"stack"') == len(set(l for l in out.split(b"\n") if b'"type":"stack"' in l))
PY
echo "dump_vtgen ok"
