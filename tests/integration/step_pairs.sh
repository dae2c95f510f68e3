#!/bin/sh
# step_pairs.sh — what a run of one optimizer step predicts for the steps after it, against its
# siblings that ran them (the same program and arguments but the micro-batch, its accumulation
# and the steps; examples/traces/sim). Its one step's forward ran before the optimizer's state
# existed; a second step's forward holds that state: the prediction is of such a step. So a
# sibling of two steps or more that fit is predicted at most 5 % under the tensors it requested
# and 10 % over its allocator's block-level peak (tests/pairs.py: off), and one that ran out of
# memory in a later step's forward is predicted not to fit; and the one-step run's own report
# never says its configuration fits when its two-step sibling ran out of memory (before: every
# what-if scaled down by the state its measured moment lacked, Llama 400M B=4 "fits, 1.49 GiB
# left", its second step out of memory). A one-step run whose tensors peaked in its optimizer
# step, its forward's freed, is predicted from its forward's categories at their largest over the
# run (before: 5.69 GiB of tensors for the checkpointed Llama's 6.71, -15.2 %); under Lightning,
# with the gradients its loop keeps through the next forward (1.39 GiB for the Llama at B=1).
set -u
python3 - "$ROOT/examples/traces/sim" <<'PYEOF'
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
from pairs import argv_of, finish, off, predict
D = sys.argv[1]
bad, n = [], 0

def steps_asked(f):
    m = re.search(r"--(max_)?steps[ =](\d+)", f["command"])
    return int(m.group(2)) if m else 0

facts = [json.loads(l) for l in open(os.path.join(D, "facts.jsonl"))]
for o in facts:
    if o["oom"] or o["steps"] != 1 or steps_asked(o) != 1:
        continue
    report = None
    for f in facts:
        if f is o or argv_of(f) != argv_of(o) or steps_asked(f) < 2:
            continue
        # a sibling that fit ran two steps; one out of memory failed after its first step
        if not f["oom"] and f["steps"] < 2 or f["oom"] and (f["steps"] < 1 or f["oom_phase"] != "forward"):
            continue
        n += 1
        B, A = f["batch_size"], f["grad_accum"]
        p, why = predict(os.path.join(D, o["trace"]), B, A)
        if why is not None:
            bad.append("%s: predict failed: %s" % (o["trace"], why))
            continue
        if f["oom"]:
            print("%s -> B=%d A=%d of %s (out of memory in step %d's forward): predicted %.2f GiB, fits %s" %
                  (o["trace"], B, A, f["trace"], f["steps"] + 1, p["peak_bytes"] / 2**30, p["fits"]))
            if p["fits"]:
                bad.append("%s: B=%d A=%d predicted to fit; %s ran out of memory" % (o["trace"], B, A, f["trace"]))
            if (B, A) == (o["batch_size"], o["grad_accum"]):
                if report is None:
                    report = subprocess.run([os.environ["VT"], "report", os.path.join(D, o["trace"])],
                                            capture_output=True, text=True).stdout
                for l in report.splitlines():
                    if "it fits" in l or "fits the card with the stated headroom" in l:
                        bad.append("%s: says it fits, its second step ran out of memory: %s" % (o["trace"], l.strip()))
            continue
        lo, hi = off(p, f)
        print("%s -> B=%d A=%d of %s: predicted %.2f GiB, measured %.2f GiB of tensors, %.2f in blocks (%+.1f / %+.1f %%)" %
              (o["trace"], B, A, f["trace"], p["tensor_bytes"] / 2**30, f["requested_bytes_peak"] / 2**30,
               f["max_memory_allocated"] / 2**30, 100 * lo, 100 * hi))
        if lo < -0.05 or hi > 0.10:
            bad.append("%s: %+.1f / %+.1f %% off %s's peak" % (o["trace"], 100 * lo, 100 * hi, f["trace"]))
finish(bad, n, 3)
PYEOF
