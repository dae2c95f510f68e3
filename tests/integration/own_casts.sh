#!/bin/sh
# own_casts.sh — a training loop's own dtype casts (x.float(): PyTorch's builtin, so the program's
# line is the copy's innermost Python frame, and aten::to's to_dtype its native frame):
# tests/python/own_casts.py (a SIMULATED GPT in bf16, no autocast) keeps fp32 master weights
# (nn.Parameter(p.detach().float())), casts its gradients to fp32 into the masters' .grad after
# each backward (freed by zero_grad after the step), casts its logits to fp32 for the loss and a
# loss mask to fp32 on the device before the forward. The masters had been read as a batch
# ("inputs", 28 MiB of them), their gradients as inputs too, the logits' copy as well; with
# simtorch's casts as Python methods (a library frame innermost) the gradients had been autocast
# copies and temporaries, never gradients. Now, against the program's own counts: the parameters
# at the peak are the weights and the masters, to the byte; the gradients the master gradients;
# the logits' copy is logits/loss; the inputs the token ids and the mask (two batches at most);
# no autocast copies (it has no autocast); every byte of each cast over the run (flame --at all)
# in its category: the masters parameters, the master gradients gradients, the logits' copy
# logits/loss (the vocabulary read from the 16-bit embedding, the fp32 masters made after it:
# before, none, and the copy a temporary), the mask's cast inputs.
# With --masters_after_batch (the first batch moved onto the device before the masters are made)
# the masters had been "inputs" (what the loop makes after a batch and before the first forward
# is the step's input), their gradients' casts logits/loss and temporaries; the same checks hold.
# With --keep_grads (zero_grad(set_to_none=False): the master gradients cast once, after the
# first backward, kept across steps and copied into) they had been "inputs"; now gradients, every
# byte of the one cast each, the gradients' peak the same.
set -u
. "$ROOT/tests/sim_env.sh"
for args in "" --masters_after_batch --keep_grads; do
base=run${args:+_${args#--}}
timeout 300 "$VT" run -q --card 3GiB -o $base.vt -- python3 "$ROOT/tests/python/own_casts.py" $args \
    </dev/null >$base.out 2>&1 || fail "${args:-run}: run failed: $(tail -n 3 $base.out)"
report_both $base
"$VT" flame --at all $base.vt >$base.flame || fail "${args:-run}: flame --at all failed"
python3 - $base.json $base.out $base.flame "$ROOT/tests/python/own_casts.py" "$args" <<'PY' || fail "${args:-run}: see above"
import json, re, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 3, t  # (the case: it ran through)
cats, peaks = r["categories"], {k: v["bytes"] for k, v in r["category_peaks"].items()}
bad = []
# each cast's allocations over the run (flame --at all: every allocation, its category), by the
# program's line that makes it: all in the category of what it is, every byte of it
src = open(sys.argv[4]).read().split("\n")
main = src.index("def main():")
line = lambda text: next(i + 1 for i, l in enumerate(src) if i > main and text in l)
want = {line("nn.Parameter(p.detach().float())"): ("parameters", t["master_bytes"]),
        line("m.grad = p.grad.float()"): ("gradients", (1 if sys.argv[5] == "--keep_grads" else t["steps"]) * t["master_grad_bytes"]),
        line("logits.float().view("): ("logits_loss", t["steps"] * t["logits_copy_bytes"]),
        line(".cuda().float()"): ("inputs", t["steps"] * t["mask_bytes"])}
got = {}
for l in open(sys.argv[3]):
    stack, n = l.rsplit(" ", 1)
    m = re.match(r".*own_casts\.py:(\d+) [^;]*;[^\[]*at::_ops::to_dtype::call.*\[(\w+)\]$", stack)
    if m:
        k = (int(m.group(1)), m.group(2))
        got[k] = got.get(k, 0) + int(n)
for ln, (cat, b) in want.items():
    if got.get((ln, cat)) != b or sum(v for (g, _), v in got.items() if g == ln) != b:
        bad.append("own_casts.py:%d: %s, all %d B of it %s" % (ln, {c: v for (g, c), v in got.items() if g == ln}, b, cat))
if cats["parameters"] != t["param_bytes"] + t["master_bytes"]:
    bad.append("parameters at the peak %d, the weights' and masters' %d" % (cats["parameters"], t["param_bytes"] + t["master_bytes"]))
# the master gradients are made as the bf16 ones are freed: at least the masters', at most both
if not t["master_grad_bytes"] <= peaks["gradients"] <= t["master_grad_bytes"] + t["param_bytes"]:
    bad.append("gradients' peak %d, the master gradients' %d" % (peaks["gradients"], t["master_grad_bytes"]))
if peaks["logits_loss"] < t["logits_copy_bytes"]:
    bad.append("logits/loss peak %d, below the logits' fp32 copy's %d" % (peaks["logits_loss"], t["logits_copy_bytes"]))
batch = t["ids_bytes"] + t["mask_bytes"]
if cats["inputs"] != batch or peaks["inputs"] > 2 * batch + t["ids_bytes"]:
    bad.append("inputs %d at the peak, %d at most; one batch is %d" % (cats["inputs"], peaks["inputs"], batch))
if peaks["autocast_copies"]:
    bad.append("%d B of autocast copies in a run without autocast" % peaks["autocast_copies"])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
done
echo "own_casts: ok (the program's own casts: masters as parameters, master gradients as gradients, the logits' copy as logits)"
