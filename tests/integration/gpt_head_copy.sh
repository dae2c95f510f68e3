#!/bin/sh
# gpt_head_copy.sh — a SIMULATED nanoGPT (examples/sim/sim_train.py, GPT-2 124M, fp16 autocast,
# its head tied to the embedding) out of memory at B=4 in its first forward after every block had
# run, making its head's 16-bit copy (the 50304 x 768 embedding cast at lm_head: a 2390 MiB card).
# Its 162.0 MiB of autocast copies alive at the failure (the blocks', not the head's) had been
# predict --from's at B=4 and B=2, where both runs made 235.7 MiB (the head's 73.7 with them): now
# the head's V x d is added where the formula's copies hold it, within 2 % of what the runs made.
# Out of memory later (at the logits, the head's copy alive) nothing is added: 235.7 too.
set -u
. "$ROOT/tests/sim_env.sh"
G="$ROOT/examples/sim/sim_train.py"
ARGS="$ROOT/examples/gpt/config/gpt2-124m-12gb.py --compile=False --max_iters=2 --eval_interval=1000 --eval_iters=0 --gradient_accumulation_steps=1"
# shellcheck disable=SC2086
for r in "cut 2390MiB 4" "late 2500MiB 4" "b4 20GiB 4" "b2 20GiB 2"; do
    set -- $r
    timeout 300 "$VT" run -q --card "$2" -o "$1.vt" -- python3 $G $ARGS --batch_size="$3" </dev/null >"$1.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "$1.out" || fail "$1: no truth line: $(tail -n 2 "$1.out")"
    report_both "$1"
done
for t in cut late; do
    for b in 4 2; do
        "$VT" predict --json --from "$t.vt" --batch_size=$b >"p$t$b.json" || fail "predict --from $t.vt --batch_size=$b failed"
    done
done
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
bad = []
for t, line in (("cut", "sim_train.py:114"), ("late", "sim_train.py:114")):
    o = json.load(open(t + ".json"))["oom"]
    assert o and o["phase"] == "forward" and line in (o["site"] or ""), (t, o)
live = json.load(open("cut.json"))["oom"]["live_by_category"]["autocast_copies"]
assert live < 0.8 * json.load(open("b4.json"))["categories"]["autocast_copies"], live  # the head's not made
for t in ("cut", "late"):
    for b in (4, 2):
        ac = json.load(open("p%s%d.json" % (t, b)))["by_category"]["autocast_copies"]
        acm = json.load(open("b%d.json" % b))["categories"]["autocast_copies"]
        if not acm <= ac <= 1.02 * acm:
            bad.append("predict --from %s.vt --batch_size=%d: autocast copies %.1f MiB; B=%d's run made %.1f MiB" %
                       (t, b, ac / 2**20, b, acm / 2**20))
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "gpt_head_copy: ok (a GPT-2 out of memory casting its head after every block: its head's copy counted, as its runs made)"
