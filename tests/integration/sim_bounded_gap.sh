#!/bin/sh
# sim_bounded_gap.sh — a bounded trace whose dropped window began inside a backward pass (the
# simulated nanoGPT-style long run, sim_long.py, compressed at --max-size 8MiB) held to the plain
# trace of the same run: what the gap ended is not known to have ended in the backward it was made
# in, so its category is the one it has alive (a gradient stays a gradient; a parameter-sized
# temporary made where the whole passes made theirs stays a temporary: it had been counted a
# gradient, 2,230,272 B for 2,132,480, 1 CI run in ~10): every category's
# largest over the run equals the plain trace's (backward had been 1.38 MiB at the gap's start,
# 0.62 over the whole plain run); the step the gap cut does not make the gradient accumulation
# "unknown" (A = 1, over the steps the trace holds whole); no phase slice of the timeline spans
# the gap (a "backward" had lasted the 1.2 s of dropped steps). Where the window rolls depends on
# the compressed chunks' sizes, so on timing: a run whose gap began outside a backward (not seen
# in 7 runs, loaded or not; once on 2026-12-06, with a fuzzing run and a mutation run beside it)
# skips, saying so; a slice that ends at the gap's first moment touches
# it (the test had once failed on the µs floats' sum).
set -u
fail() { echo "sim_bounded_gap: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP sim_bounded_gap: no python3"; exit 77; }
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
for n in bounded plain; do
    opt=
    [ $n = bounded ] && opt="--max-size 8MiB"
    timeout 300 "$VT" run -q --card 12GiB $opt -o $n.vt -- python3 "$ROOT/examples/sim/sim_long.py" \
        --scenario=late_oom --eval_at=3000 --eval_scale=16 --max_iters=6000 >$n.out 2>&1 ||
        { tail -n 5 $n.out; fail "$n: run failed"; }
    "$VT" report --json $n.vt >$n.json || fail "$n: report"
done
"$VT" export --perfetto bounded.perfetto bounded.vt >/dev/null || fail "export"
"$VT" dump --no-resolve bounded.vt >bounded.jsonl || fail "dump"
python3 - bounded.json plain.json bounded.perfetto bounded.jsonl <<'PY'
import json, sys
b, p, j = (json.load(open(f)) for f in sys.argv[1:4])
lines = open(sys.argv[4]).read().splitlines()
snap = next(i for i, l in enumerate(lines) if '"type":"snapshot"' in l)
last = next(json.loads(l) for l in reversed(lines[:snap]) if '"type":"alloc"' in l or '"type":"free"' in l)
if not last["backward"]:  # (where the window rolls depends on the compressed sizes: timing)
    print("SKIP sim_bounded_gap: the gap began outside a backward this time (%s)" % last["time_ns"])
    sys.exit(77)
bd = b["bounded"]
assert bd["dropped_events"] > 0, bd
for k, v in p["category_peaks"].items():
    assert b["category_peaks"][k]["bytes"] == v["bytes"], (k, b["category_peaks"][k], v)
a = b["config"]["gradient_accumulation_steps"]
assert a["value"] == 1 and a["where"].endswith("optimizer steps seen whole in the trace"), a
assert p["config"]["gradient_accumulation_steps"]["where"] == \
    "A = 1: 1 backward pass before each of the 6000 optimizer steps", p["config"]["gradient_accumulation_steps"]
lo, hi = bd["dropped_from_ns"] / 1e3, bd["dropped_to_ns"] / 1e3
ev = j["traceEvents"] if isinstance(j, dict) else j
# (a slice that ends at the gap's first moment touches it: 1 ns of slack for the µs floats' sums)
across = [e for e in ev if e.get("ph") == "X" and e["ts"] < hi - 1e-3 and e["ts"] + e["dur"] > lo + 1e-3]
assert not across, ("slices across the gap", across[:3], lo, hi)
print("sim_bounded_gap: backward %d B in both, A = 1, no slice across %.3f-%.3f s" % (
    p["category_peaks"]["backward"]["bytes"], lo / 1e6, hi / 1e6))
PY
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "see above"
echo "sim_bounded_gap: ok"
