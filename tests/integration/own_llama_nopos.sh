#!/bin/sh
# own_llama_nopos.sh — a SIMULATED Llama-like decoder of the program's own with no position ids and
# no rotary tensors (tests/python/own_llama_nopos.py, fp16 autocast, its loss scaled by hand,
# accumulation), run with its micro-batch given and its T left to the trace: no sentence speaks of
# position ids (an RMSNorm's fp32 B·T rows had been read as them: "T = 512: B·T = 2048 tokens in
# the token batch over the micro-batch 4; the trace's T = 1024 from the position ids does not
# agree"), and with T not read from any tensor of its own the model is still told from its sizes
# (a token batch looked up in a V×d embedding, repeating blocks, B·T×V logits): a transformer of
# the program's L, d and V, its T the token batch over B (it had become "a model vramtrace does not
# recognize", T not said).
set -u
fail() { echo "own_llama_nopos: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP own_llama_nopos: no python3"; exit 77; }
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
timeout 300 "$VT" run --card 12GiB -o l.vt -- python3 "$ROOT/tests/python/own_llama_nopos.py" \
    --micro_batch_size 4 --accum 2 </dev/null >l.out 2>&1 || { cat l.out; fail "run failed"; }
fact() { sed -n "s/^facts: .*$1=\([0-9A-Za-z_]*\).*/\1/p" l.out; }
B=$(fact micro_batch) T=$(fact seq_len) L=$(fact layers) D=$(fact dim) V=$(fact vocab)
[ "$(fact position_ids)" = none ] && [ -n "$T" ] && [ -n "$V" ] || fail "the program's facts: $(cat l.out)"
"$VT" report --no-color l.vt >l.txt && "$VT" report --json l.vt >l.json || fail "report failed"
! grep -n 'position ids' l.txt || fail "a sentence speaks of position ids, which the program has none of"
grep -q "^what was trained: a transformer language model" l.txt || fail "$(grep '^what was trained' l.txt)"
# (its own classes are on the stacks: "no Python frame names the model class" had been said)
grep -q "^  evidence .*(no class on the Python stacks is of a kind vramtrace knows: the program's own $(fact model_class)[,)]" l.txt ||
    fail "$(grep '^  evidence' l.txt)"
row() { grep "^  $1 " l.txt; }
row "tokens per sample T" | grep -q " $T  " || fail "T: $(row 'tokens per sample T')"
! row "tokens per sample T" | grep -q 'does not agree' || fail "T: $(row 'tokens per sample T')"
row "layers L" | grep -q " $L  *inferred" || fail "L: $(row 'layers L')"
row "width d" | grep -q " $D  *inferred" || fail "d: $(row 'width d')"
row "vocabulary V" | grep -q " $V  *inferred" || fail "V: $(row 'vocabulary V')"
python3 - "$B" "$T" <<'PYEOF' || fail "JSON: $(python3 -c "import json; r = json.load(open('l.json')); print(r['recognized']['family'], r['config']['block_size'], r['config']['batch_size'])")"
import json, sys
r = json.load(open("l.json"))
B, T = int(sys.argv[1]), int(sys.argv[2])
c = r["config"]
# (a decoder, told from the sizes: the JSON's family as the text says it, "a transformer language
# model (a decoder or an encoder ...)")
ok = (r["recognized"]["family"] in ("decoder_transformer", "transformer_language_model")
      and r["recognized"]["family_from_sizes"]
      and c["block_size"]["value"] == T and c["batch_size"]["value"] == B
      and "position" not in json.dumps(c) and "position" not in json.dumps(r["inferred"]))
sys.exit(0 if ok else 1)
PYEOF
echo "own_llama_nopos: ok"
