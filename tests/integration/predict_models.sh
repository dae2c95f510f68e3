#!/bin/sh
# predict_models.sh — `vramtrace predict` without a trace for models that are not nanoGPT: a
# gated-MLP decoder from its options (--mlp-width, --kv-heads) and a Hugging Face config.json
# (llama with grouped key / value and with biases, qwen2, gpt2: transformers' own block and its
# KV cache said, Llama's too; bert: BertForMaskedLM's encoder, its sequence its position table's unless
# given), each
# against the committed simulated run of that model (examples/traces/sim/facts.jsonl: the
# program's own parameter count and its allocator's requested peak, two steps, AdamW, bf16
# autocast); the shape's values come from the config, never nanoGPT's defaults; the options a
# gated block needs refused when missing or inconsistent, with exit 2.
set -u
fail() { echo "FAIL: $*"; exit 1; }
D="$ROOT/examples/traces/sim"
H="$ROOT/tests/data/hf"

# check NAME TRACE PREDICT_ARGS...: the prediction's parameters equal the program's, its tensors
# (plus transformers' KV cache it says it leaves out) within 3 % of the run's peak
check() {
    name=$1 trace=$2
    shift 2
    "$VT" predict "$@" --grad-accum 1 --dtype bf16 --json >"$name.json" || fail "$name: rc $?"
    python3 - "$name" "$name.json" "$D/facts.jsonl" "$trace" <<'PY' || exit 1
import json, sys
name, pj, facts, trace = sys.argv[1:]
p = json.load(open(pj))
f = [json.loads(l) for l in open(facts) if json.loads(l)["trace"] == trace + ".vt"][0]
assert f["steps"] == 2 and not f["oom"] and f["optimizer"] == "adamw", f
if p["model"]["parameters"] != f["params"]:
    sys.exit("FAIL: %s: %d parameters predicted, the program's %d" %
             (name, p["model"]["parameters"], f["params"]))
got = p["tensor_bytes"] + p["kv_cache_not_counted_bytes"]
err = got / f["requested_bytes_peak"] - 1
print("  %s: tensors %d (+ KV cache %d) predicted, %d measured: %+.1f %%" %
      (name, p["tensor_bytes"], p["kv_cache_not_counted_bytes"], f["requested_bytes_peak"],
       100 * err))
if abs(err) > 0.03:
    sys.exit("FAIL: %s: %+.1f %% off the measured peak" % (name, 100 * err))
PY
}

# a gated decoder from its options: Llama 160M (I = 2048, untied head)
check llama160m llama160m_b4_fit --n-layer 12 --n-head 12 --n-embd 768 --vocab-size 32000 \
    --mlp-width 2048 --batch-size 4 --no-compile
# the same model in its Hugging Face config.json, grouped key / value (4 of 16 heads)
check gqa300m llama_gqa300m_b4_fit "$H/llama_gqa300m.json" --batch-size 4
python3 - gqa300m.json <<'PY' || fail "gqa300m's model"
import json, sys
p = json.load(open(sys.argv[1]))
m, c = p["model"], p["config"]
assert (m["block"], m["mlp_width"], m["kv_width"], m["untied_head"]) == ("gated", 2816, 256, True), m
assert c["n_layer"]["source"] == "file" and c["vocab_size"]["value"] == 32000, c
assert c["compile"]["value"] is False and c["dropout"]["value"] == 0, c
# transformers' Llama keeps a KV cache in training too (use_cache true in its config): a key and a
# value of B*T*kv a block, fp32 under autocast (the rotary embedding's cos and sin promote them:
# 288 MiB for the H100's Llama 160M at B=4, T=1024), said beside the prediction (it had been 0)
assert p["kv_cache_not_counted_bytes"] == 2 * 4 * 4 * 1024 * 256 * 16, p["kv_cache_not_counted_bytes"]
PY
"$VT" predict "$H/llama_gqa300m.json" --batch-size 4 --card 12GiB |
    grep -q "KV cache in training unless use_cache=False, a key and a value a block (B\*T\*kv (the key / value heads' width), fp32 under autocast): 128.0 MiB more" ||
    fail "gqa300m: no KV cache line"
sed 's/"use_cache": true/"use_cache": false/' "$H/llama_gqa300m.json" >gqa_nocache.json
"$VT" predict gqa_nocache.json --batch-size 4 --json | grep -q '"kv_cache_not_counted_bytes":0,' ||
    fail "gqa300m, use_cache false: a KV cache still said"

# says FILE PATTERN...: the text prediction of FILE at B=4 on the 12 GiB card ($out) has a line
# matching each pattern
says() {
    f=$1
    shift
    out=$("$VT" predict "$f" --batch-size 4 --card 12GiB) || fail "$f text: rc $?"
    for pat in "$@"; do
        printf '%s\n' "$out" | grep -q -- "$pat" || fail "$f text: no '$pat' in: $out"
    done
}
# (a config.json's model is no nanoGPT: its settings in words for any program, never nanoGPT's
# n_layer / n_embd / block_size / vocab_size / batch_size)
says "$H/llama_gqa300m.json" \
    "^a gated-MLP decoder, gated blocks: 245.92 M parameters (layers L 16, width d 1024, MLP width 2816, key / value width 256, tokens per sample T 1024 (not given: --block-size for your sequence), vocabulary V 32000," \
    "^step: micro-batch B 4, " \
    "^the basic formula (docs/formula.md §2, the usual GPT-2 rule of thumb"
printf '%s\n' "$out" | grep -nE '\b(n_layer|n_head|n_embd|block_size|vocab_size|batch_size|gradient_accumulation_steps)\b' &&
    fail "llama_gqa300m.json: nanoGPT's setting names above"
# tied: the head is the embedding (one V×d fewer: 32000×1024), as transformers counts it
sed 's/"tie_word_embeddings": false/"tie_word_embeddings": true/' "$H/llama_gqa300m.json" >tied.json
"$VT" predict tied.json --batch-size 4 --json | grep -q '"parameters":213156864,' ||
    fail "a tied head counted as its own"
# biases on the projections: a Llama's attention_bias (q, k, v and o), against its simulated run
sed 's/"attention_bias": false/"attention_bias": true/' "$H/llama_gqa300m.json" >gqa_bias.json
check gqa300m_bias llama_gqa300m_bias_b4_fit gqa_bias.json --batch-size 4
# Qwen2's on q, k and v: Qwen2.5-0.5B's config (tied, 2 key / value heads of 64) counts the
# 494,032,768 parameters its model card gives
"$VT" predict "$H/qwen2_0.5b.json" --batch-size 4 --json | grep -q '"parameters":494032768,' ||
    fail "Qwen2.5-0.5B: not 494032768 parameters: $("$VT" predict "$H/qwen2_0.5b.json" --json)"
says "$H/qwen2_0.5b.json" "key / value width 128, biases on q, k, v, tokens per sample T" "tied head"
# transformers' GPT-2: its own block, biases, its config's dropout, and its KV cache said
check gpt2 gpt2_b4_fit "$H/gpt2.json" --batch-size 4
python3 - gpt2.json <<'PY' || fail "gpt2's model"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["model"]["block"] == "hf_gpt2" and p["config"]["bias"]["value"] is True, p["model"]
assert p["kv_cache_not_counted_bytes"] == 2 * 2 * 4 * 1024 * 768 * 12, p["kv_cache_not_counted_bytes"]
PY
says "$H/gpt2.json" "^transformers' GPT-2 (GPT2LMHeadModel's block): 124.44 M" \
    "KV cache in training unless use_cache=False.*144.0 MiB more"
# a small B*T: the step peaks at the end of the backward (every gradient, the optimizer's state,
# the tied head's V x d gradient being added), not at its start: gpt2.json at B=1, T=64 against
# the simulated run of it (its library workspaces 65 MiB, the formula's cuBLAS 8: -3.5 %; the
# backward's start alone had said -17.4 %)
"$VT" predict "$H/gpt2.json" --batch-size 1 --block-size 64 --grad-accum 1 --dtype bf16 --json \
    >gpt2_t64.json || fail "gpt2 at B=1, T=64: rc $?"
python3 - gpt2_t64.json "$D/facts.jsonl" <<'PY' || fail "gpt2 at B=1, T=64"
import json, sys
p = json.load(open(sys.argv[1]))
f = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["trace"] == "gpt2_b1_t64_fit.vt"][0]
err = (p["tensor_bytes"] + p["kv_cache_not_counted_bytes"]) / f["requested_bytes_peak"] - 1
print("  gpt2 B=1 T=64: %s, %+.1f %%" % (p["by_category_at"], 100 * err))
assert p["by_category_at"] == "backward_end" and -0.05 <= err <= 0.05, (p["by_category_at"], err)
assert p["by_category"]["backward"] == 4 * 50257 * 768, p["by_category"]
PY
# the same moment from a trace of the run at B=4, T=1024: its own weights, all their gradients and
# the tied head's V x d gradient at B=1, T=64 (the run's tensors peaked above that moment, so it
# holds): -0.5 % (the optimizer step alone: -7.5 %; the backward's start: -14.6 %)
"$VT" predict --from "$D/gpt2_b4_fit.vt" --batch-size 1 --block-size 64 --grad-accum 1 --json \
    >gpt2_t64_from.json || fail "gpt2 --from at B=1, T=64: rc $?"
python3 - gpt2_t64_from.json "$D/facts.jsonl" <<'PY' || fail "gpt2 --from at B=1, T=64"
import json, sys
p = json.load(open(sys.argv[1]))
f = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["trace"] == "gpt2_b1_t64_fit.vt"][0]
err = p["tensor_bytes"] / f["requested_bytes_peak"] - 1
print("  gpt2 --from B=4 to B=1 T=64: %s, %+.1f %%" % (p["by_category_at"], 100 * err))
assert p["by_category_at"] == "backward_end" and -0.03 <= err <= 0.03, (p["by_category_at"], err)
PY
# its config turns the cache off: none said
sed 's/"use_cache": true/"use_cache": false/' "$H/gpt2.json" >gpt2_nocache.json
"$VT" predict gpt2_nocache.json --batch-size 4 --json | grep -q '"kv_cache_not_counted_bytes":0,' ||
    fail "use_cache false: a KV cache still said"
# BERT (bert-base-uncased's config.json: BertForMaskedLM, hidden dropout 0.1): its exact
# parameters (position and token-type tables, biases, the masked-LM head's transform and bias)
# and its own block, against the simulated run of that model at B=16, T=512
check bert bert_dropout_b16_fit "$H/bert_base.json" --batch-size 16
python3 - bert.json <<'PY' || fail "bert's model"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["model"]["block"] == "bert" and p["config"]["dropout"]["value"] == 0.1, p["model"]
b = p["config"]["block_size"]
assert b["value"] == 512 and "max_position_embeddings" in b["where"], b
PY
says "$H/bert_base.json" "^BERT (BertForMaskedLM: post-LayerNorm encoder blocks, a masked-LM head): 109.51 M" \
    "tokens per sample T 512 (its max_position_embeddings: --block-size for your sequence)"
# the user's sequence wins, whichever side of the file it is given on; the table's rows stay
for order in "--block-size 128 $H/bert_base.json" "$H/bert_base.json --block-size 128"; do
    # shellcheck disable=SC2086
    "$VT" predict $order --json | grep -q '"parameters":109514298,.*"block_size":128,' ||
        fail "bert, $order: not T 128 over the same 109514298 parameters"
done
# RoBERTa's: 514 positions, one token type, its own vocabulary (roberta-base: 124,697,433)
sed -e 's/"bert"/"roberta"/' -e 's/BertForMaskedLM/RobertaForMaskedLM/' \
    -e 's/"max_position_embeddings": 512/"max_position_embeddings": 514/' \
    -e 's/"type_vocab_size": 2/"type_vocab_size": 1/' -e 's/"vocab_size": 30522/"vocab_size": 50265/' \
    "$H/bert_base.json" >roberta.json
"$VT" predict roberta.json --batch-size 4 --block-size 512 --json | grep -q '"parameters":124697433,' ||
    fail "roberta-base: not 124697433 parameters"
"$VT" predict "$H/bert_base.json" --dtype fp32 --batch-size 4 | grep -q "measured in eager 16-bit autocast only" ||
    fail "bert in float32: GPT-2's block standing in not said"
# a value nothing gave is nanoGPT's default, said as not given for any other program (its
# sequence, dtype, batch, compile); given, or nanoGPT's own, nothing is said
says "$H/llama_gqa300m.json" "tokens per sample T 1024 (not given: --block-size for your sequence)" \
    "bfloat16 (not given: --dtype)"
given=$("$VT" predict "$H/llama_gqa300m.json" --batch-size 4 --block-size 512 --dtype fp32)
printf '%s\n' "$given" | grep -q "(not given: --" && fail "given values said as not given: $given"
printf '%s\n' "$given" | grep -q "tokens per sample T 512, vocabulary V 32000" || fail "T 512 not said: $given"
opts=$("$VT" predict --n-layer 12 --n-head 12 --n-embd 768 --vocab-size 32000 --mlp-width 2048)
printf '%s\n' "$opts" | grep -q "micro-batch B 12 (not given: --batch-size)" ||
    fail "a gated decoder's batch from nanoGPT's defaults not said: $opts"
# ... but not nanoGPT's compile: transformers trains a gated decoder eager unless told, as its
# config.json is read (compile True had predicted B=12 of a Llama 160M in fp16 at 2 accumulation
# steps to fit 12 GiB: its H100 run, s_llama_fp16_b12, ran out of memory), and no nanoGPT flag
printf '%s\n' "$opts" | grep -q "torch.compile False, " || fail "a gated decoder not predicted eager: $opts"
l160=$("$VT" predict --n-layer 12 --n-head 12 --n-embd 768 --mlp-width 2048 --vocab-size 32000 \
    --batch-size 12 --grad-accum 2 --dtype fp16 --card 12GiB)
printf '%s\n' "$l160" | grep -q "^card 12GiB (12.00 GiB): does not fit" ||
    fail "the Llama 160M at B=12 that ran out of memory on 12 GiB said to fit: $l160"
printf '%s\n' "$l160" | grep -q -- "--batch_size=" && fail "a gated decoder given nanoGPT's flags: $l160"
nano=$("$VT" predict --model gpt2 --batch-size 4)
printf '%s\n' "$nano" | grep -q "(not given: --" && fail "nanoGPT's own defaults said as not given: $nano"
# a config's program is not nanoGPT: no flag of nanoGPT's spelling is offered
printf '%s\n' "$out" | grep -q -- "--batch_size=" && fail "gpt2 text: nanoGPT's flags: $out"

expect_usage() {
    want=$1
    shift
    msg=$(timeout 60 "$VT" predict "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 2 ] || fail "predict $* exited $rc, want 2"
    printf '%s\n' "$msg" | grep -q -- "$want" || fail "predict $*: '$msg' does not say '$want'"
    echo "  predict $*: $msg"
}
expect_usage "give --vocab_size" --n-layer 12 --n-head 12 --n-embd 768 --mlp-width 2048
expect_usage "give its --mlp-width" --kv-heads 4
expect_usage "do not divide attention heads H 16" "$H/llama_gqa300m.json" --kv-heads 5
expect_usage "whole number of at least 1" --mlp-width 0
expect_usage "block is the traced run's" --from "$D/llama160m_b4_fit.vt" --mlp-width 2048
printf '{"model_type": "t5", "d_model": 512}\n' >t5.json
expect_usage "model_type 't5' has no block in the formulas (without a trace: gpt2, llama, mistral, qwen2, bert, roberta)" t5.json
sed 's/BertForMaskedLM/BertForSequenceClassification/' "$H/bert_base.json" >bert_cls.json
expect_usage "BERT's masked-LM model only" bert_cls.json
sed 's/"intermediate_size": 3072/"intermediate_size": 2048/' "$H/bert_base.json" >bert_i.json
expect_usage "intermediate_size 2048 is not 4 x hidden_size" bert_i.json
expect_usage "tokens per sample T 1024 is past .*max_position_embeddings 512" "$H/bert_base.json" --block-size 1024
# transformers' GPT-2's position table is its n_positions (1024 rows) whatever the sequence: at
# T = 64 the program's 124,439,808 parameters (facts.jsonl, gpt2_b1_t64_fit), from its config
# and from its trace alike (until 2026-12-03 123,702,528: 64 rows), and a longer sequence is
# refused as BERT's is (2048 had been predicted, 125.23 M parameters; transformers raises)
"$VT" predict "$H/gpt2.json" --batch-size 1 --block-size 64 --json | grep -q '"parameters":124439808,' ||
    fail "gpt2.json at T=64: not the program's 124439808 parameters"
"$VT" predict --from "$D/gpt2_b1_t64_fit.vt" --json | grep -q '"parameters":124439808,' ||
    fail "gpt2_b1_t64_fit: not the program's 124439808 parameters"
expect_usage "tokens per sample T 2048 is past .*gpt2's position table (n_positions 1024)" "$H/gpt2.json" --block-size 2048
# a table shorter than the sequence nothing gave (1024) is the sequence, said as BERT's is, never
# a refusal of a block_size the user did not give
sed 's/"n_positions": 1024/"n_positions": 256/' "$H/gpt2.json" >gpt2_256.json
says gpt2_256.json "tokens per sample T 256 (its n_positions: --block-size for your sequence)"
expect_usage "tokens per sample T 512 is past .*(n_positions 256)" gpt2_256.json --block-size 512
expect_usage "tokens per sample T 2048 is past the traced model's position table (1024 rows" \
    --from "$D/gpt2_b1_t64_fit.vt" --block-size 2048
sed 's/"max_position_embeddings": 512/"max_position_embeddings": 1e30/' "$H/bert_base.json" >bert_pos.json
expect_usage "no whole number 'max_position_embeddings'" bert_pos.json
sed 's/"type_vocab_size": 2/"type_vocab_size": -1/' "$H/bert_base.json" >bert_types.json
expect_usage "no whole number 'type_vocab_size'" bert_types.json
printf '{"model_type": "llama", "hidden_size": 3072, "num_attention_heads": 16, "head_dim": 256,
  "num_hidden_layers": 28, "intermediate_size": 24576, "vocab_size": 256000}\n' >gemma_like.json
expect_usage "head_dim 256 x 16 heads is not hidden_size 3072" gemma_like.json
printf '{"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16}\n' >short.json
expect_usage "no whole number 'num_hidden_layers'" short.json
# a FIFO (no writer: its open would wait) is refused unread, never waited on
mkfifo cfg.fifo && expect_usage "not a regular file" cfg.fifo
# a config.json that does not parse: said, with what a config needs
printf '{"model_type": "llama", "hidden_size": 1024,\n' >broken.json
expect_usage "read when it parses and has its model_type" broken.json
# a report's JSON is still pointed to --from
printf '{"schema_version": 1}\n' >report.json
expect_usage "read with --from" report.json
# without a trace, the cuBLAS workspace assumed is a workspace, as a trace shows it (it had been
# a row of temporaries, "allocated and freed within one phase")
"$VT" predict --model gpt2 --batch-size 8 --card rtx4070 --json | python3 -c "
import json, sys
b = json.load(sys.stdin)['by_category']
assert b['workspaces'] == 8 << 20 and b['temporaries'] == 0, b" || { echo "the assumed cuBLAS workspace not a workspace"; exit 1; }
echo "ok"
