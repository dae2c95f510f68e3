#!/bin/sh
# lightning_gan_manual.sh — a SIMULATED GAN trained by Lightning's manual optimization
# (tests/python/lightning_gan_manual.py: automatic_optimization = False, the generator's step
# (toggle_optimizer, manual_backward, opt_g.step(), opt_g.zero_grad(set_to_none=True)) then the
# discriminator's; an MLP generator and discriminator of clearly different sizes, each with its own
# AdamW). The two models' gradients are never live at once: the trainable count had been the
# gradients at their most (the generator's 21.24 M of 35.40 M), the discriminator's weights "had
# no gradient then: frozen weights or buffers, ...", the dtype "unknown" for them, and both
# AdamWs' state over the generator's weights "13.33 B of state per trainable parameter", "a state
# of its own size". Now, against the program's own counts: the trainable count is the union of
# the steps' gradient sets (every weight of both models), the state per parameter the program's
# (its two optimizers' state over the parameters they step: 8 B, Adam's), and the predictions for
# this configuration (the report's, predict --from the trace and from its JSON) not contradicted by
# its run: one model's gradients live at a time.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 8GiB -o run.vt -- python3 "$ROOT/tests/python/lightning_gan_manual.py" \
    </dev/null >run.out 2>&1 || fail "the run failed: $(tail -n 2 run.out)"
report_both run
"$VT" predict --json --from run.vt >pv.json 2>pv.err || fail "predict --from run.vt failed: $(cat pv.err)"
"$VT" predict --json --from run.json >pj.json 2>pj.err || fail "predict --from run.json failed: $(cat pj.err)"
python3 - <<'PY' || fail "see above"
import json
t = next(json.loads(l.split(" ", 1)[1]) for l in open("run.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
# (the case: both models trained in turn, their gradients never live at once, sizes apart)
assert not t["oom"] and t["steps"] >= 4 and t["manual_optimization"], t
assert t["d_grad_bytes_in_g_step"] == 0 and t["g_grad_bytes_in_d_step"] == 0, t
g, d = t["generator_trainable"], t["discriminator_trainable"]
assert min(g, d) * 4 // 3 < max(g, d), t
r, text = json.load(open("run.json")), open("run.txt").read()
rec, bad = r["recognized"], []
if rec.get("trainable_params") != t["trainable_params"] or rec.get("trainable_params_at_least"):
    bad.append("trainable %s (at least: %s), the program's %d (generator %d + discriminator %d)"
               % (rec.get("trainable_params"), rec.get("trainable_params_at_least"),
                  t["trainable_params"], g, d))
o = rec["optimizer"]
bpp = t["optim_state_bytes"] / (t["g_optim_params"] + t["d_optim_params"])
if abs(o["state_bytes_per_trainable_param"] - bpp) > 0.01 or o["kind"] != "adam":
    bad.append("optimizer %s, %.3f B of state per parameter; the program's two AdamWs %.3f B "
               "over the parameters they step" % (o["kind"], o["state_bytes_per_trainable_param"], bpp))
for words in ("a state of its own size", "take no gradient", "had no gradient then"):
    for line in text.splitlines():
        if words in line:
            bad.append("%r said: %s" % (words, line.strip()[:240]))
dt = r["config"].get("dtype") or {}
if isinstance(dt, dict) and dt.get("value") == "unknown":
    bad.append("dtype unknown: %s" % dt)
# the prediction of this very configuration: not contradicted by its run (its tensors at their
# most, the gradients of one model's step at a time: not both models' at once)
cur = [a for a in r["advice"] if a["batch_size"] == t["batch_size"] and a["gradient_accumulation_steps"] == 1]
if not cur or not cur[0]["fits"] or \
        abs(cur[0]["predicted_allocated_bytes"] - t["max_memory_allocated"]) > 0.02 * t["max_memory_allocated"]:
    bad.append("this configuration predicted %s; its run allocated %d B at most"
               % ([(a["predicted_allocated_bytes"], a["fits"]) for a in cur], t["max_memory_allocated"]))
# predict --from the trace and from its JSON report: this configuration's tensors, its gradients
# one model's at a time
for name in ("pv.json", "pj.json"):
    p = json.load(open(name))
    if abs(p["tensor_bytes"] - t["max_memory_allocated"]) > 0.02 * t["max_memory_allocated"] or \
            p["by_category"]["gradients"] > 1.01 * t["grad_bytes_max"]:
        bad.append("predict --from (%s): tensors %d B, gradients %d B; the run allocated %d B at most, "
                   "its gradients %d B at most" % (name, p["tensor_bytes"], p["by_category"]["gradients"],
                                                   t["max_memory_allocated"], t["grad_bytes_max"]))
grow = [l for l in text.splitlines() if l.strip().startswith("gradients: ")]
if not grow or "never all at once" not in grow[0]:
    bad.append("the gradients' row: %s" % grow)
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "lightning_gan_manual: ok (both models trained: the steps' gradient sets together; 8 B of AdamW state per parameter)"
