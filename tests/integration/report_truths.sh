#!/bin/sh
# report_truths.sh — every sentence of a report is true of its run, over every trace in
# examples/traces/**: the header's optimizer steps agree with the optimizer-state notes (and
# with the steps the program counted, facts.jsonl of the real and the simulated traces); no
# bytes-per-parameter figure from a category segment mode cannot attribute (gradients,
# optimizer state), none that is absurd (0, or "fp32" far from 4 B); torch.compile notes only
# where the run was compiled (frames under torch/_inductor or inductor's generated code in
# `vramtrace dump`), "ran as eager" only where it was not. Grep-level: the text report up to its
# advice. Contradictions already known (KNOWN, below) are printed but do not fail, until fixed.
set -u
cd "$ROOT" || exit 1
find examples/traces -name '*.vt' | sort >"$TESTDIR/traces.txt"
[ -s "$TESTDIR/traces.txt" ] || { echo "report_truths: no trace in examples/traces"; exit 1; }
while read -r t; do
    n=$(echo "$t" | tr / _)
    "$VT" report --no-color "$t" >"$TESTDIR/$n.txt" 2>/dev/null
    "$VT" report --json "$t" >"$TESTDIR/$n.json" 2>/dev/null
    if "$VT" dump --no-resolve "$t" 2>/dev/null | grep -q 'torch/_inductor/\|torchinductor_'; then
        echo "$t compiled"
    else
        echo "$t eager"
    fi
done <"$TESTDIR/traces.txt" >"$TESTDIR/compiled.txt"
python3 - "$TESTDIR" <<'PY'
import json, os, re, sys
d = sys.argv[1]
facts = {}
for fj in ["examples/traces/h100-torch2.11/facts.jsonl", "examples/traces/sim/facts.jsonl"]:
    for line in open(fj):
        f = json.loads(line)
        facts[os.path.join(os.path.dirname(fj), f["trace"])] = f
fail = []
def check(t, ok, msg):
    if not ok:
        fail.append(f"{t}: {msg}")
n_checked = 0
for line in open(os.path.join(d, "compiled.txt")):
    t, how = line.split()
    n = t.replace("/", "_")
    text = open(os.path.join(d, n + ".txt")).read()
    if not text.startswith("vramtrace report"):
        fail.append(f"{t}: no report: {text[:200]}")
        continue
    n_checked += 1
    body = text.split("\nadvice for ")[0]  # the report up to its advice
    js = json.load(open(os.path.join(d, n + ".json")))
    m = re.search(r"^  events .*?, (\d+) optimizer steps?\b", body, re.M)
    check(t, m is not None, "no optimizer step count in the header")
    steps = int(m.group(1)) if m else -1
    # step count: singular/plural, JSON, the program's own count, the notes
    check(t, re.search(r"\b1 optimizer steps\b|\b([02-9]|\d\d+) optimizer step\b", body) is None,
          "optimizer step(s): wrong number agreement")
    check(t, js.get("iterations") == steps, f"text says {steps} steps, JSON {js.get('iterations')}")
    if t in facts:
        made = facts[t].get("iters", facts[t].get("steps"))  # real runs say iters, simulated steps
        # (one begun and out of memory in it is said so: the program counts the finished)
        oom_in = re.search(r"optimizer steps? \(out of memory in (it|the last)\)", body) is not None
        check(t, steps == made + oom_in, f"{steps} optimizer steps, the program made {made}")
        check(t, oom_in == (facts[t].get("oom_phase") == "optimizer" and steps > 0),
              f"out of memory in an optimizer step said {oom_in}, the program's phase "
              f"{facts[t].get('oom_phase')}")
    if steps >= 1:
        check(t, "before its first optimizer step" not in body,
              f"{steps} optimizer steps, and a note says the run stopped before its first")
    # bytes per parameter
    segment_only = re.search(r"^  mode     segment mode", body, re.M) is not None
    if segment_only:
        check(t, "no AdamW state" not in body, "segment mode cannot tell there was no AdamW state")
    for mm in re.finditer(r"^    (parameters|gradients|optimizer) \(vs [a-z]+\): (.*)$", body, re.M):
        cat, why = mm.group(1), mm.group(2)
        if segment_only and cat != "parameters":  # parameters have segments of their own
            check(t, "B/param" not in why, f"segment mode, yet a per-parameter ratio: {cat}: {why}")
        for x in re.findall(r"fp32 \(([0-9.]+) B/param\)", why):
            check(t, 3.4 <= float(x) <= 4.6, f"'{cat}: {why}': fp32 is 4 B/param")
        for x in re.findall(r"([0-9.]+) B/param", why):
            check(t, float(x) > 0, f"'{cat}: {why}': zero bytes per parameter")
    # the OOM section names one allocator cache figure (live at the OOM), not two
    oom = body.split("\nOOM: ", 1)[1] if "\nOOM: " in body else ""
    caches = set(re.findall(r"allocator cache ([0-9.]+ [KMGT]?i?B)", oom))
    check(t, len(caches) <= 1, f"the OOM section gives the allocator cache as {sorted(caches)}")
    # compile notes
    notes = [l for l in body.splitlines() if l.startswith("  note:") or l.startswith("    ")]
    notes = [l for l in notes if "(vs " in l or l.startswith("  note:")]
    if how == "eager":
        for l in notes:
            check(t, "torch.compile" not in l, f"not compiled, yet: {l.strip()}")
    else:
        for l in notes:
            check(t, "ran as eager" not in l, f"compiled, yet: {l.strip()}")
            check(t, "12*B*T*V" not in l, f"compiled, yet eager's logits: {l.strip()}")
# Contradictions the SIMULATED traces (examples/traces/sim/) revealed in the analyzer, listed here
# until it is fixed; each is still printed, and one that no longer occurs fails (remove it then).
KNOWN = set()  # contradictions known and not fixed yet: none today
known = [f for f in fail if f in KNOWN]
fail = [f for f in fail if f not in KNOWN]
fail += [f"listed in KNOWN but no longer found (fixed? remove it): {k}" for k in sorted(KNOWN - set(known))]
for f in known:
    print("report_truths: known analyzer bug:", f)
for f in fail:
    print("report_truths:", f)
print(f"report_truths: {n_checked} traces checked, {len(fail)} contradictions ({len(known)} known)")
sys.exit(1 if fail or n_checked < 20 else 0)
PY
