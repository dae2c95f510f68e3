#!/bin/sh
# predict_train.sh — `vramtrace predict` told what trains, without a trace: --optimizer (its state
# per trainable parameter: adamw, adamw8bit, sgd, sgd-momentum, adafactor from the shape) and
# LoRA (--lora-rank, --lora-targets: the adapters alone train, fp32, the model's weights frozen),
# against the H100's runs of the same configurations (examples/traces/h100-torch2.11-beyond, a
# 12 GiB emulated card; facts.jsonl: the program's own counts): Llama 400M with LoRA rank 8 on q,
# k, v and o (examples/hf/hf_train.py's targets) and GPT-2 with Adafactor, each predicted within
# 8 % of the process peak its run measured (`report --json`: peak.process_bytes), their weights,
# adapters and state to the program's bytes, and the verdicts of their out-of-memory siblings
# (B=8, B=16) the runs'; without the options the LoRA run is still predicted as full fine-tuning
# (AdamW on every weight: +44 %, "does not fit") and the JSON has no field of them (as before);
# the options refused with --from, and their bad values, exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }
X="$ROOT/examples/traces/h100-torch2.11-beyond"
# Llama 400M as hf_train.py's SIZES builds it, B=4, one micro-step, bf16 autocast, eager
LLAMA="--n-layer 24 --n-head 16 --n-embd 1024 --mlp-width 2816 --vocab-size 32000 --untied-head
--block-size 1024 --grad-accum 1 --dtype bf16 --no-compile --card 12GiB"
GPT2="$ROOT/tests/data/hf/gpt2.json --block-size 1024 --grad-accum 1 --dtype bf16 --card 12GiB"

# shellcheck disable=SC2086 # the option lists split into words
"$VT" predict $LLAMA --batch-size 4 --lora-rank 8 --lora-targets q,k,v,o --json >lora.json ||
    fail "LoRA: rc $?"
# shellcheck disable=SC2086
"$VT" predict $LLAMA --batch-size 4 --json >full.json || fail "full: rc $?"
# shellcheck disable=SC2086
"$VT" predict $GPT2 --batch-size 4 --optimizer adafactor --json >ada.json || fail "ada: rc $?"
# shellcheck disable=SC2086
"$VT" predict $GPT2 --batch-size 4 --json >adamw.json || fail "adamw: rc $?"
"$VT" report --json "$X/llama400m_lora8_b4_fit.vt" >lora_run.json || fail "report LoRA"
"$VT" report --json "$X/gpt2_adafactor_b4_fit.vt" >ada_run.json || fail "report Adafactor"

python3 - "$X/facts.jsonl" <<'PY' || exit 1
import json, sys
facts = {json.loads(l)["trace"]: json.loads(l) for l in open(sys.argv[1])}
L = lambda f: json.load(open(f))
lora, full, ada, adamw = L("lora.json"), L("full.json"), L("ada.json"), L("adamw.json")
run_l, run_a = L("lora_run.json"), L("ada_run.json")
fl, fa = facts["llama400m_lora8_b4_fit.vt"], facts["gpt2_adafactor_b4_fit.vt"]
assert fl["lora_rank"] == 8 and fl["optimizer"] == "adamw" and not fl["oom"], fl
assert fa["optimizer"] == "adafactor" and not fa["oom"], fa
err = lambda p, r: p["peak_bytes"] / r["peak"]["process_bytes"] - 1
# the adapters, their fp32 gradients and AdamW's state: the program's counts (its state 768 B
# more: a step counter per adapter tensor, fused AdamW's)
l = lora["lora"]
assert l["adapter_parameters"] == fl["trainable_params"] == 1572864, l
assert l["targets"] == ["q", "k", "v", "o"] and not l["targets_default"], l
assert l["activations"] == "lora", l
assert lora["optimizer"] == {"name": "adamw", "assumed": True,
                             "state_bytes_per_trainable_param": 8}, lora["optimizer"]
bc = lora["by_category"]
assert bc["parameters"] == fl["param_bytes"], (bc["parameters"], fl["param_bytes"])
assert 0 <= fl["optim_state_bytes"] - bc["optimizer"] <= 768, bc["optimizer"]
assert bc["gradients"] == 0, bc
# the frozen weights keep no input for a gradient: the run's activations to 0.1 %
acts = run_l["formula"]["activations"]["measured_bytes"]
assert abs(bc["activations"] / acts - 1) < 0.001, (bc["activations"], acts)
# Adafactor's factored state from the shape: the program's bytes, exactly
assert ada["by_category"]["optimizer"] == fa["optim_state_bytes"] == 4 * fa["factored_elements"]
assert ada["optimizer"]["name"] == "adafactor" and not ada["optimizer"]["assumed"], ada
assert ada["lora"] is None, ada
# the peaks: within 8 % of the process peaks measured; without the options as before, far off
e_l, e_f, e_a, e_w = err(lora, run_l), err(full, run_l), err(ada, run_a), err(adamw, run_a)
print("  Llama 400M LoRA r8 B=4: %d predicted, %d measured: %+.1f %% (full fine-tuning: %+.1f %%)"
      % (lora["peak_bytes"], run_l["peak"]["process_bytes"], 100 * e_l, 100 * e_f))
print("  GPT-2 Adafactor B=4: %d predicted, %d measured: %+.1f %% (AdamW assumed: %+.1f %%)"
      % (ada["peak_bytes"], run_a["peak"]["process_bytes"], 100 * e_a, 100 * e_w))
assert abs(e_l) <= 0.08 and abs(e_a) <= 0.08, (e_l, e_a)
assert lora["fits"] and ada["fits"], "a run that fit predicted not to"
# without the options: AdamW on every weight, every weight trained, and no field of them
assert e_f > 0.40 and not full["fits"], e_f
assert full["by_category"]["optimizer"] == 8 * full["model"]["parameters"], full["by_category"]
assert e_w > 0.15, e_w
for p in (full, adamw):
    assert "optimizer" not in p and "lora" not in p, sorted(p)
PY

# their siblings that ran out of memory (B=8 with LoRA, B=16 with Adafactor) do not fit
# shellcheck disable=SC2086
out=$("$VT" predict $LLAMA --batch-size 8 --lora-rank 8 --lora-targets q,k,v,o) || fail "B=8"
printf '%s\n' "$out" | grep -q "^card 12GiB (12.00 GiB): does not fit" || fail "LoRA B=8: $out"
# shellcheck disable=SC2086
out=$("$VT" predict $GPT2 --batch-size 16 --optimizer adafactor) || fail "B=16"
printf '%s\n' "$out" | grep -q "^card 12GiB (12.00 GiB): does not fit" || fail "Adafactor B=16: $out"

# what it says: the adapters, the frozen weights, the optimizer (assumed, or given)
# shellcheck disable=SC2086
out=$("$VT" predict $LLAMA --batch-size 4 --lora-rank 8) || fail "text: rc $?"
for pat in \
    "^trained: LoRA of rank 8 on q_proj, v_proj of every block (peft's default for Llama, Mistral and Qwen2; --lora-targets): 0.79 M adapter parameters in fp32 (as peft keeps them), 0.21 % of all, their gradients and the optimizer's state alone; the model's 373.87 M weights frozen" \
    "^  (activations: the frozen weights keep no input for a gradient" \
    "^optimizer: not given: AdamW's two states assumed, 8 B per trainable parameter (--optimizer)" \
    "^card 12GiB (12.00 GiB): fits"; do
    printf '%s\n' "$out" | grep -q -- "$pat" || fail "no '$pat' in: $out"
done
# Adafactor over LoRA's adapters: their rows and columns (the program's 198,144 elements)
# shellcheck disable=SC2086
"$VT" predict $LLAMA --batch-size 4 --lora-rank 8 --lora-targets q_proj,k_proj,v_proj,o_proj \
    --optimizer adafactor --json | grep -q '"optimizer":792576,' || fail "LoRA's Adafactor state"
# nanoGPT's spelling; the other optimizers' state per trainable parameter (GPT-2 124M: P)
P=124439808
for o in "--optimizer=sgd 0" "--optimizer=sgd_momentum $((4 * P))" "--optimizer=adamw8bit $((2 * P))" \
    "--optimizer=adam $((8 * P))"; do
    # shellcheck disable=SC2086 # a word each
    set -- $o
    # shellcheck disable=SC2086
    "$VT" predict $GPT2 --batch-size 4 "$1" --json | grep -q "\"optimizer\":$2," ||
        fail "$1: not $2 B of state"
done
# GPT-2's LoRA default: c_attn (q, k and v in one: R x (d + 3d)); its activations the full block's
# shellcheck disable=SC2086
"$VT" predict $GPT2 --batch-size 4 --lora-rank 8 --json >g.json || fail "GPT-2 LoRA"
python3 - g.json <<'PY' || fail "GPT-2's LoRA"
import json, sys
l = json.load(open(sys.argv[1]))["lora"]
assert l["targets"] == ["qkv"] and l["adapter_parameters"] == 12 * 8 * (768 + 3 * 768), l
assert l["activations"] == "full_fine_tuning", l
PY
# shellcheck disable=SC2086
"$VT" predict $GPT2 --lora-rank 8 | grep -q "^  (activations: counted as full fine-tuning keeps" ||
    fail "GPT-2's LoRA activations unsaid"

# refused, exit 2
refused() { # refused PATTERN ARGS...: exit 2, PATTERN on stderr
    pat=$1
    shift
    "$VT" predict "$@" >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 2 ] || fail "predict $*: exit $rc, not 2"
    grep -q -- "$pat" err.txt || fail "predict $*: no '$pat' in: $(cat err.txt)"
}
refused "with --from the optimizer and what trains are the traced run's" \
    --from "$X/llama400m_lora8_b4_fit.vt" --optimizer sgd
refused "unknown optimizer 'lion'" --optimizer lion
refused "needs a value (e.g. --optimizer adafactor)" --optimizer
refused "--optimizer given twice (sgd, then adamw)" --optimizer sgd --optimizer adamw
refused "give its --lora-rank too" --lora-targets q,v
refused "whole number from 1 to 65536, not '0'" --lora-rank 0
refused "GPT-2's q, k and v are one projection (c_attn): give qkv" --lora-rank 8 --lora-targets q
# shellcheck disable=SC2086
refused "no projection 'c_attn' in gated blocks" $LLAMA --lora-rank 8 --lora-targets c_attn
echo "ok"
