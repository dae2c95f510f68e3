#!/bin/sh
# ema_frozen_explained.sh — weights that take no gradient for a reason the report knows are not
# room for an EMA the program keeps itself: a SIMULATED Llama-400M with peft's LoRA (rank 16; its
# base frozen) and a GPT-2 distilled from a frozen GPT-2 medium teacher (sim_hf.py) had been told
# "EMA weights unknown not recognised: ...; 1426.2 MiB of weights take no gradient, which can
# hold a copy the program keeps itself" when they fit, "off" when they ran out of memory in their
# first forward. Now "off" in both, with what explains them (the teacher's elements: the
# program's own count of its weights less its trainable ones). A teacher of the student's own
# size stays "unknown": the program's own EMA copy of the student (copy.deepcopy) has those sizes.
# Out of memory in the student's first forward, after the teacher's (its copies freed after each
# use, the student's kept: the trainable count, a lower bound), the teacher's elements are said
# too, the trace's weights less the student's formula P (less the weights whose copies were kept,
# which leave out the student's position table and norms, never cast, it would be 355.54 M).
set -u
. "$ROOT/tests/sim_env.sh"
# name | card | sim_hf.py's flags | words the EMA row must hold
while IFS='|' read -r name card flags words; do
    # shellcheck disable=SC2086
    timeout 300 "$VT" run -q --card "$card" -o "$name.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        $flags --steps 2 </dev/null >"$name.out" 2>&1
    "$VT" report --json "$name.vt" >"$name.json" || fail "$name: report failed"
    python3 - "$name" "$words" <<'PY' || fail "$name: the EMA row"
import json, sys
name, words = sys.argv[1], sys.argv[2]
t = next(json.loads(l.split(" ", 1)[1]) for l in open(name + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["ema"] and t["oom"] == name.endswith("_oom"), t
e = json.load(open(name + ".json"))["recognized"]["ema"]
if words == "unknown":
    assert e["on"] is None and "which can hold a copy the program keeps itself" in e["where"], e
    sys.exit(0)
assert e["on"] is False and "no code of an EMA of the weights ran" in e["where"], e
if words == "teacher":
    words = "a second, frozen model's (a teacher or a reference model: %.2f M elements" % (
        (t["params"] - t["trainable_params"]) / 1e6)
assert words in e["where"] or words == "-", (words, e["where"])
PY
done <<'EOF2'
lora_fit|24GiB|--model llama-400m --lora-rank 16 --batch-size 2|the frozen base model under peft's LoRA adapters
lora_oom|4GiB|--model llama-400m --lora-rank 16 --batch-size 8|-
teacher_fit|24GiB|--model gpt2 --teacher gpt2-medium --batch-size 2|teacher
teacher_oom|3GiB|--model gpt2 --teacher gpt2-medium --batch-size 8|-
student_oom|12GiB|--model gpt2 --teacher gpt2-medium --batch-size 6|teacher
same_fit|24GiB|--model gpt2 --teacher gpt2 --batch-size 2|unknown
EOF2
echo "ema_frozen_explained: ok (a LoRA base and a teacher: EMA off, said why)"
