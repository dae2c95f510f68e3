#!/bin/sh
# config_hidden.sh — the configuration keys the text report does not show ("N more not shown
# here": a transformer's shape, of a model that is not recognized as one and gets no formula)
# are marked so in `report --json`: "shown": false on each, and a value the trace gave it said
# in its `where` as the tensors read as a transformer's, maybe one part's, not the model's. An
# encoder-decoder's JSON had given the tensors' reading of one part as the model's
# configuration, unqualified: its decoder's 12 blocks as n_layer (the model has 12 + 12) and its
# targets' 128 tokens as block_size (its inputs 512), where the text hid them. Checked on every
# committed trace and its JSON, the T5-small runs of examples/traces/h100-torch2.11-beyond among
# them (facts.jsonl: 6 + 6 layers, inputs of 512).
set -u
python3 - <<'PYEOF' || exit 1
import glob, json, os, re, subprocess
ROOT, VT = os.environ["ROOT"], os.environ["VT"]
bad, n, hid = [], 0, 0
for f in sorted(glob.glob(ROOT + "/examples/traces/**/*.vt", recursive=True)):
    t = subprocess.run([VT, "report", "--no-color", f], capture_output=True, text=True)
    j = subprocess.run([VT, "report", "--json", f], capture_output=True, text=True)
    if t.returncode not in (0, 1) or not j.stdout.startswith("{"):
        continue
    n += 1
    m = re.search(r"; (\d+) more not shown here", t.stdout)
    want = int(m.group(1)) if m else 0
    cfg = json.loads(j.stdout)["config"]
    off = [k for k, e in cfg.items() if e.get("shown", True) is False]
    if len(off) != want:
        bad.append("%s: the text hides %d keys, JSON marks %s" % (os.path.basename(f), want, off))
    for k in off:
        e = cfg[k]
        if e["source"] == "inferred" and not (e["where"].startswith("not shown") and "one part's" in e["where"]):
            bad.append("%s: %s = %r (%s) given as the model's, the text hides it" % (os.path.basename(f), k, e["value"], e["where"][:80]))
    hid += bool(want)
    if os.path.basename(f) in ("t5small_b8_fit.vt", "t5small_b32_oom.vt"):
        facts = [json.loads(l) for l in open(os.path.join(os.path.dirname(f), "facts.jsonl"))]
        fa = [x for x in facts if x["trace"] == os.path.basename(f)][0]
        for k in ("n_layer", "block_size"):  # (6 + 6 layers: never 6 or 12 as the model's)
            e = cfg[k]
            if e["value"] is not None and e.get("shown", True):
                bad.append("%s: %s %r as the model's (its %d + %d layers, inputs of %d)" % (
                    fa["trace"], k, e["value"], fa["layers"], fa["layers"], fa["seq_len"]))
assert n >= 100 and hid >= 5, "%d traces, %d with keys hidden (the glob is broken?)" % (n, hid)
assert not bad, "\n".join(bad[:20])
print("%d traces: the %d with keys the text hides mark them in JSON, a value the trace read said as its reading" % (n, hid))
PYEOF
