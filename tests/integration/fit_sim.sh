#!/bin/sh
# fit_sim.sh — `vramtrace fit` on the SIMULATION (examples/sim/sim_train.py, fake CUDA, cards
# emulated by --card): the micro-batch it finds equals a brute-force sweep of `vramtrace run`
# + `report --json` under the same rule (no OOM, peak within 95 % of the card), with {A}
# keeping B*A and without; --json's shape; Ctrl-C keeps the table; usage errors exit 2.
# CONSISTENCY CHECK of fit's search: the sweep measures with the same `vramtrace run` + report
# (whose peaks sim_programs.sh holds to the simulated programs' own counters).
# runs: early (fit against a sweep of simulated runs: about 2 minutes)
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SIM="$ROOT/examples/sim/sim_train.py"
CFG="$ROOT/examples/gpt/config/gpt2-124m-12gb.py"
ARGS="--eval_iters=1 --eval_interval=1000 --compile=False"

# brute CARD B...: the largest B that fits with 5 % headroom, each B run and reported alone
brute() {
    card=$1
    shift
    best=0
    for b in "$@"; do
        # shellcheck disable=SC2086
        "$VT" run --card "$card" -q -o "bf$card.$b.vt" -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=2 \
            --batch_size="$b" --gradient_accumulation_steps=$((512 / b)) >"bf$card.$b.out" 2>&1
        rc=$?
        "$VT" report --json "bf$card.$b.vt" >"bf$card.$b.json" || fail "report of B=$b failed"
        ok=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
cap = d["emulated_card"]["bytes"]
print(int(sys.argv[2] == "0" and d["oom"] is None and d["peak"]["process_bytes"] <= cap // 100 * 95))
' "bf$card.$b.json" "$rc") || fail "reading the report of B=$b"
        [ "$ok" = 1 ] && best=$b
    done
    echo "$best"
}

# 1. with {A}: candidates divide 512, start at {B=16}
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --json --dir fa -- "$PY" "$SIM" "$CFG" $ARGS --max_iters={I} \
    --batch_size={B=16} --gradient_accumulation_steps={A=32} >fa.json 2>fa.err
rc=$?
[ $rc = 0 ] || { cat fa.err; fail "fit with {A}: exit $rc"; }
want=$(brute 12GiB 1 2 4 8 16 32)
"$PY" - fa.json "$want" <<'PYEOF' || fail "fit with {A} disagrees with the sweep (see above)"
import json, sys
d, want = json.load(open(sys.argv[1])), int(sys.argv[2])
print("fit (12GiB, {A}):", [(t["batch_size"], t["gradient_accumulation_steps"], t["fits"]) for t in d["trials"]],
      "best", d["best"], "brute force", want)
assert want > 0
assert d["best"] == {"batch_size": want, "gradient_accumulation_steps": 512 // want, "at_search_limit": False,
                     "is_micro_batch": True}, d["best"]
for t in d["trials"]:
    assert 512 % t["batch_size"] == 0 and t["batch_size"] * t["gradient_accumulation_steps"] == 512, t
    assert set(t) >= {"batch_size", "peak_bytes", "fits", "oom", "seconds", "grew_most"}, t
    assert t["peak_bytes"] > 0 and t["capacity_bytes"] == 12 << 30, t
    if t["oom"]:
        assert not t["fits"] and t["grew_most"], t
assert d["trials"][0]["batch_size"] < d["trials"][-1]["batch_size"], "trials not sorted"
assert d["interrupted"] is False and d["failed"] is False
for t in d["trials"]:  # each trial ran the accumulation it names, as its trace shows
    assert t["trial_accumulation_steps"] == t["gradient_accumulation_steps"], t
    assert t["micro_steps_per_optimizer_step"] in (None, t["gradient_accumulation_steps"]), t
PYEOF
grep -q 'trying micro-batch 16 x 32' fa.err || fail "progress on stderr missing: $(cat fa.err)"

# 1b. the program accumulates ({A=2}): where the effective batch leaves one micro-step (B=2,
# A=1), the trial still runs two, so that it holds a step's gradients through the next forward
# (issue 26: GPT-2 medium fit at B=2 in a trial of one micro-step, then ran out of memory with
# 4); the trace shows the two, the note says so
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --json --max-b 2 --dir fg -- "$PY" "$SIM" "$CFG" $ARGS --max_iters={I} \
    --batch_size={B=1} --gradient_accumulation_steps={A=2} >fg.json 2>fg.err ||
    { cat fg.err; fail "fit with {A=2}: exit $?"; }
"$PY" - fg.json <<'PYEOF' || fail "a trial of one micro-step for a program that accumulates"
import json, sys
d = json.load(open(sys.argv[1]))
t2 = [t for t in d["trials"] if t["batch_size"] == 2][0]
assert t2["gradient_accumulation_steps"] == 1 and t2["trial_accumulation_steps"] == 2, t2
assert t2["micro_steps_per_optimizer_step"] == 2, t2
assert "ran two" in d["accumulation_note"], d["accumulation_note"]
PYEOF

# 2. without {A}: every B from 1, a smaller card (the boundary falls between powers of two)
# shellcheck disable=SC2086
"$VT" fit --card 9GiB --max-b 12 --iters 1 --dir fb -- "$PY" "$SIM" "$CFG" $ARGS --max_iters={I} \
    --gradient_accumulation_steps=1 --batch_size={B} >fb.txt 2>fb.err
rc=$?
[ $rc = 0 ] || { cat fb.err fb.txt; fail "fit without {A}: exit $rc"; }
got=$(sed -n 's/^largest micro-batch that fits with 5 % headroom on 9.00 GiB: \([0-9]*\)$/\1/p' fb.txt)
best=0
for b in 1 2 3 4 5 6 7 8 9 10 11 12; do
    # shellcheck disable=SC2086
    "$VT" run --card 9GiB -q -o "s$b.vt" -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 \
        --gradient_accumulation_steps=1 --batch_size="$b" >"s$b.out" 2>&1
    rc=$?
    "$VT" report --json "s$b.vt" >"s$b.json" || fail "report of B=$b failed"
    ok=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(int(sys.argv[2] == "0" and d["oom"] is None and d["peak"]["process_bytes"] <= (9 << 30) // 100 * 95))
' "s$b.json" "$rc")
    [ "$ok" = 1 ] && best=$b
done
echo "fit (9GiB): $got; brute force: $best"
cat fb.txt
# one optimizer step a trial (--iters 1): what fits is said not to measure a second step's
# forward, which holds the state the first made after its own (a Llama 160M's B=9 had fit one
# step at 11.22 GiB with no word; its two-step run peaked at 11.76, over the headroom); the
# default's two steps say nothing of it
grep -q "^note: a trial that fits ran one optimizer step" fb.txt || fail "--iters 1: no word of a second step"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["steps_note"] is None and all(t["optimizer_steps"] >= 2 for t in d["trials"] if t["fits"]), d["steps_note"]' fa.json ||
    fail "two steps a trial: steps_note given"
[ "$best" -gt 1 ] && [ "$best" -lt 12 ] || fail "the sweep's boundary ($best) does not test the bisection"
[ "$got" = "$best" ] || fail "fit found ${got:-nothing}, the brute-force sweep $best"
[ -f fb/b1/output.log ] && ls fb/b1/*.vt >/dev/null 2>&1 || fail "trial traces / output not kept in --dir"
# without {A}, trials of one backward per optimizer step: said, with what to do if it accumulates
grep -q '^note: each trial ran one backward per optimizer step: if the training accumulates' fb.txt ||
    fail "no accumulation note: $(cat fb.txt)"

# 3. Ctrl-C during a trial: the table so far is printed, exit 2
# shellcheck disable=SC2016,SC2086
"$VT" fit --card 12GiB --dir fc -- sh -c \
    'b=$1; shift; "$@" --batch_size="$b" || exit; [ "$b" = 1 ] || exec sleep 30' sh {B} \
    "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 >fc.txt 2>fc.err &
pid=$!
i=0
while [ ! -d fc/b2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
[ $rc = 2 ] || { cat fc.txt fc.err; fail "interrupted fit: exit $rc, expected 2"; }
grep -q '^1  ' fc.txt && grep -q 'interrupted' fc.txt || { cat fc.txt; fail "the table so far is not printed"; }

# 4. nothing fits: exit 1; a trial that fails without running out of memory: exit 2, its log named
# shellcheck disable=SC2086
"$VT" fit --card 1GiB --dir fd -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} >fd.txt 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'no micro-batch fits, not even 1' fd.txt || { cat fd.txt; fail "nothing fits: exit $rc"; }
# shellcheck disable=SC2086
"$VT" fit --card 1GiB --json --dir fd -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} >fd.json 2>/dev/null
"$PY" - fd.json <<'PYEOF' || fail "nothing fits: --json wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["best"] is None and len(d["trials"]) == 1, d
t = d["trials"][0]
assert t["batch_size"] == 1 and t["gradient_accumulation_steps"] is None and t["oom"] and not t["fits"], t
PYEOF
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --json --dir fe -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} \
    --no_such_knob=1 >fe.json 2>fe.err
rc=$?
[ $rc = 2 ] && grep -q 'failed at micro-batch 1 (exit 2) without running out of GPU memory' fe.err &&
    grep -q '"failed":true' fe.json || { cat fe.err fe.json; fail "failing command: exit $rc"; }

# 4b. every candidate up to --max-b fits: the answer is a lower bound, said so (it had said
# "largest micro-batch that fits ...: 4" where 6 fits); an evaluation (no backward) is never told
# to mark its gradient accumulation
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --max-b 2 --json --dir fl -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} >fl.json 2>/dev/null ||
    fail "--max-b 2: exit $?"
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --max-b 2 --dir fl2 -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} >fl.txt 2>/dev/null
grep -q "that fits with 5 % headroom on 12.00 GiB: at least 2 (the search's limit: nothing larger was tried; --max-b N searches further)" fl.txt ||
    { cat fl.txt; fail "--max-b 2: not said to be the search's limit"; }
"$PY" -c 'import json,sys; b=json.load(open(sys.argv[1]))["best"]; assert b["batch_size"] == 2 and b["at_search_limit"] is True, b' fl.json ||
    fail "--max-b 2: JSON best.at_search_limit"
# with {A}, a --max-b below the effective batch is a search limit too (--max-b 3 of an effective
# 512 had said "2, accumulate 256", at_search_limit false, where 4 fits)
# shellcheck disable=SC2086
"$VT" fit --card 12GiB --max-b 3 --json --dir fla -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 \
    --batch_size={B=16} --gradient_accumulation_steps={A=32} >fla.json 2>/dev/null || fail "--max-b 3 with {A}: exit $?"
"$PY" -c 'import json,sys; b=json.load(open(sys.argv[1]))["best"]; assert b["batch_size"] == 2 and b["at_search_limit"] is True, b' fla.json ||
    fail "--max-b 3 with {A}: JSON best.at_search_limit"
"$VT" fit --card 12GiB --max-b 2 --dir fv -- "$PY" "$ROOT/examples/sim/sim_hf.py" --model gpt2 --eval-only \
    --batch-size {B} --steps 1 >fv.txt 2>/dev/null || { cat fv.txt; fail "an evaluation's fit failed"; }
grep -q 'accumulat' fv.txt && fail "an evaluation (no backward) told of accumulation: $(grep accumulat fv.txt)"

# an OOM trial says the request it refused, and with no smaller fit the largest category, not
# what "grew most" from nothing
# shellcheck disable=SC2086
"$VT" fit --card 1GiB --json --dir fo -- "$PY" "$SIM" "$CFG" $ARGS --max_iters=1 --batch_size={B} >fo.json 2>/dev/null
"$PY" - fo.json <<'PYEOF' || fail "an OOM trial's request / grew_since_batch_size"
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
assert t["oom"] and t["requested_bytes"] > 0 and t["grew_since_batch_size"] is None, t
PYEOF
grep -q '^1  .*OOM asking [0-9.]* [KMG]i\?B (.* the largest: no smaller fit)' fd.txt || { cat fd.txt; fail "no smaller fit: the verdict"; }
# a trial out of memory first (the starting micro-batch), smaller ones fitting later: what grew
# since the largest of them, never "no smaller fit" beside them (a diffusion U-Net from B=16 on
# 4 GiB: 8, 10 and 11 fit after 16 had been told "the largest: no smaller fit")
"$VT" fit --card 4GiB --json --dir fu -- "$PY" "$ROOT/examples/sim/sim_diffusion.py" --batch-size {B=16} \
    --steps {I} >fu.json 2>/dev/null
"$PY" - fu.json <<'PYEOF' || fail "an OOM trial before smaller fits: grew_since_batch_size"
import json, sys
tr = json.load(open(sys.argv[1]))["trials"]
t = next(x for x in tr if x["batch_size"] == 16)
fit = max(x["batch_size"] for x in tr if x["fits"] and x["batch_size"] < 16)
assert t["oom"] and t["grew_since_batch_size"] == fit, (t, fit)
PYEOF

# 5. usage errors
"$VT" fit -- true >u.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q '{B}' u.txt || fail "no {B}: exit $rc"
"$VT" fit -- echo '{B}' '{A}' >u.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'effective' u.txt || fail "{A} without the effective batch: exit $rc"
"$VT" fit --max-b 0 -- echo '{B}' >u.txt 2>&1; rc=$?
[ $rc = 2 ] || fail "--max-b 0: exit $rc"
"$VT" fit --help | grep -q -- '--iters' || fail "--help lacks --iters"
echo ok
