#!/bin/sh
# sim_distill_shape.sh — a student distilled from a frozen teacher of another shape has its own
# shape read from the trace: a Llama 160M (L 12, d 768, V 32000, T 1024: sim_hf.py's SIZES)
# beside a Llama 400M teacher (24 blocks of d 1024, an untied 32000×1024 head made right before
# the student's 32000×768 embedding). The teacher's head, the largest weight, is no V×d of the
# student's: it had left V unknown and with it L, d and T ("block_size unknown: neither the
# command line nor the trace gives it", "formula: not applied"); the vocabulary is now the
# largest weight of d's multiples. A GPT-2 student of a GPT-2 medium teacher (tied heads) was
# read right before and still is.
set -u
. "$ROOT/tests/sim_env.sh"
# name | student | teacher | L d V T of the student
while IFS='|' read -r name student teacher shape; do
    timeout 300 "$VT" run -q --card 24GiB -o "$name.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model "$student" --teacher "$teacher" --batch-size 2 --steps 2 </dev/null >"$name.out" 2>&1 ||
        { tail -n 5 "$name.out"; fail "$name: run failed"; }
    "$VT" report --json "$name.vt" >"$name.json" || fail "$name: report failed"
    "$VT" report --no-color "$name.vt" >"$name.txt" || fail "$name: report failed"
    grep -q '^formula comparison at' "$name.txt" || fail "$name: $(grep '^formula' "$name.txt")"
    python3 - "$name" $shape <<'PY' || fail "$name: the student's shape"
import json, sys
name, L, d, V, T = sys.argv[1], *map(int, sys.argv[2:])
r = json.load(open(name + ".json"))
c = r["config"]
got = tuple(c[k]["value"] for k in ("n_layer", "n_embd", "vocab_size", "block_size"))
assert got == (L, d, V, T), (got, (L, d, V, T), [c[k]["where"] for k in ("n_layer", "vocab_size")])
assert r["inferred"]["frozen_blocks"]["value"] > 0, r["inferred"].get("frozen_blocks")
PY
done <<'EOF'
llama|llama-160m|llama-400m|12 768 32000 1024
gpt2|gpt2|gpt2-medium|12 768 50257 1024
EOF
exit 0
