#!/bin/sh
# predict_presets.sh — `vramtrace predict --model NAME` for Hugging Face models known by name
# (BERT, RoBERTa, TinyLlama, Llama 2 / 3.1 / 3.2, Mistral, Qwen2.5): each one's parameters are
# the count transformers gives that model on the Hub (sum of numel over XForMaskedLM /
# XForCausalLM's parameters); a name predicts what its config.json given as a file predicts, its
# values sourced "flag" from "--model NAME (hub id)"; RoBERTa's sequence is its table less the
# padding rows (512 of 514); an unknown name lists every name and points to config.json; --help
# lists them; BERT base against the committed simulated run of it.
set -u
fail() { echo "FAIL: $*"; exit 1; }
H="$ROOT/tests/data/hf"
D="$ROOT/examples/traces/sim"

# the Hub's counts (bert-base-uncased 109,514,298 is also the simulated BERT's own count, facts.jsonl)
while read -r name params; do
    "$VT" predict --model "$name" --batch-size 4 --json >p.json || fail "$name: rc $?"
    python3 - "$name" "$params" p.json <<'PY' || exit 1
import json, sys
name, params, f = sys.argv[1], int(sys.argv[2]), sys.argv[3]
p = json.load(open(f))
got = p["model"]["parameters"]
if got != params:
    sys.exit("FAIL: --model %s: %d parameters, the Hub's model has %d" % (name, got, params))
for k in ("n_layer", "n_head", "n_embd", "vocab_size"):
    c = p["config"][k]
    if c["source"] != "flag" or not c["where"].startswith("--model %s (" % name):
        sys.exit("FAIL: --model %s: %s from %r %r" % (name, k, c["source"], c["where"]))
print("  --model %s: %d parameters" % (name, got))
PY
done <<'EOF2'
bert-base 109514298
bert-large 335174458
roberta-base 124697433
roberta-large 355412057
tinyllama-1.1b 1100048384
llama-2-7b 6738415616
llama-3.1-8b 8030261248
llama-3.2-1b 1235814400
llama-3.2-3b 3212749824
mistral-7b 7241732096
qwen2.5-0.5b 494032768
qwen2.5-1.5b 1543714304
EOF2

# a name is its config.json: the same prediction, but for where each value came from
same() {
    name=$1 file=$2
    shift 2
    "$VT" predict --model "$name" "$@" --card 12GiB --json >a.json || fail "$name: rc $?"
    "$VT" predict "$file" "$@" --card 12GiB --json >b.json || fail "$file: rc $?"
    python3 - "$name" a.json b.json <<'PY' || exit 1
import json, sys
name, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for k in a["config"]:
    for x in (a, b):
        x["config"][k].pop("source", None), x["config"][k].pop("where", None)
if a != b:
    diff = [k for k in a if a[k] != b[k]]
    sys.exit("FAIL: --model %s predicts otherwise than its config.json: %s" % (name, diff))
PY
}
same bert-base "$H/bert_base.json" --batch-size 16
same qwen2.5-0.5b "$H/qwen2_0.5b.json" --batch-size 4 --block-size 2048 --optimizer sgd

# RoBERTa: 514 rows, positions from its padding index + 1: a sequence of 512 at most
"$VT" predict --model roberta-base --batch-size 8 --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["config"]["block_size"]
assert c["value"] == 512 and "padding rows" in c["where"], c' || fail "roberta-base: not T = 512"
"$VT" predict --model roberta-base --batch-size 8 | grep -q "^RoBERTa (RobertaForMaskedLM: .*: 124.70 M parameters (layers L 12, .*tokens per sample T 512 (its max_position_embeddings less its padding rows: --block-size for your sequence)" ||
    fail "roberta-base: its sequence not said as its table's: $("$VT" predict --model roberta-base | head -1)"
# its class named as its config.json's (model_type roberta), whatever gave T; BERT's its own
"$VT" predict --model roberta-large --block-size 128 | head -1 | grep -q "^RoBERTa (RobertaForMaskedLM: " ||
    fail "roberta-large: not named RobertaForMaskedLM: $("$VT" predict --model roberta-large --block-size 128 | head -1)"
"$VT" predict --model bert-base | head -1 | grep -q "^BERT (BertForMaskedLM: " ||
    fail "bert-base: not named BertForMaskedLM: $("$VT" predict --model bert-base | head -1)"
"$VT" predict --model roberta-base --block-size 514 >out.txt 2>&1
rc=$?
[ "$rc" = 2 ] || fail "roberta-base at T = 514: rc $rc"
grep -q "past --model roberta-base (roberta-base): roberta's position table (max_position_embeddings 514, less RoBERTa's padding rows" out.txt ||
    fail "roberta-base at T = 514: $(cat out.txt)"

# a value given explicitly wins over --model's whatever its place: the same prediction both ways
# (--n-layer 3 before --model gpt2 had been dropped, exit 0: gpt2's 12 layers)
for m in gpt2 llama-3.2-1b shakespeare-char roberta-base; do
    "$VT" predict --model $m --n-layer 3 --batch-size 2 --json >after.json 2>&1 || fail "$m --n-layer 3: rc $?"
    "$VT" predict --n-layer 3 --batch-size 2 --model $m --json >before.json 2>&1 || fail "--n-layer 3 $m: rc $?"
    cmp -s after.json before.json || fail "--n-layer 3 before --model $m predicts otherwise than after it"
    python3 -c '
import json, sys
c = json.load(open("before.json"))["config"]
assert c["n_layer"]["value"] == 3 and c["n_layer"]["where"] == "--n-layer 3", c["n_layer"]
assert c["batch_size"]["value"] == 2, c["batch_size"]' || fail "--n-layer 3 --model $m: not 3 layers"
done
"$VT" predict --n-embd=512 --dropout 0.2 --model gpt2-medium | head -1 | grep -q "n_layer 24, n_head 16, n_embd 512," ||
    fail "--n-embd=512 before --model gpt2-medium: $("$VT" predict --n-embd=512 --model gpt2-medium | head -1)"

# an unknown name: every name said, and the config.json way
"$VT" predict --model bert-bas >out.txt 2>&1
rc=$?
[ "$rc" = 2 ] || fail "unknown model: rc $rc"
grep -q "unknown model 'bert-bas' (one of gpt2, .*, bert-base, .*, llama-3.2-1b, .* or qwen2.5-1.5b; or another model's Hugging Face config.json" out.txt ||
    fail "unknown model: $(cat out.txt)"
"$VT" predict --help >help.txt || fail "--help: rc $?"
for name in gpt2 shakespeare-char bert-base roberta-large tinyllama-1.1b llama-3.1-8b mistral-7b qwen2.5-1.5b; do
    grep -q "[ ,]$name[,]*\$\|[ ,]$name, " help.txt || fail "--help does not list $name"
done

# BERT base by name against the simulated run of it (B = 16, T = 512, AdamW, bf16 autocast, one
# accumulation step, dropout 0.1 as the model's config): tensors within 3 % of its peak
"$VT" predict --model bert-base --batch-size 16 --grad-accum 1 --dtype bf16 --json >bert.json ||
    fail "bert-base: rc $?"
python3 - bert.json "$D/facts.jsonl" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
f = [json.loads(l) for l in open(sys.argv[2]) if json.loads(l)["trace"] == "bert_dropout_b16_fit.vt"][0]
assert f["params"] == p["model"]["parameters"] and f["batch_size"] == 16, f
err = p["tensor_bytes"] / f["requested_bytes_peak"] - 1
print("  bert-base B=16: tensors %d predicted, %d measured (simulated): %+.1f %%" %
      (p["tensor_bytes"], f["requested_bytes_peak"], 100 * err))
if abs(err) > 0.03:
    sys.exit("FAIL: bert-base: %+.1f %% off the simulated run's peak" % (100 * err))
PY
echo "predict_presets: ok"
