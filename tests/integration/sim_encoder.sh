#!/bin/sh
# sim_encoder.sh — an encoder classifier with a large vocabulary and no output layer over it
# (tests/python/enc_cls.py, SIMULATED: XLM-R-base's shape, 250002×768 frozen embeddings, a 768→3
# head, SGD with momentum on the encoder and AdamW on the head), at a micro-batch that fits
# (64) and one out of memory in its first forward (128) on a 12 GiB card. No tensor of B·T×V
# elements is ever made: the report had called it "a transformer language model ... and B·T×V
# logits", counted 12·B·T·V bytes of logits in the refined formula (45.78 GiB at 64), predict
# --from named a 15.26 GiB "fp32 logits" tensor in a run whose peak was 8.64 GiB, and the OOM
# run's advice said "micro-batch 128 → 64: predicted 84.62 GiB, does not fit" and "largest
# micro-batch that fits: 4" where the program's own run at 64 fits. Now the run that fits says
# no B·T×V logits were made (JSON recognized.lm_head false, inferred.lm_logits 0), its formula
# counts none, and its largest tensor is within its own peak; the OOM run, cut in its first
# forward, says it does not know whether the model makes them: it counts none, its what-ifs are
# lower bounds (B=64's within what the run at 64 measured: with the program's frozen weights no
# gradient or optimizer state is counted, AdamW's of every weight had put it at "at least 10.75
# GiB" above that run's 8.64), and each says what it needs with a language model's logits. The run that
# fits names both optimizers, as the OOM run does (it had named AdamW alone, whose state is
# 1.4 % of the two's).
set -u
. "$ROOT/tests/sim_env.sh"
for b in 64 128; do
    timeout 300 "$VT" run --card 12GiB -o "enc$b.vt" -- python3 "$ROOT/tests/python/enc_cls.py" \
        --bs $b </dev/null >"enc$b.out" 2>&1
    report_both "enc$b"
done
NO_COLOR=1 "$VT" predict --from enc64.vt >predict64.txt 2>&1 || fail "predict --from enc64.vt failed"
python3 - <<'PYEOF' || exit 1
import json, re
def stats(n):
    line = [l for l in open(n) if l.startswith("VRAMTRACE_TORCH_STATS ")][-1]
    return json.loads(line.split(" ", 1)[1])
s64, s128 = stats("enc64.out"), stats("enc128.out")
assert not s64["oom"] and s128["oom"] and s128["oom_phase"] == "forward", "the program's runs: %s %s" % (s64["oom"], s128["oom"])
assert s64["lm_head"] is False
bad = []
GIB = 1 << 30
def size(t):
    v, u = t.split()
    return float(v) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[u]
for b in (64, 128):
    j, text = json.load(open("enc%d.json" % b)), open("enc%d.txt" % b).read()
    # ("what ran" where most weights take no gradient: its frozen 250002×768 embeddings)
    fam = re.search(r"^what (?:was trained|ran): (.*)$", text, re.M).group(1)
    ev = re.search(r"^  evidence +(.*)$", text, re.M).group(1)
    if "language model" in fam.split("(")[0] or "and B·T×V logits" in ev:
        bad.append("enc%d: called a language model: %s / %s" % (b, fam, ev))
    rec, cal = j["recognized"], j["prediction"]["calibration"]
    if rec.get("lm_head", "absent") is not (False if b == 64 else None):
        bad.append("enc%d: recognized.lm_head %r" % (b, rec.get("lm_head", "absent")))
    if b == 64 and (cal["refined"]["logits_loss"] != 0 or not j["prediction"]["run_shape"].get("no_lm_head")):
        bad.append("enc%d: the refined formula counts %d B of logits" % (b, cal["refined"]["logits_loss"]))
inf = json.load(open("enc64.json"))["inferred"]
lg = inf.get("lm_logits")
if not lg or lg["value"] != 0:
    bad.append("enc64: inferred.lm_logits %r" % lg)
if "untied_head" in inf:  # (no head: none tied to the embedding)
    bad.append("enc64: inferred.untied_head %s" % inf["untied_head"]["where"])
# predict --from: no language model, its largest tensor within the run's own tensors' peak
p = open("predict64.txt").read()
if "language model" in p.splitlines()[0].split("(")[0]:
    bad.append("predict: " + p.splitlines()[0][:100])
m = re.search(r"^largest single tensor: ([0-9.]+ [KMG]?i?B), (.*)$", p, re.M)
if not m or size(m.group(1)) > s64["max_memory_allocated"] or "logits" in m.group(2):
    bad.append("predict: largest tensor %s over the run's peak %d B" % (m and m.group(0), s64["max_memory_allocated"]))
# the OOM run, cut in its first forward: whether the model ends in an output layer over its
# vocabulary is not known there; none counted, lower bounds (enc_no_head.sh), under the run at 64
if "no logits are counted at its end, not reached: whether it ends in an output layer over its " \
        "vocabulary (B·T×V logits, a language model's) is not known" not in open("enc128.txt").read():
    bad.append("enc128: the advice does not say whether the model makes logits is not known")
j128 = json.load(open("enc128.json"))
half = [x for x in j128["advice"] if x["batch_size"] == 64 and x["block_size"] == 256]
got64 = json.load(open("enc64.json"))["peak"]["process_bytes"]
if not half or [x for x in half if not x["predicted_peak_at_least"] or x["predicted_peak_bytes"] > got64]:
    bad.append("enc128: B=64 %s, its run measured %d" % ([(x["predicted_peak_bytes"], x["predicted_peak_at_least"]) for x in half], got64))
# two optimizers: both named where their state was measured (the OOM run names the script's)
o = json.load(open("enc64.json"))["recognized"]["optimizer"]
if "SGD" not in o["class"] or "AdamW" not in o["class"] or o["kind"] in ("adam", "momentum"):
    bad.append("enc64: optimizer %s (%s), the program's state: SGD %d B, AdamW %d B" % (o["class"], o["kind"], s64["sgd_state_bytes"], s64["adamw_state_bytes"]))
if abs(o["state_bytes_per_trainable_param"] * s64["trainable_param_bytes"] / 4 - s64["sgd_state_bytes"] - s64["adamw_state_bytes"]) > 64:
    bad.append("enc64: state %r B per parameter, not the two optimizers' together" % o["state_bytes_per_trainable_param"])
assert not bad, "\n".join(bad)
print("enc64 / enc128: no logits counted or named, at 64 within the program's own run, both optimizers named")
PYEOF
echo "sim_encoder: ok"
