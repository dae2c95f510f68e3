#!/bin/sh
# ppo_gen.sh — a PPO-style loop of the program's own whose rollout makes its token batch inside its
# model.eval() / no_grad block (torch.cat of the sampled tokens), its batch flag named for
# generation (--gen_batch_size), its updates' forward over slices of that batch:
# tests/python/ppo_gen.py (SIMULATED: the program's own decoder, 8 heads) on a 12 GiB card. The
# rollout is a no-grad pass whose outputs the step uses, and each sentence says so:
#  - its autocast copies are autocast copies and its token batch, which the updates read, an
#    input (both had been "temporaries": "allocated under evaluation (no_grad): a spike");
#  - the training's B·T and H are read from the updates' own forward (none had been: the
#    rollout's sequences, made in its block, are no token batch, and B·T, H stayed unknown);
#  - the generation batch's what-if changes what the steps train on (it had been "the training
#    as it ran, its evaluation's results the same in more passes of fewer samples");
#  - diff and JSON oom.step_pass say the error's pass as the report does (diff had said
#    "(phase: eval)", the JSON "eval" alone).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/ppo_gen.py"
run() { # NAME GEN
    timeout 300 "$VT" run -q --card 12GiB -o "$1.vt" -- python3 "$P" --gen_batch_size "$2" \
        </dev/null >"$1.out" 2>&1
    report_both "$1"
}
fact() { sed -n "s/^FACTS .*$2=\([0-9]*\).*/\1/p" "$1.out"; }
truth() { # NAME KEY: the program's own value
    python3 - "$1.out" "$2" <<'PY'
import json, sys
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS "))
print(t[sys.argv[2]])
PY
}
run fits 16
run oom 256
[ "$(truth fits oom)" = False ] && [ "$(truth oom oom_phase)" = rollout ] ||
    fail "the program's truth: fits oom $(truth fits oom), oom phase $(truth oom oom_phase)"
python3 - fits.json "$(fact fits n_head)" "$(fact fits mini_batch)" "$(fact fits seq_len)" \
    "$(fact fits gen_batch)" "$(truth fits autocast_copy_bytes)" <<'PY' || fail "fits: the rollout read as an evaluation or a step"
import json, sys
j = json.load(open(sys.argv[1]))
heads, mini, seq, gen, copies = map(int, sys.argv[2:7])
i, c, cat = j["inferred"], j["config"], j["categories"]
# the updates' own forward: B·T of a mini-batch, its heads
assert i["tokens"]["value"] == mini * seq, ("tokens", i["tokens"])
assert "evaluation" not in i["tokens"]["where"], i["tokens"]["where"]
assert c["n_head"]["value"] == heads, ("n_head", c["n_head"])
# the peak came in the rollout: its weights' copies, and its token batch the updates read
assert cat["autocast_copies"] == copies, ("autocast copies", cat["autocast_copies"], copies)
assert cat["inputs"] == gen * seq * 8, ("inputs", cat["inputs"])
assert j["prediction"]["calibration"]["evaluation_feeds_step"] is True
PY
grep -q "^  - generation batch 16 → " fits.txt &&
    grep -q "not the training as it ran: the steps train on that pass's outputs" fits.txt ||
    fail "fits: $(grep -A3 'batch 16 →' fits.txt)"
grep -q "its evaluation's results" fits.txt && fail "fits: $(grep "its evaluation's results" fits.txt)"
python3 -c 'import json, sys; sys.exit(json.load(open("oom.json"))["oom"]["step_pass"] is not True)' ||
    fail "oom: JSON oom.step_pass not true of the rollout's error"
"$VT" diff fits.vt oom.vt >d.txt 2>&1 || fail "diff failed: $(tail -n 2 d.txt)"
grep -q "(phase: eval, a no-grad pass whose outputs the step uses: not an evaluation)" d.txt ||
    fail "diff: $(grep 'ran out of memory' d.txt)"
echo "ppo_gen: ok (a rollout's copies, token batch, tokens, heads, generation batch and error said as its pass's)"
