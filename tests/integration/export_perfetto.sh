#!/bin/sh
# export_perfetto.sh — `vramtrace export --perfetto` on real H100 traces: valid Chrome trace
# JSON; one counter track per category whose maximum is the report's category peak to the
# byte; per-track timestamps in order and at most 20k points; the process named by the command
# it ran and its pid (not the interpreter's path); one named track per thread with
# phase slices; a tick per optimizer step; the OOM instant with the report's request.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
fail() { echo "export_perfetto: $*"; exit 1; }
for t in hf_gpt2_eager_b4 hf_gpt2_eager_b16; do
    "$VT" export --perfetto "$t.json" "$D/$t.vt" 2>err.txt || fail "$t: exit $?: $(cat err.txt)"
    "$VT" report --json "$D/$t.vt" >"$t.r.json" || fail "$t: report failed"
    python3 - "$t.json" "$t.r.json" <<'PY' || fail "$t: structure"
import json, sys
d = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
ev = d["traceEvents"]
assert isinstance(ev, list) and ev, "no traceEvents"
tracks = {}
for e in ev:
    assert e["ph"] in ("M", "C", "X", "i"), e
    assert e["pid"] == (2 if e["ph"] == "C" else 1) or e["name"] == "process_name", e
    assert isinstance(e["tid"], int), e
    if e["ph"] == "C":
        tracks.setdefault(e["name"], []).append((e["ts"], e["args"]["bytes"]))
peaks = {k: v["bytes"] for k, v in rep["category_peaks"].items()}
assert {k for k, v in peaks.items() if v} == set(tracks), (sorted(tracks), peaks)
for k, pts in tracks.items():
    assert max(b for _, b in pts) == peaks[k], (k, max(b for _, b in pts), peaks[k])
    assert all(pts[i][0] <= pts[i + 1][0] for i in range(len(pts) - 1)), k + ": time goes back"
    assert len(pts) <= 20000, (k, len(pts))
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert procs[2].startswith("cuda:0 NVIDIA H100"), procs
# the traced process is named by what it ran (its program's file name, its arguments) and pid
argv = rep["run"]["argv"]
want = " ".join([argv[0].rsplit("/", 1)[-1]] + argv[1:]) + " (pid %d)" % rep["run"]["pid"]
assert procs[1] == want, (procs[1], want)
slices = [e for e in ev if e["ph"] == "X"]
phases = {"init", "forward", "backward", "optimizer", "eval", "data", "compile", "other"}
assert slices and all(s["name"] in phases and s["dur"] >= 0 and s["tid"] in names for s in slices)
ticks = [e for e in ev if e["ph"] == "i" and e["cat"] == "iteration"]
assert len(ticks) == rep["iterations"], (len(ticks), rep["iterations"])
peak = [e for e in ev if e["ph"] == "i" and e["cat"] == "peak"]
assert len(peak) == 1 and peak[0]["args"]["process_bytes"] == rep["peak"]["process_bytes"]
oom = [e for e in ev if e["ph"] == "i" and e["cat"] == "oom"]
if rep.get("oom"):
    assert len(oom) == 1 and oom[0]["args"]["requested_bytes"] == rep["oom"]["requested_bytes"]
    assert oom[0]["ts"] * 1000 == rep["oom"]["time_ns"] or abs(oom[0]["ts"] * 1000 - rep["oom"]["time_ns"]) < 1
else:
    assert not oom and rep["iterations"] >= 1
    assert "pt_autograd_0" in names.values(), names
    assert {"forward", "backward"} <= {s["name"] for s in slices}
PY
done
"$VT" export "$D/hf_gpt2_eager_b4.vt" >/dev/null 2>&1
[ $? = 2 ] || fail "no output option: expected exit 2"
"$VT" export --perfetto /nonexistent/dir/x.json "$D/hf_gpt2_eager_b4.vt" >/dev/null 2>err.txt
[ $? = 2 ] || fail "unwritable output: expected exit 2"
grep -q 'cannot create' err.txt || fail "no message: $(cat err.txt)"
"$VT" export --help | grep -q 'usage: vramtrace export' || fail "--help"
# hostile and fuzzed traces: valid JSON or a clean error, never a crash
for f in "$ROOT"/tests/data/*.vt; do
    timeout 60 "$VT" export --perfetto h.json "$f" >/dev/null 2>&1
    rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || [ $rc = 2 ] || fail "$f: exit $rc"
    [ $rc = 0 ] && { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' h.json || fail "$f: invalid JSON"; }
done
exit 0
