#!/bin/sh
# gen_step.sh — an out-of-memory error in a step of a kind no earlier step ran:
# tests/python/gen_step.py (a SIMULATED GAN trained as WGAN is: critic steps, then a generator
# step; both models fp32, both trained) dies in its generator's first forward with a gradient,
# after its critic's steps. The generator's weights had been told "take no gradient", the run's
# dtype "unknown" for them, and the what-ifs scaled the part of the generator's step that ran as
# if whole (WGAN at batch 384: "largest micro-batch that fits: 324", which runs out of memory).
# Now, against the program's own counts: the trained count is at least the critic's (JSON
# trainable_params_at_least), the rest never said to take no gradient, the dtype the program's
# own (float32), the configuration's need a lower bound its run on a larger card does not fall
# under, and the largest micro-batch "at most" (JSON largest_batch_size_at_most).
set -u
. "$ROOT/tests/sim_env.sh"
B=8192
timeout 300 "$VT" run -q --card 800MiB -o run.vt -- python3 "$ROOT/tests/python/gen_step.py" \
    --batchSize $B </dev/null >run.out 2>&1
report_both run
"$VT" report --json --batch-size $B run.vt >bs.json 2>&1 || fail "report --batch-size failed"
"$VT" predict --from bs.json >run.predict 2>&1 || fail "predict --from failed"
# the same program on a card it fits: what its configuration's tensors really take
timeout 300 "$VT" run -q --card 4GiB -o big.vt -- python3 "$ROOT/tests/python/gen_step.py" \
    --batchSize $B </dev/null >big.out 2>&1 || fail "the run on 4 GiB failed"
python3 - run.json bs.json run.out big.out run.txt run.predict <<'PY' || fail "see above"
import json, sys
r, bs = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
t, big = truth(sys.argv[3]), truth(sys.argv[4])
# (the case: critic steps done, out of memory in the generator's forward, no generator gradient)
assert t["oom"] and t["oom_phase"] == "generator forward" and t["critic_steps"] >= 1, t
assert t["generator_grad_bytes_at_oom"] == 0 and not big["oom"], (t, big)
text = open(sys.argv[5]).read() + open(sys.argv[6]).read()
bad = []
rec = r["recognized"]
tr = rec.get("trainable_params") or 0
if not 0 < tr < t["trainable_params"] or not rec.get("trainable_params_at_least"):
    bad.append("trainable %s (at least: %s), of %d trained" % (
        tr, rec.get("trainable_params_at_least"), t["trainable_params"]))
for words in ("take no gradient", "died in its first forward"):
    if words in text:
        bad.append("says %r" % words)
dt = r["config"]["dtype"]["value"]
if dt != t["param_dtype"]:
    bad.append("dtype %r, the program's %r" % (dt, t["param_dtype"]))
need = r["prediction"]["current_allocated_bytes"]
if need > big["max_memory_allocated"] * 1.02:
    raise SystemExit("the configuration's tensors at least %d, its run on a larger card took %d" % (
        need, big["max_memory_allocated"]))
p = bs["prediction"]
if p.get("largest_batch_size") is not None and not p.get("largest_batch_size_at_most"):
    bad.append("largest micro-batch %s, not 'at most'" % p["largest_batch_size"])
if "that fits (keeping >= 5 % free): at most" not in text:
    bad.append("predict --from's largest is no 'at most'")
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "gen_step: ok (out of memory in a generator step after the critic's: at least the critic's weights trained, the rest not said frozen, fp32, lower bounds)"
