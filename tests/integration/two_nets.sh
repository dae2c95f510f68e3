#!/bin/sh
# two_nets.sh — a NeRF-shaped trainer (tests/python/two_nets.py: a coarse and a fine MLP of one
# shape, both trained by one AdamW, the rays of a step set by --N_rand) out of memory in its first
# forward. Its batch flag, whose name says nothing of a batch, had been "the command line does not
# give it, and no flag of the recorded two_nets.py sets it" (report and predict --from), and the
# fine network's weights, repeating the coarse one's sizes, "a copy the program keeps (an EMA's,
# or another model's)" (the trainable row: "a copy ... is of a trained model"). Now, against the
# program's own facts: the unknown micro-batch names the command line's --N_rand and its value
# (JSON config_flags_unread), whether it sets the batch not known; the repeated weights are "a
# copy (an EMA's) or a second model of that shape", the trained count at least, never above the
# program's.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 120 "$VT" run -q --card 2GiB -o run.vt -- python3 "$ROOT/tests/python/two_nets.py" \
    --N_rand 4096 </dev/null >run.out 2>&1
report_both run
"$VT" predict --from run.vt >run.predict 2>&1
python3 - <<'PY' || fail "see above"
import json
r = json.load(open("run.json"))
t = next(json.loads(l.split(" ", 1)[1]) for l in open("run.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "forward", t  # (the case)
text, pred = open("run.txt").read(), open("run.predict").read()
bad = []
flag = "--N_rand %d" % t["rays_per_step"]
row = next(l for l in text.splitlines() if "micro-batch B " in l)
if flag not in row or "does not give it" in row:
    bad.append("the micro-batch's row: %s" % row.strip())
if r.get("config_flags_unread") != flag:
    bad.append("config_flags_unread %r, the command line's %r" % (r.get("config_flags_unread"), flag))
if flag not in pred or "does not give it" in pred:
    bad.append("predict --from: %s" % pred.strip()[:300])
rec = r["recognized"]
if not rec.get("trainable_params_at_least") or not 0 < rec["trainable_params"] <= t["trainable_params"]:
    bad.append("trainable %s (at least %s), the program's %d" % (rec.get("trainable_params"), rec.get("trainable_params_at_least"), t["trainable_params"]))
ema = rec["ema"]["where"]
if "second model of that shape" not in ema or "another model's)" in ema:
    bad.append("EMA row: %s" % ema)
tr = next(l for l in text.splitlines() if l.strip().startswith("trainable "))
if "second model of their shape may train" not in tr:
    bad.append("trainable row: %s" % tr.strip())
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "two_nets: ok (--N_rand named for the unknown micro-batch; a second net of one shape said so)"
