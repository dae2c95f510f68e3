#!/bin/sh
# vocab_eval_first.sh — the vocabulary is read from the parameters at the run's first forward, an
# evaluation's included (nanoGPT's estimate_loss and Lightning's sanity check evaluate before
# training), but never before a parameter exists: a held-out batch put on the device before the
# model is built, by a function named load_eval_data (its frames say "eval"), had fixed the
# vocabulary at none for the whole run (sim_hf --eval-data-first: vocab_inferred null, the
# logits of the backward counted as temporaries, 1.16 GiB where the same run without that batch
# has 153 MiB). The run with it reads as the run without it.
set -u
. "$ROOT/tests/sim_env.sh"
for how in plain first; do
    # shellcheck disable=SC2046
    timeout 300 "$VT" run -q --card 12GiB -o "$how.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model gpt2 --batch-size 4 --steps 2 $([ $how = plain ] || echo --eval-data-first) >"$how.out" 2>&1 ||
        { tail -n 5 "$how.out"; fail "$how: run failed"; }
    "$VT" report --json "$how.vt" >"$how.json" || fail "$how: report failed"
done
python3 - plain.json first.json <<'PY' || fail "a held-out batch before the model changed the run's reading"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["vocab_inferred"] == 50257 == a["vocab_inferred"], (a["vocab_inferred"], b["vocab_inferred"])
for k in ("logits_loss", "backward", "temporaries", "activations"):
    x, y = a["category_peaks"][k]["bytes"], b["category_peaks"][k]["bytes"]
    assert abs(x - y) <= 0.02 * x + (1 << 20), (k, x, y)
PY
exit 0
