#!/bin/sh
# dp_physical.sh — a logical batch split into physical batches (Opacus's BatchMemoryManager):
# tests/python/dp_physical.py (SIMULATED DP-SGD) takes -b/--batch-size as the LOGICAL batch and
# --max-physical-batch-size as each forward's batch; its classifier's head (labels x d) comes
# after the blocks and it has no position table. The logical batch had been read as the
# micro-batch ("micro-batch B (--batch-size) 64"), T from it (16 for 64: "the trace's T = 2 from
# the position embedding 2×d does not agree"), and a halved --batch-size advised as "the same
# effective batch" with "code change besides: gradients accumulated". Now, against the program's
# own facts: B is the physical batch through its flag, T the sequence length with no position
# table named, A the physical batches per step; every what-if spells the micro-batch with the
# physical flag and the logical batch only where B·A changes, never as a code change; and the
# rerun of the what-if that keeps the effective batch runs as the program says, within its
# predicted peak.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/dp_physical.py"
timeout 300 "$VT" run -q --card 3GiB -o run.vt -- python3 "$P" --batch-size 64 \
    --max-physical-batch-size 16 </dev/null >run.out 2>&1 || fail "run failed: $(tail -n 3 run.out)"
report_both run
python3 - run.json run.out run.txt >whatif.txt <<'PY' || fail "$(cat whatif.txt)"
import json, re, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 2, t  # (the case: it ran through)
c, bad = r["config"], []
# the optimizer steps, not the physical batches' gradient frees (its skipped steps had been
# counted: "8 optimizer steps" beside "A = 4 ... before each optimizer step")
if r["iterations"] != t["steps"] or r.get("iterations_known", True) is not True:
    bad.append("JSON iterations %s, the program ran %d optimizer steps" % (r["iterations"], t["steps"]))
if r["growth"]["optimizer_steps"] is not None:
    bad.append("growth.optimizer_steps %s: which growth steps ended one is not known" % r["growth"]["optimizer_steps"])
txt = open(sys.argv[3]).read()
want = ", %d optimizer steps (%d gradient frees after a backward pass" % (t["steps"], t["backward_passes"])
if want not in txt or "(its own: %d backward passes, %d optimizer steps)" % (t["backward_passes"], t["steps"]) not in txt:
    bad.append("the text does not say %r: %s" % (want, [l for l in txt.split("\n") if "optimizer step" in l][:2]))
b, T, A = c["batch_size"], c["block_size"], c["gradient_accumulation_steps"]
if b["value"] != t["physical_batch"] or b.get("flag") != "--max-physical-batch-size":
    bad.append("B %s (%s), the physical batch is %d" % (b["value"], b.get("flag"), t["physical_batch"]))
if T["value"] != t["seq_len"] or "position" in T["where"]:
    bad.append("T %s (%s), the program's is %d with no position table" % (T["value"], T["where"], t["seq_len"]))
if A["value"] != t["physical_batches_per_step"]:
    bad.append("A %s, %d physical batches per optimizer step" % (A["value"], t["physical_batches_per_step"]))
if "max-physical" in r.get("config_batch_flags_unplaced", "") + b.get("unplaced", ""):
    bad.append("the physical batch's flag is still unplaced: %s / %s" % (r.get("config_batch_flags_unplaced"), b.get("unplaced")))
keep = None
for a in r["advice"]:
    B2, A2, cl = a["batch_size"], a["gradient_accumulation_steps"], a["command_line"]
    if B2 == t["physical_batch"] and A2 == A["value"]:
        continue
    want = "--max-physical-batch-size %d" % B2
    if B2 * A2 != t["logical_batch"]:
        want += " --batch-size %d" % (B2 * A2)
    if cl != want:
        bad.append("%s: command line %r, want %r" % (a["change"], cl, want))
    if B2 * A2 == t["logical_batch"] and keep is None:
        keep = a
if keep is None:
    bad.append("no what-if keeps the logical batch")
else:
    print(keep["batch_size"], keep["predicted_peak_bytes"])
if bad:
    print("\n".join(bad))
    raise SystemExit(1)
PY
read -r b2 pred <whatif.txt
timeout 300 "$VT" run -q --card 3GiB -o again.vt -- python3 "$P" --batch-size 64 \
    --max-physical-batch-size "$b2" </dev/null >again.out 2>&1 || fail "rerun failed: $(tail -n 3 again.out)"
report_both again
python3 - again.json again.out "$b2" "$pred" <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
b2, pred = int(sys.argv[3]), int(sys.argv[4])
bad = []
if t["oom"] or t["physical_batch"] != b2 or t["physical_batches_per_step"] * b2 != t["logical_batch"]:
    bad.append("the rerun is not the what-if: %s" % t)
if r["peak"]["process_bytes"] > pred * 1.05:
    bad.append("the rerun peaks at %d, above the predicted %d" % (r["peak"]["process_bytes"], pred))
if r["config"]["batch_size"]["value"] != b2:
    bad.append("the rerun's B %s, its physical batch %d" % (r["config"]["batch_size"]["value"], b2))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
# a logical batch the physical one does not divide (60 over 16: three of 16, one of 12): A not
# known, said without a second "unknown:"; a what-if that multiplies the accumulation keeps the
# logical batch (the physical flag alone), one that keeps it scales the logical batch with B (its
# flag had been given as "--batch-size 0")
timeout 300 "$VT" run -q --card 3GiB -o uneven.vt -- python3 "$P" --batch-size 60 \
    --max-physical-batch-size 16 </dev/null >uneven.out 2>&1 || fail "uneven run failed: $(tail -n 3 uneven.out)"
report_both uneven
python3 - uneven.json uneven.out <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
A, bad = r["config"]["gradient_accumulation_steps"], []
if A["value"] is not None or A["where"].startswith("unknown"):
    bad.append("A %s (%s) of uneven physical batches" % (A["value"], A["where"]))
for a in r["advice"]:
    B2, cl = a["batch_size"], a["command_line"]
    if B2 == t["physical_batch"]:
        continue
    want = "--max-physical-batch-size %d" % B2
    if "\u00d7" not in a["change"]:  # (the accumulation unchanged: the logical batch scaled)
        want += " --batch-size %d" % (t["logical_batch"] * B2 // t["physical_batch"])
    if cl != want:
        bad.append("%s: command line %r, want %r" % (a["change"], cl, want))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
# vramtrace fit over the physical flag: {B} is the micro-batch (a position table read from the
# head had said "not the micro-batch: at {B} = 111 its trace's forwards took a batch of 14208"),
# and the program's own split is what the trials measured (its optimizer steps counted per
# physical batch had said "each trial ran one backward per optimizer step")
timeout 300 "$VT" fit --card 1GiB --max-b 16 --dir fit -- python3 "$P" --batch-size 64 \
    --max-physical-batch-size '{B=8}' </dev/null >fit.out 2>fit.err || fail "fit failed: $(tail -n 3 fit.err)"
grep -q "not the micro-batch\|one backward per optimizer step" fit.out && fail "fit: $(tail -n 3 fit.out)"
grep -q "^note: {B} is the command's physical batch (--max-physical-batch-size)" fit.out ||
    fail "fit does not say its {B} is the physical batch: $(tail -n 3 fit.out)"
# out of memory in a backward that keeps its per-sample gradients (a short sequence: they are
# most of the step): what the backward had made by then is a part of what it keeps, so the
# what-ifs are lower bounds, none recommended ("recommended: micro-batch 256 → 128 ... fits" at
# the logical batch; Opacus's 192 → 128 had been "9.92 GiB: fits (17 %)" and ran at 11.91), and
# the rerun of a smaller physical batch needs at least what it says; predict --from calls those
# tensors kept, not scratch, and the run no first forward's
set -- --batch-size 256 --max-physical-batch-size 128 --max-sequence-length 8
timeout 300 "$VT" run -q --card 480MiB -o oom.vt -- python3 "$P" "$@" </dev/null >oom.out 2>&1
report_both oom
"$VT" predict --from oom.vt >oom.predict 2>&1 || fail "predict --from failed: $(tail -n 3 oom.predict)"
python3 - oom.json oom.out oom.predict >oomwhatif.txt <<'PY' || fail "$(cat oomwhatif.txt)"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "backward", t  # (the case)
bad, pick = [], None
for a in r["advice"]:
    if a["batch_size"] < t["physical_batch"] and not a["predicted_peak_at_least"]:
        bad.append("%s: predicted %d, not a lower bound" % (a["change"], a["predicted_peak_bytes"]))
    if a["recommended"]:
        bad.append("%s recommended from a backward cut short" % a["change"])
    if a["command_line"] == "--max-physical-batch-size %d" % (t["physical_batch"] // 2):
        pick = a
if not r["prediction"]["largest_batch_size_at_most"]:
    bad.append("largest micro-batch %s, not an upper bound" % r["prediction"]["largest_batch_size"])
pred = open(sys.argv[3]).read()
if "(scratch)" in pred or "first forward" in pred:
    bad.append("predict --from: " + " / ".join(l for l in pred.split("\n") if "(scratch)" in l or "first forward" in l))
if pick is None:
    bad.append("no what-if halves the physical batch")
else:
    print(pick["batch_size"], pick["predicted_peak_bytes"])
if bad:
    print("\n".join(bad))
    raise SystemExit(1)
PY
read -r b2 pred <oomwhatif.txt
shift 4
timeout 300 "$VT" run -q --card 480MiB -o oom2.vt -- python3 "$P" --batch-size 256 \
    --max-physical-batch-size "$b2" "$@" </dev/null >oom2.out 2>&1
report_both oom2
python3 - oom2.json "$pred" <<'PY' || fail "see above"
import json, sys
r, pred = json.load(open(sys.argv[1])), int(sys.argv[2])
if r["peak"]["process_bytes"] < pred:
    print("the rerun peaks at %d, below the %d it needs at least" % (r["peak"]["process_bytes"], pred))
    raise SystemExit(1)
PY
# the cause of such an error names what the backward kept beside the activations: a physical
# batch of 1280 over 8 tokens, its per-sample gradients (the program's count at the failure) most
# of what was live, had been told "activations 5 MiB and logits/loss 0 MiB were live in the
# backward; they grow with the micro-batch" and nothing of them
timeout 300 "$VT" run -q --card 1536MiB -o kept.vt -- python3 "$P" --batch-size 2560 \
    --max-physical-batch-size 1280 --max-sequence-length 8 </dev/null >kept.out 2>&1
report_both kept
python3 - kept.json kept.out <<'PY' || fail "kept: $(grep -A1 '  cause:' kept.txt)"
import json, re, sys
o = json.load(open(sys.argv[1]))["oom"]
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["oom"] and t["oom_phase"] == "backward", t  # (the case)
kept = t["grad_sample_bytes_at_oom"] / 1048576
m = re.search(r"(\d+) MiB the backward itself made and kept", o["evidence"])
assert m and int(m.group(1)) >= int(kept), (kept, o["evidence"])
assert "what its backward made and kept" in o["cause_text"], o["cause_text"]
PY
grep -q "what its backward made and kept" kept.txt || fail "kept: the text's cause: $(grep '  cause:' kept.txt)"
# the DP optimizer's noise, made on the host and copied to the device for each weight
# (randn(p.size()).to(device), Opacus's add_noise) beside AdamW's state, which stays on the
# device, is no optimizer state: the first weight's noise, freed after the gradient it replaced,
# had been taken for state brought back from the host ("8.99 B of state per trainable parameter:
# 2371600 B of optimizer state" where the program's state is 2109456 B, 8.00 B)
timeout 300 "$VT" run -q --card 3GiB -o noise.vt -- python3 "$P" --batch-size 64 \
    --max-physical-batch-size 16 --sigma 1.0 </dev/null >noise.out 2>&1 || fail "noise run failed: $(tail -n 3 noise.out)"
report_both noise
python3 - noise.json noise.out noise.txt <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not t["oom"] and t["steps"] == 2, t  # (the case: it ran through)
bad, state = [], t["optim_state_bytes"]
if r["category_peaks"]["optimizer"]["bytes"] != state:
    bad.append("optimizer peak %d, the program's state %d" % (r["category_peaks"]["optimizer"]["bytes"], state))
want = "%.2f B of state per trainable parameter: %d B of optimizer state" % (state / t["trainable_params"], state)
if want not in open(sys.argv[3]).read():
    bad.append("the text does not say %r: %s" % (want, r["recognized"]["optimizer"]["where"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "dp_physical: ok (the physical batch is B, the logical batch B·A; T the program's; what-ifs through the physical flag)"
