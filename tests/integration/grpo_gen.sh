#!/bin/sh
# grpo_gen.sh — GRPO (tests/python/grpo_gen.py, SIMULATED: TRL's step, a LoRA policy's completions
# generated under no_grad with a KV cache whose later tokens read it, a frozen reference, then the
# policy's forward with a gradient): the use_cache=False what-if had said "transformers' KV cache
# is never read in training ... no speed cost", "model.config.use_cache = False before training",
# of a run whose generation reads its cache at every new token. Now the what-if is the training
# forward's alone, and says the generation keeps its cache.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 4GiB -o g.vt -- python3 "$ROOT/tests/python/grpo_gen.py" \
    </dev/null >g.out 2>&1 || fail "run failed: $(tail -n 3 g.out)"
report_both g
python3 - g.json <<'PY' || fail "see above"
import json, sys
j = json.load(open(sys.argv[1]))
kv = [a for a in j["advice"] if a["change"].startswith("use_cache=False")]
bad = []
if len(kv) != 1:
    bad.append("%d use_cache=False what-ifs: %s" % (len(kv), [a["change"] for a in j["advice"]]))
for a in kv:
    if a["change"] != "use_cache=False in the training forward" or "not in the generation" not in a["code_change"]:
        bad.append("what-if %r, %r" % (a["change"], a["code_change"]))
    if "never read in training" in a["note"] or "generation" not in a["note"]:
        bad.append("note: %r" % a["note"])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "grpo_gen: ok (a run that generates with a KV cache is told use_cache=False of its training forward alone)"
