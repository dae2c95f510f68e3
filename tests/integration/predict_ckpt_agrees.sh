#!/bin/sh
# predict_ckpt_agrees.sh — `predict --from TRACE --checkpointing` is the report's own "activation
# checkpointing" what-if of that trace, to the byte, on every committed trace that has one: both
# from the report's model of the run (predict had calibrated again from the measured breakdown
# alone when asked for checkpointing: 28 of 84 differed, a Llama that exited before its first
# step 4.17 GiB where its report said 3.96).
set -u
python3 - "$ROOT/examples/traces" <<'PYEOF'
import glob, json, os, subprocess, sys
vt, top = os.environ["VT"], sys.argv[1]
n, bad = 0, []
for f in sorted(glob.glob(os.path.join(top, "*.vt")) + glob.glob(os.path.join(top, "*", "*.vt"))):
    r = subprocess.run([vt, "report", "--json", f], capture_output=True, text=True)
    if r.returncode:
        continue
    row = [a for a in json.loads(r.stdout)["advice"] if a["change"] == "activation checkpointing"]
    if not row:
        continue
    p = subprocess.run([vt, "predict", "--from", f, "--checkpointing", "--json"],
                       capture_output=True, text=True)
    if p.returncode:  # only a trace whose micro-batch is not known (predict asks for it)
        if "micro-batch is not known" not in p.stderr:
            bad.append("%s: predict --checkpointing failed: %s" % (os.path.basename(f), p.stderr.strip()))
        continue
    n += 1
    got = json.loads(p.stdout)["peak_bytes"]
    if got != row[0]["predicted_peak_bytes"]:
        bad.append("%s: predict --checkpointing %d B, the report's what-if %d B" %
                   (os.path.basename(f), got, row[0]["predicted_peak_bytes"]))
if n < 50:
    bad.append("only %d traces compared" % n)
print("\n".join(bad) if bad else "predict_ckpt_agrees: %d traces" % n)
sys.exit(1 if bad else 0)
PYEOF
