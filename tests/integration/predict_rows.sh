#!/bin/sh
# predict_rows.sh — CONSISTENCY, not accuracy: `vramtrace predict --from` prints rows that add up to
# the totals it prints:
# for every committed simulated and real H100 trace, at a micro-batch of 8, the categories plus
# what the calibration moved beyond them (anchor_tensor_bytes) are the tensors, and the tensors,
# the cache, what lies outside PyTorch and anchor_peak_bytes the peak; the text shows the anchor
# as a row. Before: a run the formula over-predicts had its totals scaled and its rows not
# (GPT-2 at B=1, T=64, predicted at 8: the rows 304 MiB over "= tensors"; that run is no longer
# anchored: its peak came after its forward, docs/formula.md).
# runs: early (predict on every committed trace: about 1.5 minutes)
set -u
fail() { echo "predict_rows: $*"; exit 1; }
n=0
for f in "$ROOT"/examples/traces/sim/*.vt "$ROOT"/examples/traces/h100-torch2.11/*.vt; do
    "$VT" predict --from "$f" --batch-size 8 --grad-accum 1 --card 12GiB --json >p.json 2>p.err ||
        { grep -q "not a model" p.err && continue; cat p.err; fail "$f: predict failed"; }
    python3 - p.json "$f" <<'PYEOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
out = ("allocator_cache", "cuda_context", "kernel_code", "external")
rows = sum(v for k, v in d["by_category"].items() if k not in out)
if rows + d["anchor_tensor_bytes"] != d["tensor_bytes"]:
    sys.exit("predict_rows: %s: rows %d + anchor %d != tensors %d" %
             (sys.argv[2], rows, d["anchor_tensor_bytes"], d["tensor_bytes"]))
peak = d["tensor_bytes"] + sum(d["by_category"][k] for k in out) + d["anchor_peak_bytes"]
if peak != d["peak_bytes"]:
    sys.exit("predict_rows: %s: rows %d != peak %d" % (sys.argv[2], peak, d["peak_bytes"]))
PYEOF
    n=$((n + 1))
done
[ "$n" -ge 60 ] || fail "only $n traces"
# (nanoGPT eager at B=8 on the H100: its run measured 1.08 GiB more than the formula's rows)
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11/s_nano_eager_b8.vt" --batch-size 8 \
    --grad-accum 1 --card 12GiB >t.txt || fail "predict s_nano_eager_b8"
grep -q '^  anchored to run *+1.08 GiB' t.txt || { cat t.txt; fail "no anchor row in the text"; }
echo "ok: $n traces"
