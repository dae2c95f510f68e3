#!/bin/sh
# qlora_4bit.sh — a SIMULATED QLoRA fine-tune the bitsandbytes + peft way (tests/python/
# qlora_4bit.py: a Llama-2-7B-shaped LlamaForCausalLM whose projections are 4-bit packed uint8
# weights with their quantization state, dequantized to a bf16 temporary in every matmul; peft's
# LoRA on the attention projections cast to bf16, the only trained weights; AdamW's state in
# their bf16; gradient checkpointing) on an emulated 6 GiB card, at batch 1 (4.7 GiB), at batch
# 1 of 1536 tokens (5.71 GiB: under the 5 % headroom) and at batch 8 (out of memory). Audit F5:
# the trainable count had been half the program's (8.39 M of 16.78 M: the bf16 adapters' gradient
# bytes read as fp32 elements) and AdamW "8 B per trainable parameter" (its 4); now the adapters
# the program's lines cast to 16 bits, their gradients' bytes, count at 2 B: the program's count
# and state per parameter, the frozen 4-bit base, its quantization state and bf16 embeddings at
# their own bytes. Audit F1: the batch-1 run that ran at 5.71 GiB of the 6 GiB card had been told
# "largest micro-batch that fits: none, not even 1"; now its own ran is said (JSON
# prediction.largest_batch_size_ran); predict --from it had said "not even a micro-batch of 1 fits:
# use a smaller model", and says now that the run's own ran on the card with less free. The
# packed 4-bit weights' bytes had been read as 16- or 32-bit elements (d 16, V 4,096,000, L 31:
# the quantization state's run of blocks) and the batch-8 run out of memory told "none, not even
# 1" fits; now each packed weight, dequantized to a temporary of 4× its bytes in the forward,
# holds 2 elements a byte: d, V, L are the program's, and the micro-batch the out-of-memory run is
# advised is run again on the same card, without running out of memory. The optimizer row had
# named the script's own AdamW32, whose branch never ran (torch's AdamW made the state).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/qlora_4bit.py"
run() { # NAME ARGS...
    n=$1
    shift
    timeout 300 "$VT" run -q --card 6GiB -o "$n.vt" -- python3 "$P" "$@" </dev/null >"$n.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "$n.out" || fail "$n: no truth line: $(tail -n 2 "$n.out")"
    report_both "$n"
}
run b1 --batch_size 1
run long --batch_size 1 --seq_len 1536
run b8 --batch_size 8
# predict --from the trace and from its report's JSON say the same of the card
"$VT" predict --from long.vt >long.predict 2>&1 && "$VT" predict --from long.json >long.predict_json 2>&1 ||
    fail "long: predict --from failed"
for f in long.predict long.predict_json; do
    grep -q "not even a micro-batch of 1 fits" $f && fail "$f: batch 1 ran, but: $(grep 'not even' $f)"
    grep -q "but the run's own micro-batch of 1 ran on it with less free" $f || fail "$f: $(tail -n 2 $f)"
done
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json, re
bad = []
truth = {}
for n in ("b1", "long", "b8"):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    truth[n] = t
    j, txt = json.load(open(n + ".json")), open(n + ".txt").read()
    rec, pr = j["recognized"], j.get("prediction") or {}
    if n == "b8":
        assert t["oom"] and t["steps"] == 0, t
        continue
    assert not t["oom"] and t["steps"] == 2 and t["trainable_dtype"].endswith("bfloat16"), t
    if rec["trainable_params"] != t["trainable_params"]:
        bad.append("%s: trainable %s, the program's %d (bf16 LoRA adapters)" % (n, rec["trainable_params"], t["trainable_params"]))
    bpp = t["optim_state_bytes"] / t["trainable_params"]
    o = rec["optimizer"]
    if abs(o["state_bytes_per_trainable_param"] - bpp) > 0.005:
        bad.append("%s: %s B of state per parameter, the program's %.2f" % (n, o["state_bytes_per_trainable_param"], bpp))
    ut = rec.get("untyped_weight_bytes")
    P = (j["inferred"].get("params") or {}).get("value") or 0
    allp = t["frozen_params"] + t["trainable_params"]  # (the 4-bit ones at their logical count)
    if not ut and abs(P - allp) <= 0.01 * allp:
        pass  # the packed 4-bit weights read at 2 elements a byte: their element count is known
    elif not ut or abs(ut - t["frozen_bytes"]) > 0.01 * t["frozen_bytes"]:
        bad.append("%s: untyped_weight_bytes %s, the program's frozen bytes %d (4-bit packed, their "
                   "quantization state, bf16 embeddings, norms and head)" % (n, ut, t["frozen_bytes"]))
    row = [l for l in txt.splitlines() if "parameters (vs" in l and "trained weights at" in l]
    if row and "trained weights at 2 B (16-bit" not in row[0]:
        bad.append("%s: weights' row %s" % (n, row[0]))
    if row and "%.2f M at 2 B made by casts" % (t["trainable_params"] / 1e6) in row[0]:
        bad.append("%s: the adapters counted twice: %s" % (n, row[0]))
    # a run that ran its micro-batch on this card is never told that not even 1 fits
    lg = [l for l in txt.splitlines() if l.startswith("  largest micro-batch that fits")]
    if any("not even 1" in l for l in lg):
        bad.append("%s: ran batch %d (%.2f GiB reserved of 6) but: %s" % (n, t["batch_size"], t["max_memory_reserved"] / 2**30, lg))
    if pr.get("largest_batch_size") == 0 and pr.get("largest_batch_size_ran") != t["batch_size"]:
        bad.append("%s: JSON largest_batch_size 0, largest_batch_size_ran %s (the run's %d ran)"
                   % (n, pr.get("largest_batch_size_ran"), t["batch_size"]))
for n in ("b1", "long", "b8"):
    t, j = truth[n], json.load(open(n + ".json"))
    inf = j["inferred"]
    for key, want in (("n_layer", t["layers"]), ("n_embd", t["hidden"]), ("vocab_size", t["vocab"])):
        got = (inf.get(key) or {}).get("value")
        if got is not None and got != want:  # (not known is allowed; a wrong value is not)
            bad.append("%s: inferred %s %s, the program's %d: %s" % (n, key, got, want, (inf.get(key) or {}).get("where")))
    for key, want in (("n_layer", t["layers"]), ("n_embd", t["hidden"]), ("vocab_size", t["vocab"])):
        c = j["config"].get(key) or {}
        if c.get("value") is not None and c["value"] != want:
            bad.append("%s: configuration %s %s, the program's %d" % (n, key, c["value"], want))
    o = j["recognized"]["optimizer"]
    if t["optimizer"] == "adamw" and "AdamW32" in o["text"] + o["where"]:
        bad.append("%s: the optimizer row names AdamW32, which never ran: %s" % (n, o["where"]))
b8 = json.load(open("b8.json"))
big = b8["prediction"].get("largest_batch_size")
if not big:
    bad.append("b8: largest_batch_size %s (batch 1 ran: b1)" % big)
if any("not even 1" in l for l in open("b8.txt")):
    bad.append("b8: not even 1 fits, but batch 1 ran on the card (b1)")
rec = [a["batch_size"] for a in b8["advice"] if a.get("recommended") and a.get("batch_size")]
with open("rerun.list", "w") as f:
    f.write("\n".join(str(b) for b in sorted(set(rec + ([big] if big else [])))) + "\n")
if not any("none with that room; 1, this run's own" in l for l in open("long.txt")):
    bad.append("long: (5.71 GiB of 6: under the headroom) %s" % [l for l in open("long.txt") if "largest micro" in l])
# the model's parameter count is the program's (frozen, the 4-bit ones at their logical count, and
# trainable): the 4-bit projections' quantization state (an absmax per 64-element block, its
# constants: 98.0 MiB) is none; read at 2 B an element it had made 6806.59 M of 6755.19 M
for n in ("b1", "long", "b8"):
    t, j, txt = truth[n], json.load(open(n + ".json")), open(n + ".txt").read()
    want = "%.2f M" % ((t["frozen_params"] + t["trainable_params"]) / 1e6)
    P = (j["inferred"].get("params") or {}).get("value") or 0
    if "%.2f M" % (P / 1e6) != want:
        bad.append("%s: inferred params %s, the program's %s" % (n, P, want))
    for l in txt.splitlines():
        if ("trainable  " in l or "parameters (vs basic)" in l or "P = " in l) and re.search(r"\d{4}\.\d\d M", l) \
                and want not in l:
            bad.append("%s: %s (the program's %s)" % (n, l.strip(), want))
print("\n".join(bad))
exit(1 if bad else 0)
PY
# every micro-batch the out-of-memory run is advised, run again on the same card: no OOM
while read -r b; do
    [ -n "$b" ] || continue
    timeout 300 "$VT" run -q --card 6GiB -o "re$b.vt" -- python3 "$P" --batch_size "$b" </dev/null >"re$b.out" 2>&1
    python3 -c 'import json,sys; t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS ")); sys.exit(1 if t["oom"] or t["steps"] != 2 else 0)' "re$b.out" ||
        fail "b8: advised micro-batch $b runs out of memory on the 6GiB card: $(grep -o '"oom": [a-z]*' "re$b.out")"
done <rerun.list
# the batch-8 run ran out of memory in its first forward, before any backward or step: its
# predictions' trainable count, gradients and AdamW state are those the program prints when run
# again at a micro-batch that fits (AdamW keeps exp_avg / exp_avg_sq in the bf16 adapters' dtype:
# 4 B a parameter; they had been predicted at 8 B, of 1 % of the weights assumed: 148.7 MiB)
"$VT" predict --from b8.vt >b8.predict 2>&1 && "$VT" predict --from b8.json >b8.predict_json 2>&1 ||
    fail "b8: predict --from failed"
python3 - <<'PY' >check8.out 2>&1 || fail "$(cat check8.out)"
import json, re
bad = []
t8 = next(json.loads(l.split(" ", 1)[1]) for l in open("b8.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t8["oom"] and t8["steps"] == 0 and t8["oom_phase"] == "forward", t8
b = int(open("rerun.list").read().split()[0])
t = next(json.loads(l.split(" ", 1)[1]) for l in open("re%d.out" % b) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 2 and t["optim_state_bytes"] > 0, t
j = json.load(open("b8.json"))
rec, cal = j["recognized"], j["prediction"]["calibrated_by_category"]
if rec["trainable_params"] != t["trainable_params"]:
    bad.append("b8: trainable %s, the program's %d" % (rec["trainable_params"], t["trainable_params"]))
for cat, key in (("optimizer", "optim_state_bytes"), ("gradients", "grad_bytes")):
    if abs(cal[cat] - t[key]) > t[key] / 100:
        bad.append("b8: %s predicted %d B, the program's %d at batch %d" % (cat, cal[cat], t[key], b))
if "have gradients" in rec["lora"]["where"] or "adapters, which train" not in rec["lora"]["where"]:
    bad.append("b8: (no gradient made before the error) LoRA: %s" % rec["lora"]["where"])
bpp = t["optim_state_bytes"] / t["trainable_params"]
if "%d B per trainable parameter" % bpp not in rec["optimizer"]["text"]:
    bad.append("b8: optimizer %r, the program's %.0f B per parameter" % (rec["optimizer"]["text"], bpp))
for f in ("b8.predict", "b8.predict_json"):  # (from the trace and from its report's JSON)
    # the weights' row: the bf16 adapters cast on the program's lines are the trained ones (they
    # had been "the trained ones may be fp32"), the packed base not "16-bit"
    w = [l for l in open(f) if l.startswith("  parameters ")]
    pk = "but for %.2f GiB packed two 4-bit elements a byte" % (t8["packed_4bit_bytes"] / 2**30)
    if not w or "may be fp32" in w[0] or "made by casts to 16 bits (the trained ones)" not in w[0] or pk not in w[0]:
        bad.append("%s: %s" % (f, w))
    row = [l for l in open(f) if l.startswith("  optimizer ")]
    mib = float(re.search(r"([0-9.]+) MiB", row[0]).group(1)) if row and "MiB" in row[0] else -1
    if abs(mib * 2**20 - t["optim_state_bytes"]) > t["optim_state_bytes"] / 100:
        bad.append("%s: %s (the program's %d B)" % (f, row, t["optim_state_bytes"]))
print("\n".join(bad))
exit(1 if bad else 0)
PY
# the same QLoRA with its adapters left fp32, as peft makes them (--fp32_adapters: no cast to
# bf16; AdamW's state fp32 with them, 8 B a parameter), out of memory in its first forward at
# batch 8: its trainable count, gradients and AdamW state are the program's own (of its run at
# batch 1, which fits). A rotary cos/sin cast read as autocast's copies of them had counted the
# 4-bit projections' absmax beside them (25.17 M), then dropped for the program's freeze: the
# report said "0.37 % of the parameters are its adapters", trainable null, and predict assumed
# 1 % of the weights, "67.38 M": gradients 130.1 MiB and AdamW 520.6 MiB where the program makes
# 64.0 and 128.0; the fp32 adapters' gradients had been costed at 2 B (32.1 MiB)
run f1 --batch_size 1 --fp32_adapters
run f8 --batch_size 8 --fp32_adapters
"$VT" predict --from f8.vt >f8.predict 2>&1 && "$VT" predict --from f8.json >f8.predict_json 2>&1 ||
    fail "f8: predict --from failed"
python3 - <<'PY' >check32.out 2>&1 || fail "$(cat check32.out)"
import json, re
bad = []
tr = lambda n: next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
t8, t = tr("f8"), tr("f1")
assert t8["oom"] and t8["steps"] == 0 and t8["oom_phase"] == "forward" and t8["fp32_adapters"], t8
assert not t["oom"] and t["steps"] == 2 and t["trainable_dtype"].endswith("float32"), t
j = json.load(open("f8.json"))
rec, cal = j["recognized"], j["prediction"]["calibrated_by_category"]
if rec["trainable_params"] != t["trainable_params"]:
    bad.append("f8: trainable %s, the program's %d (fp32 adapters)" % (rec["trainable_params"], t["trainable_params"]))
share = "%.2f %% of the parameters are its adapters" % (100.0 * t["trainable_params"] / (t["trainable_params"] + t["frozen_params"]))
if share not in rec["lora"]["where"]:
    bad.append("f8: LoRA %r, the program's %s" % (rec["lora"]["where"], share))
bpp = t["optim_state_bytes"] / t["trainable_params"]
if bpp != 8 or "%d B per trainable parameter" % bpp not in rec["optimizer"]["text"]:
    bad.append("f8: optimizer %r, the program's %.0f B per parameter" % (rec["optimizer"]["text"], bpp))
for cat, key in (("optimizer", "optim_state_bytes"), ("gradients", "grad_bytes")):
    if abs(cal[cat] - t[key]) > t[key] / 100:
        bad.append("f8: %s predicted %d B, the program's %d at batch 1" % (cat, cal[cat], t[key]))
# the model's parameter count: the program's, not its 4-bit absmax beside the fp32 adapters (the
# q/k/v/o absmax, of their sizes, had been counted at 4 B: 6798.20 M of 6755.19 M)
want = "%.2f M" % ((t["frozen_params"] + t["trainable_params"]) / 1e6)
P = (j["inferred"].get("params") or {}).get("value") or 0
if "%.2f M" % (P / 1e6) != want:
    bad.append("f8: inferred params %s, the program's %s" % (P, want))
for l in open("f8.txt").read().splitlines():
    if ("trainable  " in l or "parameters (vs basic)" in l or "P = " in l) and re.search(r"\d{4}\.\d\d M", l) \
            and want not in l:
        bad.append("f8: %s (the program's %s)" % (l.strip(), want))
# the weights' row: each size's own count (it had said "6755.19 M elements ... at 2 B each (16-bit
# parameters ...)" of fp32 adapters beside a packed 4-bit base)
for n in ("f1", "f8"):
    row = [l for l in open(n + ".txt") if "parameters (vs basic)" in l]
    b16 = t["frozen_bytes"] - t["packed_4bit_bytes"] - t["quant_state_bytes"]  # (bf16 ones)
    want = ("%.2f M at 4 B (fp32: the trained adapters)" % (t["trainable_params"] / 1e6),
            "%.2f M at 2 B (16-bit)" % (b16 / 2e6),
            "%.2f M packed two 4-bit elements a byte" % (t["packed_4bit_bytes"] * 2 / 1e6))
    if not row or "2 B each (16-bit" in row[0] or not all(w in row[0] for w in want):
        bad.append("%s: weights' row %s, the program's %s" % (n, row, want))
for f in ("f8.predict", "f8.predict_json"):  # (from the trace and from its report's JSON)
    txt = open(f).read()
    # the weights' row: the adapters fp32, the base packed (it had said "16-bit (the trained ones
    # may be fp32: LoRA's adapters)")
    w = [l for l in txt.splitlines() if l.startswith("  parameters ")]
    pk = "but for %.2f GiB packed two 4-bit elements a byte" % (t8["packed_4bit_bytes"] / 2**30)
    if not w or "may be fp32" in w[0] or "the trained ones fp32" not in w[0] or pk not in w[0]:
        bad.append("%s: %s" % (f, w))
    if not re.search(r"^trained: %.2f M parameters," % (t["trainable_params"] / 1e6), txt, re.M):
        bad.append("%s: %s" % (f, [l for l in txt.splitlines() if l.startswith("trained")]))
    for cat, key in (("optimizer", "optim_state_bytes"), ("gradients", "grad_bytes")):
        row = [l for l in txt.splitlines() if l.startswith("  %s " % cat)]
        mib = float(re.search(r"([0-9.]+) MiB", row[0]).group(1)) if row and "MiB" in row[0] else -1
        if abs(mib * 2**20 - t[key]) > t[key] / 100:
            bad.append("%s: %s (the program's %d B)" % (f, row, t[key]))
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "qlora_4bit: ok (bf16 adapters counted at 2 B, the 4-bit base at its own bytes; a run that ran batch 1 is not told none fits)"
