#!/bin/sh
# advice_real.sh — the report's advice on the real H100 traces (12GiB emulated card) against
# the measured fit/OOM boundary (examples/traces/h100-torch2.11/README.md): no batch measured
# to run out of memory is predicted to fit, none measured to fit is predicted above the card,
# a run that fit is never told it needs more than the card, an OOM run is predicted above it
# and its recommendation is at least half the largest batch measured to fit; advice uses only
# the flags the traced command line used (nanoGPT: --key=value); report and predict --from
# agree within 5 %; siblings that completed: the largest micro-batch at least each measured to
# fit with 5 % free, and predict --from one within 3 % of another's tensors; predict --from
# the documents' case 2 (compiled, B=16, A=32) keeps the effective batch: B=8, A=64.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
for f in "$D"/*.vt; do
    t=$(basename "$f" .vt)
    [ "$t" = a_native_compile ] && continue # no card: outside the boundary
    "$VT" report --json "$f" >"$t.json" || { echo "report $t failed"; exit 1; }
    "$VT" report --no-color "$f" >"$t.report.txt" || { echo "report $t failed"; exit 1; }
    "$VT" predict --json --from "$f" >"$t.predict.json" || { echo "predict --from $t failed"; exit 1; }
done
# the text says of each option what the JSON says (whose "fits" is held to the runs below):
# "fits (...)" exactly where it fits, "too tight for ..." / "does not fit" where it does not
python3 - "$D" <<'PYEOF' || { echo "the text report's verdicts differ from its JSON (see above)"; exit 1; }
import glob, json, os, re, sys
bad = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.vt"))):
    t = os.path.basename(f)[:-3]
    if t == "a_native_compile":
        continue
    adv = json.load(open(t + ".json"))["advice"] or []
    text = open(t + ".report.txt", encoding="utf-8").read()
    said = re.findall(r"^      predicted peak [^:]*: (fits \(|too tight for |does not fit(?: with the cache assumed)? \(|card size unknown)", text, re.M)
    # a verdict the cache assumption decides says so ("... with the cache assumed")
    want = ["card size unknown" if a["fits"] is None else "fits (" if a["fits"] else
            "too tight for " if a["headroom_bytes"] >= 0 else
            "does not fit with the cache assumed (" if a["fits_with_cache_at_most_bytes"] is not None
            else "does not fit (" for a in adv]
    if said != want:
        bad.append("%s: the text says %s, the JSON %s" % (t, said, want))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
# the documents' case 2 is the config file (B=16, A=32); the trace (format 1.1) did not record it
"$VT" predict --json --from "$D/g_compile_b16_12gib.vt" --card 12GiB \
    "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" >case2.json ||
    { echo "predict --from failed"; exit 1; }
# predict's text for a plain script: its own flag, never nanoGPT's spelling
"$VT" predict --from "$D/s_hf_gpt2_eager_b12.vt" >hf_predict.txt || { echo "predict failed"; exit 1; }
grep -q -- '--batch_size=\|gradient_accumulation_steps=' hf_predict.txt &&
    { echo "predict --from an HF trace speaks nanoGPT's flags:"; cat hf_predict.txt; exit 1; }
grep -q -- '(--batch-size [0-9]*)' hf_predict.txt ||
    { echo "predict --from an HF trace: no --batch-size N"; cat hf_predict.txt; exit 1; }
# a Hugging Face program's report never presents nanoGPT's names or defaults as its own
for t in hf_llama_fp16_b24 s_hf_gpt2_eager_b12 hf_gpt2_compile_b4 s_llama_fp16_b8; do
    "$VT" report --no-color "$D/$t.vt" >"$t.txt" || { echo "report $t failed"; exit 1; }
    grep -i 'nanogpt\|GPT\.forward' "$t.txt" && { echo "$t: the report speaks nanoGPT"; exit 1; }
done
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, os, re, subprocess, sys
# the measured boundary on the 12GiB card, by program and mode
fit = {"nano_compile": {8, 10, 12}, "nano_eager": {4}, "hf_gpt2_eager": {4, 6},
       "hf_gpt2_compile": {4, 8, 12}, "llama": {4, 8}}
oom = {"nano_compile": {16}, "nano_eager": {8, 16}, "hf_gpt2_eager": {8, 12, 16},
       "hf_gpt2_compile": {16}, "llama": {12, 24}}
def family(cmd):
    if "hf_train.py" in cmd:
        if "llama" in cmd:
            return "llama"
        return "hf_gpt2_compile" if "--compile" in cmd else "hf_gpt2_eager"
    return "nano_eager" if "--compile=False" in cmd else "nano_compile"
# The allocator cache is not predictable from one run (at their failure the nine OOM runs held
# 0.4-30.7 % of their tensor bytes unused, HF GPT-2 eager 1.1-9.1 %, nanoGPT eager 14-31 %): a batch
# measured to fit may be predicted above the card only when the report says the cache decides
# (fits_with_cache_at_most_bytes) and the rest of its prediction is within 5 % of the run.
# (HF GPT-2 eager, from its B=12 failure: B=6 is 12.93 GiB with the 20 % eager cache floor,
# 10.88 GiB without it; measured 11.47 GiB, 0.51 GiB of it cache at the tensor peak.)
measured = {}  # (family, B) -> the process peak of the run that fit
for line in open(sys.argv[1]):
    f = json.loads(line)
    m = re.search(r"--batch[-_]size[= ]?(\d+)", f["command"])
    if m and not f["oom"]:
        r = json.load(open(f["trace"][:-3] + ".json"))
        measured[(family(f["command"]), int(m.group(1)))] = r["peak"]["process_bytes"]
decided = []
bad = []
n_known = 0
def run_accum(cmd):
    # what the traced program used: its argument, its config file's value, or its own default
    m = re.search(r"--(?:gradient_accumulation_steps=|grad-accum[= ])(\d+)", cmd)
    if m:
        return int(m.group(1))
    if "hf_train.py" in cmd:
        src = open(os.path.join(os.environ["ROOT"], "examples/hf/hf_train.py")).read()
        return int(re.search(r'"--grad-accum", type=int, default=(\d+)', src).group(1))
    m = re.search(r"(\S+/config/\S+\.py)", cmd)
    conf = open(os.path.join(os.environ["ROOT"], "examples/gpt/config", os.path.basename(m.group(1))))
    return int(re.search(r"^gradient_accumulation_steps = (\d+)", conf.read(), re.M).group(1))
for line in open(sys.argv[1]):
    f = json.loads(line)
    t = f["trace"][:-3]
    if t == "a_native_compile":
        continue
    r = json.load(open(t + ".json"))
    fam, p = family(f["command"]), r["prediction"]
    cap = p["capacity_bytes"]
    assert cap == 12 << 30, (t, cap)
    if f["oom"] and p["current_peak_bytes"] <= cap:
        bad.append("%s: ran out of memory, predicted %d <= card" % (t, p["current_peak_bytes"]))
    if not f["oom"] and p["current_peak_bytes"] > cap:
        bad.append("%s: fit, told it needs %d > card" % (t, p["current_peak_bytes"]))
    # the model's shape says its accumulation is assumed where the config does not know it (it
    # said a placeholder 2 with "accumulation_unknown": false on 7 of these runs)
    unknown = r["config"]["gradient_accumulation_steps"]["source"] in ("default", "unknown")
    if p["run_shape"]["accumulation_unknown"] != (unknown and not p["run_shape"]["no_training"]):
        bad.append("%s: run_shape accumulation_unknown %s, the config's source %s" %
                   (t, p["run_shape"]["accumulation_unknown"],
                    r["config"]["gradient_accumulation_steps"]["source"]))
    # P is what the trace's weights hold: called parameters only where it is the program's count
    # (a Llama's 64 rotary elements are a buffer: "134.11 M parameters" was not its count)
    txt = open(t + ".report.txt", encoding="utf-8").read()
    m = re.search(r"P = ([\d.]+) M (\w+) in the trace's weight tensors", txt)
    if m and f.get("params") and m.group(2) == "parameters" and \
            abs(float(m.group(1)) - f["params"] / 1e6) >= 0.005:
        bad.append("%s: P = %s M parameters, the program counts %d" % (t, m.group(1), f["params"]))
    for a in r["advice"]:
        if not a["change"].startswith(("batch_size=", "micro-batch")) or a["block_size"] != 1024:
            continue
        B = a["batch_size"]
        if B in oom[fam] and a["fits"]:
            bad.append("%s: batch %d ran out of memory, predicted to fit" % (t, B))
        lim = a["fits_with_cache_at_most_bytes"]
        # a row that fits says it only by less than twice its cache (advice_fit_cache), at least
        # the cache it assumed
        c = a["allocator_cache_bytes"]
        if lim is not None and (lim <= 0 or (a["fits"] and not c <= lim < 2 * c)):
            bad.append("%s: batch %d: fits %s, cache limit %d" % (t, B, a["fits"], lim))
        if B in fit[fam] and a["required_bytes"] > cap:
            rest = a["required_bytes"] - a["allocator_cache_bytes"]
            if lim is None or (fam, B) not in measured or rest > 1.05 * measured[(fam, B)]:
                bad.append("%s: batch %d fit, predicted %d > card (cache limit %s)" %
                           (t, B, a["required_bytes"], lim))
            else:
                decided.append((t, B))
    # the program's language: only flags the traced command line used (HF: --batch-size N)
    cmd = f["command"].split("(PYTORCH_CUDA_ALLOC_CONF")[0]
    for a in r["advice"]:
        for flag in re.findall(r"(--[A-Za-z_-]+)", a["command_line"]):
            if flag not in cmd and not (fam.startswith("nano") and "train.py" in cmd):
                bad.append("%s: advice %r uses %s, not a flag of %s" % (t, a["change"], flag, cmd))
        if fam.startswith("nano") and a["change"].startswith("batch_size=") and \
           not a["command_line"].startswith("--batch_size="):
            bad.append("%s: nanoGPT advice %r not in --key=value" % (t, a["command_line"]))
    # compile=False where eager needs more than the run's configuration: said, not offered as
    # a way to fit (a GPT-2 at B=16 had read "compile=False: 18.35 GiB" beside its 13.78)
    now = (r.get("prediction") or {}).get("current_peak_bytes") or 0
    for a in r["advice"]:
        if a["change"] == "compile=False" and now and a["required_bytes"] > 1.01 * now and \
                "keep torch.compile" not in a["note"]:
            bad.append("%s: compile=False needs %s B for the run's %s B, unsaid: %r" %
                       (t, a["required_bytes"], now, a["note"]))
    for a in r["advice"]:  # nanoGPT's code names only for nanoGPT
        said = a["command_line"] + " " + a["code_change"]  # (the change: line's)
        if not fam.startswith("nano") and ("GPT.forward" in said or "Block" in said):
            bad.append("%s: advice %r speaks nanoGPT's code" % (t, said))
    if not fam.startswith("nano") and not any(
            re.fullmatch(r"--batch-size \d+", a["command_line"]) for a in r["advice"]):
        bad.append("%s: no advice in the program's own --batch-size N" % t)
    # report and predict --from share one model: the same configuration within 5 %
    q = json.load(open(t + ".predict.json"))
    # every run here used fused attention (SDPA): its few MiB of buffers are not score matrices
    att = r["formula"]["attention"]
    if att["refined_bytes"] != 0 or "materialized" in att.get("reason", ""):
        bad.append("%s: attention %s" % (t, att))
    g, o = r["formula"]["gradients"], r["formula"]["optimizer"]
    if g["measured_bytes"] == 0 and o["measured_bytes"] > 0 and "first backward" in g["reason"] \
            and "this step" not in g["reason"]:
        bad.append("%s: gradients: %s, with AdamW state at the peak" % (t, g["reason"]))
    # the run's accumulation: an argument, else what its optimizer steps showed, else not known
    # (then only a factor of it is advised); never nanoGPT's default 40 taken as the run's
    a_cfg = r["config"]["gradient_accumulation_steps"]
    if a_cfg["source"] not in ("default", "unknown"):
        n_known += 1
        if a_cfg["value"] != run_accum(f["command"]):
            bad.append("%s: A %s (%s), the run's is %d" % (t, a_cfg["value"], a_cfg["source"],
                                                          run_accum(f["command"])))
    rq = q.get("recommended")
    # what is recommended is the same in the report and in predict --from (the report's own
    # configuration where it fits, else a micro-batch: llama400m_b4_oom had B=2 alone in the
    # report, B=1 with 4 steps in predict; hf_gpt2_compile_b4 "none" and B=8 with 1 step)
    rr = [a for a in r["advice"] if a["recommended"]]
    if rr and (rr[0]["change"].startswith(("none", "micro-batch", "batch_size")) or rq):
        rb = (r["config"]["batch_size"]["value"], a_cfg["value"]) if rr[0]["change"].startswith("none") \
            else (rr[0]["batch_size"], rr[0]["gradient_accumulation_steps"])
        qb = (rq["batch_size"], rq["gradient_accumulation_steps"]) if rq else None
        if qb is None or rb[0] != qb[0] or (qb[1] is not None and rb[1] != qb[1]):
            bad.append("%s: the report recommends %s, predict --from %s" % (t, rr[0]["change"], rq))
    if not fam.startswith("nano") and q["config_program"] == "nanoGPT":
        bad.append("%s: predict --from says nanoGPT" % t)
    if rq and (rq["gradient_accumulation_steps"] is None) != \
            (a_cfg["source"] in ("default", "unknown")):
        bad.append("%s: recommended %s, A %s" % (t, rq, a_cfg))
    if rq and rq["gradient_accumulation_steps"] is not None and \
            rq["batch_size"] * rq["gradient_accumulation_steps"] != \
            r["config"]["batch_size"]["value"] * a_cfg["value"]:
        bad.append("%s: recommended %s does not keep the effective batch" % (t, rq))
    if not f["oom"] and q["required_bytes"] > cap:  # its own configuration, measured to fit
        bad.append("%s: fit, predict --from says %d > card" % (t, q["required_bytes"]))
    if abs(q["peak_bytes"] - p["current_peak_bytes"]) > 0.05 * p["current_peak_bytes"]:
        bad.append("%s: predict --from %d, report %d" % (t, q["peak_bytes"], p["current_peak_bytes"]))
    lb = p["largest_batch_size"]
    if any(b <= lb for b in oom[fam]):
        bad.append("%s: largest batch %d, but %s ran out of memory" % (t, lb, sorted(oom[fam])))
    if f["oom"]:
        rec = [a for a in r["advice"] if a["recommended"]]
        if not rec or rec[0]["batch_size"] * 2 < max(fit[fam]) or not rec[0]["fits"]:
            bad.append("%s: recommendation %s below half of %d" %
                       (t, rec[0]["change"] if rec else None, max(fit[fam])))
# compile turned off, against the eager runs measured at the same micro-batch: never predicted
# to fit where eager ran out of memory, never far below where it fit
def compile_off(t):
    r = json.load(open(t + ".json"))
    return [a for a in r["advice"] if "compile" in a["change"]][0]
for t in ("s_hf_gpt2_compile_b8", "s_hf_gpt2_compile_b12", "g_compile_b8_12gib"):
    a = compile_off(t)  # eager at this B: OOM (s_hf_gpt2_eager_b8 / _b12, s_nano_eager_b8)
    if a["fits"] or a["required_bytes"] <= 12 << 30:
        bad.append("%s: compile off predicted %d, eager ran out of memory" % (t, a["required_bytes"]))
eager4 = json.load(open("hf_gpt2_eager_b4.json"))["peak"]["process_bytes"]
a = compile_off("hf_gpt2_compile_b4")
if a["required_bytes"] < 0.9 * eager4:
    bad.append("hf_gpt2_compile_b4: compile off predicted %d, eager measured %d" %
               (a["required_bytes"], eager4))
# the OOM's cause from the allocator's own state at the failure: more unused cache than the
# request (nanoGPT eager B=8: 2446 MiB for 1572) is fragmentation, offered expandable_segments;
# less (HF eager B=12: 185 for 1178) is not, nor is it when the step's tensors and what lies
# outside PyTorch exceed the card with no cache at all (HF compiled B=16: 1781 MiB unused for
# 1572, but 11.57 GiB of tensors + 0.69 GiB outside; B=12 fit, B=16 is too large)
for t, cause in (("s_nano_eager_b8", "fragmentation"),
                 ("hf_gpt2_compile_b16", "activations_too_large"),
                 ("s_hf_gpt2_eager_b12", "activations_too_large")):
    r = json.load(open(t + ".json"))
    if r["oom"]["cause"] != cause:
        bad.append("%s: OOM cause %s, not %s" % (t, r["oom"]["cause"], cause))
    exp = [a for a in r["advice"] if "expandable_segments" in a["command_line"]]
    if bool(exp) != (cause == "fragmentation"):
        bad.append("%s: expandable_segments offered: %s" % (t, bool(exp)))
# a run that completed on the card with less than 5 % free (HF GPT-2 eager B=6: 538 MiB, 4.4 %)
# is told it fits (its own row, "none"), and what is recommended fits with the 5 % and keeps the
# effective batch (it was told micro-batch 6 -> 3 once; until 2026-12-01 its own row, too tight,
# was the recommended one: "recommended": true with "fits": false, where predict said B=4, A=3)
r = json.load(open("s_hf_gpt2_eager_b6.json"))
a0 = r["advice"][0]
own = [a for a in r["advice"] if a["change"].startswith("none")]
if not (r["prediction"]["tight_fit"] and a0["recommended"] and a0["fits"]
        and (a0["batch_size"], a0["gradient_accumulation_steps"]) == (4, 3)
        and own and not own[0]["recommended"] and "it fits" in own[0]["note"]
        and own[0]["batch_size"] == 6):
    bad.append("s_hf_gpt2_eager_b6: advice %s" % [(a["change"], a["recommended"]) for a in r["advice"]])
# a run that fit with less than 5 % free: its own row rests on its measured cache (not an
# assumed one), and 4.9 % free is not rounded up to the 5 % it lacks
a0 = [a for a in json.load(open("s_llama_fp16_b8.json"))["advice"] if a["change"].startswith("none")][0]
txt = open("s_llama_fp16_b8.report.txt", encoding="utf-8").read()
if not a0["change"].startswith("none") or a0["fits_with_cache_at_most_bytes"] is not None or \
        "too tight for 5 % headroom (600.1 MiB left, 4.9 %)" not in txt:
    bad.append("s_llama_fp16_b8: its own row %s" % a0)
for t in [json.loads(l)["trace"][:-3] for l in open(sys.argv[1])]:
    if t == "a_native_compile":  # reported without a card: not run above
        continue
    for a in json.load(open(t + ".json"))["advice"]:  # halving keeps the effective batch
        if a["change"].startswith(("micro-batch", "batch_size")) and "same effective" in a["note"]:
            rr = json.load(open(t + ".json"))
            if rr["config"]["gradient_accumulation_steps"]["value"] and a["gradient_accumulation_steps"] \
                    and a["batch_size"] * a["gradient_accumulation_steps"] != \
                    rr["config"]["batch_size"]["value"] * rr["config"]["gradient_accumulation_steps"]["value"]:
                bad.append("%s: %s says the same effective batch" % (t, a["change"]))
c2 = json.load(open("case2.json"))
if c2.get("recommended") != {"batch_size": 8, "gradient_accumulation_steps": 64}:
    bad.append("predict --from g_compile_b16_12gib: recommended %s" % c2.get("recommended"))
# weights a run had not created yet come from its own parameters, not the GPT formula's count:
# Llama (134.1 M, the formula's GPT of the same L, d, V has 110.3 M) died before its first
# optimizer step at B=24 and B=12; its gradients and AdamW state must be those a run measured
ref = next(f for f in (json.loads(l) for l in open(sys.argv[1]))
           if "llama" in f["command"] and f.get("grad_bytes"))
for t in ("hf_llama_fp16_b24", "s_llama_fp16_b12"):
    bc = json.load(open(t + ".predict.json"))["by_category"]
    for k, want in (("gradients", ref["grad_bytes"]), ("optimizer", ref["optim_state_bytes"])):
        if abs(bc[k] - want) > 0.01 * want:
            bad.append("%s: predicted %s %d, the Llama runs measured %d" % (t, k, bc[k], want))
# every run that completed an optimizer step shows its accumulation (12 of the 19 here: 3 by
# argument, 9 inferred from their steps)
if n_known < 12:
    bad.append("the accumulation is known for %d traces, not 12" % n_known)
# the case the rule is for is one (its report says so); a fit predicted above the card without it
# is a failure above
if ("s_hf_gpt2_eager_b12", 6) not in decided:
    bad.append("s_hf_gpt2_eager_b12: batch 6 not said to be decided by the cache: %s" % decided)
# 8-bit AdamW at the failed run's own shape: the failure's live state shrinks with it (AdamW's
# 949 MiB at s_nano_eager_b8's backward failure, 2 B of 8 a parameter): the what-if needs less
# than the configuration that failed by at least that (it had been predicted at the same bytes)
for t in ("s_nano_eager_b8", "hf_gpt2_compile_b16"):
    r = json.load(open(t + ".json"))
    st = r["oom"]["live_by_category"]["optimizer"]
    cur = r["prediction"]["current_peak_bytes"]
    a8 = [a for a in r["advice"] or [] if a["change"] == "8-bit AdamW"]
    if not st or not a8:
        bad.append("%s: no optimizer state at the failure or no 8-bit AdamW what-if" % t)
    elif cur - a8[0]["predicted_peak_bytes"] < 0.7 * st:
        bad.append("%s: 8-bit AdamW predicted %d, the failed configuration %d, with %d of state at the failure" % (t, a8[0]["predicted_peak_bytes"], cur, st))
# Siblings that completed (the same program at another micro-batch): each run's report says the
# largest micro-batch that fits is at least every one measured to fit with 5 % free (HF GPT-2
# compiled at B=4 had said 11, B=12 ran with 12.3 % free: its weight casts, 235.6 MiB kept at any
# batch, had been scaled with the tokens); predict --from one at the other's micro-batch and
# accumulation is within 3 % of its tensors' peak (requested_bytes_peak; it had been +5.0 %).
# And the largest is below every one measured not to keep 5 % free (out of memory, or tight),
# unless the report says the allocator cache decides there and the sibling's cache passed the
# most it named: Llama fp16 B=4 says 8 with 828 MiB of cache assumed ("with more than 1.42 GiB
# it keeps less than 5 % free"), and B=8 held 1.43 GiB of cache (reserved - allocated) and kept
# 4.9 % free. (The cache's share moves with the batch by no rule these runs show: 3.4-15.5 % of
# the tensors; before, that largest was said with no word of the cache.)
alls = [json.loads(l) for l in open(sys.argv[1])]
alls = [f for f in alls if re.search(r"--batch[-_]size[= ]?\d+", f["command"])]
done = [f for f in alls if not f["oom"]]
for f in done:
    r = json.load(open(f["trace"][:-3] + ".json"))
    for g in alls:
        if g is f or family(g["command"]) != family(f["command"]):
            continue
        B = int(re.search(r"--batch[-_]size[= ]?(\d+)", g["command"]).group(1))
        gp = None if g["oom"] else json.load(open(g["trace"][:-3] + ".json"))["peak"]["process_bytes"]
        pr = r["prediction"]
        if (g["oom"] or gp > 0.95 * (12 << 30)) and pr["largest_batch_size"] >= B:
            gk = None if g["oom"] else json.load(open(g["trace"][:-3] + ".json"))["peak"]
            said = (pr["largest_batch_size"] == B and gk and pr["largest_batch_cache_most_bytes"]
                    and gk["reserved_bytes"] - gk["allocated_bytes"] > pr["largest_batch_cache_most_bytes"])
            if said:
                print("  %s: largest %d, the cache decides (at most %.0f MiB), %s held %.0f MiB" % (
                    f["trace"], B, pr["largest_batch_cache_most_bytes"] / 2**20, g["trace"],
                    (gk["reserved_bytes"] - gk["allocated_bytes"]) / 2**20))
            else:
                bad.append("%s: largest micro-batch %d, %s %s" % (
                    f["trace"], pr["largest_batch_size"], g["trace"],
                    "ran out of memory" if g["oom"] else "kept less than 5 % free"))
        if g["oom"]:
            continue
        if gp <= 0.95 * (12 << 30) and r["prediction"]["largest_batch_size"] < B:
            bad.append("%s: largest micro-batch %d, %s fit with %.1f %% free" % (
                f["trace"], r["prediction"]["largest_batch_size"], g["trace"],
                100 - 100 * gp / (12 << 30)))
        out = subprocess.run([os.environ["VT"], "predict", "--json", "--card", "12GiB", "--from",
                              os.path.join(os.path.dirname(sys.argv[1]), f["trace"]),
                              "--batch-size", str(B), "--grad-accum",
                              str(run_accum(g["command"]))], capture_output=True, text=True)
        err = json.loads(out.stdout)["tensor_bytes"] / g["requested_bytes_peak"] - 1
        if abs(err) > 0.03:
            bad.append("%s -> %s: tensors %+.1f %% off" % (f["trace"], g["trace"], 100 * err))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PYEOF
echo ok
