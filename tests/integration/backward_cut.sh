#!/bin/sh
# backward_cut.sh — an out-of-memory error partway through the first backward:
# tests/python/backward_cut.py (a SIMULATED DLRM-like model, 4 embedding tables and an MLP, every
# weight trained by plain SGD) dies when its backward has made the gradients of one table. The
# weights it had not reached had been told "take no gradient" (their dtype not known, "frozen
# weights, buffers, or a copy the program keeps"), the trained count given as the whole, and the
# predictions had costed the gradients of that quarter alone ("needs ~3.97 GiB", under the
# weights and their gradients, 4 GiB). Now, against the program's own counts: the trained count is
# the gradients' elements at the error (the program's own .grad bytes among them), said as at least (JSON trainable_params_at_least), and
# never that the rest take no gradient; the configuration needs at least the weights and all
# their gradients, and no more than its run on a larger card takes (the failed request, one of the
# gradients costed, is not added again); plain SGD's update (in place) adds no temporaries the
# size of the gradients.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o run.vt -- python3 "$ROOT/tests/python/backward_cut.py" \
    </dev/null >run.out 2>&1
report_both run
"$VT" predict --from run.vt >run.predict 2>&1 || fail "predict --from failed"
# the same program on a card it fits: what its configuration's tensors really take
timeout 300 "$VT" run -q --card 8GiB -o big.vt -- python3 "$ROOT/tests/python/backward_cut.py" \
    </dev/null >big.out 2>&1 || fail "the run on 8 GiB failed"
python3 - run.json big.out <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"], t
need, took = r["prediction"]["current_allocated_bytes"], t["max_memory_allocated"]
# (the failed request, a table's gradient, had been costed twice: 4.90 GB predicted, 4.36 taken)
if need > took * 1.02:
    raise SystemExit("the configuration's tensors predicted %d, its run on a larger card took %d" % (need, took))
PY
python3 - run.json run.out run.txt run.predict <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "backward" and t["steps"] == 0, t  # (the case)
assert 0 < t["grad_bytes_at_oom"] < t["param_bytes"], t
text = open(sys.argv[3]).read() + open(sys.argv[4]).read()
bad = []
rec = r["recognized"]
tr = rec.get("trainable_params") or 0
if not t["grad_bytes_at_oom"] <= 4 * tr < 4 * t["trainable_params"] or not rec.get("trainable_params_at_least"):
    bad.append("trainable %s (at least: %s), the gradients made by the error %d of %d" % (
        tr, rec.get("trainable_params_at_least"), t["grad_bytes_at_oom"] // 4, t["trainable_params"]))
for words in ("take no gradient", "rest frozen", "untyped"):
    if words in text or words in json.dumps(rec):
        bad.append("says %r of weights the backward had not reached" % words)
need = r["prediction"]["current_allocated_bytes"]
grads = 4 * t["trainable_params"]
if need < t["param_bytes"] + grads:
    bad.append("the configuration's tensors %d, under the weights and their gradients %d" % (need, t["param_bytes"] + grads))
step = r["prediction"]["calibration"]["optimizer_step"]
if step["gradients"] != grads or step["temporaries"]:
    bad.append("the unreached SGD step: gradients %d (all %d), temporaries %d (none: in place)" % (
        step["gradients"], grads, step["temporaries"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "backward_cut: ok (out of memory in the first backward: at least the gradients made, the rest not said frozen, all costed)"
