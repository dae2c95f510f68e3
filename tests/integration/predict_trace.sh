#!/bin/sh
# predict_trace.sh — `vramtrace predict --from TRACE` calibrates with a real traced run (the
# H100 OOM of examples/traces, GPT-2 124M B=16 under a 12 GiB card): the run's own setting does
# not fit, a quarter of the micro-batch does; a file that is neither a trace nor a report: exit 2.
# The truth is independent of the prediction: both configurations ran on the same card (the
# committed traces b_oom_12gib.vt ran out of memory, b_recommended_12gib.vt at B=4, A=128 did not).
set -u
T="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" report --json "$ROOT/examples/traces/b_recommended_12gib.vt" >rec.json || { echo "report of b_recommended failed"; exit 1; }
"$VT" report --json "$T" >oom.json || { echo "report of b_oom failed"; exit 1; }
python3 - oom.json rec.json <<'PYEOF' || { echo "the committed runs are not what this test says they are"; exit 1; }
import json, sys
oom, rec = (json.load(open(p)) for p in sys.argv[1:3])
assert oom["oom"] and oom["emulated_card"]["bytes"] == 12 << 30, oom["oom"]
assert rec["oom"] is None and rec["emulated_card"]["bytes"] == 12 << 30, rec["oom"]
assert "--batch_size=4" in rec["run"]["argv"] and "--gradient_accumulation_steps=128" in rec["run"]["argv"]
PYEOF
"$VT" predict --from "$T" --json >same.json || { echo "predict --from a trace failed"; exit 1; }
"$VT" predict --from "$T" --batch_size=4 --gradient_accumulation_steps=128 --json >quarter.json || exit 1
python3 - same.json quarter.json <<'PYEOF' || exit 1
import json, sys
same, quarter = (json.load(open(p)) for p in sys.argv[1:3])
assert same.get("calibrated_from", "").endswith("b_oom_12gib.vt"), same.get("calibrated_from")
def fits(d):
    for k in ("fits", "fits_card"):
        if k in d:
            return d[k]
    return d["card"]["fits"]
assert fits(same) is False, "the run that ran out of memory is predicted to fit"
assert fits(quarter) is True, "B=4, A=128 is predicted not to fit"
PYEOF
printf 'not a trace\n' >bogus.txt
"$VT" predict --from bogus.txt >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'neither a trace' err.txt || { cat err.txt; echo "bad --from: exit $rc"; exit 1; }
echo ok
