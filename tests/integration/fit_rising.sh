#!/bin/sh
# fit_rising.sh — SIMULATED: `vramtrace fit` on a program whose memory rises from step to step
# over its first steps (tests/python/txl_mems.py: a Transformer-XL-style model whose memory of
# past segments, --mem_len 768 tokens over segments of 256, fills up in 3 steps). Its 2-step
# trials had found 32 to fit an 8 GiB card, where the program at 32 runs out of memory in its
# third step. Now a trial runs 3 iterations by default, and one that fits while its last step's
# peak is above its earlier steps' runs again with twice as many until the peak stops rising; the
# trials after it keep them. The answer is checked against the program's own longer runs: it fits
# them, and the next micro-batch does not fit within the headroom. A memory that fills in one
# step (--mem_len 256) keeps the default.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/txl_mems.py"
timeout 600 "$VT" fit --card 8GiB --json --dir fr -- python3 "$P" --batch_size {B=24} --max_step {I} \
    >fr.json 2>fr.err || fail "fit failed: $(tail -n 3 fr.err)"
best=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["batch_size"])' fr.json) ||
    fail "no best: $(head -c 300 fr.json)"
# the program's own runs of 8 steps at the answer and the next micro-batch
for b in "$best" $((best + 1)); do
    rm -f "r$b.vt"
    timeout 300 "$VT" run -q --card 8GiB -o "r$b.vt" -- python3 "$P" --batch_size "$b" --max_step 8 \
        </dev/null >"r$b.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "r$b.out" || fail "r$b: no truth line: $(tail -n 2 "r$b.out")"
    "$VT" report --json "r$b.vt" >"r$b.json" || fail "r$b: report failed"
done
python3 - "$best" <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json, sys
best = int(sys.argv[1])
bad = []
f = json.load(open("fr.json"))
def truth(b):
    return next(json.loads(l.split(" ", 1)[1]) for l in open("r%d.out" % b) if l.startswith("VRAMTRACE_TORCH_STATS "))
t, n = truth(best), truth(best + 1)
if t["oom"]:
    bad.append("fit's largest %d ran out of memory in the program's own step %s" % (best, t.get("oom_step")))
cap = f["trials"][0]["capacity_bytes"]
peak = json.load(open("r%d.json" % best))["peak"]["process_bytes"]
if peak > cap * 0.95:
    bad.append("fit's largest %d peaked at %d over 8 steps, over 95 %% of %d" % (best, peak, cap))
npeak = json.load(open("r%d.json" % (best + 1)))["peak"]["process_bytes"]
if not n["oom"] and npeak <= cap * 0.95:
    bad.append("%d fits the program's 8 steps too (peak %d): fit's largest is %d" % (best + 1, npeak, best))
first = f["trials"][[x["batch_size"] for x in f["trials"]].index(24)]
if first.get("rerun_from_iterations") != 3 or first.get("iterations") != 6 or first.get("peak_still_rising", True):
    bad.append("the first trial: %s" % {k: first.get(k) for k in ("iterations", "rerun_from_iterations", "peak_still_rising")})
if "at micro-batch 24" not in (f.get("rising_note") or ""):
    bad.append("rising_note: %s" % f.get("rising_note"))
for x in f["trials"]:
    if x["batch_size"] > 24 and x.get("iterations") != 6:
        bad.append("trial %d ran %s iterations, not the 6 the first needed" % (x["batch_size"], x.get("iterations")))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
# a memory that fills in one step: no trial is run again
timeout 300 "$VT" fit --card 8GiB --json --max-b 8 --dir fo -- python3 "$P" --mem_len 256 --batch_size {B=8} \
    --max_step {I} >fo.json 2>fo.err || fail "fit --mem_len 256 failed: $(tail -n 3 fo.err)"
python3 -c '
import json, sys
f = json.load(open("fo.json"))
t = f["trials"]
assert len(t) == 1 and t[0]["fits"] and t[0]["iterations"] == 3 and t[0]["rerun_from_iterations"] is None \
    and not t[0]["peak_still_rising"] and f["rising_note"] is None, (t, f["rising_note"])
' || fail "--mem_len 256: a trial run again: $(head -c 400 fo.json)"
"$VT" fit --card 8GiB --max-b 24 --dir ft -- python3 "$P" --batch_size {B=24} --max_step {I} >ft.txt 2>/dev/null
grep -q "^24 .*fits (6 iterations: its peak rose after 3)" ft.txt || fail "table: $(grep '^24 ' ft.txt)"
echo "fit_rising: ok (largest $best: the program's own 8 steps fit it, and $((best + 1)) does not)"
