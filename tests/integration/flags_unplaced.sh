#!/bin/sh
# flags_unplaced.sh — a script's own flags that no spelling places are named, never said absent.
# tests/python/token_cap.py (SIMULATED; fairseq's flags: batches by a token budget, --max-tokens,
# so B changes from step to step; --update-freq, --encoder-layers, --encoder-embed-dim) had its
# unknown micro-batch, layers and width each "the command line does not give it, and no flag of
# the recorded token_cap.py sets it"; now each row names the flag (its value on the command line,
# or its default), the micro-batch's says a token cap makes B change with the length, and so do
# the report's JSON (config.KEY.unplaced) and predict --from (the trace and the JSON); its advice
# (text and HTML), which had said only "the micro-batch is not known: no what-if of it", says
# that the flag is not read either (no what-if of --max-tokens is made).
# tests/python/own_llama_nopos.py with its --accum renamed --accum_iter (MAE's and DeiT's
# spelling), run out of memory before its first backward, had "accumulation steps A unknown ...
# no flag ... sets it" and "change: --micro_batch_size 4 (code change besides: ...;
# own_llama_nopos.py defines no flag for it)": now A is its default, carried by --accum_iter; with
# it renamed --update-freq (not placed: another program's --update-freq need not be the
# accumulation), the row and the change name it. A flag that picks the model by its name
# (sim_hf.py's --model gpt2, a committed trace) is named where the heads are unknown, an image's
# side (sim_diffusion.py's --image-size) under the tokens T.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o t.vt -- python3 "$ROOT/tests/python/token_cap.py" \
    --max-tokens 6000 --encoder-layers 3 </dev/null >t.out 2>&1 || fail "run: $(tail -n 2 t.out)"
facts=$(grep '^facts: ' t.out) || fail "no facts: $(tail -n 2 t.out)"
fact() { echo "$facts" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
mt=$(fact max_tokens) el=$(fact encoder_layers) ed=$(fact encoder_embed_dim) uf=$(fact update_freq)
[ "$mt" = 6000 ] && [ "$el" = 3 ] || fail "the program did not take its flags: $facts"
case "$(fact batches)" in *,*) ;; *) fail "one batch shape only: $facts" ;; esac
report_both t
row() { grep "^  $1  " t.txt; }
row "micro-batch B" | grep -qF "unknown: the recorded token_cap.py defines --max-tokens ($mt on the command line; a cap on tokens by its name), a flag vramtrace does not read as the micro-batch B: under a cap on a batch's tokens, B is the cap over the samples' length, and changes as the length does" ||
    fail "micro-batch row: $(row 'micro-batch B')"
row "layers L" | grep -qF "unknown: the recorded token_cap.py defines --encoder-layers ($el on the command line), a flag vramtrace does not read as the layers L" ||
    fail "layers row: $(row 'layers L')"
row "width d" | grep -qF "unknown: the recorded token_cap.py defines --encoder-embed-dim (default $ed; not on the command line), a flag" ||
    fail "width row: $(row 'width d')"
for k in "micro-batch B" "layers L" "width d"; do
    row "$k" | grep -q "no flag of the recorded" && fail "$k: said absent: $(row "$k")"
done
grep -q "^formula: not applied\..*nor the program's batch flags (--max-tokens ($mt on the command line" t.txt ||
    fail "formula: $(grep '^formula' t.txt)"
grep -qxF "  the micro-batch is not known: no what-if of it, nor of the flags that may set it (--max-tokens ($mt on the command line; a cap on tokens by its name)), which vramtrace does not read" t.txt ||
    fail "advice: $(grep 'micro-batch is not known' t.txt)"
"$VT" report --html t.html t.vt >/dev/null 2>&1 || fail "report --html failed"
grep -qF "no what-if of it, nor of the flags that may set it (--max-tokens ($mt on the command line;" t.html ||
    fail "HTML: $(grep -o 'The micro-batch is not known[^<]*' t.html)"
python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['config']
assert c['gradient_accumulation_steps']['unplaced'] == '--update-freq (default $uf; not on the command line)', c['gradient_accumulation_steps']
assert c['n_layer']['value'] is None and c['n_layer']['unplaced'].startswith('--encoder-layers ($el on'), c['n_layer']
assert 'unplaced' not in c['n_head'], c['n_head']" t.json || fail "JSON config"
for f in t.vt t.json; do
    "$VT" predict --from "$f" >pr.out 2>pr.err && fail "predict --from $f: exit 0"
    grep -qF "micro-batch is not known (the recorded token_cap.py defines --max-tokens ($mt on the command line" pr.err ||
        fail "predict --from $f: $(cat pr.err)"
done

# accum NAME: own_llama_nopos.py with its --accum renamed NAME, out of memory in its first forward
# (--micro_batch_size 16 on 2 GiB); the accumulation's default from its own source
accum() {
    sed -e "s/\"--accum\"/\"--$1\"/" -e "s/a\.accum\b/a.$(echo "$1" | tr - _)/g" \
        "$ROOT/tests/python/own_llama_nopos.py" >"$1.py"
    a=$(sed -n "s/.*\"--$1\", type=int, default=\([0-9]*\)).*/\1/p" "$1.py")
    [ -n "$a" ] || fail "$1: the program's flag was not renamed"
    PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 2GiB -o "$1.vt" -- python3 "$1.py" \
        --micro_batch_size 16 </dev/null >"$1.out" 2>&1
    grep -q "OutOfMemoryError" "$1.out" || fail "$1: did not run out of memory: $(tail -n 2 "$1.out")"
    report_both "$1"
    grep -q "defines no flag for it" "$1.txt" && fail "$1: $(grep 'defines no flag' "$1.txt" | head -n 1)"
}
accum accum_iter
grep -q "^  accumulation steps A (--accum_iter)  *$a  *file  accum_iter.py: --accum_iter, default=$a" accum_iter.txt ||
    fail "accum_iter: $(grep 'accumulation steps A' accum_iter.txt)"
grep -q "change: --micro_batch_size [0-9]* --accum_iter [0-9]*$" accum_iter.txt ||
    fail "accum_iter: no change spelled with it: $(grep 'change:' accum_iter.txt | head -n 2)"
accum update-freq
grep "^  accumulation steps A  *unknown  *unknown: " update-freq.txt | grep -qF "the recorded update-freq.py defines --update-freq (default $a; not on the command line), a flag vramtrace does not read as the accumulation steps A" update-freq.txt ||
    fail "update-freq: $(grep 'accumulation steps A' update-freq.txt)"
grep -q "change: --micro_batch_size [0-9]* (besides: gradients accumulated over .* by a code change or by update-freq.py's own --update-freq (default $a; not on the command line), which vramtrace does not read as the accumulation)" update-freq.txt ||
    fail "update-freq: $(grep 'change:' update-freq.txt | head -n 2)"
# a value of the command line is the trace's bytes: a colour code given with --max-tokens (the
# program takes the number after it) reaches no terminal raw, neither from the report's rows and
# formula reason nor from predict --from, which had printed it
sed -e 's/ap.add_argument("--max-tokens", type=int, default=4000)/ap.add_argument("--max-tokens", default=None)/' \
    -e 's/^    a = ap.parse_args()$/    a = ap.parse_args()\n    a.max_tokens = int(a.max_tokens.split("m")[-1])/' \
    "$ROOT/tests/python/token_cap.py" >esc.py
grep -q 'split("m")' esc.py || fail "esc.py: not made"
esc=$(printf '\033[31m6000')
PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 3GiB -o esc.vt -- python3 esc.py --max-tokens "$esc" \
    </dev/null >esc.out 2>&1 || fail "esc: run: $(tail -n 2 esc.out)"
"$VT" report --no-color esc.vt >esc.txt || fail "esc: report failed"
"$VT" predict --from esc.vt >/dev/null 2>esc.err && fail "esc: predict --from: exit 0"
grep -qF 'defines --max-tokens (\x1b[31m6000 on the command line' esc.txt || fail "esc: $(grep 'micro-batch B' esc.txt)"
cat esc.txt esc.err | tr -d '\n' | od -An -c | grep -q '033' && fail "esc: a raw escape reached the terminal"
grep -qF 'defines --max-tokens (\x1b[31m6000 on the command line' esc.err || fail "esc: predict --from: $(cat esc.err)"

# a flag that picks the model by name: sim_hf.py --model gpt2 (a committed trace), whose table of
# sizes sets the heads, had "no flag of the recorded sim_hf.py sets it"
"$VT" report --no-color "$ROOT/examples/traces/sim/gpt2_ckpt_b16_fit.vt" >m.txt || fail "committed trace: report failed"
grep -q "^  run .*sim_hf.py --model gpt2 " m.txt || fail "committed trace: not sim_hf.py --model gpt2"
grep "^  attention heads H  *unknown" m.txt | grep -qF "unknown: the recorded sim_hf.py defines --model (gpt2 on the command line; by its name a choice of model), a flag vramtrace does not read as the attention heads H" ||
    fail "--model: $(grep '^  attention heads H' m.txt)"
# an image's side sets a vision model's tokens: sim_diffusion.py's --image-size (a committed trace)
"$VT" report --json "$ROOT/examples/traces/sim/unet_b16_fit.vt" >u.json || fail "unet: report failed"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
i = d['run']['argv'].index('--image-size')
assert d['config']['block_size']['unplaced'] == '--image-size (%s on the command line)' % d['run']['argv'][i + 1], d['config']['block_size']" u.json ||
    fail "unet: JSON config.block_size"
echo "flags_unplaced: ok (a script's flags vramtrace does not place are named, never said absent)"
