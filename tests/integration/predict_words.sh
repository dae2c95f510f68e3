#!/bin/sh
# predict_words.sh — what `predict --from` and the advice say of runs that are not nanoGPT, on
# real H100 traces: the program's own words (a micro-batch and accumulation steps, its flags
# where known), never nanoGPT's setting names (batch_size=, gradient_accumulation_steps=,
# block_size) that those programs do not have; the verdict's gap adds up with the peak printed
# (the room for allocator fragmentation said when the fit is judged on more than the peak); the
# allocator cache that decides the largest micro-batch named by predict as by the report; and
# no what-if that does not fit the card is called recommended (text, JSON, HTML); predict --from
# recommends what the report does: the run as it is where it fits, never a larger micro-batch;
# for a run of forwards only a batch, no accumulation steps.
set -u
fail() { echo "predict_words: $*"; exit 1; }
H="$ROOT/examples/traces/h100-torch2.11"
B="$ROOT/examples/traces/h100-torch2.11-beyond"

# 1. the peak, the room and the gap add up (hf_llama_fp16_b4 at B=12: 4 x the measured tokens,
#    past twice them, so the fragmentation floor's room is added)
"$VT" predict --from "$H/hf_llama_fp16_b4.vt" --batch-size 12 --card 12GiB >llama.txt 2>&1 ||
    fail "predict llama: exit $?"
python3 - llama.txt <<'PY' || exit 1
import re, sys
t = open(sys.argv[1]).read()
G = lambda s: float(s)
peak = G(re.search(r"^peak: ([0-9.]+) GiB", t, re.M).group(1))
over = re.search(r"card 12GiB \(12\.00 GiB\): does not fit, ([0-9.]+) GiB over", t)
assert over, t
over = G(over.group(1))
m = re.search(r"judged on ([0-9.]+) GiB: the peak and ([0-9.]+) GiB of room", t)
assert m, "the room is not said:\n" + t
judged, room = G(m.group(1)), G(m.group(2))
assert abs(peak + room - judged) <= 0.011, (peak, room, judged)
assert abs(judged - 12.0 - over) <= 0.011, (judged, over)
assert room > 0
print(f"  llama B=12: peak {peak} + room {room} = {judged}; {over} over 12 GiB")
PY

# 2. a plain script's run (hf_train.py: --batch-size / --grad-accum) and a CNN's
#    (vision_train.py): no nanoGPT setting names in what is recommended or refused
check_words() { # check_words FILE WHAT
    if grep -nE 'batch_size=|gradient_accumulation_steps|block_size|largest batch_size' "$1"; then
        fail "$2: nanoGPT's setting names above"
    fi
}
"$VT" predict --from "$H/hf_llama_fp16_b4.vt" --batch-size 12 --card 12GiB >a.txt 2>&1
grep -qE '^recommended, keeping the effective batch 24: micro-batch [0-9]+, [0-9]+ accumulation steps?' a.txt ||
    { cat a.txt; fail "llama: no micro-batch recommendation"; }
grep -q '^largest micro-batch that fits' a.txt || fail "llama: no largest micro-batch line"
sed -n '/^card /,$p' a.txt >a_tail.txt
check_words a_tail.txt "llama --batch-size 12"
"$VT" predict --from "$B/resnet50_b128_fit.vt" --batch-size 256 --card 12GiB >r.txt 2>&1 ||
    fail "predict resnet: exit $?"
grep -q '^step: micro-batch 256, 1 accumulation step$' r.txt || { cat r.txt; fail "resnet: step line"; }
grep -q 'micro-batch 128, 2 accumulation steps  (--batch-size 128 --grad-accum 2)' r.txt ||
    { cat r.txt; fail "resnet: recommendation with its flags"; }
check_words r.txt "resnet --batch-size 256"
"$VT" predict --from "$B/resnet50_b128_fit.vt" --card 1GiB >r1.txt 2>&1
grep -q '^not even a micro-batch of 1 fits: use a smaller model, smaller inputs' r1.txt ||
    { cat r1.txt; fail "resnet on 1 GiB: refusal"; }
check_words r1.txt "resnet --card 1GiB"
# nanoGPT keeps its own names (they are its settings)
"$VT" predict --from "$H/g_compile_b16_12gib.vt" --card 12GiB >n.txt 2>&1
grep -q 'largest batch_size that fits' n.txt || { cat n.txt; fail "nanoGPT: its batch_size"; }

# 2b. predict names the cache that decides its largest micro-batch as the report does
"$VT" predict --from "$H/hf_llama_fp16_b4.vt" --card 12GiB >pl.txt 2>&1 || fail "predict llama: exit $?"
"$VT" report --no-color "$H/hf_llama_fp16_b4.vt" >rl.txt 2>&1 || fail "report llama: exit $?"
pl=$(grep -o 'the allocator cache decides: .* assumed at [0-9]*; with more than .* it keeps' pl.txt)
rl=$(grep -o 'the allocator cache decides: .* assumed at [0-9]*; with more than .* it keeps' rl.txt)
[ -n "$pl" ] && [ "$pl" = "$rl" ] || fail "predict's cache line ($pl) is not the report's ($rl)"
echo "  predict and report: $pl"

# 3. nothing that does not fit is recommended: the ResNet run on a 1 GiB card
"$VT" report --no-color --card 1GiB "$B/resnet50_b128_fit.vt" >rep.txt 2>&1
if grep -n 'recommended:' rep.txt; then fail "report: a what-if that does not fit recommended"; fi
grep -q 'none of these fits the card with >= 5 % free: none is recommended' rep.txt ||
    fail "report: does not say that none fits"
"$VT" report --json --card 1GiB "$B/resnet50_b128_fit.vt" >rep.json 2>/dev/null
python3 - rep.json <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
def items(o):
    if isinstance(o, dict):
        if "recommended" in o and "predicted_peak_bytes" in o:
            yield o
        for v in o.values():
            yield from items(v)
    elif isinstance(o, list):
        for v in o:
            yield from items(v)
its = list(items(j))
assert its, "no what-ifs in the JSON"
assert not any(i["recommended"] for i in its), [i for i in its if i["recommended"]]
print(f"  JSON: {len(its)} what-ifs, none recommended")
PY
"$VT" report --html rep.html --card 1GiB "$B/resnet50_b128_fit.vt" >/dev/null 2>&1 ||
    fail "report --html: exit $?"
grep -q 'badge>recommended' rep.html && fail "HTML: a recommended badge"
grep -q 'None of these fits the card' rep.html || fail "HTML: does not say that none fits"
grep -q '<h3>recommended</h3><p class=big>none</p>' rep.html || fail "HTML: summary card"
# and on its own card, the run's recommendation stands
"$VT" report --no-color "$B/resnet50_b128_fit.vt" >own.txt 2>&1
grep -q 'recommended:' own.txt || fail "report on its own card: no recommendation"
grep -q 'none is recommended' own.txt && fail "report on its own card: none recommended"
# 4. predict --from recommends what the report recommends (beyond the H100 runs of advice_real):
#    Llama 400M out of memory at B=4: B=1 with 4 steps in both (the report said B=2 alone);
#    HF GPT-2 compiled at B=4, A=2 fits: as it is (predict said B=8 with 1 step); a run of
#    forwards only: the largest batch that fits, no accumulation (it said 12 with 2 steps)
S="$ROOT/examples/traces/sim"
#    and on a larger card than the one a run ran out of memory on (report --card h100-80gb: the
#    report said to shrink a configuration predicted to need 15 GiB of the 80, predict "as it is")
for t in "$B/llama400m_b4_oom" "$B/bert_b32_oom" "$B/t5small_b32_oom" "$H/hf_gpt2_compile_b4" \
    "$H/s_hf_gpt2_eager_b6" "$S/gpt2_eval_b24_oom_forward" "$B/bert_b32_oom --card h100-80gb" \
    "$B/llama400m_b4_oom --card h100-80gb" "$S/gpt2_eval_b24_oom_forward --card h100-80gb" \
    "$S/bert_b32_oom_backward --card h100-80gb"; do
    # shellcheck disable=SC2086
    set -- $t
    f=$1.vt
    shift
    "$VT" report --json "$@" "$f" >r.json || fail "report $t"
    "$VT" predict --json --from "$f" "$@" >q.json || fail "predict $t"
    python3 - r.json q.json "$t" <<'PY' || fail "$t: the report and predict --from recommend different things"
import json, sys
r, q = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rec = [a for a in r["advice"] if a["recommended"]][0]
B, A = r["config"]["batch_size"]["value"], r["config"]["gradient_accumulation_steps"]["value"]
want = (B, A) if rec["change"].startswith("none") else (rec["batch_size"], rec["gradient_accumulation_steps"])
got = (q["recommended"]["batch_size"], q["recommended"]["gradient_accumulation_steps"])
assert got[0] == want[0] and (got[1] is None or got[1] == want[1]), (sys.argv[3], rec["change"], want, got)
print("  %s: %s, predict %s" % (sys.argv[3].rsplit("/", 1)[1], rec["change"], got))
PY
done
# a run out of memory whose allocator had once retried and gone on (the simulated BERT at B=32,
# its last OOM fatal, in its backward) did not run to the end: on a larger card its own
# prediction fits, not "it ran to the end on this card" with a smaller batch recommended
"$VT" report --no-color --card h100-80gb "$S/bert_b32_oom_backward.vt" >rb.txt 2>&1
grep -q 'ran to the end on this card' rb.txt && fail "bert_b32_oom_backward on 80 GB: $(grep 'ran to the end' rb.txt)"
grep -q '^  recommended: none (keep the current configuration)' rb.txt ||
    fail "bert_b32_oom_backward on 80 GB: $(grep 'recommended:' rb.txt)"
"$VT" predict --from "$H/hf_gpt2_compile_b4.vt" >c.txt 2>&1
grep -q '^recommended: this configuration as it is (micro-batch 4, 2 accumulation steps)' c.txt ||
    { cat c.txt; fail "hf_gpt2_compile_b4: not recommended as it is"; }
"$VT" predict --from "$S/gpt2_eval_b24_oom_forward.vt" >e.txt 2>&1
# (its what-ifs are lower bounds: at most half the batch, 12; it had been 20, which the same
# program's runs at 16 and 18 measured would not fit)
grep -q '^recommended: a batch of 12 (the same outputs, in more forward passes)' e.txt ||
    { cat e.txt; fail "eval run: no batch recommendation"; }
grep -q 'accumulation' e.txt && fail "eval run: accumulation steps for forwards only"
# 5. a run that accumulated predicts its siblings of one micro-step a step without the gradients
#    it kept through the next forward (Llama 400M B=2, A=2 -> B=1: +20.8 %, all of it the
#    gradients, until 2026-12-01): within 5 % of each sibling's requested peak
python3 - "$S" <<'PY' || fail "a run that accumulated predicts its A=1 siblings off"
import json, os, subprocess, sys
d = sys.argv[1]
facts = {json.loads(l)["trace"]: json.loads(l) for l in open(os.path.join(d, "facts.jsonl"))}
for src, b, dst in (("llama400m_b2_a2_fit", 1, "llama400m_b1_fit"), ("llama400m_b2_a2_fit", 3, "llama400m_b3_fit"),
                    ("gpt2_sgd_b6_a4_fit", 4, "gpt2_sgd_b4_fit")):
    q = json.loads(subprocess.run([os.environ["VT"], "predict", "--from", os.path.join(d, src + ".vt"),
                                   "--batch-size", str(b), "--grad-accum", "1", "--card", "12GiB", "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    want = facts[dst + ".vt"]["requested_bytes_peak"]
    err = q["tensor_bytes"] / want - 1
    print("  %s -> B=%d, A=1 (%s): %+.1f %%" % (src, b, dst, 100 * err))
    assert abs(err) <= 0.05, (src, dst, err)
PY
# 6. a run that does not measure how its step grows with the micro-batch (its tensors peaked
#    after its forward's were freed: ResNet-50 at B=1, its optimizer step's temporaries): a
#    what-if at another micro-batch says it can be far off either way (it predicted B=128 +127 %
#    and called such predictions "too low")
"$VT" predict --from "$S/resnet50_b1_fit.vt" --batch-size 128 --card 12GiB >g.txt 2>&1 || fail "predict resnet B=128"
grep -q 'this what-if scales what it kept at its peak and can be far off either way' g.txt ||
    { cat g.txt; fail "resnet B=1 -> 128: the what-if is not said to be unmeasured"; }
grep -q 'predicted too low' g.txt && fail "resnet B=1 -> 128: 'predicted too low' (it is far too high)"
# where not even a micro-batch of 1 fits, shorter inputs and activation checkpointing are advised
# only where they can make one fit: the simulated Llama 400M on 6 GiB, out of memory in its
# optimizer step (weights, gradients, AdamW's state), needs as much at a 1-token input with
# checkpointing (its own what-if says so), and had been told to use them (until 2026-12-03)
L="$S/llama400m_b1_6gib_oom_optimizer.vt"
"$VT" predict --from "$L" --checkpointing --block-size 1 | grep -q 'does not fit' ||
    fail "llama on 6 GiB: checkpointing and a 1-token input fit"
"$VT" predict --from "$L" >l.txt 2>&1 || fail "predict llama on 6 GiB"
grep -q '^not even a micro-batch of 1 fits, nor would shorter inputs or activation checkpointing: .* need 7.05 GiB at the least: use a smaller model, fewer trained weights (LoRA, frozen layers) or an optimizer with less state$' l.txt ||
    { cat l.txt; fail "llama on 6 GiB: the weights' own need not said"; }
grep -q 'smaller inputs' l.txt && fail "llama on 6 GiB: smaller inputs advised"
# where checkpointing makes one fit (GPT-2 medium on 8 GiB: 7.27 GiB with it), it is still said;
# and that at 1 the allocator cache decides, as the line above it says (the cache an OOM run is
# given is its fragmentation floor: a sequence-length warm-up's run out of memory had been told
# flat "not even a micro-batch of 1 fits" where 1 and 2 ran with less)
"$VT" predict --from "$S/gpt2m_b2_8gib_oom_forward.vt" |
    grep -q '^not even a micro-batch of 1 fits with the allocator cache assumed (with at most [0-9.]* [KMG]iB of it, it would: vramtrace fit measures): use a smaller model, smaller inputs (shorter sequences, smaller images) or activation checkpointing$' ||
    fail "gpt2-medium on 8 GiB: checkpointing, or the cache that decides at 1, not said"
# ... and not where it is on already (a LoRA Llama on 4 GiB with --checkpointing had been told
# to use activation checkpointing; on 3.5 GiB since its KV cache is left out under checkpointing,
# 3.64 GiB predicted)
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11-beyond/llama400m_lora8_b4_fit.vt" --card 3.5GiB \
    --batch-size 1 --grad-accum 4 --checkpointing >ck.txt
grep -q '^not even a micro-batch of 1 fits: use a smaller model or smaller inputs (shorter sequences, smaller images)$' ck.txt ||
    { tail -2 ck.txt; fail "checkpointing on: still advised"; }
# a run no formula applies to (a ResNet, a T5, a GAN): no largest tensor nor the documents'
# formula in the JSON, as in the text (they had been "fp32 logits for cross-entropy (4*B*T*V)",
# 0 B of a ResNet's and a GAN's, 502 MiB of a T5's, and the documents' rows all 0)
for t in "$B/resnet50_b128_fit.vt" "$B/t5small_b8_fit.vt" "$ROOT/examples/traces/sim/gan_b64_fit.vt"; do
    "$VT" predict --from "$t" --json >g.json && "$VT" predict --from "$t" >g.txt || fail "predict --from $t: exit $?"
    grep -q '^largest single tensor\|^the basic formula' g.txt && fail "$t: a formula's line in the text"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
assert d["model"]["block"] is None, d["model"]
assert d["largest_tensor"] is None and d["documents"] is None, (d["largest_tensor"], d["documents"])' g.json ||
        fail "$t: the JSON says a formula's largest tensor or documents the text does not"
done
# the recommendation in a script with no flag for the accumulation says what the report's what-ifs
# say there: its micro-batch flag and the code change (sim_gan.py at 2560: it had said "micro-batch
# 1280, 2 accumulation steps" and nothing else, until 2026-12-06); scripts with flags for both,
# Hugging Face's TrainingArguments, keep theirs
G="$ROOT/examples/traces/sim/gan_b64_fit.vt"
"$VT" report "$G" >gr.txt && "$VT" report --json "$G" >gr.json && "$VT" predict --from "$G" --batch-size 2560 >gp.txt &&
    "$VT" predict --from gr.json --batch-size 2560 >gj.txt || fail "gan: exit $?"
python3 - gr.txt gp.txt gj.txt <<'PY' || fail "gan at 2560: the recommendation does not say the code change the report says"
import re, sys
rep = open(sys.argv[1]).read()
m = re.search(r"^      change: --batch-size 32 (\(code change besides: gradients accumulated over 2 micro-batches[^\n]*\))$", rep, re.M)
assert m, "the report's what-if at 32 x 2 is not said"
want = "recommended, keeping the effective batch 2560: micro-batch 1280, 2 accumulation steps  (--batch-size 1280 %s)" % m.group(1)
for route in sys.argv[2:]:  # the trace, the report's JSON
    pred = open(route).read()
    assert want in pred.splitlines(), (route, [l for l in pred.splitlines() if l.startswith("recommended")])
PY
# a script's name of 35 bytes (a report's JSON edited as another program's): the code change said
# whole (the report's what-ifs and predict had room for 160 bytes: past a name of ~24 both left
# it out, predict saying "micro-batch 1280, 2 accumulation steps" alone)
python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d['config_script_read'] = 'train_classifier_imagenet_long_1.py'; json.dump(d, open(sys.argv[2], 'w'))" \
    gr.json glong.json || fail "gan: gr.json"
"$VT" predict --from glong.json --batch-size 2560 >gl.txt || fail "gan, a long name: exit $?"
grep -q "^recommended, keeping the effective batch 2560: micro-batch 1280, 2 accumulation steps  (--batch-size 1280 (code change besides: .*; train_classifier_imagenet_long_1.py defines no flag for it))$" gl.txt ||
    fail "gan, a long name: $(grep recommended gl.txt)"
"$VT" predict --from "$S/llama400m_b4_fit.vt" --batch-size 64 | grep -q '^recommended, keeping the effective batch 64: micro-batch 2, 32 accumulation steps  (--batch-size 2 --grad-accum 32)$' ||
    fail "llama400m: both flags no longer said"
"$VT" predict --from "$S/trainer_gpt2_fit.vt" --batch-size 64 | grep -q '^recommended, keeping the effective batch 256: micro-batch 4, 64 accumulation steps  (TrainingArguments(per_device_train_batch_size=4, gradient_accumulation_steps=64))$' ||
    fail "trainer_gpt2: TrainingArguments no longer said"
echo "predict_words: ok"
