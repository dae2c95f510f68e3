#!/bin/sh
# sim_trainer_optim.sh — a Hugging Face Trainer script whose own TrainingArguments say
# optim="sgd" keeps no optimizer state: the Trainer makes torch.optim.SGD with the learning rate
# alone (no momentum). A SIMULATED GPT-2 medium Trainer run (sim_trainer.py with optim="sgd" in
# its call, B=4, 4 accumulation steps, bf16) runs out of memory in its first forward on 12 GiB,
# before any step: its report had assumed AdamW's 8 B per parameter (2.64 GiB), "needs ~20.18
# GiB", and recommended B=1 with 16 accumulation steps. Now "no state (plain SGD)", with its
# line, and B=2 with 8 steps recommended, whose run takes the tensors predicted (within 2 %), its
# process no more than predicted.
set -u
. "$ROOT/tests/sim_env.sh"
S="$ROOT/examples/sim"
# variant B A: the script as committed, its TrainingArguments' literals changed (the copy finds
# the simulation where the original does)
variant() {
    sed -e "s|^HERE = .*|HERE = \"$S\"|" -e 's|^sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))$|&\nsys.path.insert(0, HERE)|' \
        -e 's/optim="adamw_torch_fused",/optim="sgd",/' \
        -e "s/per_device_train_batch_size=4,/per_device_train_batch_size=$1,/" \
        -e "s/gradient_accumulation_steps=4,/gradient_accumulation_steps=$2,/" "$S/sim_trainer.py" >"trainer_sgd_b$1.py"
    grep -q 'optim="sgd",' "trainer_sgd_b$1.py" && grep -q "sys.path.insert(0, HERE)" "trainer_sgd_b$1.py" ||
        fail "the variant of sim_trainer.py was not made (its lines changed?)"
    timeout 300 "$VT" run -q --card 12GiB -o "b$1.vt" -- python3 "trainer_sgd_b$1.py" --model gpt2-medium \
        </dev/null >"b$1.out" 2>&1
    "$VT" report --json "b$1.vt" >"b$1.json" || fail "report of B=$1"
}
variant 4 4
variant 2 8
python3 - b4.json b4.out b2.json b2.out <<'PY' || fail "the SGD Trainer run: see above"
import json, sys
r4, r2 = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))
st4, st2 = (next(json.loads(l.split(" ", 1)[1]) for l in open(f) if l.startswith("VRAMTRACE_TORCH_STATS "))
            for f in (sys.argv[2], sys.argv[4]))
assert st4["oom"] and not st4["steps"] and not st2["oom"] and st2["optim_state_bytes"] == 0, \
    "not the case: %s %s" % (st4["oom"], st2)
o = r4["recognized"]["optimizer"]
assert o["kind"] == "none" and 'TrainingArguments(optim="sgd") (the script\'s own; the Trainer makes ' \
    "torch.optim.SGD with the learning rate alone: no momentum, no state" in o["where"], o
rec = [a for a in r4["advice"] if a.get("recommended")]
assert rec and rec[0]["command_line"] == "" and rec[0]["code_change"] == \
    "TrainingArguments(per_device_train_batch_size=2, gradient_accumulation_steps=8)", rec
pred, got = rec[0]["predicted_allocated_bytes"], r2["peak"]["allocated_bytes"]
assert abs(pred / got - 1) < 0.02, "tensors predicted %.2f GiB, measured %.2f" % (pred / 2**30, got / 2**30)
assert rec[0]["predicted_peak_bytes"] >= r2["peak"]["process_bytes"], rec[0]
PY
echo "sim_trainer_optim: ok"
