#!/bin/sh
# blocks_real.sh — the allocated peak in PyTorch's blocks (analyzer/model/facts/blocks.c) on every
# real H100 trace captured with the allocator tracker (tensor+segment) against what the run's
# torch.cuda.max_memory_allocated() said (facts.jsonl): within 0.1 % (measured: to the byte);
# the requested-size peak stays requested_bytes.all.peak to the byte.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
[ -f "$D/facts.jsonl" ] || { echo "no $D/facts.jsonl"; exit 1; }
for t in "$D"/*.vt; do
    "$VT" report --json "$t" >"$(basename "$t" .vt).json" || { echo "report $t failed"; exit 1; }
done
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, sys
n = 0
for line in open(sys.argv[1]):
    f = json.loads(line)
    want = f.get("max_memory_allocated")
    name = f["trace"][:-3]
    peak = json.load(open(name + ".json"))["peak"]
    if want is None or peak.get("allocated_bytes") is None:
        continue  # no figure from PyTorch, or not a tensor-mode trace
    got = peak["allocated_blocks_bytes"]
    assert got is not None, (name, peak)
    err = 100.0 * (got - want) / want
    print("%-24s blocks %14d  max_memory_allocated %14d  %+.4f %%  (%s)" %
          (name, got, want, err, peak["allocated_blocks_basis"]))
    assert abs(err) <= 0.1, (name, got, want)
    assert peak["allocated_blocks_basis"] == "default", (name, peak)
    assert peak["allocated_bytes"] == f["requested_bytes_peak"], (name, peak, f["requested_bytes_peak"])
    assert got >= peak["allocated_bytes"], (name, peak)
    n += 1
assert n >= 20, "only %d traces checked" % n
print("%d traces" % n)
PYEOF
exit 0
