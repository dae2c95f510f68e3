#!/bin/sh
# oom_recovered.sh — a run that went on from an out-of-memory failure (PyTorch released its cache
# and the same request succeeded: its allocator reached the card) is not told that the current
# configuration "fits the card with the stated headroom": the headroom is after that release
# (examples/traces/sim/gan_b1756_fit, vit_probe_b1675_fit: each with a failed request it went on
# from). A run that never reached the card keeps that sentence (bert_b16_fit). One that went on
# from it with less than the headroom free (a simulated GAN at B=2050: PyTorch's own count, 5
# retries) is told both: tightly, and after that release (it had been told only "it fits", as if
# its allocator had never reached the card), in the text's note and row and on the page.
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
if [ -f "$BUILD/examples/libsimtorch.so" ] && command -v python3 >/dev/null 2>&1; then
    SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB "$VT" run -q --card 12GiB \
        -o gan.vt -- python3 "$ROOT/examples/sim/sim_gan.py" --batch-size 2050 --steps 2 >gan.out 2>&1 ||
        { tail -n 3 gan.out; fail "gan: run failed"; }
    grep -q '"num_alloc_retries": [1-9]' gan.out || fail "gan: the run did not retry ($(grep -o '"num_alloc_retries": [0-9]*' gan.out))"
    "$VT" report --no-color gan.vt >gan.txt && "$VT" report --html gan.html gan.vt >/dev/null || fail "gan: report"
    after="after its allocator reached the card and released its cache to go on (a synchronizing retry)"
    grep -q "^  (the run completed on this card with less than 5 % free, $after: it fits, tightly" gan.txt ||
        fail "gan: note: $(grep 'run completed' gan.txt)"
    grep -q "^      it ran to the end on this card, with less than 5 % free, $after: it fits, tightly;" gan.txt ||
        fail "gan: row: $(grep -A2 'none (keep' gan.txt)"
    grep -q "it fit with less than 5 % free, after its allocator reached the card and released its cache" gan.html ||
        fail "gan: page: $(grep -o 'it fit with[^<]*' gan.html)"
fi
exit 0
