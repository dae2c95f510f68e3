#!/bin/sh
# sim_stackless_steps.sh — a run recorded with no stacks (--stacks none), or with native frames
# alone (--stacks native: no Python frame names the optimizer either), has the steps it made, as
# the same run recorded with every stack: plain and bounded (--max-size), in report and watch.
# Without stacks the program's first allocation after a backward can be the optimizer's (a
# foreach AdamW's or SGD's temporaries every step, a fused AdamW's state at its first) or the next
# forward's; the step ended there, so a ResNet-50 with foreach AdamW over 6 steps had "12 steps as
# its allocations split the run" (watch: "steps 12"), and its bounded trace's summaries "6 steps"
# with none ending in an optimizer step (0 of 6; a fused AdamW's 5 of 6). The program's free of
# its gradients (zero_grad) before the next backward now says the optimizer's; accumulation's
# micro-steps stay steps of their own (6 of them, 3 ending in an optimizer step).
set -u
. "$ROOT/tests/sim_env.sh"
# name | program and its arguments | steps | optimizer steps
while IFS='|' read -r name prog steps opt; do
    for m in all native none; do
        for how in plain bounded; do
            set -- run -q --stacks $m --card 24GiB -o "${name}_${m}_$how.vt"
            [ $how = bounded ] && set -- "$@" --max-size 512MiB
            # shellcheck disable=SC2086
            timeout 300 "$VT" "$@" -- python3 "$ROOT/examples/sim/"$prog </dev/null >"${name}_${m}_$how.out" 2>&1 ||
                { tail -n 5 "${name}_${m}_$how.out"; fail "$name $m $how: run failed"; }
            "$VT" report --no-color "${name}_${m}_$how.vt" >"${name}_${m}_$how.txt" &&
                "$VT" report --json "${name}_${m}_$how.vt" >"${name}_${m}_$how.json" ||
                fail "$name $m $how: report failed"
            "$VT" watch --once --plain "${name}_${m}_$how.vt" >"${name}_${m}_$how.watch" ||
                fail "$name $m $how: watch failed"
            grep -q " steps $steps[ (]" "${name}_${m}_$how.watch" ||
                fail "$name $m $how: watch: $(cat "${name}_${m}_$how.watch")"
            if [ "$opt" != "$steps" ]; then
                grep -q " steps $steps ($opt ending in an optimizer step)" "${name}_${m}_$how.watch" ||
                    fail "$name $m $how: watch: $(cat "${name}_${m}_$how.watch")"
            fi
            grep '^Growth across steps' "${name}_${m}_$how.txt" | grep -q "($steps steps[ ,]" ||
                fail "$name $m $how: $(grep '^Growth across steps' "${name}_${m}_$how.txt")"
            grep -q 'split the run' "${name}_${m}_$how.txt" &&
                fail "$name $m $how: $(grep '^Growth across steps' "${name}_${m}_$how.txt")"
        done
    done
    python3 - "$name" "$steps" "$opt" <<'PY' || fail "$name: the growth summaries disagree"
import json, sys
name, steps, opt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
keys = ("steps", "optimizer_steps", "live_at_step", "live_at_last_step_bytes", "last_step_peak_bytes")
runs = {}
for m in ("all", "native", "none"):
    for how in ("plain", "bounded"):
        g = json.load(open(f"{name}_{m}_{how}.json"))["growth"]
        runs[m, how] = {k: g[k] for k in keys}
        assert g["steps"] == steps and g["optimizer_steps"] == opt, (m, how, runs[m, how])
        assert g["source"] == ("summaries" if how == "bounded" else "replay"), (m, how, g["source"])
# the stackless steps end where the recorded ones do: the same live bytes and peak at the last
ref = runs["all", "plain"]
for k, v in runs.items():
    assert v == ref, (k, v, ref)
PY
done <<'EOF'
foreach_adamw|sim_vision.py --model resnet50 --batch-size 8 --steps 6 --optimizer adamw|6|6
foreach_sgd|sim_vision.py --model resnet50 --batch-size 8 --steps 5 --optimizer sgd|5|5
fused_adamw|sim_hf.py --model gpt2 --batch-size 2 --seq-len 256 --steps 6|6|6
accumulate|sim_vision.py --model resnet50 --batch-size 8 --steps 3 --grad-accum 2 --optimizer adamw|6|3
EOF
# the activations per sample are what the forward saved, less the optimizer state the what-ifs take
# out of them (said in the notes): a stackless ResNet-50 with AdamW had been told 71.1 MiB per
# sample, the state counted in, beside "the what-ifs take 195.0 MiB of them for it"
python3 - foreach_adamw_none_plain.json <<'PY' || fail "the activations per sample count the state"
import json, re, sys
r = json.load(open(sys.argv[1]))
a = r["formula"]["activations"]
per, b = re.match(r"([0-9.]+) MiB per sample of the micro-batch \(([0-9]+)\)", a["reason"]).groups()
took = [float(re.search(r"take ([0-9.]+) MiB of them", n).group(1)) for n in r["prediction"]["notes"] if "take" in n]
assert len(took) == 1, r["prediction"]["notes"]
want = (a["measured_bytes"] / 1048576 - took[0]) / int(b)
assert abs(float(per) - want) < 0.06, (per, want, took)
PY
# an EMA update after each optimizer step (diffusers' EMAModel.step) is that step's, plain and
# bounded: 3 steps for 3 (it had begun one more each time: "5 steps as its allocations split
# the run", watch "steps 5 (3 ending in an optimizer step)", read as accumulation)
for how in plain bounded; do
    set -- run -q --card 24GiB -o "ema_$how.vt"
    [ $how = bounded ] && set -- "$@" --max-size 512MiB
    timeout 300 "$VT" "$@" -- python3 "$ROOT/examples/sim/sim_hf.py" --model bert-base \
        --batch-size 4 --steps 3 --ema </dev/null >"ema_$how.out" 2>&1 || fail "ema $how: run failed"
    "$VT" watch --once --plain "ema_$how.vt" >"ema_$how.watch" || fail "ema $how: watch failed"
    grep -q ' steps 3 growth' "ema_$how.watch" || fail "ema $how: watch: $(cat "ema_$how.watch")"
    "$VT" report --no-color "ema_$how.vt" | grep '^Growth across steps' | grep -q '(3 steps[,;]' ||
        fail "ema $how: report: $("$VT" report --no-color "ema_$how.vt" | grep '^Growth across steps')"
done
exit 0
