#!/bin/sh
# cast_output.sh — the program's own cast of what its forward made, for a loss that is no B·T·V:
# tests/python/cast_output.py (a SIMULATED denoiser in the program, a diffusion loop's way) casts
# its image batch on the device before the forward (imgs.cuda().float()) and the model's bf16
# output to fp32 for an MSE loss after it (F.mse_loss(pred.float(), noise): the cast saved for the
# loss's backward). The output's cast had been read as a batch's ("inputs": a cast alive into the
# backward, no vocabulary to tell it); its line first runs after the run's first forward began,
# which a batch's cast never does. Now, against the program's own counts, over the run (flame
# --at all: every allocation, its category): every byte of the output's cast logits/loss, every
# byte of the image batch's cast inputs.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o run.vt -- python3 "$ROOT/tests/python/cast_output.py" \
    </dev/null >run.out 2>&1 || fail "run failed: $(tail -n 3 run.out)"
report_both run
"$VT" flame --at all run.vt >run.flame || fail "flame --at all failed"
python3 - run.out run.flame "$ROOT/tests/python/cast_output.py" <<'PY' || fail "see above"
import json, re, sys
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 3, t  # (the case: it ran through)
src = open(sys.argv[3]).read().split("\n")
main = src.index("def main():")
line = lambda text: next(i + 1 for i, l in enumerate(src) if i > main and text in l)
want = {line("pred32 = pred.float()"): ("logits_loss", t["steps"] * t["output_cast_bytes"]),
        line(".cuda().float()"): ("inputs", t["steps"] * t["image_cast_bytes"])}
got = {}
for l in open(sys.argv[2]):
    stack, n = l.rsplit(" ", 1)
    m = re.match(r".*cast_output\.py:(\d+) [^;]*;[^\[]*at::_ops::to_dtype::call.*\[(\w+)\]$", stack)
    if m:
        k = (int(m.group(1)), m.group(2))
        got[k] = got.get(k, 0) + int(n)
bad = []
for ln, (cat, b) in want.items():
    if got.get((ln, cat)) != b or sum(v for (g, _), v in got.items() if g == ln) != b:
        bad.append("cast_output.py:%d: %s, all %d B of it %s" % (ln, {c: v for (g, c), v in got.items() if g == ln}, b, cat))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "cast_output: ok (the forward's output cast for its loss is logits/loss, the batch's cast inputs)"
