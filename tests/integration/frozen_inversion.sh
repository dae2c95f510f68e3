#!/bin/sh
# frozen_inversion.sh — a SIMULATED textual inversion (tests/python/frozen_inversion.py): one
# trained token embedding before a frozen fp32 text encoder and a frozen denoiser cast to fp16,
# out of memory in its first forward at batch 32 on 4 GiB (16 and 8 train). The denoiser's
# gradient flows to its input, so its forward keeps its activations although none of its weights
# trains. Before: a copy freed after use in the noise-level MLP (no gradient flows there) made the
# forward "frozen": its kept tensors were "temporaries", and the what-ifs charged every weight a
# gradient and AdamW's state (the optimizer 1.86 GiB, the program's 0.28), lower bounds above what
# its own batches of 16 and 8 measure ("at least 5.39 GiB", "none, not even 1"). Now the tensors
# alive at the failure are activations, and with the program freezing weights and no backward to
# tell which train, the lower bounds count no gradient or state (said), each at most what the
# program measures at that batch, and the largest micro-batch "at most" no less than 16.
# Its runs that train had been "what was trained: a convolutional network" (the frozen denoiser's
# class of sizes; its one embedding trains) and "dtype bfloat16 ... no GradScaler" (the program's
# --mixed_precision default fp16, which its run out of memory read): now "what ran: ...; most
# weights take no gradient ...: which model's weights train is not known", JSON
# recognized.trained_unsure, and float16 with its flag named and no GradScaler said.
# With one text block (--text_layers 1) its kept copies are under 1/16 of the weights: they had
# been read as the weights that train ("trainable 4.72 M ... (it keeps those of weights that need
# a gradient)", gradients and AdamW state of them predicted, "45x an fp32 copy of the 4.72 M that
# do"); a frozen layer a gradient flows through keeps its copy too: now not told, where the
# program freezes weights.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/frozen_inversion.py"
for b in 8 16 32; do
    timeout 300 "$VT" run -q --card 4GiB -o b$b.vt -- python3 "$P" --train_batch_size $b \
        </dev/null >b$b.out 2>&1
done
grep -q "^OOM in forward$" b32.out || { cat b32.out; fail "batch 32 did not run out of memory in its forward"; }
timeout 300 "$VT" run -q --card 4GiB -o one.vt -- python3 "$P" --train_batch_size 32 --text_layers 1 \
    </dev/null >one.out 2>&1
grep -q "^OOM in forward$" one.out || { cat one.out; fail "--text_layers 1 did not run out of memory in its forward"; }
report_both one
python3 - one.out one.json <<'PY' || fail "$(cat one.txt)"
import json, re, sys
facts = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", open(sys.argv[1]).read(), re.M).group(0)))
r = json.load(open(sys.argv[2]))
n = r["recognized"]["trainable_params"]
if n is not None and n != facts["trainable"]:
    raise SystemExit("--text_layers 1: trainable %s, the program's %d (its frozen layers' kept copies read as trained)" % (n, facts["trainable"]))
if "an fp32 copy of the" in r["recognized"]["ema"]["where"]:
    raise SystemExit("--text_layers 1: the EMA row measures room against a count not told: " + r["recognized"]["ema"]["where"])
PY
for b in 8 16; do
    grep -q "^trained 2 steps at batch $b," b$b.out || { cat b$b.out; fail "batch $b did not train"; }
    report_both b$b
done
report_both b32
"$VT" predict --from b32.vt >b32.predict 2>&1 || fail "predict --from failed"
python3 - b16.out b16.json b16.txt b32.txt b32.json <<'PY' || fail "$(cat b16.txt)"
import json, re, sys
amp = re.search(r"^AMP (\w+) autocast, no GradScaler", open(sys.argv[1]).read(), re.M).group(1)
want = {"fp16": "float16", "bf16": "bfloat16"}[amp]
r, text = json.load(open(sys.argv[2])), open(sys.argv[3]).read()
bad = []
if r["config"]["dtype"]["value"] != want or "no GradScaler" not in r["config"]["dtype"]["where"]:
    bad.append("dtype %s (%s), the program's autocast %s" % (r["config"]["dtype"]["value"], r["config"]["dtype"]["where"], want))
for name, t, j in (("b16", text, r), ("b32", open(sys.argv[4]).read(), json.load(open(sys.argv[5])))):
    if "what was trained:" in t or "\nwhat ran: " not in t or not j["recognized"]["trained_unsure"]:
        bad.append("%s: the model on the stacks is said trained, where one embedding alone trains" % name)
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
python3 - b32.out b32.json b8.json b16.json b32.txt <<'PY' || fail "$(cat b32.txt)"
import json, re, sys
out = open(sys.argv[1]).read()
facts = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", out, re.M).group(0)))
r = json.load(open(sys.argv[2]))
measured = {b: json.load(open(f))["peak"]["process_bytes"] for b, f in ((8, sys.argv[3]), (16, sys.argv[4]))}
text = open(sys.argv[5]).read()
bad = []
live = r["oom"]["live_by_category"]
if live["activations"] < 4 * live["temporaries"] or live["activations"] < facts["frozen_fp16_bytes"]:
    bad.append("at the OOM activations %d, temporaries %d: the denoiser's kept tensors are activations" % (live["activations"], live["temporaries"]))
p = r["prediction"]
state = 2 * facts["trainable_bytes"]  # AdamW: two fp32 moments of the one trained table
if p["calibrated_by_category"]["optimizer"] > state:
    bad.append("optimizer predicted %d B, the program's AdamW state %d" % (p["calibrated_by_category"]["optimizer"], state))
for a in r["advice"]:
    b = a["batch_size"]
    if b in measured and a["predicted_peak_bytes"] > measured[b]:
        bad.append("%s: at least %d B, where the program at %d measured %d" % (a["change"], a["predicted_peak_bytes"], b, measured[b]))
    if b in measured and not a["predicted_peak_at_least"]:
        bad.append("%s: not a lower bound" % a["change"])
if not p["largest_batch_size"] or p["largest_batch_size"] < 16:
    bad.append("largest micro-batch %s, where 16 trains" % p["largest_batch_size"])
if "blocks' weights had been used" in text or "program freezes weights, frozen_inversion.py:" not in text:
    bad.append("the first forward's note does not say what is not known")
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "frozen_inversion: ok (a frozen fp16 denoiser a gradient flows through keeps activations; lower bounds below what its batches measure)"
