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
# use a smaller model", and says now that the run's own ran on the card with less free.
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
import json
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
    if not ut or abs(ut - t["frozen_bytes"]) > 0.01 * t["frozen_bytes"]:
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
if not any("none with that room; 1, this run's own" in l for l in open("long.txt")):
    bad.append("long: (5.71 GiB of 6: under the headroom) %s" % [l for l in open("long.txt") if "largest micro" in l])
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "qlora_4bit: ok (bf16 adapters counted at 2 B, the 4-bit base at its own bytes; a run that ran batch 1 is not told none fits)"
