#!/bin/sh
# tbptt_accum.sh — accumulation under truncated BPTT is not "the same final model":
# tests/python/tbptt_lm.py (a SIMULATED LSTM language model, its cells written in the program, no
# attention; --batch_size is the number of streams, each one's hidden state carried from batch to
# batch, detached) at 64 streams on a 12 GiB card. The accumulation what-ifs had said "same
# effective batch 64, the same final model where the loss scores each sample alone (...)": 32
# streams cut the corpus otherwise and carry a state 32 rows wide, and accumulating two such
# batches needs a state kept for each. Now they say that the program carries a state (its name and
# the line that detaches it, read from the recorded script) and that this is another run; the
# what-if that only shrinks the batch is unchanged.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/tbptt_lm.py"
timeout 300 "$VT" run -q --card 12GiB -o t.vt -- python3 "$P" --batch_size 64 </dev/null >t.out 2>&1
report_both t
python3 - "$P" t.out t.json t.txt <<'PY' || fail "see above"
import json, sys
src, out, tj, ttxt = sys.argv[1:]
t = next(json.loads(l.split(" ", 1)[1]) for l in open(out) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] >= 2 and t["grad_accum"] == 1, t  # (the case: a state carried)
name = t["carried_state"]
line = next(i + 1 for i, l in enumerate(open(src)) if l.strip().startswith(name + " = ") and ".detach()" in l)
said = "not the same final model: the program carries a state from one batch to the next (%s, tbptt_lm.py:%d" % (name, line)
acc = [a for a in json.load(open(tj))["advice"] if (a["gradient_accumulation_steps"] or 1) > 1]
assert acc, "no accumulation what-if"
for a in acc:
    b = a["batch_size"]
    assert said in a["note"] and ("micro-batches of %d are not the batch of %d" % (b, t["streams"])) in a["note"], a["note"]
    assert "the same final model where" not in a["note"], a["note"]
text = open(ttxt).read()
assert "the same final model where" not in text and said in text, "text"
assert "effective batch 32 instead of 64" in text, "the smaller batch's what-if"
PY
echo "tbptt_accum: ok (a state carried across batches: the accumulation what-ifs say another run)"
