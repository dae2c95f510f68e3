#!/bin/sh
# batch_flag_unplaced.sh — batch flags spelled as RL trainers spell them: tests/python/ppo_flags.py
# (SIMULATED; a model with no position ids, so the trace tells no T and no micro-batch) run with
# --rollout_batch_size 8 --mini_batch_size 2. The unknown micro-batch had been "the command line
# does not give it, and no flag of the recorded ppo_flags.py sets it", with both flags on that
# command line; report, its JSON (config_batch_flags_unplaced), the formula's reason and predict
# --from (the trace and the report's JSON) now name them as given (not --eval_batch_size 4, an
# evaluation's batch flag, which is read as such where a run peaks in its evaluation).
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o p.vt -- python3 "$ROOT/tests/python/ppo_flags.py" \
    --rollout_batch_size 8 --mini_batch_size 2 --eval_batch_size 4 </dev/null >p.out 2>&1 || fail "run: $(tail -n 2 p.out)"
report_both p
given="the command line gives --rollout_batch_size 8, --mini_batch_size 2, none a flag vramtrace reads as the micro-batch"
grep -q "^  micro-batch B  *unknown  *unknown: $given" p.txt || fail "report: $(grep 'micro-batch B' p.txt)"
grep -q "^formula: not applied\..*needs the micro-batch B, which neither the trace nor the program's batch flags (--rollout_batch_size 8, --mini_batch_size 2) tell" p.txt ||
    fail "formula: $(grep '^formula' p.txt)"
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); v = d['config_batch_flags_unplaced']; assert v == '--rollout_batch_size 8, --mini_batch_size 2', v; assert d['config']['batch_size']['value'] is None" p.json ||
    fail "JSON config_batch_flags_unplaced"
for f in p.vt p.json; do
    "$VT" predict --from "$f" >pr.out 2>pr.err && fail "predict --from $f: exit 0"
    grep -q "micro-batch is not known ($given" pr.err || fail "predict --from $f: $(cat pr.err)"
done
echo "batch_flag_unplaced: ok (batch flags vramtrace does not read are named, never said absent)"
