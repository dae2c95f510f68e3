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
# no autocast copies (it has no autocast).
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o run.vt -- python3 "$ROOT/tests/python/own_casts.py" \
    </dev/null >run.out 2>&1 || fail "run failed: $(tail -n 3 run.out)"
report_both run
python3 - run.json run.out <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 3, t  # (the case: it ran through)
cats, peaks = r["categories"], {k: v["bytes"] for k, v in r["category_peaks"].items()}
bad = []
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
echo "own_casts: ok (the program's own casts: masters as parameters, master gradients as gradients, the logits' copy as logits)"
