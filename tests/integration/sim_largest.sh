#!/bin/sh
# sim_largest.sh — the largest micro-batch each committed SIMULATED run that fit says fits
# (examples/traces/sim, against facts.jsonl): every such run says one, but a run whose tensors
# peaked after its forward's were freed (late in a backward, in its optimizer step, a few bytes of
# the forward left) and which has no formula to fit that forward to (a ResNet, a U-Net; or a peak
# in an evaluation at a batch of its own): "not predicted" (before: "6928" for the Llama at B=1,
# T=256, "291" for the ResNet at B=1, whose B=320 ran out of memory). One with a formula has that
# forward fitted to its categories' largest over the run (calibration.measured_after_forward) and
# its largest held to the sibling that ran it (tests/pairs.py; Lightning's Llama at B=1 predicts 2,
# 9.65 GiB of tensors, which took 9.91: the forward's temporaries, freed by the optimizer step, are
# not measured there) (before: a 4-byte scalar's ratio, 0.00, "not
# predicted", and the one-step Llama with checkpointing's later steps predicted at 5.69 GiB of
# tensors for 6.71).
set -u
D="$ROOT/examples/traces/sim"
. "$ROOT/tests/report_each.sh"
report_each "$D"
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
from pairs import argv_of, largest_held
D = os.path.dirname(sys.argv[1])
UNMEASURED = {"resnet50_b1_fit", "unet_b1_noema_fit", "gpt2_evalb16_b4_fit", "gpt2_evalb16_b2_fit"}
REFIT = {"gpt2_b1_t64_fit", "llama_gqa300m_b1_t256_fit", "llama400m_ckpt_b4_fit",
         "lightning_llama400m_b1_s1_fit"}
ALL = [json.loads(l) for l in open(sys.argv[1])]
bad, n = [], 0
for f in ALL:
    t = f["trace"][:-3]
    r = json.load(open(t + ".json"))
    text = open(t + ".txt").read()
    pr = r.get("prediction") or {}
    lb = pr.get("largest_batch_size", "absent")
    cal = pr.get("calibration") or {}
    n += 1
    if t in UNMEASURED:
        if lb is not None or "fits: not predicted" not in text:
            bad.append("%s: a largest micro-batch %s from a run that does not measure the growth" % (t, lb))
    elif t in REFIT:
        if cal.get("measured_after_forward") is not True:
            bad.append("%s: its forward not fitted over the run: %s" % (t, cal.get("measured_after_forward")))
        # predict --from says which ratios came from over the run, none as measured at the peak
        out = subprocess.run([os.environ["VT"], "predict", "--from", os.path.join(D, f["trace"])],
                             capture_output=True, text=True).stdout
        cal_line = [l for l in out.splitlines() if l.startswith("calibrated with ")]
        measured, _, over = (cal_line or [""])[0].partition("; its peak came after its forward's "
                                                            "tensors were freed, so their largest "
                                                            "over the run / refined formula:")
        if "activations" in measured or "activations 1.0" not in over:
            bad.append("%s: %r" % (t, cal_line))
        bad += largest_held(D, f, pr, [g for g in ALL if argv_of(g) == argv_of(f) and not g["oom"]])
    elif not f["oom"] and not isinstance(lb, (int, float)):
        bad.append("%s: largest micro-batch %s" % (t, lb))
    # (the refit is for a complete run with a formula peaking after its forward: no other)
    if cal.get("measured_after_forward") and t not in REFIT:
        bad.append("%s: its forward fitted over the run, not one of %s" % (t, sorted(REFIT)))
print("\n".join(bad) if bad else "ok: %d runs" % n)
sys.exit(1 if bad else 0)
PYEOF
