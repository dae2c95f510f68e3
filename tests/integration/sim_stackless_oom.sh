#!/bin/sh
# sim_stackless_oom.sh — a SIMULATED GPT-2 at B=16, T=1024 out of memory in its first forward on a
# 12 GiB card, recorded without Python frames (--stacks native, --stacks none): no frame names
# the model, so no formula; the forward's logits at its end were never reached. The what-ifs had
# left them out: with native frames B=8 was "predicted peak 11.25 GiB: fits" and "largest
# micro-batch that fits: 8" (its run at B=8 ran out of memory too: 14.30 GiB without a card),
# with none "micro-batch 16 -> 8, accumulation 1 -> 2: at least 8.82 GiB, may fit" was the
# recommendation, and it ran out of memory. Whether the model ends in an output layer over its
# vocabulary is not known (no frame names it; its forward did not reach its end): the what-ifs
# count no logits, are lower bounds and recommend nothing, and each says what it needs with a
# language model's 12*B*T*V logits: B=8 "does not fit" with them, and 16 -> 4 with 4 micro-steps,
# run, fits at or above its lower bound and at or below what it needs with the logits. (Assumed
# for every such model, the logits had told an encoder with none that half its batch does not fit
# where its run at that half fits: enc_no_head.sh.) With native frames the parameters are the
# program's own (its embedding lookups and first matmul, 271 MiB, had been counted with them, 746
# MiB for 475, until the first free of a young tensor said the forward had begun: an operator only a
# forward runs says it now).
set -u
. "$ROOT/tests/sim_env.sh"
for mode in native none; do
    timeout 300 "$VT" run -q --stacks $mode --card 12GiB -o $mode.vt -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model gpt2 --batch-size 16 --seq-len 1024 --steps 2 </dev/null >$mode.out 2>&1
    grep -q '"oom": true' $mode.out || fail "$mode: B=16 did not run out of memory"
    "$VT" report --json $mode.vt >$mode.json && "$VT" report --no-color $mode.vt >$mode.txt || fail "$mode: report"
    grep -q "no logits are counted at its end, not reached: whether the model ends in an output layer" $mode.txt ||
        fail "$mode: $(grep 'died in its first forward' $mode.txt)"
    [ $mode = native ] && { python3 - $mode.json $mode.out <<'PY' || fail "native: the parameters: see above"; }
import json, sys
r = json.load(open(sys.argv[1]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
got, want = r["categories"]["parameters"], st["param_bytes"]
# the program's weights, and at most its first batch (copied on before the forward: no Python
# frame tells it from a weight)
assert want <= got <= want + (1 << 20), (got, want)
PY
    python3 - $mode.json $mode <<'PY' >rec.txt || fail "$mode: see above"
import json, sys
r = json.load(open(sys.argv[1]))
import re
def with_head(x):  # what the what-if needs with the logits (its note), and whether that fits
    m = re.search(r"with an output layer over its vocabulary \(a language model's B·T×V logits\): (~|at least )([0-9.]+) GiB, (fits|may fit|does not fit)", x["note"])
    assert m, x["note"]  # (without frames, they too are lower bounds: no upper figure)
    return int(float(m.group(2)) * 2**30) if m.group(1) == "~" else 1 << 62, m.group(3) != "does not fit"
for x in r["advice"]:
    if x["batch_size"] == 8:  # its runs ran out of memory, with and without accumulation
        assert not with_head(x)[1] and not x["recommended"], x
# lower bounds: none recommended; the quarter "may fit" (fits with the logits), and is run below
assert not [x for x in r["advice"] if x["recommended"]], r["advice"]
rec = next(x for x in r["advice"] if x["batch_size"] == 4 and x["gradient_accumulation_steps"] == 4)
assert rec["fits"] and rec["predicted_peak_at_least"] and with_head(rec)[1], rec
print(rec["command_line"], rec["predicted_peak_bytes"], with_head(rec)[0])
PY
    set -- $(cat rec.txt)
    [ "$1 $3" = "--batch-size --grad-accum" ] || fail "$mode: recommended $*"
    timeout 300 "$VT" run -q --stacks $mode --card 12GiB -o r$mode.vt -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model gpt2 --batch-size "$2" --grad-accum "$4" --seq-len 1024 --steps 2 </dev/null >r$mode.out 2>&1
    "$VT" report --json r$mode.vt >r$mode.json || fail "$mode: report of the recommended run"
    python3 - r$mode.json r$mode.out "$5" "$6" <<'PY' || fail "$mode: the recommended run: see above"
import json, sys
r = json.load(open(sys.argv[1]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not st["oom"], st["oom_message"]
got, low, high = r["peak"]["process_bytes"], int(sys.argv[3]), int(sys.argv[4])
# at or above its lower bound, within what it needs with the logits (0.01 GiB: the note's words)
assert low <= got <= high + (1 << 24), (got, low, high)
print("measured %.2f GiB, at least %.2f, with the logits ~%.2f" % (got / 2**30, low / 2**30, high / 2**30))
PY
done
echo "sim_stackless_oom: ok"
