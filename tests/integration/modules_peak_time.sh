#!/bin/sh
# modules_peak_time.sh — `report --json`'s activations_by_module names the moment of its peak on
# every committed trace (docs/json-report.md: "peak_time_ns: the moment of that peak"): the
# process peak's where it is of the process peak. Until 2026-12-06 the three traces of segments
# alone (a_native_compile, b_oom_12gib, b_recommended_12gib) said 0 there.
set -u
fail() { echo "modules_peak_time: $*"; exit 1; }
n=0
for t in $(find "$ROOT/examples/traces" -name '*.vt' | sort); do
    "$VT" report --json "$t" >r.json 2>/dev/null || fail "report --json $t"
    python3 - r.json "$t" <<'PYEOF' || fail "$t"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["activations_by_module"]
assert a["peak_time_ns"] > 0, (sys.argv[2], a["peak"], a["peak_time_ns"])
if a["peak"] == "process":
    assert a["peak_time_ns"] == d["peak"]["time_ns"], (a["peak_time_ns"], d["peak"]["time_ns"])
    assert a["peak_categories"] == d["categories"], "process peak: its categories"
PYEOF
    n=$((n + 1))
done
[ "$n" -ge 142 ] || fail "only $n traces"
exit 0
