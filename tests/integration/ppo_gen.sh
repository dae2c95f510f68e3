#!/bin/sh
# ppo_gen.sh — a PPO-style loop of the program's own whose rollout makes its token batch inside its
# model.eval() / no_grad block (torch.cat of the sampled tokens), its batch flag named for
# generation (--gen_batch_size), its updates' forward over slices of that batch:
# tests/python/ppo_gen.py (SIMULATED: the program's own decoder, 8 heads) on a 12 GiB card. The
# rollout is a no-grad pass whose outputs the step uses, and each sentence says so:
#  - its autocast copies are autocast copies and its token batch, which the updates read, an
#    input (both had been "temporaries": "allocated under evaluation (no_grad): a spike").
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
[ "$(truth fits oom)" = False ] || fail "the program's truth: fits oom $(truth fits oom)"
python3 - fits.json "$(fact fits seq_len)" "$(fact fits gen_batch)" \
    "$(truth fits autocast_copy_bytes)" <<'PY' || fail "fits: the rollout's tensors read as temporaries"
import json, sys
j = json.load(open(sys.argv[1]))
seq, gen, copies = map(int, sys.argv[2:5])
cat = j["categories"]
# the peak came in the rollout: its weights' copies, and its token batch the updates read
assert cat["autocast_copies"] == copies, ("autocast copies", cat["autocast_copies"], copies)
assert cat["inputs"] == gen * seq * 8, ("inputs", cat["inputs"])
PY
echo "ppo_gen: ok (a rollout's autocast copies and token batch said as what they are)"
