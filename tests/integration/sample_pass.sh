#!/bin/sh
# sample_pass.sh — a sampling pass during training, in a function decorated @torch.no_grad() (no
# model.eval(), no function named evaluate) with a batch of its own (--sample_batch):
# tests/python/sample_pass.py (a SIMULATED GPT-2 124M trained at a micro-batch of 4, sampling a
# batch of --sample_batch after its second step) on a 12 GiB card. At 32 its sampling runs out of
# memory (the program's own truth: oom_phase "sampling"); the report had said "during forward"
# and recommended a smaller micro-batch (each keeps the sampling's batch of 32, which ran out of
# memory), and a diffusion model's sampling pass in main, seen as an evaluation, had been told
# "recommended: micro-batch 32 -> 16" with its --sample_batch never named. Now the error is the
# sampling pass's, no micro-batch is recommended and --sample_batch is named (report, predict
# --from); at 8 the run fits and its sampling's peak is the eval phase's, not the forward's.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, the sampling's batch
    timeout 300 "$VT" run -q --card 12GiB -o "$1.vt" -- python3 "$ROOT/tests/python/sample_pass.py" \
        --batch_size 4 --sample_batch "$2" </dev/null >"$1.out" 2>&1
    report_both "$1"
}
run oom 32
run fits 8
python3 - oom.json oom.out fits.json fits.out <<'PY' || fail "see above"
import json, sys
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
r, t, f, tf = json.load(open(sys.argv[1])), truth(sys.argv[2]), json.load(open(sys.argv[3])), truth(sys.argv[4])
assert t["oom"] and t["oom_phase"] == "sampling" and t["steps"] == 2, t  # (the case)
assert r["oom"]["phase"] == "eval", r["oom"]["phase"]
assert r["iterations"] == t["steps"], r["iterations"]
# no smaller micro-batch recommended: each keeps the sampling's batch of 32
assert not [a for a in r["advice"] if a["recommended"]], [a["change"] for a in r["advice"] if a["recommended"]]
assert not tf["oom"] and tf["samplings"] == 1, tf
ph = f["phases"]
assert ph.get("eval", 0) > ph["forward"], ph
PY
grep -q "during eval;" oom.txt || fail "oom: $(grep '^OOM' oom.txt)"
grep -q "in a sampling pass with a batch of its own (--sample_batch 32 on the command line)" oom.txt ||
    fail "oom: the sampling's flag not named: $(grep -A3 '^advice' oom.txt)"
grep -q "recommended: micro-batch" oom.txt && fail "oom: $(grep 'recommended:' oom.txt)"
"$VT" predict --from oom.vt >p.txt 2>&1 || fail "predict --from: $(tail -n 2 p.txt)"
grep -q "^none recommended: every micro-batch keeps the sampling's batch (--sample_batch 32)" p.txt ||
    fail "predict --from: $(grep -i 'recommended\|largest micro' p.txt)"
echo "sample_pass: ok (the sampling pass's out-of-memory error said as one; --sample_batch named)"
