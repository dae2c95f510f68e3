#!/bin/sh
# report_program.sh — the report reads the traced command line by program kind: the real H100
# trace of examples/hf/hf_train.py (`--model gpt2 --batch-size 4`) is an argparse script,
# batch 4 from --batch-size, no value read as a config file and no nanoGPT default presented
# as its setting; a nanoGPT trace keeps its nanoGPT reading.
set -u
T="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
"$VT" report "$T" >hf.txt 2>&1 || { echo "report on hf_gpt2_eager_b4 failed"; exit 1; }
grep -q '^configuration (an argparse script)' hf.txt || { echo "program kind not argparse"; exit 1; }
grep -Eq '^  batch_size +4 +argument +--batch-size 4' hf.txt || { echo "batch 4 not from --batch-size"; exit 1; }
if grep -Eq 'note:.*(/4\b|/gpt2|config file)' hf.txt; then echo "a flag value was read as a config file"; exit 1; fi
if grep -q 'default (nanoGPT train.py)' hf.txt; then echo "nanoGPT default shown as the setting"; exit 1; fi
"$VT" report "$T" --json >hf.json 2>/dev/null || exit 1
python3 -c 'import json,sys; d=json.load(open("hf.json")); assert d["config_program"]=="an argparse script", d.get("config_program"); assert d["config"]["batch_size"]["value"]==4' || exit 1
N="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" report "$N" >nano.txt 2>&1 || { echo "report on a nanoGPT trace failed"; exit 1; }
grep -q '^configuration (nanoGPT)' nano.txt || { echo "nanoGPT trace not read as nanoGPT"; exit 1; }
exit 0
