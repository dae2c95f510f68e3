#!/bin/sh
# oom_recovered.sh — a run that went on from an out-of-memory failure (PyTorch released its cache
# and the same request succeeded: its allocator reached the card) is not told that the current
# configuration "fits the card with the stated headroom": the headroom is after that release
# (examples/traces/sim/gan_b1756_fit, vit_probe_b1675_fit: each with a failed request it went on
# from). A run that never reached the card keeps that sentence (bert_b16_fit).
set -u
fail() { echo "oom_recovered: $*"; exit 1; }
D="$ROOT/examples/traces/sim"
for t in gan_b1756_fit vit_probe_b1675_fit; do
    "$VT" dump --no-resolve "$D/$t.vt" | grep -q '"failed":true' || fail "$t: no failed request"
    "$VT" report --no-color "$D/$t.vt" >"$t.txt" || fail "$t: report failed"
    grep -q "it ran to the end on this card, but its allocator reached the card and released its cache to go on" "$t.txt" ||
        fail "$t: $(grep -A2 'none (keep' "$t.txt")"
    grep -q 'the current configuration fits the card with the stated headroom' "$t.txt" &&
        fail "$t: says it fits with the stated headroom"
done
"$VT" report --no-color "$D/bert_b16_fit.vt" | grep -q 'the current configuration fits the card with the stated headroom' ||
    fail "bert_b16_fit: no longer said to fit with the stated headroom"
exit 0
