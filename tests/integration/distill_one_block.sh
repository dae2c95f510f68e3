#!/bin/sh
# distill_one_block.sh — a SIMULATED distillation (tests/python/distill_frozen.py) whose student
# has one block beside its frozen teacher's 12, on a 12 GiB card, trained 2 steps. The weights
# that take no gradient (the teacher's, 13 times the student's) are far more than a copy of the
# trained ones: the EMA row says they are a second, frozen model's, with the teacher's count, not
# that they "can hold a copy the program keeps itself" (it had, of the teacher's 2804.2 MiB). The
# layers, width and vocabulary are the student's or not known, never the teacher's (L 12, d 2048).
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 12GiB -o one.vt -- python3 "$ROOT/tests/python/distill_frozen.py" \
    --student_layers 1 --batch_size 4 </dev/null >one.out 2>&1 || { cat one.out; fail "the run failed"; }
grep -q "^trained 2 steps at batch 4" one.out || fail "$(tail -n 3 one.out)"
report_both one
python3 - one.out one.json <<'PY' || fail "$(grep 'EMA weights' one.txt)"
import json, re, sys
facts = dict(re.findall(r"(\w+)=(\d+)", open(sys.argv[1]).read().split("\n")[0]))
trainable, teacher = int(facts["trainable"]), int(facts["teacher"])
e = json.load(open(sys.argv[2]))["recognized"]["ema"]
# (the teacher's 12 blocks told apart: the second, frozen model named with its count; before
# that, the bytes beside the trained count)
m = re.search(r"the weights that take no gradient are a second, frozen model's \(a teacher or a "
              r"reference model: ([0-9.]+) M elements in blocks beside the trained model's\)", e["where"])
assert m and "can hold a copy" not in e["where"], e
assert abs(float(m.group(1)) - teacher / 1e6) <= 0.005, (m.group(1), teacher)
PY
# the layers, width and vocabulary are the student's, or not known: the teacher's 12 blocks took
# no gradient, the student's one repeats no block (L 12, d 2048 and "32000×2048" had been the
# teacher's, and the formula's transformer theirs)
python3 - one.out one.json <<'PY' || fail "$(grep -h 'layers L\|width d\|vocabulary V' one.txt)"
import json, re, sys
facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", open(sys.argv[1]).read().split("\n")[0])}
j = json.load(open(sys.argv[2]))
inf, bad = j["inferred"], []
for key, want in (("n_layer", facts["student_layers"]), ("n_embd", facts["student_d"]),
                  ("vocab_size", facts["vocab"])):
    got = inf.get(key, {}).get("value")
    if got is not None and got != want:
        bad.append(f"{key} {got} ({inf[key]['where']}), the student's {want}")
if inf.get("n_embd", {}).get("value") != facts["student_d"]:
    bad.append(f"width {inf.get('n_embd')}: the student's d {facts['student_d']} not read from its d×d weights")
for key in ("position_rows", "token_type_rows"):  # (the program's LM has no position table)
    if key in inf:
        bad.append(f"{key} {inf[key]}: the student's MLP weights taken for an embedding")
fz = inf.get("frozen_blocks", {})
if fz.get("value") != facts["teacher_layers"]:
    bad.append(f"frozen_blocks {fz}, the teacher's {facts['teacher_layers']} blocks")
for b in bad:
    print("distill_one_block:", b)
sys.exit(1 if bad else 0)
PY
echo "distill_one_block: ok (the teacher's weights are not offered as room for an EMA)"
