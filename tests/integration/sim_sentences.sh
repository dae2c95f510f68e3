#!/bin/sh
# sim_sentences.sh — sentences of each SIMULATED run's report (examples/traces/sim) that must be
# true of that run, each found false once by reading the reports against their programs: a run
# that completed and is predicted to need more than its own peak says why (and only where it is
# more than 1 % above; one that made no optimizer step, that the state it never made is added);
# Adafactor's state is not said to take less than a convolutional network's factors take; a run
# checkpointed is not offered checkpointing where no micro-batch fits; fragmentation blamed for a
# forward cut short says its tensors are a lower bound; an evaluation is not told an optimizer
# step was still to come; no configuration key's words are cut short; a Trainer script that
# failed before its first step is told the optimizer its own TrainingArguments name; a key whose
# flag the recorded script defines is not said to have none; a checkpointing what-if is what the
# run checkpointed took (transformers' KV cache not made under checkpointing).
set -u
D="$ROOT/examples/traces/sim"
[ -f "$D/facts.jsonl" ] || { echo "no $D/facts.jsonl"; exit 1; }
. "$ROOT/tests/report_each.sh"
report_each "$D"
python3 - "$D/facts.jsonl" <<'PYEOF2' || exit 1
import json, os, re, subprocess, sys
bad = []
n = 0
for line in open(sys.argv[1]):
    f = json.loads(line)
    t = f["trace"][:-3]
    r = json.load(open(t + ".json"))
    text = open(t + ".txt").read()
    rec, cfg = r["recognized"], r["config"]
    n += 1
    # a run that completed, told its configuration needs more than it measured: the report says
    # why (its one step made the optimizer's state after its forward; a second step holds it)
    # (or, where it made no step at all, that the predictions add the state it never made: a
    # Llama 160M whose program stopped after its backward passes had been told "needs ~6.69
    # GiB", its own peak 5.58, and nothing more)
    pr = r.get("prediction") or {}
    why = "a second step's forward holds that state too" if f.get("steps") else \
        "the run made no optimizer step (%d backward passes, no out-of-memory error)" % f["grad_accum"]
    if not r.get("oom") and (pr.get("current_peak_bytes") or 0) > 1.02 * r["peak"]["process_bytes"] \
            and not any(x.startswith(why) or why in x for x in pr.get("notes") or []):
        bad.append("%s: needs %s B predicted above its own peak %s B, unexplained" %
                   (t, pr.get("current_peak_bytes"), r["peak"]["process_bytes"]))
    # ... and only there: an Adafactor run predicted 0.02 % above its peak (1.3 MiB; its factored
    # state a few MiB) had been told a second step's forward holds that state too
    if "a second step's forward holds that state too" in " ".join(pr.get("notes") or []) and \
            not r.get("oom") and (pr.get("current_peak_bytes") or 0) <= 1.01 * r["peak"]["process_bytes"]:
        bad.append("%s: the next-step note beside a prediction within 1 %% of its peak (%s B, %s B)" %
                   (t, pr.get("current_peak_bytes"), r["peak"]["process_bytes"]))
    # fragmentation blamed for a forward cut short says its tensors are a lower bound (a ViT
    # probe at B=3022: 3.4 GiB of cache beside a 3.4 GiB request, at 6 % of its forward; its
    # B=1675 sibling's forward held 8.9 GiB, ~15.7 GiB at 3022: no cache would have let it fit)
    o = r.get("oom") or {}
    if o.get("cause") == "fragmentation" and (r.get("prediction") or {}).get("largest_batch_size_at_most") \
            and "are a lower bound" not in o.get("evidence", ""):
        bad.append("%s: fragmentation blamed for a forward cut short, its need unhedged: %s" %
                   (t, o.get("evidence")))
    # an evaluation cut short by an out-of-memory error: its what-ifs are lower bounds, so the
    # batch recommended is at most half (a GPT-2 at 24 had been recommended 20, "may fit"; its
    # runs at 16 and 18 measured that 20 would not)
    rec_b = [a.get("batch_size") for a in r["advice"] or [] if a.get("recommended")]
    if f.get("eval_only") and f["oom"] and rec_b and rec_b[0] and rec_b[0] > f["batch_size"] // 2:
        bad.append("%s: lower bounds, batch %s recommended beside %s" % (t, rec_b[0], f["batch_size"]))
    # an evaluation trains nothing: its optimizer row does not wait for a step to come
    if f.get("eval_only") and rec["optimizer"]["kind"] == "unknown" and \
            "no optimizer ran, nothing was trained" not in rec["optimizer"]["where"]:
        bad.append("%s: forwards only, its optimizer row says %r" % (t, rec["optimizer"]["where"]))
    # every key's "where" is whole: no sentence cut short by a buffer (a distillation run's
    # n_layer had stopped at "(frozen: ")
    for k, v in cfg.items():
        w = v.get("where") if isinstance(v, dict) else None
        if w and w.count("(") != w.count(")"):
            bad.append("%s: config %s's where is cut short: %r" % (t, k, w[-60:]))
    # no step ran under the Hugging Face Trainer: the optimizer its script's own
    # TrainingArguments(optim=...) names, with its line, not AdamW assumed
    if f["oom"] and not f.get("steps") and f["program"] == "sim_trainer.py":
        o = rec["optimizer"]
        if o["kind"] != "adam" or 'TrainingArguments(optim="adamw_torch_fused")' not in o["where"] \
                or "assume AdamW" in text:
            bad.append("%s: no step ran, the script's TrainingArguments name its optimizer: %s" % (t, o))
    # a full AdamW run whose formula applies is offered 8-bit AdamW, also one far over the card
    # (Llama 160M at B=128: its moments' 0.75 GiB had been weighed against a 134.55 GiB prediction)
    if f["optimizer"].startswith("adamw") and not f.get("lora_rank") and not f.get("eval_only") \
            and r["formula_applies"] and rec["optimizer"]["kind"] == "adam" and \
            not any(a["change"] == "8-bit AdamW" for a in r["advice"] or []):
        bad.append("%s: an AdamW run not offered 8-bit AdamW" % t)
    # "no flag of the recorded X sets it" only where X has none of the key's name: the simulated
    # scripts' --dropout (type=float, default=None) had been said to be no flag
    for key, prog in re.findall(r"^  (\w+) +unknown +unknown: the command line does not give it, "
                                r"and no flag of the recorded (\S+) sets it$", text, re.M):
        src = open(os.path.join(os.environ["ROOT"], "examples/sim", prog)).read()
        if re.search(r"add_argument\([\"']--%s[\"']" % key.replace("_", "[-_]"), src):
            bad.append("%s: %s said to have no flag in %s, which defines one" % (t, key, prog))
    # "master weights" only of fp32 weights that autocast computes from in 16 bits and that all
    # train: an fp32 run (no autocast), a LoRA base, a distillation's teacher had each been told
    # "(fp32 master weights)"
    if "master weights;" in text and not (f.get("amp") in ("bf16", "fp16") and
                                          f.get("trainable_params") == f.get("params")):
        bad.append("%s: fp32 master weights said of a run with amp %s, %s of %s weights trained" %
                   (t, f.get("amp"), f.get("trainable_params"), f.get("params")))
    # ... and "not all trained" only where some weight is not: a ViT, every weight of it trained,
    # had been told so (the formula's blocks leave out its patch and position embeddings)
    if "not all trained;" in text and f.get("trainable_params") == f.get("params"):
        bad.append("%s: not all trained said of a run that trained all %s weights" % (t, f.get("params")))
    # the trained model's shape, not a frozen teacher's: a Llama 160M distilled from a Llama 400M
    # at B·T = 1024 (the teacher's width) had been given the teacher's L 24 and d 1024
    for k, fk in (("n_layer", "layers"), ("n_embd", "hidden"), ("n_head", "heads")):
        if f.get(fk) is not None and cfg[k]["source"] == "inferred" and cfg[k]["value"] != f[fk]:
            bad.append("%s: %s %s inferred, the program's is %s" % (t, k, cfg[k]["value"], f[fk]))
    # --amp none on the command line: never "the command line does not give it"; a run of whole
    # steps shows its fp32 weights and compute (an fp32 U-Net's 256 bytes counted as autocast
    # copies had left it unknown)
    if "--amp none" in f["command"]:
        m = re.search(r"^  dtype +(\S+) +(\S+) +(.*)$", text, re.M)
        if m and m.group(1) == "unknown" and "--amp none turns autocast off" not in m.group(3):
            bad.append("%s: --amp none given, dtype %r" % (t, m.group(0)))
        if m and f.get("steps") and f.get("dtype", "fp32") in ("fp32", None) and \
                (f.get("param_bytes") or 0) >= 4 * f["params"] and m.group(1) != "float32":
            bad.append("%s: fp32 steps without autocast, dtype %r" % (t, m.group(0)))
    # Adafactor factors a weight over its last two dimensions only: a k×k convolution keeps 2/k
    # states per weight, so ResNet-50's take 4.99 B per parameter; never "under 1 B per
    # parameter" where the program's own factors take more, and a bound counted for them where no
    # step measured them is at least what they take (a ResNet-50 out of memory before its first
    # step had been told "counted as 1 B per trainable parameter, more than they take")
    if f.get("optimizer") == "adafactor" and f.get("factored_elements") and f.get("trainable_params"):
        take = f["factored_elements"] * f["param_bytes"] / f["params"] / f["trainable_params"]
        if take >= 1 and "Adafactor): under 1 B per parameter" in text:
            bad.append("%s: Adafactor's state said under 1 B per parameter; it takes %.2f" % (t, take))
        m = re.search(r"Adafactor's factored moments are counted as ([0-9.]+) B per trainable", text)
        if m and float(m.group(1)) < take:
            bad.append("%s: Adafactor counted as %s B per parameter; it takes %.2f" % (t, m.group(1), take))
    # predict --from never says "not even ... 1 fits" beside a largest micro-batch that fits (a
    # Llama 400M at B=8, T=2048: "largest micro-batch that fits: 1", then "not even a micro-batch
    # of 1 fits", where none keeping the effective batch fits)
    pt = subprocess.run([os.environ["VT"], "predict", "--from", os.path.join(os.environ["ROOT"],
                         "examples/traces/sim", f["trace"])], capture_output=True, text=True).stdout
    # ... and its weights' row in the run's own precision (it had read "fp32 under AMP, 16-bit in
    # pure 16-bit training" for every run)
    w = re.search(r"^  parameters +\S+ \S+  (.*)$", pt, re.M)
    want = "16-bit" if f.get("dtype") in ("bf16", "fp16") else \
        "fp32 compute" if f.get("amp") == "none" else "autocast computes in 16 bits"
    if w and f.get("steps") and want not in w.group(1):
        bad.append("%s: predict's weights row %r (amp %s, dtype %s)" % (t, w.group(1), f.get("amp"), f.get("dtype")))
    # ... and never offers activation checkpointing to a run that has it on, not even where no
    # micro-batch fits a smaller card (a Llama with grouped-query attention checkpointed at B=8,
    # on 4 GiB: "not even a micro-batch of 1 fits, nor would shorter inputs or activation
    # checkpointing")
    if f.get("gradient_checkpointing"):
        p4 = subprocess.run([os.environ["VT"], "predict", "--from", os.path.join(
            os.environ["ROOT"], "examples/traces/sim", f["trace"]), "--card", "4GiB"],
            capture_output=True, text=True).stdout
        for line in (pt + p4).splitlines():
            if line.startswith("not even ") and "activation checkpointing" in line:
                bad.append("%s: checkpointing on, and %r" % (t, line[:100]))
    if f["oom"]:
        m = re.search(r"^largest .* that fits .*: (?:at most )?([1-9][0-9]*)", pt, re.M)
        if m and re.search(r"^not even ", pt, re.M):
            bad.append("%s: predict: largest %s fits, and %r" %
                       (t, m.group(1), re.search(r"^not even .*$", pt, re.M).group(0)[:80]))
    # the process peaked in an evaluation of a batch of its own, the tensors in training: said
    # beside the micro-batch what-ifs, which leave that pass and its cache (a GPT-2 at B=6 beside
    # an evaluation at 8 had been told B=3 with 2 accumulation steps needs 7.16 GiB: 9.92 taken)
    ev = f.get("eval_batch_size") and f["eval_batch_size"] != f["batch_size"] and f.get("steps") and \
        (r.get("phases") or {}).get("eval") == r["peak"]["process_bytes"] and \
        "the tensors peaked (" not in text
    if bool(ev) != (re.search(r"in an evaluation pass with a batch of its own \(--(?:eval-batch-size|"
                              r"val_batch_size) ", text) is not None and
                    "the process peaked (" in text):
        bad.append("%s: the process peak in an evaluation at its own batch %s" %
                   (t, "unsaid" if ev else "said of a run that has none"))
    # none fits: said so (the Llama 400M at B=1 out of memory in its optimizer step on 6 GiB had
    # been told "largest micro-batch that fits ...: 0"); its JSON keeps 0
    m = re.search(r"^  largest .* that fits .*: (.*)$", text, re.M)
    if m and re.match(r"(at most )?0\b", m.group(1)):
        bad.append("%s: %r" % (t, m.group(0)))
    if m and m.group(1).startswith("none") and (r.get("prediction") or {}).get("largest_batch_size") != 0:
        bad.append("%s: none fits, its JSON says %r" % (t, r["prediction"].get("largest_batch_size")))
    # a process peak of mostly allocator cache says what the cache is and where the tensors
    # peaked (a ResNet-50's table read 87.8 % cache, 0.0 % activations, its 5.22 GiB of them
    # freed by its optimizer step), and only there
    cats = r["categories"]
    tot = sum(cats.values())
    said = re.search(r"^  \(allocator cache: reserved memory no tensor held at this moment.*the "
                     r"tensors peaked at ([0-9.]+) s", text, re.M)
    # ... the reserved peak it names is the report's own, at its time
    grew = re.search(r"the reserved memory grew after that, to its peak at ([0-9.]+) s\)$", text, re.M)
    rt = re.search(r"^  reserved \(allocator\) +\S+ \S+ +at +([0-9.]+) s", text, re.M)
    if grew and (not rt or grew.group(1) != rt.group(1)):
        bad.append("%s: the cache note's reserved peak at %s s, the report's at %s" %
                   (t, grew.group(1), rt and rt.group(1)))
    if tot and (cats["allocator_cache"] >= tot / 4) != bool(said) and r["peak"].get("allocated_bytes"):
        bad.append("%s: cache %d of %d B at the peak, its note %s" % (t, cats["allocator_cache"], tot,
                                                                   "said" if said else "missing"))
    # a LoRA run's frozen weights are a pretrained model's: a smaller shape is another one to
    # adapt (it had read as this run trained smaller)
    for a in r["advice"] or []:
        if f.get("lora_rank") and a["note"].startswith(("smaller model", "narrower model")) and \
                "smaller pretrained model to adapt" not in a["note"]:
            bad.append("%s: LoRA, %r" % (t, a["note"]))
    # a largest micro-batch not predicted because the run peaked in an evaluation pass of its own
    # batch says so (it had read as a training step that peaked late)
    m = re.search(r"^  largest .* that fits: not predicted \((.*)\)$", text, re.M)
    if m and f.get("eval_batch_size") and not f.get("eval_only") and \
            "peaked in its evaluation pass, at its own batch of %d" % f["eval_batch_size"] not in m.group(1):
        bad.append("%s: %r" % (t, m.group(0)))
# a checkpointing what-if is what the same run checkpointed takes through a second step: a Llama
# 400M at B=4 had been predicted 7.25 GiB of tensors with checkpointing, its 768 MiB KV cache kept
# (transformers turns use_cache off under checkpointing in training); its run took 6.53
facts = [json.loads(l) for l in open(sys.argv[1])]
same = ("program", "model", "batch_size", "seq_len", "grad_accum", "amp", "optimizer", "lora_rank",
        "teacher", "eval_batch_size", "eval_only", "dtype", "ema")
# (older facts lines lack the fields added since: absent is their default)
same_v = lambda k, f: f.get(k) or ("fp32" if k == "dtype" else None)
pairs = 0
for c in facts:
    if not c.get("gradient_checkpointing") or c["oom"] or (c.get("steps") or 0) < 2:
        continue
    for g in facts:
        if g.get("gradient_checkpointing") or g["oom"] or any(same_v(k, g) != same_v(k, c) for k in same):
            continue
        r = json.load(open(g["trace"][:-3] + ".json"))
        a = [a for a in r["advice"] or [] if a["change"] == "activation checkpointing"]
        pairs += 1
        # (a known analyzer bug, over, never under: LoRA's checkpointing what-if keeps the 16-bit
        # copies of the frozen weights the run without it saved for its backward, 647.5 MiB,
        # where checkpointed blocks keep none: its sibling held 62.5 MiB of them. Held to its
        # numbers here, so that a change either way is seen: +6.4 % until fixed)
        want = 0.0644 if (g["trace"], c["trace"]) == ("llama400m_lora8_b4_fit.vt",
                                                      "llama400m_lora8_ckpt_b4_fit.vt") else 0
        err = a and a[0]["predicted_allocated_bytes"] / c["requested_bytes_peak"] - 1
        if not a or abs(err - want) > 0.02 or (want and abs(err - want) > 0.002):
            bad.append("%s: checkpointing predicted %s B of tensors, %s took %s" % (
                g["trace"], a and a[0]["predicted_allocated_bytes"], c["trace"], c["requested_bytes_peak"]))
        if a and r["recognized"]["kv_cache"]["on"] and "no KV cache either" not in a[0]["note"]:
            bad.append("%s: checkpointing's KV cache unsaid: %r" % (g["trace"], a[0]["note"]))
if pairs < 1:
    bad.append("no run beside its checkpointed sibling")
if n < 10:
    bad.append("only %d simulated traces" % n)
print("\n".join(bad) if bad else "ok: %d simulated reports" % n)
sys.exit(1 if bad else 0)
PYEOF2
