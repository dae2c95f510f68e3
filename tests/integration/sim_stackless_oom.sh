#!/bin/sh
# sim_stackless_oom.sh — a SIMULATED GPT-2 at B=16, T=1024 out of memory in its first forward on a
# 12 GiB card, recorded without Python frames (--stacks native, --stacks none): no frame names
# the model, so no formula; the forward's logits at its end were never reached. The what-ifs had
# left them out: with native frames B=8 was "predicted peak 11.25 GiB: fits" and "largest
# micro-batch that fits: 8" (its run at B=8 ran out of memory too: 14.30 GiB without a card),
# with none "micro-batch 16 -> 8, accumulation 1 -> 2: at least 8.82 GiB, may fit" was the
# recommendation, and it ran out of memory. The logits of a token model (a V x d embedding among its
# weights, B, T and V known) are now counted, 12*B*T*V (a shifted cross-entropy): B=8 does not fit,
# and 16 -> 4 with 4 micro-steps, run, fits at or below its prediction (native, where it is
# recommended) or at or above its lower bound (none, whose lower bounds recommend nothing: what the
# rest of the forward and the backward add is not known). With native frames the parameters are the
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
    grep -q "the logits at its end, not reached, are assumed to take 12\*B\*T\*V bytes" $mode.txt ||
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
for x in r["advice"]:
    if x["batch_size"] == 8:  # its runs ran out of memory, with and without accumulation
        assert not x["fits"] and not x["recommended"], x
if sys.argv[2] == "native":
    rec = r["advice"][0]
    assert rec["recommended"] and rec["batch_size"] == 4 and rec["gradient_accumulation_steps"] == 4, rec
else:  # lower bounds: none recommended; the quarter "may fit", and is run below
    assert not [x for x in r["advice"] if x["recommended"]], r["advice"]
    rec = next(x for x in r["advice"] if x["batch_size"] == 4 and x["gradient_accumulation_steps"] == 4)
    assert rec["fits"] and rec["predicted_peak_at_least"], rec
print(rec["command_line"], rec["predicted_peak_bytes"])
PY
    set -- $(cat rec.txt)
    [ "$1 $3" = "--batch-size --grad-accum" ] || fail "$mode: recommended $*"
    timeout 300 "$VT" run -q --stacks $mode --card 12GiB -o r$mode.vt -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model gpt2 --batch-size "$2" --grad-accum "$4" --seq-len 1024 --steps 2 </dev/null >r$mode.out 2>&1
    "$VT" report --json r$mode.vt >r$mode.json || fail "$mode: report of the recommended run"
    python3 - r$mode.json r$mode.out "$5" $mode <<'PY' || fail "$mode: the recommended run: see above"
import json, sys
r = json.load(open(sys.argv[1]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not st["oom"], st["oom_message"]
got, pred = r["peak"]["process_bytes"], int(sys.argv[3])
# native frames: a prediction (the forward extrapolated: more, not less); none: a lower bound
assert (got <= pred) if sys.argv[4] == "native" else (got >= pred), (got, pred)
print(sys.argv[4], "measured %.2f GiB, predicted %.2f" % (got / 2**30, pred / 2**30))
PY
done
echo "sim_stackless_oom: ok"
