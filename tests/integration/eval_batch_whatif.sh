#!/bin/sh
# eval_batch_whatif.sh — a training run whose tensors peaked in an evaluation with a batch of its
# own, which completed, is offered that batch lowered (the training as it ran; the evaluation's
# batch-sized tensors scaled and added on top of the training's, none placed in its cache: an
# upper bound). A SIMULATED BERT-base trained at B=16 for one step, evaluating 64 after it on a 12
# GiB card (one allocator retry), is told "evaluation batch 64 -> N" with its own flag, and the run
# at N, measured, completes with no retry at or below the peak predicted; the committed GPT-2 run
# (B=4, evaluation 16, a retry) likewise. An evaluation cut short by an out-of-memory failure gets
# no such row: what it would have made after the failed request is not measured (a GPT-2
# evaluating 48 beside B=2 had been told 48 -> 17 at 11.14 GiB, "an upper bound"; at 17 it took
# 11.55 after a retry).
set -u
. "$ROOT/tests/sim_env.sh"
sim() { # name, arguments of sim_hf.py
    n=$1
    shift
    timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" "$@" \
        </dev/null >"$n.out" 2>&1
    "$VT" report --json "$n.vt" >"$n.json" || fail "$n: report"
}
# what the report recommends (its JSON, text and page alike): "FLAG N PEAK"
recommended() { # name, the evaluation's batch
    "$VT" report --no-color "$1.vt" >"$1.txt" && "$VT" report --html "$1.html" "$1.vt" >/dev/null ||
        fail "$1: report"
    python3 - "$1.json" "$1.txt" "$1.html" "$2" <<'PY' || fail "$1: see above"
import html, json, sys
r, txt, page, e = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), open(sys.argv[3]).read(), int(sys.argv[4])
rec = r["advice"][0]
assert rec["recommended"], rec
n = rec["evaluation_batch"]
assert n and 1 <= n < e, rec
assert rec["change"] == "evaluation batch %d \u2192 %d" % (e, n), rec["change"]
assert rec["command_line"] == "--eval-batch-size %d" % n, rec["command_line"]
assert rec["fits"] and rec["predicted_peak_at"] == "evaluation", rec
assert "an upper bound" in rec["note"], rec["note"]
cal = r["prediction"]["calibration"]
assert cal["evaluation_batch"] == e and cal["evaluation_training_bytes"] > 0, cal
assert 0 < cal["evaluation_batch_scaled_bytes"] <= cal["evaluation_tensor_bytes"], cal
for x in r["advice"][1:]:  # the other rows keep the evaluation as it ran
    assert x["evaluation_batch"] is None and not x["recommended"], x
assert "  recommended: " + rec["change"] + "\n" in txt, [l for l in txt.splitlines() if "recommended" in l]
assert "change: " + rec["command_line"] in txt
assert html.escape(rec["change"]) in page or rec["change"] in page, "the page lacks the row"
print("--eval-batch-size", n, rec["predicted_peak_bytes"])
PY
}
# the measured run at the recommended batch: complete, no retry, at or below the prediction
measured() { # name, predicted peak
    python3 - "$1.json" "$1.out" "$2" <<'PY' || fail "$1: see above"
import json, sys
r = json.load(open(sys.argv[1]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not st["oom"] and st["num_alloc_retries"] == 0, (st["oom"], st["num_alloc_retries"])
assert r["peak"]["process_bytes"] <= int(sys.argv[3]), (r["peak"]["process_bytes"], sys.argv[3])
print("measured %.2f GiB, predicted at most %.2f" % (r["peak"]["process_bytes"] / 2**30, int(sys.argv[3]) / 2**30))
PY
}
sim base --model bert-base --batch-size 16 --eval-batch-size 64 --steps 1
grep -q '"oom": false' base.out || fail "base: the run ran out of memory"
set -- $(recommended base 64)
[ "$1" = "--eval-batch-size" ] || fail "base: $*"
sim rec --model bert-base --batch-size 16 --eval-batch-size "$2" --steps 3
measured rec "$3" || exit 1
# the training the calibration holds, measured through its one step (the optimizer's state added
# for the steps after it): the run at the recommended batch, three steps, held no more (2 %)
python3 -c "
import json
o, r = json.load(open('base.json')), json.load(open('rec.json'))
train = o['prediction']['calibration']['evaluation_training_bytes']
assert train >= 0.98 * r['peak']['allocated_bytes'], (train, r['peak']['allocated_bytes'])
" || fail "the training's tensors beside the evaluation"
echo "BERT: 64 -> $2"
# an evaluation that ran out of memory: no row (nor one for a count of batches: --max_eval_batches)
sim cut --model gpt2 --batch-size 2 --eval-batch-size 48 --steps 3
grep -q '"oom_phase": "eval"' cut.out || fail "cut: the evaluation did not run out of memory"
python3 -c "
import json
r = json.load(open('cut.json'))
assert all(x['evaluation_batch'] is None for x in r['advice']), [x['change'] for x in r['advice']]
assert r['prediction']['calibration']['evaluation_training_bytes'] == 0
" || fail "cut: an evaluation row from an evaluation cut short"
# ... and every what-if keeps that evaluation, whose need past its failure is not measured: lower
# bounds, none recommended (a GPT-2 at B=4 evaluating 32 had been recommended B=2 with 2
# micro-steps, then use_cache=False at 11.30 GiB, "fits": each ran out of memory in its evaluation)
sim cut4 --model gpt2 --batch-size 4 --eval-batch-size 32 --steps 3
"$VT" report --no-color cut4.vt >cut4.txt || fail "cut4: report"
python3 -c "
import json
for n in ('cut', 'cut4'):
    r = json.load(open(n + '.json'))
    assert r['oom']['phase'] == 'eval', (n, r['oom']['phase'])
    assert not any(x['recommended'] for x in r['advice']), (n, [x['change'] for x in r['advice'] if x['recommended']])
    assert all(x['predicted_peak_at_least'] for x in r['advice']), n
    assert any('none is recommended' in t for t in r['prediction']['notes']), (n, r['prediction']['notes'])
" || fail "an evaluation cut short: see above"
grep -q '^  recommended' cut4.txt && fail "cut4: $(grep '^  recommended' cut4.txt)"
grep -q 'every what-if keeps that pass, whose need past the request that failed was not measured, so they are lower bounds and none is recommended' cut4.txt ||
    fail "cut4: the note is not said"
# the page's timeline has the OOM's moment: its categories there are the OOM column's (the last
# point before the OOM line had 1.50 GiB of temporaries where the column says 1.45)
"$VT" report --html cut4.html cut4.vt >/dev/null && "$VT" report --json cut4.vt >cut4.json || fail "cut4: page"
python3 - cut4.html cut4.json <<'PY' || fail "cut4: the page's timeline at the OOM"
import json, re, sys
page, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
d = json.loads(re.search(r'<script[^>]*id="vt-data"[^>]*>(.*?)</script>', page, re.S).group(1))
t, v, at = d["t"], d["v"], d["oom"]["t"]
i = max(j for j in range(len(t)) if t[j] <= at + 1e-9)
live = r["oom"]["live_by_category"]
for k, series in v.items():  # (a category never held is 0, not a series)
    got = series[i] if isinstance(series, list) else series
    assert got == live.get(k, 0), (k, got, live.get(k))
PY
# predict --from says the same (it had said "not even a micro-batch of 1 fits: use a smaller
# model, smaller inputs ... or activation checkpointing", and its lower bound "the rest of the
# run's first forward was not measured")
"$VT" predict --from cut4.vt --card 12GiB >p4.txt 2>&1 && "$VT" predict --from cut4.vt --card 12GiB --json >p4.json ||
    fail "predict --from cut4"
grep -q "^none recommended: every micro-batch keeps the evaluation's batch (--eval-batch-size 32), which ran out of memory; lower that batch (vramtrace fit measures)$" p4.txt &&
    grep -q "a lower bound: the run ran out of memory in its evaluation (--eval-batch-size 32)" p4.txt &&
    ! grep -q "first forward was not measured\|not even a" p4.txt || fail "predict --from cut4: $(tail -n 3 p4.txt)"
python3 -c "
import json
assert json.load(open('p4.json'))['recommended'] is None
" || fail "predict --from cut4 --json recommends"
# the committed GPT-2 run: B=4, its evaluation of 16 after each step (a retry there)
cp "$ROOT/examples/traces/sim/gpt2_evalb16_b4_fit.vt" g.vt && "$VT" report --json g.vt >g.json || fail "g: report"
set -- $(recommended g 16)
sim grec --model gpt2 --batch-size 4 --eval-batch-size "$2" --steps 2
measured grec "$3" || exit 1
echo "GPT-2: 16 -> $2"
# a run whose tensors peaked in training has no such row
"$VT" report --json "$ROOT/examples/traces/sim/bert_b16_fit.vt" >t.json 2>/dev/null ||
    "$VT" report --json "$(ls "$ROOT"/examples/traces/sim/*.vt | head -n 1)" >t.json || fail "t: report"
python3 -c "
import json, sys
r = json.load(open('t.json'))
assert all(x['evaluation_batch'] is None and not x['change'].startswith('evaluation batch') for x in r['advice']), r['advice']
" || fail "a row for an evaluation that did not peak"
echo "eval_batch_whatif: ok"
