#!/bin/sh
# sim_chunked.sh — the chunked layout's per-step summaries (the packer's STEP records) of a fused
# AdamW run (the simulated Hugging Face Llama: its steps after the first allocate nothing) count
# its optimizer steps as the plain trace's replay does: zero_grad's frees of the gradients after
# a backward end an optimizer step (2 of 2 with --compress, where they had said 1; a bounded run
# of 60 steps says "the run made 60" beside the steps in the events it kept). Where events were
# dropped, what ended in the gap (the join's frees at the snapshot) is no program's free: no
# zero_grad, so no optimizer step of its own (a bounded nanoGPT run of 100 steps counted 40 in
# the events it kept, 39 of them steps: the optimizer steps whose summaries lie outside the gap).
set -u
. "$ROOT/tests/sim_env.sh"
sim() { # sim NAME STEPS OPTIONS...
    n=$1 s=$2
    shift 2
    case $n in
    gpt*) set -- "$@" -- python3 "$ROOT/examples/sim/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" \
        --batch_size=4 --gradient_accumulation_steps=2 --max_iters="$s" --eval_interval=1000 --eval_iters=1 --compile=False ;;
    *) set -- "$@" -- python3 "$ROOT/examples/sim/sim_hf.py" --model llama-160m --batch-size 4 --steps "$s" ;;
    esac
    timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" "$@" >"$n.out" 2>&1 || { tail -n 5 "$n.out"; fail "$n: run failed"; }
    "$VT" report --json "$n.vt" >"$n.json" && "$VT" report --no-color "$n.vt" >"$n.txt" || fail "$n: report failed"
}
sim plain 2
sim packed 2 --compress
python3 - plain.json packed.json <<'PY' || fail "the packed run's optimizer steps differ from the plain one's"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["iterations"] == 2 and b["iterations"] == 2, (a["iterations"], b["iterations"])
assert b["growth"]["optimizer_steps"] == 2 and b["growth"]["steps"] == 2, b["growth"]
PY
sim bounded 60 --max-size 8MiB --no-compress
grep -q '^  events .* optimizer steps in the events kept (the run made 60: its per-step summaries)' bounded.txt ||
    fail "bounded: $(grep '^  events' bounded.txt)"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["growth"]; assert g["optimizer_steps"] == 60 and g["steps"] == 60, g' \
    bounded.json || fail "bounded: growth's steps"
# predict --from a bounded or compressed file reads it from its path as report does (it had
# refused every one: "read from its file, not from a pipe", exit 3): its what-if is the report's
for n in packed bounded; do
    "$VT" predict --from "$n.vt" --batch-size 2 --grad-accum 2 --json >"$n.pred" 2>"$n.perr" ||
        { cat "$n.perr"; fail "$n: predict --from the file"; }
    python3 - "$n.pred" "$n.json" <<'PY' || fail "$n: predict --from and the report's what-if differ"
import json, sys
p, r = (json.load(open(f)) for f in sys.argv[1:])
item = [a for a in r["advice"] if a["batch_size"] == 2 and a["gradient_accumulation_steps"] == 2]
assert item and p["peak_bytes"] == item[0]["predicted_peak_bytes"], (p["peak_bytes"], item)
PY
done
# a bounded run out of memory long after its beginning: diff says the optimizer steps it made
# before the error from its summaries, as the report's header (it had said "after 403
# optimizer steps", those in the events kept, of a run that made 1500)
timeout 300 "$VT" run -q --card 600MiB --max-size 8MiB --no-compress -o late.vt -- python3 \
    "$ROOT/examples/sim/sim_long.py" --scenario=late_oom --max_iters=2000 --eval_at=1500 >late.out 2>&1
"$VT" report --no-color late.vt >late.txt && "$VT" diff late.vt late.vt >late.diff || fail "late: report / diff"
grep -q '^  events .* optimizer steps in the events kept (the run made 1500: its per-step summaries)' late.txt ||
    fail "late: $(grep '^  events' late.txt)"
grep -q '^(A ran out of memory .* after 1500 optimizer steps' late.diff || fail "late: diff: $(grep '^(A' late.diff)"
# ... in its evaluation (the program's late_eval): the cause is that pass, not its 300 MiB CUDA
# context, half of this 600 MiB card, beside which its 1500 steps had run ("memory outside
# PyTorch (context, NCCL, other processes)" until 2026-12-01)
grep -q '^OOM: .* during eval;' late.txt && grep -q '^    the OOM came during evaluation' late.txt ||
    fail "late: $(grep -A2 '^OOM' late.txt)"
# where events were dropped, the join's records (the frees first, then the snapshot's
# allocations) make no moment of the views: Perfetto's tracks never pass the report's peak
# (a stackless run's had been 8.23 GiB at the join, its peak 7.75: a segment made in the gap
# counted as cache before its tensors came). 150 steps, ~13 MB of events: more than the bound
# keeps however fast the packer runs (60 steps, 5.4 MB, had none dropped on a loaded machine)
timeout 300 "$VT" run -q --stacks none --max-size 8MiB --no-compress --card 12GiB -o bj.vt -- \
    python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 --batch-size 4 --steps 150 >bj.out 2>&1 ||
    { tail -n 5 bj.out; fail "bj: run failed"; }
"$VT" report --json bj.vt >bj.json && "$VT" export --perfetto bj.perfetto bj.vt >/dev/null ||
    fail "bj: report / export"
python3 - bj.perfetto bj.json <<'PY' || fail "bj: Perfetto's tracks above the report's peak"
import json, sys
j = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
assert r["bounded"] and r["bounded"]["dropped_events"] > 0, "no events dropped"
cs = sorted((e for e in (j["traceEvents"] if isinstance(j, dict) else j) if e.get("ph") == "C"),
            key=lambda e: e["ts"])
last, i, top = {}, 0, 0
while i < len(cs):
    t = cs[i]["ts"]
    while i < len(cs) and cs[i]["ts"] == t:
        last[cs[i]["name"]] = cs[i]["args"]["bytes"]
        i += 1
    top = max(top, sum(last.values()))
assert top == r["peak"]["process_bytes"], (top, r["peak"]["process_bytes"])
# and each category's largest over the run is at least what it held at the peak (the join's
# last record notes every category: those its other records raised are not left unnoted)
for k, v in r["categories"].items():
    if k not in ("allocator_cache", "cuda_context", "kernel_code", "external", "unknown"):
        assert r["category_peaks"][k]["bytes"] >= v, (k, v, r["category_peaks"][k])
PY
sim gpt_bounded 100 --max-size 8MiB --no-compress
# the phases' peaks are over the events the file holds, and said so where some were dropped
grep -q "^Peak by phase (process level while in the phase; over the events the file holds: a phase's peak in what was dropped is not seen)" \
    gpt_bounded.txt || fail "bounded: $(grep '^Peak by phase' gpt_bounded.txt)"
grep -q '^Peak by phase (process level while in the phase)$' plain.txt || fail "plain: $(grep '^Peak by phase' plain.txt)"
for n in bounded gpt_bounded; do
    "$VT" dump --no-resolve "$n.vt" >"$n.jsonl" || fail "$n: dump"
    python3 - "$n.json" "$n.jsonl" <<'PY' || fail "$n: the optimizer steps in the events kept"
import json, sys
r = json.load(open(sys.argv[1]))
b = r["bounded"]
assert b["dropped_events"] > 0, b  # (the window rolled)
steps = [json.loads(l) for l in open(sys.argv[2]) if '"type":"step"' in l]
kept = [s for s in steps if s["optimizer"] and not b["dropped_from_ns"] <= s["time_ns"] <= b["dropped_to_ns"]]
assert r["iterations"] == len(kept), (r["iterations"], len(kept), len(steps))
PY
done
echo "sim_chunked: ok"
