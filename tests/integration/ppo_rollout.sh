#!/bin/sh
# ppo_rollout.sh — a PPO-style loop whose rollout (model.eval(); with torch.no_grad(): a forward
# over --rollout_batch_size sequences, their old logits kept) and whose updates (mini-batches of
# --mini_batch_size sliced from the rollout, each with its backward and step) share one loop
# body: tests/python/ppo_iter.py (a SIMULATED GPT-2 124M, 12 heads) on a 12 GiB card. The
# rollout is a no-grad pass whose outputs the step uses, not a training forward: its peak and
# its out-of-memory error are said as that pass's, its own batch flag named (the script reads it
# there), and no micro-batch is read from it: the report had said "during forward", "cause: the
# tensors of one micro-batch", "recommended: micro-batch 24 -> 8, accumulation 1 -> 3", "B = 8"
# for a mini-batch of 2, and "H = 3" from the updates' log-sum-exp rows over the rollout's tokens;
# a program's own decoder that trained, its token batch read in the rollout, "ended before its
# first forward's end"; its prompts made before the block, "H = 4" of its 16 heads; out of
# memory in its first rollout (--own at 300), its tokens "in an evaluation's forward".
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/ppo_iter.py"
run() { # NAME ROLLOUT [ARGS...]
    n=$1 r=$2
    shift 2
    timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" -- python3 "$P" --rollout_batch_size "$r" "$@" \
        </dev/null >"$n.out" 2>&1
    report_both "$n"
}
truth() { # NAME KEY: the program's own value
    python3 - "$1.out" "$2" <<'PY'
import json, sys
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS "))
print(t[sys.argv[2]])
PY
}
run fits 8
run oom 24
run own 8 --own
run gen 8 --own --gen_tokens 1
run first 300 --own
[ "$(truth fits oom)" = False ] && [ "$(truth oom oom_phase)" = rollout ] ||
    fail "the program's truth: fits oom $(truth fits oom), oom phase $(truth oom oom_phase)"
heads=$(sed -n 's/^FACTS .*n_head=\([0-9]*\).*/\1/p' fits.out)
mini=$(sed -n 's/^FACTS .*mini_batch=\([0-9]*\).*/\1/p' fits.out)
# H from the rows of the pass that made them, or not known; B never the rollout's
python3 - fits.json "$heads" "$mini" <<'PY' || fail "fits: configuration read from the rollout"
import json, sys
c = json.load(open(sys.argv[1]))["config"]
h, b = c["n_head"]["value"], c["batch_size"]["value"]
assert h in (None, int(sys.argv[2])), ("n_head", h, c["n_head"]["where"])
assert b in (None, int(sys.argv[3])), ("batch_size", b, c["batch_size"]["where"])
PY
grep -q "^  eval " fits.txt || fail "fits: the rollout's pass is no phase of its own: $(grep -A6 '^Peak by phase' fits.txt)"
# its peak, in the rollout after the first updates: that pass's, and its batch no evaluation's
grep -q "the tensors' peak came in the no-grad pass whose outputs the step uses (phase eval)" fits.txt ||
    fail "fits: $(grep 'came in the' fits.txt)"
grep -q "^  - rollout batch 8 → " fits.txt && grep -q "not the training as it ran: the steps train on that pass's outputs" fits.txt ||
    fail "fits: $(grep -A3 'batch 8 →' fits.txt)"
# the program's own decoder (16 heads), its prompts made before the block (their lookup in it):
# no heads from the updates' rows over the rollout's tokens (it had been "H = 4"); a token
# generated from the last position first: no "first forward did not end" for a run that trained
oheads=$(sed -n 's/^FACTS .*n_head=\([0-9]*\).*/\1/p' own.out)
python3 - own.json "$oheads" <<'PY' || fail "own: heads read from the rollout's tokens"
import json, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["n_head"]["value"] in (None, int(sys.argv[2])), ("n_head", c["n_head"])
PY
grep -q "did not end\|before its first forward's end" gen.txt && fail "gen: $(grep 'did not end\|forward.s end' gen.txt)"
# the out-of-memory error: the rollout's pass, its flag, no micro-batch recommended
grep -q "^OOM: .* during a no-grad pass whose outputs the step uses " oom.txt ||
    fail "oom: $(grep '^OOM' oom.txt)"
grep -q "in a rollout pass with a batch of its own (--rollout_batch_size 24 on the command line)" oom.txt ||
    fail "oom: the rollout's flag not named: $(grep -A4 '^advice' oom.txt)"
grep -q "recommended: micro-batch\|during forward\|in an evaluation pass\|its evaluation's results" oom.txt &&
    fail "oom: $(grep 'recommended:\|during\|evaluation' oom.txt)"
# given the updates' micro-batch, predict keeps the rollout's batch in every what-if
"$VT" report --json --batch-size "$mini" oom.vt >b.json || fail "report --batch-size $mini failed"
"$VT" predict --from b.json >p.txt 2>&1 || fail "predict --from: $(tail -n 2 p.txt)"
grep -q "^none recommended: every micro-batch keeps the rollout's batch (--rollout_batch_size 24)" p.txt ||
    fail "predict --from: $(grep -i 'recommended\|largest micro' p.txt)"
# out of memory in its first rollout, no update before it: the token batch read is the rollout's,
# said as its pass's (it had been "in an evaluation's forward")
[ "$(truth first oom_phase)" = rollout ] && [ "$(truth first steps)" = 0 ] ||
    fail "first: the program's truth: $(truth first oom_phase), $(truth first steps) steps"
python3 - first.json <<'PY' || fail "first: the rollout's tokens said as an evaluation's"
import json, sys
w = json.load(open(sys.argv[1]))["inferred"]["tokens"]["where"]
assert "evaluation's forward" not in w and "a no-grad pass whose outputs the step uses" in w, w
PY
echo "ppo_rollout: ok (the rollout's peak and out-of-memory error said as its no-grad pass's, --rollout_batch_size named)"
