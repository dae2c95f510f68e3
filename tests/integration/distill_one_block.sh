#!/bin/sh
# distill_one_block.sh — a SIMULATED distillation (tests/python/distill_frozen.py) whose student
# has one block beside its frozen teacher's 12, on a 12 GiB card, trained 2 steps. The weights
# that take no gradient (the teacher's, 13 times the student's) are far more than a copy of the
# trained ones: the EMA row says so, naming the student's count and the teacher's bytes, not
# that they "can hold a copy the program keeps itself" (it had, of the teacher's 2804.2 MiB).
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
m = re.search(r"; ([0-9.]+) MiB of weights take no gradient, (\d+)x an fp32 copy of the ([0-9.]+) M "
              r"that do: besides any copy of them kept, frozen weights", e["where"])
assert m and "can hold a copy" not in e["where"], e
assert abs(float(m.group(1)) - teacher * 4 / 2**20) <= 0.05, (m.group(1), teacher)
assert abs(float(m.group(3)) - trainable / 1e6) <= 0.005, (m.group(3), trainable)
assert int(m.group(2)) == round(teacher / trainable), (m.group(2), teacher / trainable)
PY
echo "distill_one_block: ok (the teacher's weights are not offered as room for an EMA)"
