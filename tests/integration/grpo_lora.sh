#!/bin/sh
# grpo_lora.sh — GRPO with LoRA adapters (tests/python/grpo_gen.py, SIMULATED: TRL's step, a bf16
# Llama policy with fp32 LoRA adapters generating --num_generations completions of each prompt,
# a frozen bf16 reference model, AdamW on the adapters), against the program's own truth
# (VRAMTRACE_TORCH_STATS):
#  - the trainable count and the optimizer's state per trainable parameter (the adapters fp32
#    beside 16-bit weights: a generation's first forward reads no B·T×V logits) had been twice
#    the program's and half its 8 B, "in the parameters' 16 bits";
#  - the script requires its micro-batch be a multiple of --num_generations (assert B % G == 0,
#    B // G prompts): advice had offered micro-batches that split its groups, "same final
#    model"; every batch it offers now is a multiple of G, and says its groups stay whole;
#  - the frozen reference model (a copy of the base without the adapters interleaved in the
#    policy's weights) had been called the frozen base with it, "the 74.8 MiB ... are the frozen
#    base model under peft's LoRA adapters" of 37.4 MiB of base and 37.4 of reference; now each
#    as the program's (--beta 0 loads no reference: the base alone).
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME ARGS...: runs grpo_gen.py under vramtrace, NAME.txt / NAME.json / NAME.truth
    name=$1
    shift
    timeout 300 "$VT" run -q --card 4GiB -o "$name.vt" -- python3 "$ROOT/tests/python/grpo_gen.py" "$@" \
        </dev/null >"$name.out" 2>&1 || fail "$name: run failed: $(tail -n 3 "$name.out")"
    report_both "$name"
    sed -n 's/^VRAMTRACE_TORCH_STATS //p' "$name.out" >"$name.truth"
    [ -s "$name.truth" ] || fail "$name: no VRAMTRACE_TORCH_STATS line"
}
run g8  # (its defaults: --per_device_train_batch_size 8, --num_generations 8)
run g4 --per_device_train_batch_size 16 --num_generations 4 --beta 0
run g16 --per_device_train_batch_size 16 --num_generations 8
python3 - g8 g4 g16 <<'PY' || fail "see above"
import json, re, sys
bad = []
for name in sys.argv[1:]:
    j = json.load(open(name + ".json"))
    t = json.loads(open(name + ".truth").read())
    txt = open(name + ".txt").read()
    rec = j["recognized"]
    # the adapters: their count and their fp32 state
    if rec.get("trainable_params") != t["trainable_params"]:
        bad.append("%s: trainable %r, the program's %d" % (name, rec.get("trainable_params"), t["trainable_params"]))
    bpp = rec["optimizer"].get("state_bytes_per_trainable_param")
    want = t["optim_state_bytes"] / t["trainable_params"]
    if bpp is None or abs(bpp - want) > 0.01 * want:
        bad.append("%s: %r B of state per trainable parameter, the program's %.2f" % (name, bpp, want))
    if "16 bits" in rec["optimizer"]["text"]:
        bad.append("%s: optimizer %r (its state is fp32)" % (name, rec["optimizer"]["text"]))
    p = j["inferred"]["params"]["value"]
    if abs(p - t["params"]) * 2 > t["trainable_params"]:
        bad.append("%s: P %d, the program's %d" % (name, p, t["params"]))
    # the batches advice offers: multiples of G, whole groups
    B, G = t["batch_size"], t["num_generations"]
    for a in j["advice"]:
        b = a.get("batch_size")
        if b is None or b == B:
            continue
        if b % G:
            bad.append("%s: %r offers a micro-batch of %d, not a multiple of --num_generations %d" % (name, a["change"], b, G))
        if "same final model" in a["note"] and "whole groups" not in a["note"]:
            bad.append("%s: %r: %r" % (name, a["change"], a["note"]))
    lb = j["prediction"].get("largest_batch_size")
    if lb and lb % G:
        bad.append("%s: largest micro-batch %d, not a multiple of %d" % (name, lb, G))
    m = re.search(r"largest micro-batch that fits[^:]*: (\d+)", txt)
    if m and int(m.group(1)) % G:
        bad.append("%s: text's largest micro-batch %s" % (name, m.group(1)))
    # the weights that take no gradient: the frozen base, and the reference model's copy
    w = rec["ema"]["where"]
    mib = lambda b: b / 1048576.0
    m = re.search(r"of the [\d.]+ MiB of weights that take no gradient, ([\d.]+) MiB are the frozen base under peft's LoRA adapters, ([\d.]+) MiB a copy of it", w)
    one = re.search(r"the ([\d.]+) MiB of weights that take no gradient are the frozen base model", w)
    near = lambda said, b: abs(float(said) - mib(b)) <= 0.05 + 0.01 * mib(b)
    if t["reference_bytes"]:
        if not m or not near(m.group(1), t["frozen_policy_bytes"]) or not near(m.group(2), t["reference_bytes"]):
            bad.append("%s: %r; the program's frozen base %.1f MiB, reference %.1f MiB" % (name, w, mib(t["frozen_policy_bytes"]), mib(t["reference_bytes"])))
    elif m or not one or not near(one.group(1), t["frozen_policy_bytes"]):
        bad.append("%s (no reference model): %r; the program's frozen base %.1f MiB" % (name, w, mib(t["frozen_policy_bytes"])))
# B 16 over G 4: 8 and 4 keep its groups whole (offered, said so); over G 8, 4 would split them
j = json.load(open("g4.json"))
if not any(a.get("batch_size") == 4 and "whole groups of --num_generations 4" in a["note"] for a in j["advice"]):
    bad.append("g4: no micro-batch of 4 said to keep whole groups: %s" % [(a["change"], a["note"]) for a in j["advice"]])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "grpo_lora: ok (the adapters' count and fp32 state, the frozen base and the reference model as the program's; micro-batches offered in whole groups of --num_generations)"
