#!/bin/sh
# step_floor.sh — a prediction is at least the optimizer step the run measured, moved to its
# shape (analyzer/model/advice/advice.c's predict_step): on every committed tensor-mode trace
# with a step, each what-if that keeps the model and its optimizer (a smaller micro-batch,
# accumulation, a shorter sequence, checkpointing) predicts no fewer tensor bytes than that step
# had beside its batch-sized tensors (calibration.optimizer_step: the weights, their gradients,
# the optimizer's state and temporaries, workspaces, which no micro-batch changes), and the
# report's three views say the same of which predictions peak there or at the backward's end
# (JSON predicted_peak_at, the text's "in the optimizer step" / "at the backward's end" / "in the
# evaluation pass" / "(the run's own peak, as measured)", the HTML's). The truth of the step's prediction against measured runs: step_pairs.sh
# (ResNet-50 B=128 -> B=1) and oom_pairs.sh.
set -u
cd "$ROOT" || exit 2
python3 - "$VT" <<'PYEOF'
import json, subprocess, sys, glob
vt = sys.argv[1]
bad, n, said = [], 0, 0
same_model = ("micro-batch", "sequence length", "context length", "activation checkpointing",
              "image", "resolution")
for t in sorted(glob.glob("examples/traces/*/*.vt")):
    j = subprocess.run([vt, "report", "--json", t], capture_output=True, text=True)
    if j.returncode:
        continue
    d = json.loads(j.stdout)
    cal = ((d.get("prediction") or {}).get("calibration") or {})
    st = cal.get("optimizer_step") or {}
    batch = ("activations", "logits_loss", "attention", "inputs", "backward")
    step = sum(v for k, v in st.items() if k not in batch)
    items = d.get("advice") or []
    flagged = sum(1 for a in items if a["predicted_peak_at"] != "step_peak")
    if flagged:
        txt = subprocess.run([vt, "report", t], capture_output=True, text=True).stdout
        html = subprocess.run([vt, "export", "--html", "/dev/stdout", t], capture_output=True,
                              text=True).stdout
        nt = sum(1 for l in txt.splitlines() if "predicted peak" in l and
                 ("in the optimizer step" in l or "at the backward's end" in l or
                  "in the evaluation pass" in l or "(the run's own peak, as measured)" in l))
        nh = html.count("its peak in the optimizer step") + html.count("its peak at the backward's end") + \
            html.count("its peak in the evaluation pass") + html.count("(the run's own peak, as measured)")
        if nt != flagged or nh != flagged:
            bad.append("%s: %d predictions at another moment (JSON), %d in the text, %d on the page"
                       % (t, flagged, nt, nh))
        said += flagged
    if not step:
        if any(a["predicted_peak_at"] == "optimizer_step" for a in items):
            bad.append("%s: a prediction in the optimizer step with no step measured" % t)
        continue
    for a in items:
        if not a["change"].startswith(same_model):
            continue
        n += 1
        if a["predicted_allocated_bytes"] < step * 0.999:
            bad.append("%s: %s predicted %d tensor bytes, under the %d of the run's optimizer step"
                       % (t, a["change"], a["predicted_allocated_bytes"], step))
if n < 20 or said < 5:
    bad.append("only %d what-ifs checked, %d said in the optimizer step" % (n, said))
print("\n".join(bad) if bad else "ok: %d what-ifs at least their run's optimizer step; %d peak there or at the backward's end" % (n, said))
sys.exit(1 if bad else 0)
PYEOF
