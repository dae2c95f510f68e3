#!/bin/sh
# card_over_device.sh — `run --card` larger than the GPU (64 GiB asked on a 16 GiB device, as
# `--card a100-80gb` on a 24 GiB card): the device, not the emulated card, refuses what does not
# fit. `run` warns that the card is larger than the device; the program's cudaMemGetInfo total is
# the device's, so PyTorch's message says what the process has in use (it had said 63.25 GiB of a
# 64 GiB total, where 15.3 were); the report's OOM gives the device's capacity, not the card's, and
# never blames "too large for the card" (its advice had recommended halving a micro-batch "needing
# ~28.32 GiB" on 64 GiB). The SIMULATED GPT-2 at B=16 runs out of its 16 GiB device.
set -u
. "$ROOT/tests/sim_env.sh"
export FAKECUDA_MEM=16GiB # smaller than its 64 GiB card: the device runs out first
timeout 300 "$VT" run -q --card 64GiB -o big.vt -- python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 \
    --batch-size 16 --steps 1 </dev/null >run.out 2>&1
[ -s big.vt ] || { cat run.out; fail "no trace"; }
grep -q "^vramtrace: .*/big.vt: the card asked, 64GiB (64.00 GiB), is larger than device 0 (.*, 16.00 GiB): the device's own memory decided what fit, not the card" run.out ||
    { cat run.out; fail "run does not warn that the card is larger than the device"; }
grep -q "GPU 0 has a total capacity of 16.00 GiB" run.out ||
    { grep -i "total capacity" run.out; fail "cudaMemGetInfo's total is not the device's"; }
"$VT" report --no-color big.vt >r.txt 2>r.err || { cat r.err; fail "report: exit $?"; }
grep -q "^OOM: .*; capacity 16.00 GiB" r.txt || { grep "^OOM" r.txt; fail "the OOM's capacity is not the device's"; }
grep -q "the device refused it, not the emulated card: the card asked (64GiB, 64.00 GiB) is larger than the device (16.00 GiB), whose own capacity decided" r.txt ||
    { sed -n '/^OOM/,/cause/p' r.txt; fail "the report does not say the device decided"; }
grep -q "too large for the card" r.txt && { grep "cause" r.txt; fail "the card blamed"; }
grep -q "^advice for the traced device (16.00 GiB" r.txt || { grep "^advice" r.txt; fail "advice not for the device"; }
# a card no larger than the device: as before (the card refused it, its capacity quoted)
timeout 300 "$VT" run -q --card 12GiB -o small.vt -- python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 \
    --batch-size 16 --steps 1 </dev/null >small.out 2>&1
grep -q "is larger than device" small.out && { cat small.out; fail "a 12 GiB card said larger than 16"; }
"$VT" report --no-color small.vt >s.txt 2>/dev/null
grep -q "^OOM: .*; capacity 12.00 GiB" s.txt || { grep "^OOM" s.txt; fail "12 GiB card: capacity"; }
grep -q "too large for the card" s.txt || { grep "cause" s.txt; fail "12 GiB card: cause"; }
echo "card_over_device: ok"
