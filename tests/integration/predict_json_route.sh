#!/bin/sh
# predict_json_route.sh — `predict --from TRACE` and `predict --from REPORT.json` (that trace's
# `report --json`) print the same prediction, as docs/predict.md says, on every committed trace:
# the text and the JSON, at the run's own configuration and at a smaller micro-batch, another
# card and another accumulation. Until 2026-12-06 three of the report's facts were not in its JSON:
# a run out of memory in its optimizer step (sim llama400m_b1_6gib_oom_optimizer) had autocast's
# 650.5 MiB of copies predicted from the JSON, "need 7.16 GiB" against the trace's 7.05; a run out
# of memory in an evaluation with a batch of its own (lightning_gpt2_b4_val16_oom_eval) was told
# its first forward had been cut; a run that went on after an out-of-memory failure
# (gpt2_ckpt_b16_fit, resnet50_adamw_b256_fit) lost "completed_after_retry"; and the
# calibration's fractions, written in cJSON's 15 digits, read back a unit in the last place off
# (a largest micro-batch's cache 547332683 B against 547332682). And a run that did not run out
# of memory is predicted, at its own configuration, at least the peak it measured (docs/predict.md:
# "exactly its measured peak"): two simulated one-sample runs whose peaks came after their forwards
# had been predicted 217 KB and 1.2 MB below it (the formula's end of the backward without their
# position table's or their norms' gradient scratch), until 2026-12-06.
set -u
fail() { echo "predict_json_route: $*"; exit 1; }
n=0 bad=0
for t in $(find "$ROOT/examples/traces" -name '*.vt' | sort); do
    n=$((n + 1))
    "$VT" report --json "$t" >r.json 2>/dev/null || fail "report --json $t"
    cp r.json "own.$n.json"
    # (the path each route names is its own: the rest is the same)
    "$VT" predict --json --from "$t" 2>&1 | sed "s|$t|FROM|g" >a.out
    "$VT" predict --json --from r.json 2>&1 | sed "s|$t|FROM|g; s|r\.json|FROM|g" >b.out
    cmp -s a.out b.out || { bad=$((bad + 1)) && echo "$t: predict --json differs:" && diff a.out b.out | head -n 6; }
    for o in "" "--batch-size 1" "--card 8GiB" "--grad-accum 2"; do
        # shellcheck disable=SC2086 # (o: words to split)
        "$VT" predict --from "$t" $o 2>&1 | sed "s|$t|FROM|g" >a.out
        # shellcheck disable=SC2086
        "$VT" predict --from r.json $o 2>&1 | sed "s|$t|FROM|g; s|r\.json|FROM|g" >b.out
        cmp -s a.out b.out || { bad=$((bad + 1)) && echo "$t: predict $o differs:" && diff a.out b.out | head -n 6; }
    done
done
[ "$n" -ge 140 ] || fail "only $n committed traces found"
low=0
python3 - own.*.json <<'PY' || low=1
import json, sys
low = []
for f in sys.argv[1:]:
    r = json.load(open(f))
    p = r.get("prediction") or {}
    if r["run"]["oom"] or p.get("current_peak_bytes") is None:
        continue
    if p["current_peak_bytes"] < r["peak"]["process_bytes"]:
        low.append("%s: its own configuration predicted %d B, its peak %d" %
                   (r["run"]["file"], p["current_peak_bytes"], r["peak"]["process_bytes"]))
print("\n".join(low))
sys.exit(1 if low else 0)
PY
[ "$bad" -eq 0 ] || fail "$bad of $((n * 5)) predictions differ between the two routes"
[ "$low" -eq 0 ] || fail "a run predicted below its own measured peak (above)"
echo "predict_json_route: $n traces, 5 predictions each, the same from the trace and its report's JSON; none below its own peak"
