#!/bin/sh
# sim_no_step.sh — a run that ends before its first optimizer step (its gradients freed as the
# program exits): no step is made of the gradients' frees. It had been told "1 optimizer step",
# "no state (plain SGD)" for its AdamW and "needs ~6.98 GiB" (the same configuration, run
# through its steps, takes 7.75: the state left out); with one micro-step its model was not
# inferred at all ("the transformer formula needs the sequence length T").
set -u
. "$ROOT/tests/sim_env.sh"
for a in 1 2; do
    for how in "pre --exit-before-step" "full"; do
        set -- $how
        # shellcheck disable=SC2086
        timeout 300 "$VT" run --card 12GiB -o "$1_$a.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
            --model gpt2 --batch-size 4 --grad-accum $a --steps 2 ${2:-} >"$1_$a.out" 2>&1 ||
            { tail -n 5 "$1_$a.out"; fail "A=$a $1: run failed"; }
        report_both "$1_$a" "A=$a $1"
    done
    grep -q '"steps": 0' "pre_$a.out" || fail "A=$a: the program took a step: $(grep -o '"steps": [0-9]*' "pre_$a.out")"
    grep -q '^  events .* 0 optimizer steps' "pre_$a.txt" || fail "A=$a: $(grep '^  events' "pre_$a.txt")"
    grep -q 'plain SGD' "pre_$a.txt" && fail "A=$a: $(grep -m1 'plain SGD' "pre_$a.txt")"
    grep -q '^  optimizer  .*Adam / AdamW.*no step ran' "pre_$a.txt" ||
        fail "A=$a: $(grep '^  optimizer  ' "pre_$a.txt")"
    grep -q '^formula comparison at' "pre_$a.txt" || fail "A=$a: $(grep '^formula' "pre_$a.txt")"
    # the views agree: watch's steps end in no optimizer step, Perfetto has no step's instant nor
    # an optimizer slice (the exit's frees had been drawn as one, alternating with "other")
    "$VT" watch --once --plain "pre_$a.vt" | grep -q ' steps [0-9]* (none ending in an optimizer step)' ||
        fail "A=$a: watch: $("$VT" watch --once --plain "pre_$a.vt")"
    "$VT" export --perfetto "pre_$a.perfetto" "pre_$a.vt" >/dev/null || fail "A=$a: export"
    python3 - "pre_$a.perfetto" <<'PY' || fail "A=$a: Perfetto draws an optimizer step"
import json, sys
j = json.load(open(sys.argv[1]))
ev = j["traceEvents"] if isinstance(j, dict) else j
bad = [e for e in ev if e.get("name") in ("optimizer step", "optimizer")]
assert not bad, bad[:2]
PY
    python3 - "pre_$a.json" "full_$a.json" <<'PY' || fail "A=$a: the steps, the optimizer phase or the need"
import json, sys
p, f = (json.load(open(x)) for x in sys.argv[1:])
assert p["iterations"] == 0, p["iterations"]
assert "optimizer" not in p["phases"] or not p["phases"]["optimizer"], p["phases"]
need = next(x for x in p["advice"] if x["change"].startswith("none"))["predicted_peak_bytes"]
took = f["peak"]["process_bytes"]
# what the same configuration took through its steps (AdamW's state too), never less
assert took <= need <= 1.1 * took, (need, took)
PY
done
# diff says a run with no optimizer step lacks its state (it said it only of a run out of memory)
"$VT" diff pre_1.vt full_1.vt >pf.diff || fail "diff"
grep -q '^(A ran no optimizer step: ' pf.diff || fail "diff: $(head -n 5 pf.diff)"
grep -q '^(B ran no optimizer step' pf.diff && fail "diff: B had steps"
# recorded without stacks (no formula then: what-ifs scale what was measured): the state the
# optimizer's first step makes is in what the configuration needs as well (it had said 5.09 GiB
# "keep the current configuration" for a Llama whose steps take 6.06: the state was counted in the
# anchor of the run as measured, and taken out again)
timeout 300 "$VT" run --stacks none --card 12GiB -o pre_none.vt -- python3 "$ROOT/examples/sim/sim_hf.py" \
    --model gpt2 --batch-size 4 --grad-accum 1 --steps 2 --exit-before-step >pre_none.out 2>&1 ||
    { tail -n 5 pre_none.out; fail "stacks none: run failed"; }
"$VT" report --json pre_none.vt >pre_none.json || fail "stacks none: report failed"
python3 - pre_none.json full_1.json <<'PY' || fail "stacks none: the need"
import json, sys
p, f = (json.load(open(x)) for x in sys.argv[1:])
assert p["formula_applies"] is False, "a formula applied"
need = next(x for x in p["advice"] if x["change"].startswith("none"))["predicted_peak_bytes"]
took = f["peak"]["process_bytes"]
assert took <= need <= 1.1 * took, (need, took)
PY
# a run that made its model and ran no forward (--steps 0): no advice, as nothing measured grows
# with a batch (it had been told "needs ~830.0 MiB", "keep the current configuration" and
# "largest micro-batch that fits: 1048576", the search's limit, for a GPT-2 whose training takes
# 7.75 GiB); predict --from it refuses, as from its JSON
timeout 300 "$VT" run --card 12GiB -o s0.vt -- python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 \
    --batch-size 4 --steps 0 >s0.out 2>&1 || { tail -n 5 s0.out; fail "steps 0: run failed"; }
"$VT" report --no-color s0.vt >s0.txt && "$VT" report --json s0.vt >s0.json &&
    "$VT" export --html s0.html s0.vt >/dev/null || fail "steps 0: report failed"
want="the trace shows no forward pass of a module (no nn.Module forward, compiled graph or training"
grep -qF "advice: none ($want" s0.txt || fail "steps 0: $(grep -m1 '^advice' s0.txt)"
grep -q 'largest micro-batch\|current configuration needs' s0.txt && fail "steps 0: a need or a largest batch"
grep -qF "None: $want" s0.html || fail "steps 0: the HTML page's advice"
# nor a formula's what-ifs, nor "off" for what only a forward shows (it had said "what-ifs scale
# what was measured" beside no advice, "KV cache off: no code of transformers' KV cache ran")
grep -q '^formula: not applied. the trace shows no forward pass of a module: nothing to compare with a formula' s0.txt ||
    fail "steps 0: $(grep '^formula' s0.txt)"
for f in 'activation checkpointing' 'torch.compile' 'KV cache (use_cache)'; do
    grep -q "^  $f  *unknown\$" s0.txt || fail "steps 0: $(grep "^  $f" s0.txt)"
done
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["advice"] == [] and r["advice_note"].startswith(sys.argv[2]) and r["prediction"]["largest_batch_size"] is None, (r["advice"], r.get("advice_note"))' \
    s0.json "$want" || fail "steps 0: JSON advice"
for f in s0.vt s0.json; do
    "$VT" predict --from $f --batch-size 2 >p.out 2>&1 && fail "predict --from $f: exit 0"
    grep -qF "$want" p.out || fail "predict --from $f: $(cat p.out)"
done
echo "sim_no_step: ok"
