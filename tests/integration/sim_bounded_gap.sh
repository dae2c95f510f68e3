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
# the compressed chunks' sizes, so on the trace's strings, not on timing: on the program's paths
# (measured: the gap begins 63-75 events earlier for each 30 characters more in its folder's path,
# the same index in runs of one path; 12 characters more than /work/main put it outside the
# backward, as some of mutate.sh's scratch copies did, three runs in a row, 2026-12-06). So the
# bounded run is made through a link to examples/ in this test's folder, and when its gap begins
# outside a backward, again through one 30 characters longer (the characters unlike each other: a
# run of one letter compresses to almost nothing), up to 4 runs: ~70 events apart, fewer than a
# backward's ~140 in a step of ~250 (the ~110 events between two backwards hold 2 of them at
# most), so one begins inside a backward; if none does the test skips, saying so. A slice that
# ends at the gap's first moment touches it (the test had once failed on the µs floats' sum).
set -u
. "$ROOT/tests/sim_env.sh"
# run NAME EXAMPLES [OPTIONS]: the simulated long run (EXAMPLES/sim) traced into NAME.vt, its
# report NAME.json
run() {
    n=$1 ex=$2
    shift 2
    timeout 300 "$VT" run -q --card 12GiB "$@" -o $n.vt -- python3 "$ex/sim/sim_long.py" \
        --scenario=late_oom --eval_at=3000 --eval_scale=16 --max_iters=6000 >$n.out 2>&1 ||
        { tail -n 5 $n.out; fail "$n: run failed"; }
    "$VT" report --json $n.vt >$n.json || fail "$n: report"
}
# gap_in_backward: whether bounded.vt's last event before its gap (its snapshot) was in a backward
# (1: not; 2: no gap, which fails the test)
gap_in_backward() {
    "$VT" dump --no-resolve bounded.vt >bounded.jsonl || fail "dump"
    python3 - bounded.jsonl <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
snap = next((i for i, l in enumerate(lines) if '"type":"snapshot"' in l), None)
if snap is None:
    print("sim_bounded_gap: the bounded trace has no snapshot: nothing was dropped")
    sys.exit(2)
last = next(json.loads(l) for l in reversed(lines[:snap]) if '"type":"alloc"' in l or '"type":"free"' in l)
if not last["backward"]:
    print("sim_bounded_gap: the gap began outside a backward this time (%s)" % last["time_ns"])
    sys.exit(1)
PY
}
tries=0 pad=p
while :; do
    tries=$((tries + 1))
    mkdir -p "$PWD/$pad" && ln -sfn "$ROOT/examples" "$PWD/$pad/examples" || fail "link"
    rm -f bounded.vt
    run bounded "$PWD/$pad/examples" --max-size 8MiB
    gap_in_backward
    rc=$?
    [ $rc = 0 ] && break
    [ $rc = 1 ] || fail "see above"
    if [ $tries -lt 4 ]; then
        set -- k7Qz9Lm2Xv4Pw8Rt1Ys6Hn3Jd5Fb0Gc sA1dD2fG3hJ4kL5zX6cV7bN8mQ9wE0 rT1yU2iO3pA4sD5fG6hJ7kL8zX9cV0
        eval "pad=\$pad\${$tries}" # (30 characters each)
        continue
    fi
    echo "SKIP sim_bounded_gap: in $tries bounded runs the gap never began inside a backward"
    exit 77
done
run plain "$ROOT/examples"
"$VT" export --perfetto bounded.perfetto bounded.vt >/dev/null || fail "export"
python3 - bounded.json plain.json bounded.perfetto <<'PY'
import json, sys
b, p, j = (json.load(open(f)) for f in sys.argv[1:4])
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
[ $? = 0 ] || fail "see above"
echo "sim_bounded_gap: ok"
