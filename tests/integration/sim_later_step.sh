#!/bin/sh
# sim_later_step.sh — what a run of one optimizer step is told of a later step, held to later
# steps measured: SIMULATED programs (BERT at B=8, 16, 24; GPT-2 at B=4, 8; both in fp32) run
# for one step and for three on the same card. The one-step run made AdamW's state after its
# forward, so its predictions are of a second step, whose allocator cache it never measured:
# each later run peaked within the range its note gives (ADVICE_LATER_STEP: 11 % below to 11 %
# above what the first step alone predicted), and the note says so. (BERT at B=16 was predicted
# 9.91 GiB where three steps took 8.78; BERT in fp32 9.18 where they took 10.23: the allocator
# held 1.08 GiB of cache there, where one step left 64 MiB.)
set -u
fail() { echo "sim_later_step: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP sim_later_step: no python3"; exit 77; }
i=0
while read -r model batch amp; do
    i=$((i + 1))
    for steps in 1 3; do
        SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=48GiB "$VT" run -q --card 40GiB \
            -o "p${i}_s$steps.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" --model "$model" \
            --batch-size "$batch" --amp "$amp" --steps "$steps" >"p$i.out" 2>&1 ||
            { tail -n 3 "p$i.out"; fail "run $model B=$batch $amp $steps steps failed"; }
        "$VT" report --json "p${i}_s$steps.vt" >"p${i}_s$steps.json" &&
            "$VT" report --no-color "p${i}_s$steps.vt" >"p${i}_s$steps.txt" || fail "report"
    done
done <<'EOF2'
bert-base 8 bf16
bert-base 16 bf16
bert-base 24 bf16
gpt2 4 bf16
gpt2 8 bf16
bert-base 16 none
gpt2 8 none
EOF2
python3 - "$i" <<'PY' || fail "see above"
import json, sys
bad, lo, hi = [], 1.0, 1.0
for i in range(1, int(sys.argv[1]) + 1):
    one, three = (json.load(open("p%d_s%d.json" % (i, s))) for s in (1, 3))
    text = open("p%d_s1.txt" % i).read()
    pred = one["prediction"]["current_peak_bytes"]
    meas = three["peak"]["process_bytes"]
    q = meas / pred
    lo, hi = min(lo, q), max(hi, q)
    name = "pair %d (%s)" % (i, " ".join(one["recognized"].get("family_words", "").split()[:3]) or i)
    # the later steps peaked within what the note says, and the note says it
    if not 0.885 <= q <= 1.115:
        bad.append("%s: three steps peaked at %.3fx the one-step prediction (%d / %d B)" % (name, q, meas, pred))
    if one["iterations"] != 1 or \
            "peaked from 11 % below to 11 % above what their first step alone predicted" not in text:
        bad.append("%s: the one-step report does not say its later step's cache is not measured" % name)
print("sim_later_step: later steps at %.3f..%.3f of the one-step predictions" % (lo, hi))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
