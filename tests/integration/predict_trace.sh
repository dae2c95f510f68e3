#!/bin/sh
# predict_trace.sh — `vramtrace predict --from` calibrates with a real traced run (the H100 OOM
# of examples/traces, GPT-2 124M B=16 under a 12 GiB card, its config file not recorded: its
# micro-batch given to `report --json`): the run's own setting does not fit, a quarter of the
# micro-batch does; a ResNet's report predicts in its own words; a file that is neither a trace
# nor a report: exit 2.
# The truth is independent of the prediction: both configurations ran on the same card (the
# committed traces b_oom_12gib.vt ran out of memory, b_recommended_12gib.vt at B=4, A=128 did not).
set -u
T="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" report --json "$ROOT/examples/traces/b_recommended_12gib.vt" >rec.json || { echo "report of b_recommended failed"; exit 1; }
"$VT" report --json "$T" >oom.json || { echo "report of b_oom failed"; exit 1; }
python3 - oom.json rec.json <<'PYEOF' || { echo "the committed runs are not what this test says they are"; exit 1; }
import json, sys
oom, rec = (json.load(open(p)) for p in sys.argv[1:3])
assert oom["oom"] and oom["emulated_card"]["bytes"] == 12 << 30, oom["oom"]
assert rec["oom"] is None and rec["emulated_card"]["bytes"] == 12 << 30, rec["oom"]
assert "--batch_size=4" in rec["run"]["argv"] and "--gradient_accumulation_steps=128" in rec["run"]["argv"]
PYEOF
# the trace's config file was not recorded (an older vramtrace) and its tensors do not give the
# micro-batch: nothing to scale from, said with how to give it (nanoGPT's default 12 is not the
# run's 16); the run's values given to report, its JSON calibrates
"$VT" predict --from "$T" >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "micro-batch is not known" err.txt && grep -q "report --json --batch-size N" err.txt ||
    { cat err.txt; echo "predict --from a trace without its micro-batch: exit $rc"; exit 1; }
"$VT" report --json --batch-size 16 --grad-accum 32 "$T" >given.json || exit 1
"$VT" predict --from given.json --json >same.json || { echo "predict --from a report failed"; exit 1; }
"$VT" predict --from given.json --batch_size=4 --gradient_accumulation_steps=128 --json >quarter.json || exit 1
python3 - same.json quarter.json <<'PYEOF' || exit 1
import json, sys
same, quarter = (json.load(open(p)) for p in sys.argv[1:3])
assert same.get("calibrated_from", "").endswith("given.json"), same.get("calibrated_from")
def fits(d):
    for k in ("fits", "fits_card"):
        if k in d:
            return d[k]
    return d["card"]["fits"]
assert fits(same) is False, "the run that ran out of memory is predicted to fit"
assert fits(quarter) is True, "B=4, A=128 is predicted not to fit"
PYEOF
# a report of a network no transformer formula fits (ResNet-50, an OOM at B=320): its what-ifs
# scale what it measured, in its words, never a GPT of 0 parameters
"$VT" report --json "$ROOT/examples/traces/h100-torch2.11-beyond/resnet50_b320_oom.vt" >rn.json || exit 1
"$VT" predict --from rn.json --batch_size=128 >rn.txt || { echo "predict --from a ResNet report failed"; exit 1; }
grep -q '^model: a convolutional network' rn.txt && ! grep -q 'GPT:\|refined formula' rn.txt ||
    { cat rn.txt; echo "predict --from a ResNet report: not in its words"; exit 1; }
# from a trace, what was trained comes first: a BERT is not called a GPT, a ViT has no
# vocabulary, and what the trace does not give (nanoGPT's dropout) is unknown, never 0
B="$ROOT/examples/traces/h100-torch2.11-beyond"
"$VT" predict --from "$B/bert_b16_fit.vt" >bert.txt || exit 1
head -1 bert.txt | grep -q "^an encoder transformer.*(BertForMaskedLM); the formula's GPT blocks of its shape" ||
    { head -1 bert.txt; echo "predict --from a BERT trace: not in its words"; exit 1; }
"$VT" predict --from "$B/vitb16_b64_fit.vt" >vit.txt || exit 1
head -1 vit.txt | grep -q "patch tokens 197" && ! head -1 vit.txt | grep -q vocab_size ||
    { head -1 vit.txt; echo "predict --from a ViT trace: a vocabulary"; exit 1; }
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11/b_oom_12gib.vt" >nano.txt || exit 1
sed -n 2p nano.txt | grep -q "dropout unknown" || { sed -n 2p nano.txt; echo "predict: an unknown dropout said as a value"; exit 1; }
# an OOM run whose failure state is its prediction says so, not "at the step's peak"
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11/s_llama_fp16_b12.vt" >ll.txt || exit 1
grep -q "^at the failure (what was live when the run ran out of memory" ll.txt &&
    ! grep -q "^at the step's peak" ll.txt || { sed -n 1,6p ll.txt; echo "predict: an OOM state said to be the step's peak"; exit 1; }
"$VT" predict --json --from "$ROOT/examples/traces/h100-torch2.11/s_llama_fp16_b12.vt" | grep -q '"by_category_at":"failure"' ||
    { echo "predict --json: by_category_at"; exit 1; }
printf 'not a trace\n' >bogus.txt
"$VT" predict --from bogus.txt >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'neither a trace' err.txt || { cat err.txt; echo "bad --from: exit $rc"; exit 1; }
echo ok
