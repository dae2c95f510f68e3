#!/bin/sh
# predict_trace.sh — `vramtrace predict --from` calibrates with a real traced run (the H100 OOM
# of examples/traces, GPT-2 124M B=16 under a 12 GiB card, its config file not recorded: its
# micro-batch given to `report --json`): the run's own setting does not fit, a quarter of the
# micro-batch does; a ResNet's report predicts in its own words; the recommendation printed is
# itself predicted to fit; a file that is neither a trace nor a report: exit 2.
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
# the trace's config file was not recorded (an older vramtrace) and its tensors do not give the
# micro-batch: nothing to scale from, said with how to give it (nanoGPT's default 12 is not the
# run's 16); the run's values given to report, its JSON calibrates
"$VT" predict --from "$T" >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "micro-batch is not known" err.txt && grep -q "report --json --batch-size N" err.txt ||
    { cat err.txt; echo "predict --from a trace without its micro-batch: exit $rc"; exit 1; }
# ... and from the report's JSON of such a trace, the report of the trace is where it is given, not
# the JSON (until 2026-12-06: "vramtrace report --json --batch-size N r.json")
"$VT" report --json "$T" >nob.json || exit 1
"$VT" predict --from nob.json >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -qF -- "--batch-size N $T > run.json" err.txt ||
    { cat err.txt; echo "predict --from a report's JSON without its micro-batch: exit $rc"; exit 1; }
"$VT" report --json --batch-size 16 --grad-accum 32 "$T" >given.json || exit 1
"$VT" predict --from given.json --json >same.json || { echo "predict --from a report failed"; exit 1; }
"$VT" predict --from given.json --batch_size=4 --gradient_accumulation_steps=128 --json >quarter.json || exit 1
python3 - same.json quarter.json <<'PYEOF' || exit 1
import json, sys
same, quarter = (json.load(open(p)) for p in sys.argv[1:3])
assert same.get("calibrated_from", "").endswith("given.json"), same.get("calibrated_from")
def fits(d):
    for k in ("fits", "fits_card"):
        if k in d:
            return d[k]
    return d["card"]["fits"]
assert fits(same) is False, "the run that ran out of memory is predicted to fit"
assert fits(quarter) is True, "B=4, A=128 is predicted not to fit"
PYEOF
# a report of a network no transformer formula fits (ResNet-50, an OOM at B=320): its what-ifs
# scale what it measured, in its words, never a GPT of 0 parameters
"$VT" report --json "$ROOT/examples/traces/h100-torch2.11-beyond/resnet50_b320_oom.vt" >rn.json || exit 1
"$VT" predict --from rn.json --batch_size=128 >rn.txt || { echo "predict --from a ResNet report failed"; exit 1; }
grep -q '^model: a convolutional network' rn.txt && ! grep -q 'GPT:\|refined formula' rn.txt ||
    { cat rn.txt; echo "predict --from a ResNet report: not in its words"; exit 1; }
# from a trace, what was trained comes first: a BERT is not called a GPT, a ViT has no
# vocabulary, and what the trace does not give (nanoGPT's dropout) is unknown, never 0
B="$ROOT/examples/traces/h100-torch2.11-beyond"
"$VT" predict --from "$B/bert_b16_fit.vt" >bert.txt || exit 1
head -1 bert.txt | grep -q "^an encoder transformer.*(BertForMaskedLM); the formula's BERT masked-LM model of its shape" ||
    { head -1 bert.txt; echo "predict --from a BERT trace: not in its words"; exit 1; }
# ... its settings in its flags (hf_train.py's --seq-len, --batch-size, --grad-accum), else in
# words for any program, never nanoGPT's keys (a BERT has no n_embd, no block_size)
head -2 bert.txt | grep -q "(layers L 12, attention heads H 12, width d 768, --seq-len 512, vocabulary V 30522, bias True)$" &&
    sed -n 2p bert.txt | grep -q "^step: --batch-size 16, --grad-accum 1 (effective batch 16), bfloat16, torch.compile False, " &&
    ! head -2 bert.txt | grep -qE '(^|[(, ])(n_layer|n_head|n_embd|block_size|vocab_size|batch_size|gradient_accumulation_steps|compile) ' ||
    { head -2 bert.txt; echo "predict --from a BERT trace: nanoGPT's setting names"; exit 1; }
"$VT" predict --from "$B/vitb16_b64_fit.vt" >vit.txt || exit 1
head -1 vit.txt | grep -q "patch tokens 197" && ! head -1 vit.txt | grep -qE "vocab_size|vocabulary" ||
    { head -1 vit.txt; echo "predict --from a ViT trace: a vocabulary"; exit 1; }
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11/b_oom_12gib.vt" >nano.txt || exit 1
sed -n 2p nano.txt | grep -q "dropout unknown" || { sed -n 2p nano.txt; echo "predict: an unknown dropout said as a value"; exit 1; }
# an OOM run whose failure state is its prediction says so, not "at the step's peak"
"$VT" predict --from "$ROOT/examples/traces/h100-torch2.11/s_llama_fp16_b12.vt" >ll.txt || exit 1
grep -q "^at the failure (what was live when the run ran out of memory" ll.txt &&
    ! grep -q "^at the step's peak" ll.txt || { sed -n 1,6p ll.txt; echo "predict: an OOM state said to be the step's peak"; exit 1; }
"$VT" predict --json --from "$ROOT/examples/traces/h100-torch2.11/s_llama_fp16_b12.vt" | grep -q '"by_category_at":"failure"' ||
    { echo "predict --json: by_category_at"; exit 1; }
# the trace and its report's JSON are one run: `predict --from T.vt` and `predict --from T.json`
# (`report --json` with the same options) predict the same peaks, largest micro-batch, lower-bound
# caveat and flag spelling, what-if by what-if, for every real run beyond nanoGPT; b_oom_12gib,
# whose micro-batch only the report's options give, predicts what the report's advice did
python3 - "$VT" "$B" "$ROOT/examples/traces/b_oom_12gib.vt" <<'PYEOF' || exit 1
import glob, json, os, re, subprocess, sys
vt, beyond, boom = sys.argv[1:4]
bad = []
def run(*args):
    p = subprocess.run([vt] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr
def text_of(out):  # the file read differs, nothing else may
    return [l for l in out.splitlines() if not l.startswith("calibrated with ")]
KEYS = ("peak_bytes", "required_bytes", "tensor_bytes", "by_category", "largest_batch_size",
        "largest_batch_size_at_most", "lower_bound", "recommended", "fits")
def json_route(tag, report_opts, trace):
    js = tag + ".json"
    rc, out, err = run("report", "--json", *report_opts, trace)
    if rc:
        bad.append("%s: report --json exit %d: %s" % (tag, rc, err.strip()))
        return None, None
    open(js, "w").write(out)
    return js, json.loads(out)
# (and simulated runs whose calibration holds more than their categories: a frozen teacher beside
# the student that ran out of memory, whose JSON route had given the teacher's weights AdamW state:
# 9.09 GiB of tensors at B=2 for the trace route's 6.45; an EMA; a diffusion U-Net's EMA; a
# sequence-to-sequence model's KV cache; a run peaking after its forward, fitted over the run;
# Lightning's gradients kept through a forward, and its forward cut short after an earlier one)
SIM = [os.path.join(os.environ["ROOT"], "examples", "traces", "sim", n + ".vt") for n in
       ("gpt2_kd_gpt2m_b6_oom_forward", "gpt2_kd_gpt2m_b4_fit", "gpt2_ema_b4_fit", "unet_b16_fit",
        "llama400m_ckpt_b4_fit", "lightning_llama400m_b1_s1_fit",
        "lightning_llama400m_b4_a2_oom_forward")]
for t in sorted(glob.glob(os.path.join(beyond, "*.vt"))) + SIM:
    tag = os.path.basename(t)[:-3]
    js, rep = json_route(tag, [], t)
    if not js:
        continue
    B = rep["config"]["batch_size"]["value"]
    for b in (None, max(1, B // 2), max(1, B // 4)):
        opt = ["--batch-size", str(b)] if b else []
        what = "%s %s" % (tag, " ".join(opt) or "(as run)")
        (r1, o1, e1), (r2, o2, e2) = run("predict", "--from", t, *opt), run("predict", "--from", js, *opt)
        if (r1, r2) != (0, 0):
            bad.append("%s: exit %d from the trace, %d from the JSON: %s %s" % (what, r1, r2, e1, e2))
            continue
        if "no prediction.calibration" in e2:
            bad.append("%s: the JSON route recalibrated: %s" % (what, e2.strip()))
        said = o1  # (the text prediction, o1 is its JSON below)
        if text_of(o1) != text_of(o2):
            d = [(a, c) for a, c in zip(text_of(o1), text_of(o2)) if a != c][:2]
            bad.append("%s: the trace says / the JSON says: %s" % (what, d))
        (r1, o1, _), (r2, o2, _) = (run("predict", "--json", "--from", f, *opt) for f in (t, js))
        p1, p2 = json.loads(o1), json.loads(o2)
        for k in KEYS:
            if p1.get(k) != p2.get(k):
                bad.append("%s: %s %r from the trace, %r from the JSON" % (what, k, p1.get(k), p2.get(k)))
        if b is None:  # the run's own: predict's largest micro-batch and caveat are the report's
            pr = rep["prediction"]
            # the weights' row names an EMA copy exactly where the calibration holds one (it had
            # said "model weights" beside the EMA run's twice their bytes, until 2026-12-05)
            ema = pr["calibration"].get("ema_bytes", 0)
            row = [l for l in said.splitlines() if l.startswith("  parameters ")]
            if len(row) != 1 or bool(ema) != ("EMA copy" in row[0]):
                bad.append("%s: EMA %s B calibrated, the parameters row: %s" % (tag, ema, row))
            if (p1.get("largest_batch_size"), p1.get("largest_batch_size_at_most")) != \
                    (pr["largest_batch_size"], pr["largest_batch_size_at_most"]):
                bad.append("%s: predict largest %s (at most %s), the report %s (at most %s)" %
                           (tag, p1.get("largest_batch_size"), p1.get("largest_batch_size_at_most"),
                            pr["largest_batch_size"], pr["largest_batch_size_at_most"]))
            if p1.get("lower_bound") != pr["largest_batch_size_at_most"]:
                bad.append("%s: predict lower_bound %s, the report's what-ifs lower bounds: %s" %
                           (tag, p1.get("lower_bound"), pr["largest_batch_size_at_most"]))
# the cases the review found, by their numbers (measured: T5 B=8 peaked at 6.77 GiB, Llama-LoRA
# B=4 fit at 9.96 GiB): the JSON route said 4.34 GiB, and 13.39 GiB with "largest 2" (the trace
# route 11.27 GiB then, 10.42 since a forward that ran every block calibrates its activations;
# T5 7.87 GiB and "largest 12" until 2026-12-01, when its logits became an encoder-decoder's 10 B
# per B*T*V and its cut-short forward extrapolated over the layers it had not reached; 7.38 GiB
# until its autocast copies were extrapolated too: 61.5 MiB alive, 115.4 for the whole forward,
# what B=8's run made; 7.45, and Llama-LoRA 10.42, until the backward's cuBLAS workspace on
# autograd's thread was counted: 32 MiB of workspaces alive at each failure, 64 predicted, what
# the fitting runs made)
for tag, b, peak, want in (("t5small_b32_oom", "8", "7.48 GiB", "(--batch-size 13)"),
                           ("llama400m_lora8_b8_oom", "4", "10.45 GiB", "fits (keeping >= 5 % free): 4  (--batch-size 4)")):
    _, out, _ = run("predict", "--from", tag + ".json", "--batch-size", b)
    if "peak: " + peak not in out or want not in out:
        bad.append("%s.json --batch-size %s: not %s and %r:\n%s" % (tag, b, peak, want, out))
# a run that died in its first forward, where the weights it had not reached yet say how much of
# it is to come (ResNet-50 at B=320: about 21 casts after 34): its activations extrapolated to
# the whole forward, said so, and its largest micro-batch is a prediction between the runs
# measured (B=128 fit, B=320 ran out), no longer a lower bound ("at most 297" until 2026-12-01)
for f in (os.path.join(beyond, "resnet50_b320_oom.vt"), "resnet50_b320_oom.json"):
    _, out, _ = run("predict", "--from", f)
    m = re.search(r"largest micro-batch that fits \(keeping >= 5 % free\): (\d+)  ", out)
    if "extrapolated to the whole forward" not in out or not m or \
            not 128 <= int(m.group(1)) < 320 or "lower bound" in out:
        bad.append("predict --from %s: not extrapolated over the layers ahead:\n%s" % (f, out))
# where nothing says how much of it is to come (a run of forwards only, no autocast), its
# what-ifs are lower bounds, said as the report says it
ev = os.path.join(os.environ["ROOT"], "examples", "traces", "sim", "gpt2_eval_b24_oom_forward.vt")
_, out, _ = run("predict", "--from", ev)
if "fits (keeping >= 5 % free): at most 20 (the what-ifs are lower bounds)" not in out:
    bad.append("predict --from %s: the largest batch stated as a fact:\n%s" % (ev, out))
# its forward had run every block: no copies to come (its final norm's weight, of a bias's size,
# had been "its autocast copies are taken whole: 235.8 MiB alive, 235.8 MiB with ...")
if "autocast copies are taken whole" in out:
    bad.append("predict --from %s: copies to come after every block had run:\n%s" % (ev, out))
_, out, _ = run("predict", "--from", ev, "--batch-size", "20")
if "may fit, at most 647.9 MiB free\n  (a lower bound:" not in out or "peak: at least " not in out:
    bad.append("predict --from %s --batch-size 20: a fit without its caveat:\n%s" % (ev, out))
# an accumulation given to predict is a change of the run: the flags it prints carry it (they said
# "--batch-size 16" for B=16 with --grad-accum 2, an effective batch of 16 when run)
_, out, _ = run("predict", "--from", os.path.join(beyond, "bert_b32_oom.vt"), "--batch-size", "16",
                "--grad-accum", "2")
for l in out.splitlines():
    if ("largest batch_size" in l or l.startswith("recommended")) and "--grad-accum 2)" not in l:
        bad.append("predict --grad-accum 2: flags without it: %s" % l)
# b_oom_12gib: the report's advice (its --batch-size 16) is what predict --from its JSON says
js, rep = json_route("b_oom", ["--batch-size", "16"], boom)
if js:
    item = [a for a in rep["advice"] if a["batch_size"] == 8][0]
    rc, out, err = run("predict", "--json", "--from", js, "--batch-size", "8", "--grad-accum", "64")
    p = json.loads(out)
    if p["peak_bytes"] != item["predicted_peak_bytes"]:
        bad.append("b_oom B=8: predict %.2f GiB, the report's advice %.2f GiB" %
                   (p["peak_bytes"] / 2**30, item["predicted_peak_bytes"] / 2**30))
    got = tuple(p.get(k) for k in ("largest_batch_size", "largest_batch_size_at_most", "lower_bound"))
    if got != (rep["prediction"]["largest_batch_size"], True, True):
        bad.append("b_oom: largest %s (at most %s, lower bound %s), the report at most %s" %
                   (got + (rep["prediction"]["largest_batch_size"],)))
    _, out, _ = run("predict", "--from", js, "--batch-size", "8", "--grad-accum", "64")
    for want in ("step: micro-batch 8, gradient_accumulation_steps 64", "at most 12 (the what-ifs are lower bounds)  (--batch_size=12)"):
        if want not in out:
            bad.append("b_oom: %r not in:\n%s" % (want, out))
for b in bad:
    print("predict_trace:", b)
sys.exit(1 if bad else 0)
PYEOF
# a report's JSON without the report's model (an older vramtrace's, or made by hand) still
# predicts, and says what it lacks; one whose model does not read is refused, naming the field
python3 - rn.json <<'PYEOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("run_shape", "calibration"):
    del d["prediction"][k]
json.dump(d, open("rn_old.json", "w"))
d = json.load(open(sys.argv[1]))
d["prediction"]["calibration"]["ratio"]["activations"] = "x"
json.dump(d, open("rn_bad.json", "w"))
PYEOF
"$VT" predict --from rn_old.json --batch_size=128 >old.txt 2>old.err || { cat old.err; echo "predict --from an older report failed"; exit 1; }
grep -q '^model: a convolutional network' old.txt && grep -q "no prediction.calibration" old.err ||
    { cat old.txt old.err; echo "predict --from an older report: not said"; exit 1; }
"$VT" predict --from rn_bad.json >/dev/null 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "rn_bad.json: prediction.calibration.ratio.activations: missing or not a number" err.txt ||
    { cat err.txt; echo "predict --from a report whose model does not read: exit $rc"; exit 1; }
# the optimizer step the run measured travels in its report's JSON: a micro-batch of 1 from the
# one-step ResNet-50 at B=128 peaks in that step (tests/integration/step_pairs.sh: within 2 % of
# its B=1 run) by either route
RB="$ROOT/examples/traces/sim/resnet50_b128_fit.vt"
"$VT" report --json "$RB" >rb.json || exit 1
for from in "$RB" rb.json; do
    "$VT" predict --from "$from" --batch_size=1 >rb.txt || { echo "predict --from $from failed"; exit 1; }
    grep -q "^at the optimizer step's peak" rb.txt && grep -q '^  = tensors *455.7 MiB' rb.txt ||
        { cat rb.txt; echo "predict --from $from at B=1: not the optimizer step"; exit 1; }
done
# ... and the one a run that died in its first forward never reached: the simulated ResNet-50 at
# B=320 predicts its B=1 sibling's optimizer step (oom_pairs.sh: +5.3 %; 24.9 % under from its
# forward alone until 2026-12-01), said as unmeasured, by either route
RO="$ROOT/examples/traces/sim/resnet50_b320_oom_forward.vt"
"$VT" report --json "$RO" >ro.json || exit 1
for from in "$RO" ro.json; do
    "$VT" predict --from "$from" --batch_size=1 >ro.txt || { echo "predict --from $from failed"; exit 1; }
    grep -q "^at the optimizer step's peak, which the run never reached" ro.txt &&
        ! grep -q "what the run measured there" ro.txt && grep -q '^  gradients  *97.7 MiB' ro.txt &&
        grep -q '^  temporaries  *97.7 MiB' ro.txt && grep -q '^  = tensors *489.1 MiB' ro.txt ||
        { cat ro.txt; echo "predict --from $from at B=1: not the step it never reached"; exit 1; }
done
# BERT's masked-LM model from its trace, by either route: its parameters counted as from its
# config (the position and token-type tables' rows read from its weights: 109,514,298, the
# program's own count), and no sequence past its position table
BB="$ROOT/examples/traces/h100-torch2.11-beyond/bert_b16_fit.vt"
"$VT" report --json "$BB" >bb.json || exit 1
for from in "$BB" bb.json; do
    "$VT" predict --from "$from" --batch_size=8 | head -1 |
        grep -q "the formula's BERT masked-LM model of its shape: 109.51 M parameters" ||
        { echo "predict --from $from: not BERT's model"; exit 1; }
    "$VT" predict --from "$from" --block_size=1024 >/dev/null 2>err.txt; rc=$?
    [ $rc = 2 ] && grep -q "tokens per sample T 1024 is past the traced model's position table (512 rows" err.txt ||
        { cat err.txt; echo "predict --from $from --block_size=1024: exit $rc"; exit 1; }
done
# the backward's cuBLAS workspace on autograd's thread, not yet made where a run died: BERT B=32
# out of memory in its first backward before its first matrix product there (33 MiB alive), T5
# B=32 in its first forward (32): their fitting runs' workspaces (B=16's 65 MiB, B=8's 64), at the
# failure's moment and at the optimizer step never reached (both had said those alive); so too
# HF GPT-2 B=8 in its first backward (33 MiB; B=6's run 65) and the simulated Llama 160M bf16
# B=16 (32 MiB; B=8, A=2's run 64); not the simulated BERT B=32, cut in its backward after its
# workspace was made (65 MiB alive, B=16's run 65)
X="$ROOT/examples/traces/h100-torch2.11-beyond"
S="$ROOT/examples/traces/sim" H="$ROOT/examples/traces/h100-torch2.11"
"$VT" report --json "$X/bert_b32_oom.vt" >bo.json && "$VT" report --json "$X/t5small_b32_oom.vt" >to.json &&
    "$VT" report --json "$X/t5small_b8_fit.vt" >t8.json &&
    "$VT" report --json "$H/s_hf_gpt2_eager_b6.vt" >g6.json &&
    "$VT" report --json "$S/llama160m_bf16_b8_a2_fit.vt" >l8.json &&
    "$VT" predict --from "$X/bert_b32_oom.vt" --batch-size 16 --json >bp.json &&
    "$VT" predict --from "$H/s_hf_gpt2_eager_b8.vt" --batch-size 6 --json >gp.json &&
    "$VT" predict --from "$S/llama160m_bf16_b16_oom_backward.vt" --batch-size 8 --json >lp.json &&
    "$VT" report --json "$S/bert_b16_fit.vt" >s16.json &&
    "$VT" predict --from "$S/bert_b32_oom_backward.vt" --batch-size 16 --json >sp.json || exit 1
python3 - <<'PYEOF' || exit 1
import json
ld = lambda f: json.load(open(f))
bad = []
for oom, fit in (("bo.json", "bb.json"), ("to.json", "t8.json"), ("gp.json", "g6.json"), ("lp.json", "l8.json"),
                  ("sp.json", "s16.json")):
    wsm = ld(fit)["categories"]["workspaces"]
    ws = [ld(oom)["by_category"]["workspaces"]] if oom in ("gp.json", "lp.json", "sp.json") else \
        [ld(oom)["prediction"]["calibration"]["optimizer_step"]["workspaces"]]
    if oom == "bo.json":
        ws.append(ld("bp.json")["by_category"]["workspaces"])
    for w in ws:
        if not wsm <= w <= 1.05 * wsm:
            bad.append("%s: workspaces %.1f MiB predicted, its fitting run's %.1f" % (oom, w / 2**20, wsm / 2**20))
if bad:
    print("\n".join(bad))
    raise SystemExit(1)
PYEOF
# the recommendation predict prints is itself predicted to fit, on every committed H100 run that
# gives its shape (Llama 400M at B=4 out of memory on 12 GiB: B=2 fits alone, B=2 with two
# micro-steps does not, its gradients kept through the second forward; B=1, A=4 does)
for T in "$ROOT"/examples/traces/h100-torch2.11-beyond/*.vt; do
    "$VT" predict --from "$T" --json >rec1.json 2>/dev/null || continue
    python3 - rec1.json <<'PYEOF' >flags.txt || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("recommended")
if r and r.get("gradient_accumulation_steps"):
    print("--batch-size %d --grad-accum %d" % (r["batch_size"], r["gradient_accumulation_steps"]))
PYEOF
    [ -s flags.txt ] || continue
    # shellcheck disable=SC2046
    "$VT" predict --from "$T" --json $(cat flags.txt) >rec2.json || exit 1
    python3 -c "import json,sys; sys.exit(0 if json.load(open('rec2.json'))['fits'] else 1)" ||
        { echo "$(basename "$T"): predict recommends $(cat flags.txt), which it predicts not to fit"; exit 1; }
    n_rec=$((${n_rec:-0} + 1))
done
[ "${n_rec:-0}" -ge 5 ] || { echo "only ${n_rec:-0} recommendations checked"; exit 1; }
printf 'not a trace\n' >bogus.txt
"$VT" predict --from bogus.txt >/dev/null 2>err.txt; rc=$?
# (exit 3, as every command exits on a file that is no trace: it was 2 until 2026-12-01)
[ $rc = 3 ] && grep -q 'neither a trace' err.txt || { cat err.txt; echo "bad --from: exit $rc"; exit 1; }
: >empty.vt # as every command says it: an empty file, not "neither a trace nor ..."
"$VT" predict --from empty.vt >/dev/null 2>err.txt; rc=$?
[ $rc = 3 ] && grep -q 'empty.vt: an empty file' err.txt && ! grep -q 'neither' err.txt ||
    { cat err.txt; echo "--from an empty file: exit $rc"; exit 1; }
# a LoRA run: the trained parameters said beside the model's (its first line had named only the
# base model's 373.87 M); a run that trains every weight has no such line
X="$ROOT/examples/traces/h100-torch2.11-beyond"
"$VT" predict --from "$X/llama400m_lora8_b4_fit.vt" >lora.txt 2>&1 || { echo "predict --from LoRA failed"; exit 1; }
grep -q "^trained: 1.57 M parameters, 0.42 % of the model's (the rest frozen" lora.txt ||
    { head -3 lora.txt; echo "predict --from a LoRA run: the trained parameters not said"; exit 1; }
"$VT" predict --from "$X/llama400m_b4_oom.vt" >full.txt 2>&1
grep -q "^trained:" full.txt && { echo "predict --from a run training every weight: a 'trained:' line"; exit 1; }
# where the assumed cache alone decides, predict's verdict says so as the report's does (966.0
# MiB over until the backward's cuBLAS workspace was counted: 33 MiB of workspaces alive at the
# failure, 66 predicted, B=6's run 65; with the cache's share on them, 1005.6; 1.07 GiB since its
# head's 16-bit copy, not in the copies it calibrates on (out of memory at its logits), is counted:
# autocast copies 162.2 MiB, now 235.6, what B=6's and B=8's runs made)
D="$ROOT/examples/traces/h100-torch2.11"
"$VT" predict --from "$D/s_hf_gpt2_eager_b12.vt" --batch-size 6 >c6.txt 2>&1
grep -q "^card 12GiB (emulated) (12.00 GiB): does not fit with the cache assumed, 1.07 GiB over$" c6.txt &&
    grep -q "^the allocator cache decides" c6.txt || { grep -A1 '^card' c6.txt; echo "predict: the cache's part in the verdict not said"; exit 1; }
# the LoRA run that died before any gradient: its share is an assumption, said so, from the
# trace and from its report's JSON alike
"$VT" predict --from "$X/llama400m_lora8_b8_oom.vt" >la.txt 2>&1
"$VT" report --json "$X/llama400m_lora8_b8_oom.vt" >la.json && "$VT" predict --from la.json >lb.txt 2>&1
for f in la.txt lb.txt; do
    grep -q "^trained: assumed 3.74 M parameters, 1.00 % of the model's (LoRA on, no gradient measured" $f ||
        { sed -n 2p $f; echo "predict --from an OOM LoRA run ($f): the assumed share not said as one"; exit 1; }
done
# a run that died in its first forward: the rows said to be what was live at the failure hold
# the gradients and optimizer state its step makes later (said so, not as live then); the anchor
# of a run no formula applies to names no formula's rows; the optimizer's state not measured is
# said beside the rows, from the trace and from its report's JSON alike (a ResNet's script
# constructs SGD, AdamW and Adafactor: AdamW's counted, as the report says)
S="$ROOT/examples/traces/sim"
"$VT" predict --from "$S/gan_b2560_oom_forward.vt" >gan.txt 2>&1
grep -q "^at the failure (.*), and the gradients and optimizer state its step makes later, which the run had not made yet:$" gan.txt &&
    grep -q "^  gradients " gan.txt && ! grep -q "formula's rows" gan.txt &&
    grep -q "^  anchored to run .*(what the run held beyond these rows at its measured moment, the allocator cache then among it: added)$" gan.txt ||
    { sed -n 5,20p gan.txt; echo "predict --from a run cut in its first forward: its rows said as live then"; exit 1; }
# a device AdamW's run out of memory at its first backward's start: its rows add the optimizer's
# state and no gradient (none made at the failure, none held then at one micro-batch a step),
# and the heading says the state alone (it had said "the gradients and optimizer state")
"$VT" predict --from "$S/llama160m_bf16_b16_oom_backward.vt" >lb16.txt 2>&1
grep -q "^at the failure (.*), and the optimizer state its step makes later, which the run had not made yet:$" lb16.txt &&
    grep -q "^  optimizer " lb16.txt && ! grep -q "^  gradients " lb16.txt ||
    { sed -n 5,20p lb16.txt; echo "predict --from a run cut at its first backward: gradients said made later, none in its rows"; exit 1; }
# an evaluation's activations are no tensors saved for a backward, and its lower bounds are
# recommended at most half its batch, as the report recommends
"$VT" predict --from "$S/gpt2_eval_b24_oom_forward.vt" >ev.txt 2>&1
grep -q "^  activations .*the forward's tensors in use (forwards only: none kept for a backward" ev.txt &&
    grep -q "^recommended: a batch of 12 " ev.txt ||
    { grep "activations\|recommended" ev.txt; echo "predict --from an evaluation cut short"; exit 1; }
"$VT" report --json "$X/resnet50_b320_oom.vt" >rn.json && "$VT" predict --from rn.json >rn2.txt 2>&1
"$VT" predict --from "$X/resnet50_b320_oom.vt" >rn.txt 2>&1
for f in rn.txt rn2.txt; do
    grep -q "^  (the optimizer's state was not measured, and the script constructs several kinds (SGD( line 47, AdamW( line 49" $f ||
        { sed -n 1,8p $f; echo "predict --from ($f): the optimizer's state assumed without a word"; exit 1; }
done
# its sibling at B=128, whose fp16 GradScaler skipped both of its steps (no state made): what the
# script's optimizers make at the first step not skipped, counted as where no step ran (the same
# program, the same AdamW's 8 B per parameter; it had counted none: "needs ~7.51 GiB"), said
"$VT" report "$X/resnet50_b128_fit.vt" >rk.txt && "$VT" report --json "$X/resnet50_b128_fit.vt" >rk.json &&
    "$VT" predict --from "$X/resnet50_b128_fit.vt" >rkp.txt 2>&1 || { echo "resnet50_b128_fit failed"; exit 1; }
for f in rk.txt rkp.txt; do
    grep -q "^  (the optimizer's state was not measured: its 2 optimizer steps made none, with a GradScaler on that may have skipped them all, and the script constructs several kinds (SGD( line 47, AdamW( line 49, Adafactor( line 50 of examples/vision/vision_train.py): predictions count the most state of them, AdamW's 8 B per trainable parameter, made by the first step not skipped" $f ||
        { grep -n "optimizer\|needs" $f; echo "$f: steps the GradScaler skipped count no state"; exit 1; }
done
python3 - rk.json rn.json "$X/facts.jsonl" <<'PYEOF' || exit 1
import json, sys
k, n = (json.load(open(f)) for f in sys.argv[1:3])
fact = [json.loads(l) for l in open(sys.argv[3]) if json.loads(l)["trace"] == "resnet50_b128_fit.vt"][0]
assert fact["optim_state_bytes"] == 0 and fact["steps"] == 2, fact  # (both steps skipped)
assert k["recognized"]["optimizer"]["steps_may_be_skipped"], k["recognized"]["optimizer"]
p = k["prediction"]
state = p["calibrated_by_category"]["optimizer"]
assert state == 8 * fact["trainable_params"], (state, fact["trainable_params"])
# the configuration as it ran needs its peak and the state besides
assert p["current_peak_bytes"] >= k["peak"]["process_bytes"] + state, (p["current_peak_bytes"], state)
# the siblings assume alike
assert p["optimizer_state_assumed_adamw"] and n["prediction"]["optimizer_state_assumed_adamw"]
assert k["recognized"]["optimizer"]["script_kinds"] == n["recognized"]["optimizer"]["script_kinds"]
PYEOF
# a model no formula has: its own count of its weights, no block, no shape it did not show (a
# T5's had been 16,712,192, its embedding alone, "n_layer": 0, "block": "gpt2"); through a
# report's JSON the same
"$VT" report --json "$X/t5small_b8_fit.vt" >t5r.json
for src in "$X/t5small_b8_fit.vt" t5r.json "$X/resnet50_b128_fit.vt"; do
    "$VT" predict --from "$src" --card 12GiB --json >pj.json || { echo "predict --from $src --json failed"; exit 1; }
    python3 - pj.json "$src" "$X/facts.jsonl" <<'PYEOF' || exit 1
import json, os, sys
m = json.load(open(sys.argv[1]))["model"]
name = os.path.basename(sys.argv[2]).replace("t5r.json", "t5small_b8_fit.vt")
fact = [json.loads(l) for l in open(sys.argv[3]) if json.loads(l)["trace"] == name][0]
assert m["block"] is None and m["n_layer"] is None, (name, m)
# the weights made before training: parameters, and a ResNet's norms' running statistics
assert fact["params"] <= m["parameters"] <= fact["params"] * 1.003, (name, m["parameters"], fact["params"])
PYEOF
done
# the report's 8-bit AdamW what-if, checked by predict --from: the same peak (it had been refused,
# "--optimizer ... describe a run without a trace"); a run of another optimizer is refused
L4="$S/llama400m_b1_6gib_oom_optimizer.vt"
"$VT" report --json --card 6GiB "$L4" >l4.json
"$VT" predict --from "$L4" --card 6GiB --optimizer adamw8bit --json >l4p.json ||
    { echo "predict --from --optimizer adamw8bit refused"; exit 1; }
python3 - l4.json l4p.json <<'PYEOF' || exit 1
import json, sys
r, p = (json.load(open(f)) for f in sys.argv[1:3])
row = [a for a in r["advice"] if a["change"] == "8-bit AdamW"][0]
assert abs(p["required_bytes"] - row["required_bytes"]) <= 1e-4 * row["required_bytes"], \
    (p["required_bytes"], row["required_bytes"])
assert p["optimizer"]["name"] == "adamw8bit", p["optimizer"]
PYEOF
"$VT" predict --from "$X/resnet50_b128_fit.vt" --optimizer adamw8bit >/dev/null 2>err.txt &&
    { echo "8-bit AdamW predicted for an SGD run"; exit 1; }
grep -q "not one AdamW whose state the trace measured" err.txt || { cat err.txt; exit 1; }
"$VT" predict --from "$L4" --optimizer sgd >/dev/null 2>&1 && { echo "--optimizer sgd taken with --from"; exit 1; }
# a run out of memory in its optimizer step measures no growth with the micro-batch: no largest
# on a larger card (it had been 1048576 on 80 GiB, its activations freed by then), from the
# trace, its report and its JSON alike; where not even 1 fits, none, said
"$VT" report --card 80GiB "$L4" | grep -q "^  largest micro-batch that fits: not predicted" ||
    { echo "llama400m optimizer OOM on 80 GiB: a largest predicted"; exit 1; }
"$VT" report "$L4" | grep -q "^  largest micro-batch that fits (.*): none, not even 1$" ||
    { echo "llama400m optimizer OOM on 6 GiB: not 'none'"; exit 1; }
for src in "$L4" l4.json; do
    "$VT" predict --from "$src" --card 80GiB --json | python3 -c "import json,sys; v=json.load(sys.stdin)['largest_batch_size']; assert v is None, v" ||
        { echo "predict --from $src on 80 GiB: a largest"; exit 1; }
    "$VT" predict --from "$src" --card 6GiB --json | python3 -c "import json,sys; v=json.load(sys.stdin)['largest_batch_size']; assert v == 0, v" ||
        { echo "predict --from $src on 6 GiB: not none"; exit 1; }
done
# a report's JSON from before 2026-12-05 named the program kind of TrainingArguments' flags
# "Hugging Face Trainer arguments": read as the kind it is, the same prediction as the new name's
ACC="$ROOT/examples/traces/sim/accelerate_gpt2_b4_a2_fit.vt"
"$VT" report --json "$ACC" >acc.json || { echo "report --json of the accelerate trace"; exit 1; }
grep -q "\"config_program\":\"flags spelled as Hugging Face's TrainingArguments\"" acc.json ||
    { echo "the accelerate trace's kind: $(grep -o '"config_program":"[^"]*"' acc.json)"; exit 1; }
sed "s/flags spelled as Hugging Face's TrainingArguments/Hugging Face Trainer arguments/" acc.json >acc_old.json
"$VT" predict --from acc.json --batch-size 2 >acc_new.txt && "$VT" predict --from acc_old.json --batch-size 2 >acc_old.txt &&
    [ "$(grep -v '^calibrated with' acc_new.txt)" = "$(grep -v '^calibrated with' acc_old.txt)" ] ||
    { echo "the older JSON's kind predicted otherwise"; diff acc_new.txt acc_old.txt | head; exit 1; }
for j in acc.json acc_old.json; do
    "$VT" predict --from "$j" --json | python3 -c "import json,sys; v=json.load(sys.stdin)['config_program']; assert v == \"flags spelled as Hugging Face's TrainingArguments\", v" ||
        { echo "predict --from $j: the program's kind"; exit 1; }
done
echo ok
