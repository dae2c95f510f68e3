#!/bin/sh
# softmax_attn.sh — attention written out by hand (tests/python/softmax_attn.py, SIMULATED: q @ k^T,
# F.softmax, @ v, as nanoGPT's non-flash path writes it): the softmax's output, saved for the
# backward, is the forward's, not logits/loss. The simulation's softmax had run under a Python
# function of its own named log_softmax (torch's C++ leaves no frame there), a loss's name to the
# phase rules: each layer's B·H·T·T softmax was filed as logits/loss (a T5's 1.48 GiB of them).
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 4GiB -o sa.vt -- python3 "$ROOT/tests/python/softmax_attn.py" \
    </dev/null >sa.out 2>&1 || fail "run failed: $(tail -n 3 sa.out)"
report_both sa
python3 - sa.json sa.out <<'PY' || fail "see above"
import json, sys
j = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
c = j["categories"]
bad = []
if c["logits_loss"] >= t["softmax_bytes"]:
    bad.append("logits/loss %d at the peak: a softmax's output (%d B) among them" % (c["logits_loss"], t["softmax_bytes"]))
if c["activations"] + c["attention"] < t["layers"] * t["softmax_bytes"]:
    bad.append("activations %d + attention %d at the peak, less than the %d layers' softmax outputs (%d B each)"
               % (c["activations"], c["attention"], t["layers"], t["softmax_bytes"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "softmax_attn: ok (a hand-written attention's softmax is the forward's, not logits/loss)"
