#!/bin/sh
# sim_own16.sh — 16-bit weights the program makes itself (examples/sim/sim_own16.py, no library to
# give the shape), against the program's own counts (its VRAMTRACE_TORCH_STATS line):
#   lora: a Llama-like decoder cast to bf16 and frozen, its own fp32 LoRA adapters, autocast.
#     The weights' sizes say 16-bit (d×d projections at 2 B an element, none at 4 B) and the
#     adapters fp32 (autocast copied them alone): d, T, B, P and the trainable count are the
#     program's (before: d 256, P 10.39 M "at 4 B", where it has 512 and 20.71 M), and so is the
#     weights' row where no formula applies (16-bit ones at 2 B, the adapters at 4).
#   master: a GPT in bf16, the program's fp32 master copies of every weight and an EMA of those.
#     The copies are no parameters of the model: P and the trainable count are the program's,
#     AdamW's state 8 B per trained parameter, no what-if says most weights are frozen (before:
#     P 42.09 M, 8.42 M trained, 16 B of state per parameter).
#   master's dtype row says 16-bit from the weights and their masters, never from "autocast
#     weight copies" (the program's .float() of its gradients had been read as such).
#   lora out of memory in its first forward: the weights whose 16-bit copies autocast kept are
#     the trained ones, fp32: the trainable count is the program's, never "not even 1 fits".
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NO_COLOR=1
for m in lora master; do
    "$VT" run --card 12GiB -q -o "$m.vt" -- "$PY" "$ROOT/examples/sim/sim_own16.py" --mode $m \
        --batch 2 --seq 512 >"$m.out" 2>&1 || { cat "$m.out"; echo "sim_own16: $m failed"; exit 1; }
    "$VT" report --json "$m.vt" >"$m.json" || { echo "sim_own16: report --json $m"; exit 1; }
    "$VT" report "$m.vt" >"$m.txt" || { echo "sim_own16: report $m"; exit 1; }
done
# out of memory in the first forward (a 1 GiB card): no gradient yet
"$VT" run --card 1GiB -q -o oom.vt -- "$PY" "$ROOT/examples/sim/sim_own16.py" --mode lora \
    --batch 32 --seq 512 >oom.out 2>&1
"$VT" report --json oom.vt >oom.json || { echo "sim_own16: report --json oom"; exit 1; }
"$VT" report oom.vt >oom.txt || { echo "sim_own16: report oom"; exit 1; }
"$PY" - <<'PYEOF' || exit 1
import json
bad = []
for m in ("lora", "master"):
    t = json.loads([l for l in open(m + ".out") if l.startswith("VRAMTRACE_TORCH_STATS ")][-1]
                   .split(" ", 1)[1])
    r = json.load(open(m + ".json"))
    inf = {k: v["value"] for k, v in r["inferred"].items()}
    rec = r["recognized"]
    text = open(m + ".txt").read()
    want = {"params": t["params"], "param_dtype_bytes": 2, "n_embd": t["hidden"],
            "n_layer": t["layers"], "vocab_size": t["vocab_size"], "block_size": t["seq_len"],
            "batch_size": t["batch_size"]}
    for k, v in want.items():
        # (the lora model has no positions: T, and B with it, are not in the trace; never wrong)
        if inf.get(k) != v and not (m == "lora" and k in ("block_size", "batch_size") and
                                    inf.get(k) is None):
            bad.append("%s: inferred %s %s, the program's %s" % (m, k, inf.get(k), v))
    if rec.get("trainable_params") != t["trainable_params"]:
        bad.append("%s: trainable %s, the program's %s" % (m, rec.get("trainable_params"),
                                                          t["trainable_params"]))
    bpp = rec["optimizer"].get("state_bytes_per_trainable_param") or 0
    if abs(bpp - t["optim_state_bytes"] / t["trainable_params"]) > 0.01:
        bad.append("%s: %s B of state per trainable parameter, the program's %.2f" %
                   (m, bpp, t["optim_state_bytes"] / t["trainable_params"]))
    if rec["optimizer"].get("kind") != "adam":
        bad.append("%s: optimizer %s, not Adam" % (m, rec["optimizer"].get("kind")))
    if m == "lora":  # the weights' row of a run the formula does not describe: 16-bit and fp32
        said = "parameters: %.2f M elements in the weights made before training: 16-bit" % (
            t["params"] / 1e6)
        if said not in text:
            bad.append("lora: no %r (the program's P, its adapters fp32)" % said)
    if m == "master":
        if "most weights are frozen" in text:
            bad.append("master: a what-if says most weights are frozen (all train)")
        if "fp32 master copies of them" not in text:
            bad.append("master: the parameters' row does not name the fp32 master copies")
        # the program's casts of its masters' gradients are no autocast (it has none) to argue
        # the dtype from (before: "16-bit autocast weight copies, no GradScaler")
        dt = [l for l in text.splitlines() if l.startswith("  dtype ")]
        if not dt or "autocast" in dt[0] or "master copies" not in dt[0]:
            bad.append("master: dtype row %r" % dt)
# the OOM: the adapters, whose copies autocast kept, train (before: the whole model, "largest
# micro-batch that fits: none, not even 1" at 4 where 2 fits, with 8-bit AdamW offered)
t = json.loads([l for l in open("oom.out") if l.startswith("VRAMTRACE_TORCH_STATS ")][-1]
               .split(" ", 1)[1])
r = json.load(open("oom.json"))
if not t["oom"] or t["steps"]:
    bad.append("oom: the run did not fail in its first step: %s" % t)
if r["recognized"].get("trainable_params") != t["trainable_params"]:
    bad.append("oom: trainable %s, the program's %s" % (r["recognized"].get("trainable_params"),
                                                       t["trainable_params"]))
# (no positions: T is the argument's 512 or not known, never an RMSNorm's fp32 rstd of 32·512
# rows read as arange(8192))
for k in ("block_size", "batch_size"):
    got = (r["inferred"].get(k) or {}).get("value")
    if got not in (None, {"block_size": 512, "batch_size": 32}[k]):
        bad.append("oom: inferred %s %s" % (k, got))
if "not even 1" in open("oom.txt").read():
    bad.append("oom: 'not even 1' fits, where its adapters alone train")
print("sim_own16:", "ok" if not bad else bad)
raise SystemExit(1 if bad else 0)
PYEOF
