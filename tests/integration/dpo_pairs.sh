#!/bin/sh
# dpo_pairs.sh — a DPO step in the program's own loop (tests/python/dpo_pairs.py, SIMULATED: a
# policy and a frozen reference of the same decoder, no position ids): --batch_size counts
# preference pairs, and the token batch joins the chosen and the rejected sequences
# (torch.cat([chosen, rejected], dim=0)), 2 x batch_size sequences of --max_length tokens. The
# token batch over the batch flag is no T: the report had said "T = 512: B·T = 1024 tokens in the
# token batch over the micro-batch 2" of sequences of 256, and offered "context length 512 ->
# 256". T is not known, said with the join; the same where the join is on a line of its own
# before the copy to the device (--two_lines).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/dpo_pairs.py"
for n in one two; do
    [ $n = two ] && set -- --two_lines || set --
    timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" -- python3 "$P" --batch_size 2 "$@" \
        </dev/null >"$n.out" 2>&1 || fail "$n: the run failed: $(tail -n 3 "$n.out")"
    report_both "$n"
    seq=$(sed -n 's/^FACTS .*seq_len=\([0-9]*\).*/\1/p' "$n.out")
    pairs=$(sed -n 's/^FACTS pairs=\([0-9]*\).*/\1/p' "$n.out")
    python3 - "$n.json" "$seq" "$pairs" <<'PY' || fail "$n: T read over the pairs"
import json, sys
c = json.load(open(sys.argv[1]))["config"]
t, seq, pairs = c["block_size"], int(sys.argv[2]), int(sys.argv[3])
assert t["value"] in (None, seq), ("block_size", t)
assert c["batch_size"]["value"] == pairs, c["batch_size"]
assert "torch.cat([chosen, rejected]" in t["where"], t["where"]
assert "T = %d if each holds the micro-batch's %d" % (seq, pairs) in t["where"], t["where"]
PY
    grep -q "context length\|tokens per sample T  *$((2 * seq)) " "$n.txt" &&
        fail "$n: $(grep 'context length\|tokens per sample' "$n.txt")"
done
echo "dpo_pairs: ok (a token batch of chosen and rejected sequences joined: T not read over the pairs)"
