#!/bin/sh
# beyond_real.sh — the 17 real H100 runs of programs that are not nanoGPT (BERT, T5, ResNet-50,
# ViT-B/16, Llama with LoRA, GPT-2 with checkpointing, Adafactor, a Lightning Trainer, GPT-2
# medium with accumulation), held to what each run itself said (facts.jsonl): PyTorch's peaks to
# the byte and the OOM verdict; parameters (and buffers), gradients and optimizer state over the
# run equal to the program's own count of its tensors; the model family, optimizer, checkpointing,
# LoRA and compile as the program ran them; B and T as its command line set them; the optimizer
# steps it took. The fit run of each pair predicts a largest micro-batch its OOM sibling does not
# contradict; the OOM run predicts the batch that fit within -5 / +25 % of that run's peak, with
# the optimizer its command line names when no step ran. No report of these tells a nanoGPT value
# or a transformer formula where none applies.
set -u
D="$ROOT/examples/traces/h100-torch2.11-beyond"
. "$ROOT/tests/report_each.sh"
report_each "$D"
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, os, re, subprocess, sys
bad = []
FAM = {"bert": "encoder_transformer", "gpt2": "decoder_transformer",
       "llama": "decoder_transformer", "t5": "encoder_decoder_transformer",
       "resnet": "convolutional", "vit": "vision_transformer"}
CLS = {"bert": "BertForMaskedLM", "gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM",
       "t5": "T5ForConditionalGeneration"}
OPT = {"adamw": "adam", "adafactor": "factored", "sgd": "momentum"}
facts = [json.loads(l) for l in open(sys.argv[1])]


def no_kv_peak(vt):
    """the live tensors' largest over the run less those made under transformers' KV cache
    (cache_utils.py on the stack), from the trace's own records (vramtrace dump)"""
    out = [json.loads(line) for line in subprocess.run(
        [os.environ["VT"], "dump", "--no-resolve", vt], capture_output=True, text=True).stdout.splitlines()]
    kv_code = {d["code_id"] for d in out
               if d["type"] == "code" and "transformers/cache_utils.py" in d.get("filename", "")}
    kv_stack = {d["stack_id"] for d in out if d["type"] == "stack" and
                any(x["code_id"] in kv_code for x in d.get("python", []))}
    live, tot, kv, best = {}, 0, 0, 0
    for d in out:
        if d["type"] in ("alloc", "free") and d.get("api") in ("torchAlloc", "torchFree"):
            if d["type"] == "free" or d.get("failed"):
                size, k = live.pop(d["addr"], (0, 0)) if d["type"] == "free" else (0, 0)
                tot, kv = tot - size, kv - k * size
                continue
            size, k = live.pop(d["addr"], (0, 0))  # (its free not seen: replaced)
            tot, kv = tot - size, kv - k * size
            k = d.get("stack_id") in kv_stack
            live[d["addr"]] = (d["size"], k)
            tot, kv = tot + d["size"], kv + k * d["size"]
            best = max(best, tot - kv)
    return best


runs = {}
for f in facts:
    t = f["trace"][:-3]
    r = json.load(open(t + ".json"))
    text = open(t + ".txt").read()
    runs[t] = (f, r)
    def want(what, got, exp):
        if got != exp:
            bad.append("%s: %s %r, the run's %r" % (t, what, got, exp))
    steps = f.get("iters", f.get("steps", 0))
    # P is what the trace's weights hold: called parameters only where it is the program's count
    # (BERT's 2,048 position ids are a buffer: "109.52 M parameters" where BERT has 109.51 M)
    m = re.search(r"P = ([\d.]+) M (\w+) in the trace's weight tensors", text)
    if m and f.get("params") and m.group(2) == "parameters" and \
            abs(float(m.group(1)) - f["params"] / 1e6) >= 0.005:
        bad.append("%s: P = %s M parameters, the program counts %d" % (t, m.group(1), f["params"]))
    pk = r["peak"]
    want("reserved peak", pk["reserved_bytes"], f["max_memory_reserved"])
    want("requested peak", pk["allocated_bytes"], f["requested_bytes_peak"])
    want("allocated (blocks) peak", pk["allocated_blocks_bytes"], f["max_memory_allocated"])
    want("OOM", r["run"]["oom"], f["oom"])
    cp = r["category_peaks"]
    # parameters and the buffers made with them: BatchNorm's statistics (the program counts
    # them), BERT's position and token-type ids (two int64 rows of T), Llama's rotary inverse
    # frequencies and their original (fp32, half a head's width each)
    buffers = f.get("buffer_bytes") or 0
    if f["family"] == "bert":
        buffers = 2 * 8 * f["seq_len"]
    elif f["family"] == "llama":
        buffers = 2 * 4 * f["hidden"] // f["heads"] // 2
    want("parameters and buffers", cp["parameters"]["bytes"], f["param_bytes"] + buffers)
    if f.get("grad_bytes") is not None:
        want("gradients (largest live)", cp["gradients"]["bytes"], f["grad_bytes"])
    if f.get("optim_state_bytes") is not None and steps > 0:
        want("optimizer state (largest live)", cp["optimizer"]["bytes"], f["optim_state_bytes"])
    rec = r["recognized"]
    want("family", rec["family"], FAM[f["family"]])
    if f["family"] in CLS:
        want("model class", rec["model_class"], CLS[f["family"]])
    want("nanoGPT", rec["nanogpt"], False)
    want("checkpointing", rec["activation_checkpointing"]["on"],
         bool(f.get("gradient_checkpointing")))
    want("LoRA", rec["lora"]["on"], bool(f.get("lora_rank")))
    # the activations' refined formula named is the one applied: with checkpointing, each block's
    # input alone (not the block's own terms, which its refined column does not count)
    act = [l for l in text.splitlines() if l.lstrip().startswith("activations (vs")]
    ckpt_said = "with activation checkpointing (on here): each block keeps only its input" in text
    if f.get("gradient_checkpointing"):
        if not ckpt_said or any("bytes per block" in l and "refined, with checkpointing: 4*N*d" not in l
                                for l in act):
            bad.append("%s: checkpointing on, but the formula named is not the one applied: %s" % (t, act))
    elif ckpt_said or any("with checkpointing" in l for l in act):
        bad.append("%s: a checkpointed block's formula named for a run without checkpointing" % t)
    # a run that completed, told its configuration needs more than it measured: the report says
    # why (its one step made the optimizer's state after its forward; a second step holds it; or
    # its GradScaler may have skipped every step, and a step not skipped makes it)
    pr = r.get("prediction") or {}
    why = " ".join(pr.get("notes") or [])
    if not r.get("oom") and (pr.get("current_peak_bytes") or 0) > 1.02 * r["peak"]["process_bytes"] \
            and "a second step's forward holds that state too" not in why \
            and "made by the first step not skipped" not in why:
        bad.append("%s: needs %s B predicted above its own peak %s B, unexplained" %
                   (t, pr.get("current_peak_bytes"), r["peak"]["process_bytes"]))
    # 8-bit AdamW is offered where its moments are a share of the peak, not for LoRA's adapters
    # (their 12 MiB of state would save 9 MiB beside a 10 GiB peak)
    offers8 = "\n  - 8-bit AdamW\n" in text
    if f.get("lora_rank") and offers8:
        bad.append("%s: 8-bit AdamW offered for a LoRA run's adapters' state" % t)
    if offers8 and rec["optimizer"]["kind"] != "adam":  # (recognized AdamW, never assumed)
        bad.append("%s: 8-bit AdamW offered, its optimizer %s" % (t, rec["optimizer"]["kind"]))
    if not f.get("lora_rank") and f.get("optimizer") == "adamw" and f.get("optim_state_bytes") \
            and r.get("formula_applies") and not offers8:  # (what-ifs of a formula's shape)
        bad.append("%s: an AdamW run whose state is a share of its peak not offered 8-bit AdamW" % t)
    # every one of these recorded its script (format 1.2's FILE records): a key unknown is one no flag
    # of it sets, not one "the trace does not give"
    if "neither the command line nor the trace gives it" in text:
        bad.append("%s: an unknown key said to be missing from a trace that holds its script" % t)
    want("torch.compile", rec["torch_compile"]["on"], bool(f.get("compile")))
    want("micro-batch", r["config"]["batch_size"]["value"], f["batch_size"])
    if f.get("seq_len"):
        want("sequence length", r["config"]["block_size"]["value"], f["seq_len"])
    # autocast's weight copies of a decoder that fit (no LoRA, checkpointing or compile): the
    # refined formula's 2 B per matmul weight to the byte, also where B·T = d makes an input's
    # cast a d x d weight copy's size (GPT-2 medium at B=1: its inputs are no copies)
    ac = (r.get("formula") or {}).get("autocast_copies") or {}
    if not f["oom"] and f["family"] in ("gpt2", "llama") and not f.get("lora_rank") and \
            not f.get("gradient_checkpointing") and not f.get("compile") and \
            f.get("amp") in ("bf16", "fp16"):
        want("autocast copies", ac.get("measured_bytes"), ac.get("refined_bytes"))
    if not f["oom"]:
        want("optimizer steps", r["iterations"], steps)
        # growth across steps: a step is a forward and backward (a micro-step), the optimizer
        # steps among them the program's; no time per step longer than the program's own
        # (its last step's end is not the trace's teardown)
        g, A = r["growth"], f.get("grad_accum") or 1
        want("growth steps", g["steps"], steps * A)
        want("growth optimizer steps", g["optimizer_steps"], steps)
        if f.get("ms_per_iter") and g["seconds_per_step"] * 1000 * A > 2 * f["ms_per_iter"]:
            bad.append("%s: %.3f s per step, the program %.1f ms per optimizer step" %
                       (t, g["seconds_per_step"], f["ms_per_iter"]))
        # the live bytes at the last step's end are a step's, not the program's teardown after
        # it: with a step before the trace's end the parameters (and the optimizer state once a
        # step made it) are alive there
        if g["steps"] > 1:
            want("growth: the step the live bytes are of", g["live_at_step"], g["steps"] - 1)
            want("growth: the step ends compared", g.get("step_ends"), steps * A - 1)
            keep = f["param_bytes"] + (f.get("optim_state_bytes") or 0)
            if g["live_at_last_step_bytes"] < keep:
                bad.append("%s: %d B live at the last step's end, less than the parameters "
                           "and optimizer state (%d B)" % (t, g["live_at_last_step_bytes"], keep))
            if any(p["live_bytes"] < f["param_bytes"] for p in g["series"]):
                bad.append("%s: a point of the growth series below the parameters" % t)
        # a series of tensors: its bytes by phase are tensors' too, so they sum to its live bytes
        # (the CUDA context counted under init before the first tensor had made them 552 MiB more)
        if g.get("basis") == "tensors":
            for p in g["series"]:
                if sum(p["by_phase"].values()) != p["live_bytes"]:
                    bad.append("%s: growth series step %d: phases %d B, live %d B" %
                               (t, p["step"], sum(p["by_phase"].values()), p["live_bytes"]))
    # what-ifs from a forward cut short are lower bounds: the largest micro-batch is a bound
    lower = "so they are lower bounds" in text
    if lower != r["prediction"]["largest_batch_size_at_most"] or \
            lower != ("fits (other settings unchanged, keeping >= 5 % free): at most" in text):
        bad.append("%s: lower-bound what-ifs %s, largest micro-batch %s" %
                   (t, lower, r["prediction"]["largest_batch_size_at_most"]))
    # and each of them says so: a lower bound "may fit", never "fits"; the current configuration
    # needs "at least"
    if lower and (not all(a["predicted_peak_at_least"] for a in r["advice"] or []) or
                  re.search(r"predicted peak [0-9.]+ [KMG]?i?B[^:\n]*: fits", text) or
                  "configuration needs ~" in text):
        bad.append("%s: a lower bound said to fit" % t)
    if not lower and any(a["predicted_peak_at_least"] for a in r["advice"] or []):
        bad.append("%s: a whole prediction marked a lower bound" % t)
    # the loop that ran the steps: lit_train.py's is Lightning's Trainer, the others their own
    want("training loop", rec["training_loop"]["kind"],
         "lightning" if f["program"] == "lit_train.py" else "own")
    # a step that ended before the trace's end is never said not to have (an OOM in a later
    # step), and a run whose only step died in it is not compared step to step
    if "no step end seen before the trace's end" in text and steps > 0:
        bad.append("%s: %d steps, the growth section: %s" % (t, steps, [
            l for l in text.splitlines() if "step" in l and "nothing" in l]))
    # "nothing grows" only where the step ends compared are enough for the rule to find growth
    # (the fit runs' are their steps but the last, checked above); with fewer the report says
    # how many it saw and that it cannot tell
    g = r["growth"]
    ends, need = g.get("step_ends"), g.get("step_ends_needed")
    enough = ends is not None and bool(need) and ends >= need
    lines = [l for l in text.splitlines() if "grow" in l and "step" in l]
    if g["steps"] and (ends is None or not need or g.get("enough_steps") != enough):
        bad.append("%s: step ends %r, %r needed, enough %r" % (t, ends, need, g.get("enough_steps")))
    if "nothing grows" in text and not enough:
        bad.append("%s: %r step ends (%r needed), yet: %s" % (t, ends, need, lines))
    if ends and not enough and "too few step ends to tell growth (%d seen" % ends not in text:
        bad.append("%s: the text does not say its %d step ends are too few: %s" % (t, ends, lines))
    for a in r["advice"] or []:  # a what-if's note is said whole (BatchNorm's made it longer)
        if "(smaller kernels" in a["note"] and not a["note"].endswith("not measured here)"):
            bad.append("%s: a note cut short: %r" % (t, a["note"][-60:]))
    if f["family"] in ("vit", "resnet") and re.search(r"^  vocab_size ", text, re.M):
        bad.append("%s: a vocabulary listed for a vision model" % t)
    # a what-if's sequence length is a transformer's: none for a CNN (null, not 0: until
    # 2026-12-06 a ResNet's advice rows said block_size 0)
    for a in r["advice"] or []:
        if (a["block_size"] is None) != (f["family"] == "resnet"):
            bad.append("%s: %r's block_size %r for a %s" % (t, a["change"], a["block_size"], f["family"]))
    # the page's by-module paragraph names the categories the text's headings name (a ResNet's:
    # no attention)
    page_m = os.path.join(os.environ.get("TESTDIR", "."), t + ".modules.html")
    if os.system("'%s' report --html '%s' '%s.vt' >/dev/null" %
                 (os.environ["VT"], page_m, os.path.join(os.environ["ROOT"],
                  "examples/traces/h100-torch2.11-beyond", t))) == 0:
        sub = re.search(r"id=modules><h2>[^<]*</h2>\s*<p class=sub>([^<]*) live at a moment",
                        open(page_m, encoding="utf-8").read())
        said = set()
        for h in re.findall(r"^Where the activations come from \((.*?) live ", text, re.M):
            said |= set(re.split(r", | and ", h))
        if said and (not sub or set(re.split(r", | and ", sub.group(1).lower())) != said):
            bad.append("%s: the page's by-module paragraph %r, the text's %r" %
                       (t, sub and sub.group(1), sorted(said)))
    else:
        bad.append("%s: report --html failed" % t)
    if f.get("vocab_size") and r.get("vocab_inferred") is not None:
        want("vocabulary (classification)", r["vocab_inferred"], f["vocab_size"])
    kind = rec["optimizer"]["kind"]
    if steps > 0 and f.get("optim_state_bytes"):
        want("optimizer", kind, OPT[f["optimizer"]])
    elif steps > 0:  # no state made: every step skipped by the GradScaler
        want("optimizer (no state made)", kind, "unknown")
        if "GradScaler skipped" not in text or "plain SGD" not in text:
            bad.append("%s: the report does not give both readings of no state" % t)
        # the optimizer steps it counts (gradients freed) may have updated nothing: said where
        # they are counted
        if not rec["optimizer"]["steps_may_be_skipped"] or \
                "the GradScaler may have skipped them" not in text.splitlines()[6]:
            bad.append("%s: its steps are counted as the optimizer's without a word" % t)
        # the page says what the text says, wherever it counts them
        html = os.path.join(os.environ.get("TESTDIR", "."), t + ".html")
        if os.system("'%s' report --html '%s' '%s.vt' >/dev/null" %
                     (os.environ["VT"], html, os.path.join(os.environ["ROOT"],
                      "examples/traces/h100-torch2.11-beyond", t))) == 0:
            page = open(html, encoding="utf-8").read()
            # (the accumulation's "before each of the 2 optimizer steps" counts micro-steps)
            # (nor the optimizer's note: "its 2 optimizer steps made none, with a GradScaler on
            # that may have skipped them all")
            if re.findall(r"(?<!of the )\b\d+ optimizer steps?\b(?! \(gradients freed| made none, "
                          r"with a GradScaler on that may have skipped)", page):
                bad.append("%s: the HTML page counts its steps without a word" % t)
        else:
            bad.append("%s: report --html failed" % t)
    elif rec["optimizer"]["steps_may_be_skipped"]:
        bad.append("%s: steps said maybe skipped, the optimizer made state" % t)
    if r["config_program"] == "nanoGPT":
        bad.append("%s: taken for nanoGPT" % t)
    for k, v in r["config"].items():
        if v["source"] == "default":
            bad.append("%s: %s is nanoGPT's default %s" % (t, k, v["value"]))
    for word in ("nanoGPT", "(assumed)", "GPT.forward"):
        if word in text:
            bad.append("%s: the report says %r" % (t, word))
    transformer = f["family"] in ("bert", "gpt2", "llama", "vit")
    if r["formula_applies"] != transformer:
        bad.append("%s: formula_applies %s for a %s" % (t, r["formula_applies"], f["family"]))
    # a Llama's refined formula is its gated block (its MLP width from the weights), said, and
    # only there: parameters and autocast copies exact, activations exact without LoRA (the
    # frozen layers of LoRA keep less, said)
    if ("formula_block_note" in r) != (f["family"] in ("llama", "gpt2", "bert") and
                                       r["formula_applies"]):
        bad.append("%s: formula_block_note %r" % (t, r.get("formula_block_note")))
    # BERT's own block (post-LayerNorm; the fp32 residual cast for q, k and v each): 40*N*d a
    # block, and dropout's masks (its config's 0.1, not on the command line: the trace shows them,
    # two of N*d bytes a block and the embeddings' one), its masked-LM loss 10*N*V, to a few KiB
    if f["family"] == "bert" and r["formula_applies"] and not f["oom"]:
        fo, inf = r["formula"], r.get("inferred") or {}
        extra = fo["activations"]["measured_bytes"] - fo["activations"]["refined_bytes"]
        if "40*N*d" not in r.get("formula_block_note", "") or not 0 <= extra <= 8192 or \
                inf.get("dropout_masks", {}).get("value") != 1 or \
                abs(fo["logits_loss"]["ratio"] - 1) > 0.001:
            bad.append("%s: activations %d B, the refined %d (dropout's masks: %s); logits %s: %s" %
                       (t, fo["activations"]["measured_bytes"], fo["activations"]["refined_bytes"],
                        inf.get("dropout_masks"), fo["logits_loss"]["ratio"],
                        r.get("formula_block_note")))
    # Hugging Face GPT-2's own block (its NewGELU keeps fp32 steps: 84*N*d), eager 16-bit: the
    # activations of a run that fit are that formula and the KV cache live beside them (said)
    if f["family"] == "gpt2" and r["formula_applies"] and not f["oom"] and \
            not f.get("gradient_checkpointing") and not f.get("compile"):
        fo = r["formula"]["activations"]
        kv = re.search(r"([\d.]+) MiB of it live", r["recognized"]["kv_cache"]["where"])
        extra = fo["measured_bytes"] - fo["refined_bytes"] - (float(kv.group(1)) * 2**20 if kv else 0)
        if "84*N*d" not in r.get("formula_block_note", "") or abs(extra) > 2**20:
            bad.append("%s: activations %d B, the refined %d and the KV cache's %s: %s" %
                       (t, fo["measured_bytes"], fo["refined_bytes"], kv and kv.group(1),
                        r.get("formula_block_note")))
    # checkpointing: at the start of the loss backward each block keeps its input alone (the fp32
    # residual), no block recomputed yet: the activations are the formula's to 16 KiB
    if f.get("gradient_checkpointing") and r["formula_applies"] and not f["oom"]:
        fo = r["formula"]["activations"]
        if not 0 <= fo["measured_bytes"] - fo["refined_bytes"] <= 16384:
            bad.append("%s: checkpointed activations %d B, the refined %d" %
                       (t, fo["measured_bytes"], fo["refined_bytes"]))
    # a gated MLP's width from the weights: only a Llama has one (GPT-2's and BERT's MLPs are two
    # matrices of 4d x d, T5's two of its own width)
    inf = r.get("inferred") or {}
    if ("mlp_width" in inf) != (f["family"] == "llama"):
        bad.append("%s: mlp_width %r" % (t, inf.get("mlp_width")))
    elif "mlp_width" in inf and inf["mlp_width"]["value"] != {1024: 2816, 768: 2048}[f["hidden"]]:
        bad.append("%s: mlp_width %r" % (t, inf["mlp_width"]))
    if f["family"] == "llama" and r["formula_applies"]:
        fo = r["formula"]
        if "gated block" not in r.get("formula_block_note", ""):
            bad.append("%s: not the gated block: %r" % (t, r.get("formula_block_note")))
        ref_p = fo["parameters"]["refined_bytes"]
        if abs(ref_p - f["param_bytes"]) > 0.005 * f["param_bytes"]:
            bad.append("%s: refined parameters %d, the program's %d" % (t, ref_p, f["param_bytes"]))
        ac = fo["autocast_copies"]
        if not f["oom"] and abs(ac["measured_bytes"] - ac["refined_bytes"]) > 0.01 * ac["refined_bytes"]:
            bad.append("%s: autocast copies %s" % (t, ac))
        act = fo["activations"]
        if not f["oom"] and not f.get("lora_rank") and \
                abs(act["measured_bytes"] - act["refined_bytes"]) > 0.01 * act["refined_bytes"]:
            bad.append("%s: activations %s" % (t, act))
        if f.get("lora_rank") and not f["oom"] and \
                "frozen layers keep no input" not in act.get("reason_refined", ""):
            bad.append("%s: LoRA's activations below the formula, unexplained: %s" % (t, act))
    # a micro-batch with k micro-steps per optimizer step holds, at its peak, the gradients of
    # the micro-steps before (every trainable parameter's, the program's own count) beyond the
    # same micro-batch with one, where they are made after the peak (a run given A = 1)
    adv = {a["change"]: a for a in r["advice"] or []}
    acc = r["config"]["gradient_accumulation_steps"]
    for ch, a in adv.items():
        m = re.match(r"micro-batch (\d+) → (\d+), accumulation 1 → \d+$", ch)
        one = m and adv.get("micro-batch %s → %s" % m.groups())
        if not one or acc["source"] != "argument" or f.get("grad_bytes") is None:
            continue
        extra = a["predicted_allocated_bytes"] - one["predicted_allocated_bytes"]
        at_peak = r["categories"]["gradients"]
        if abs(extra - (f["grad_bytes"] - at_peak)) > 0.01 * f["grad_bytes"] + 4096:
            bad.append("%s: %s holds %d B more than %s, the gradients alive are %d B" %
                       (t, ch, extra, one["change"], f["grad_bytes"] - at_peak))
    # an encoder-decoder that died in its first forward: its extrapolation is said to be assumed
    # (the formulas do not apply to it), never stated as what its blocks or its loss keep
    if f["family"] == "t5" and f["oom"]:
        note = [l for l in text.splitlines() if "died in its first forward" in l]
        if not note or not re.search("(blocks|layers) not reached (keep|assumed)", note[0]) or \
                "not measured for this model" not in note[0] or "alike activations" in note[0]:
            bad.append("%s: the extrapolation of its forward: %s" % (t, note))
    # transformers' KV cache, filled in every forward while use_cache is on (Hugging Face turns it
    # off under gradient checkpointing; BERT's encoder and the vision models keep none): as it ran
    # it, its bytes at the moment explained those flame counts under cache_utils.py
    kv = rec["kv_cache"]
    want("KV cache", kv["on"], f["family"] in ("gpt2", "llama", "t5") and
         not f.get("gradient_checkpointing"))
    kv_item = [a for a in r["advice"] if a["change"] == "use_cache=False"]
    if kv["on"]:
        # at the moment the formula comparison and the advice explain: the OOM, or the tensors'
        # (allocated) peak of a run that fit
        at = "oom" if f["oom"] else "tensors"
        fl = subprocess.run([os.environ["VT"], "flame", "--at", at, os.path.join(
            os.environ["ROOT"], "examples/traces/h100-torch2.11-beyond", t + ".vt")],
            capture_output=True, text=True).stdout
        b = sum(int(l.rsplit(" ", 1)[1]) for l in fl.splitlines() if "transformers/cache_utils.py" in l)
        said = ("%.1f MiB of it live" % (b / 1048576.0)) if b else "none of it live"
        if said not in kv["where"]:
            bad.append("%s: KV cache %r, flame --at %s: %d B" % (t, kv["where"], at, b))
        # the tensors at their largest without the cache's, replayed here from the trace's own
        # records (PyTorch's tensors, those made under cache_utils.py apart): the calibration's
        nokv = no_kv_peak(os.path.join(os.environ["ROOT"], "examples/traces/h100-torch2.11-beyond",
                                       t + ".vt"))
        cal = r["prediction"]["calibration"]["tensors_without_kv_cache_bytes"]
        if cal != nokv:
            bad.append("%s: tensors without the KV cache at most %d B, the trace's records %d" %
                       (t, cal, nokv))
        # use_cache=False listed with its prediction: below the configuration's own by at least
        # the cache's bytes then (more: the allocator's cache and a cut forward's rest scale too)
        # and by at most three times them, unless the run held more without its cache at another
        # moment: then its tensors are that (Llama 400M LoRA: 7.15 GiB predicted, 7.38 GiB held
        # at once with no cache tensor live, until 2026-11-30)
        # Of the cache's bytes, those whose copies the attention kept for its backward in place
        # of the keys and values they copied (freed right after) are not saved: the calibration's
        # kv_cache is the rest (t5small_b8_fit: 24 MiB of 48)
        cur = r["prediction"]["current_peak_bytes"]
        bs = sum(r["prediction"]["calibration"]["kv_cache_oom" if f["oom"] else "kv_cache"].values())
        if bs > b:
            bad.append("%s: %d B of the KV cache saved, %d B of it live" % (t, bs, b))
        elif bs and len(kv_item) != 1:
            bad.append("%s: %d MiB of KV cache, %d use_cache=False what-ifs" % (t, b >> 20, len(kv_item)))
        elif bs and kv_item[0]["predicted_allocated_bytes"] < nokv:
            bad.append("%s: use_cache=False predicts %d B of tensors, the run held %d B without "
                       "its cache" % (t, kv_item[0]["predicted_allocated_bytes"], nokv))
        elif bs and kv_item[0]["predicted_allocated_bytes"] > nokv and \
                not (bs <= cur - kv_item[0]["predicted_peak_bytes"] <= 3 * bs):
            bad.append("%s: use_cache=False saves %d B of a %d B cache (%d B of it savable)" %
                       (t, cur - kv_item[0]["predicted_peak_bytes"], b, bs))
    elif kv_item:
        bad.append("%s: use_cache=False advised with no KV cache" % t)
    # the tensors at their largest in an optimizer step hold no forward's activations: a
    # closure's zero_grad after its forward (Lightning's) is no step's moment (lit_gpt2_b4_fit's
    # checkpointing what-if would be 7.60 GiB "in the optimizer step" for its 5.56)
    st = (r["prediction"].get("calibration") or {}).get("optimizer_step") or {}
    if st.get("activations", 0) + st.get("logits_loss", 0) > (1 << 20):
        bad.append("%s: the optimizer step's tensors hold %d B of activations and logits" %
                   (t, st.get("activations", 0) + st.get("logits_loss", 0)))
    # an OOM's moment is no optimizer step's peak after the forward's tensors were freed
    if f["oom"] and "this peak, in the optimizer, came after" in text:
        bad.append("%s: an OOM said to be an optimizer step's peak" % t)
    # a forward cut short by the OOM measured part of one: no verdict on the basic multiplier
    # ("overcounts") and no loss said to have kept its bytes
    if f["oom"] and f.get("oom_phase") == "forward":
        mu = r["formula"]["activation_multiplier"] if r["formula_applies"] else None
        if mu and not mu["forward_unfinished"]:
            bad.append("%s: its multiplier not marked as from an unfinished forward" % t)
        for l in text.splitlines():
            if "24 overcounts: measured" in l or re.search(r"cross-entropy over V=\d+ kept", l):
                bad.append("%s: a partial forward judged as whole: %s" % (t, l.strip()))
            if "MiB per sample of the micro-batch" in l and "cut the forward short" not in l:
                bad.append("%s: a partial forward's bytes per sample as the whole's: %s" %
                           (t, l.strip()))
    elif r["formula_applies"] and r["formula"]["activation_multiplier"]["forward_unfinished"]:
        bad.append("%s: a whole forward marked unfinished" % t)
    if f["family"] in ("resnet", "t5") and ("formula comparison" in text or
                                            "formula: not applied" not in text):
        bad.append("%s: a transformer formula for a %s" % (t, f["family"]))
    # every formula row marked as more than 25 % off says why, against each formula it is off
    lines = text.splitlines()
    if "formula comparison" in text:
        i0 = next(i for i, l in enumerate(lines) if l.startswith("formula comparison"))
        for l in lines[i0:]:
            if l.startswith("advice") or l.startswith("OOM"):
                break
            if not l.startswith("  ") or not l.rstrip().endswith("*") or "(vs" in l:
                continue
            cat, cols = l[2:22].strip(), l[22:].split()
            if len(cols) != 9:
                continue
            measured = cols[0] != "0"
            said = lambda which: any(x.strip().startswith("%s (vs %s)" % (cat, which))
                                     for x in lines)
            for which, amount, ratio in (("basic", cols[2], cols[6]), ("refined", cols[4], cols[7])):
                off = (ratio != "-" and abs(float(ratio) - 1) > 0.25) or \
                      (ratio == "-" and amount == "0" and measured)
                # in neither formula: one reason does for both
                neither = cols[2] == cols[4] == "0" and (said("basic") or said("refined"))
                if off and not said(which) and not neither:
                    bad.append("%s: %s off the %s formula, unexplained" % (t, cat, which))
    if f["family"] == "vit" and ("token id" in text or "sequence length" in text):
        bad.append("%s: token ids or a sequence length in a ViT's report" % t)
    # AdamW only as a stated assumption, or as one of the kinds the script constructs (no step
    # ran to tell which: vision_train.py picks SGD for a ResNet by its model's name)
    if f["family"] == "resnet" and ("token" in text or any(
            "AdamW" in l and "assume AdamW" not in l and
            "the script constructs several kinds (" not in l for l in text.splitlines())):
        bad.append("%s: tokens, or AdamW other than as a stated assumption, in a CNN's report" % t)
    # a site's native op is its largest part's: ResNet's activations are convolutions' outputs
    # (5.8 GiB) more than batch norm's (4.8 GiB), BERT's the Linear layers' (addmm)
    top = {}
    for x in r["top_sites"]:  # most bytes first: each category's largest site
        top.setdefault(x["category"], x)
    want_op = {"resnet": "cudnn_convolution", "bert": "addmm"}.get(f["family"])
    if want_op and want_op not in top["activations"]["native"]:
        bad.append("%s: activations via %s" % (t, top["activations"]["native"]))
    # the advice spells changes with the program's own flags, used or not on its command line
    prog = open(os.path.join(os.environ["ROOT"], f["command"].split(" -- python ")[1].split()[0])).read()
    for a in r["advice"]:
        for w in (a.get("command_line") or "").split():
            if w.startswith("--") and ("'%s'" % w) not in prog and ('"%s"' % w) not in prog:
                bad.append("%s: advice spells %s, not a flag of the program" % (t, w))
        if "checkpointing" in a["change"] and "--gradient-checkpointing" in prog and \
                a.get("command_line") != "--gradient-checkpointing":
            bad.append("%s: checkpointing spelled %r" % (t, a.get("command_line")))
    if f["oom"] and steps > 0 and f["oom_phase"] == "forward" and \
            "made at the first step, was live too" not in text:
        bad.append("%s: ran out in step %d's forward, the first step's state not named" %
                   (t, steps + 1))
    if f["oom"] and "--optimizer" in f["command"] and r["prediction"]["optimizer_state_assumed_adamw"]:
        bad.append("%s: AdamW assumed, the command line names %s" % (t, f["optimizer"]))
    if "lit_train.py" in f["command"]:  # the forward in optimizer.step(closure) is no state
        at = r["categories"]
        if at["optimizer"] > f["optim_state_bytes"] or at["activations"] < 2 ** 30:
            bad.append("%s: optimizer %d B, activations %d B at the peak (state %d B)" %
                       (t, at["optimizer"], at["activations"], f["optim_state_bytes"]))
# each fit / OOM pair of a workload: the predictions against the sibling run
for t, (f, r) in runs.items():
    if f["oom"]:
        continue
    base = t.rsplit("_", 2)[0]
    for u, (g, s) in runs.items():
        if not u.startswith(base + "_") or not g["oom"] or u == t:
            continue
        largest = (r["prediction"] or {}).get("largest_batch_size")
        if largest is None or not f["batch_size"] <= largest < g["batch_size"]:
            bad.append("%s: largest micro-batch %s, but B=%d fit and %s ran out at B=%d" %
                       (t, largest, f["batch_size"], u, g["batch_size"]))
        rec = [a for a in s["advice"] if a.get("recommended")]
        if not rec or rec[0]["batch_size"] > f["batch_size"] and \
                (s["prediction"] or {}).get("largest_batch_size", 0) < f["batch_size"]:
            bad.append("%s: recommends %s though B=%d fit (%s)" %
                       (u, rec[0]["change"] if rec else None, f["batch_size"], t))
        # the OOM run's what-if at the batch that fit, against that run's measured peak: it fits,
        # and is no lower and at most 25 % higher (an estimate from a run cut short)
        for a in s["advice"]:
            if a.get("batch_size") != f["batch_size"]:
                continue
            ratio = a["predicted_peak_bytes"] / r["peak"]["process_bytes"]
            if not a["fits"] or not 0.95 <= ratio <= 1.25:
                bad.append("%s: %s predicted %.2f GiB (fits %s), %s measured %.2f GiB" %
                           (u, a["change"], a["predicted_peak_bytes"] / 2 ** 30, a["fits"], t,
                            r["peak"]["process_bytes"] / 2 ** 30))
        if (s["prediction"] or {}).get("largest_batch_size", 0) < f["batch_size"] and \
                f["max_memory_reserved"] < 0.85 * 12 * 2 ** 30:
            bad.append("%s: largest micro-batch %s, but B=%d fit with room (%s)" %
                       (u, s["prediction"]["largest_batch_size"], f["batch_size"], t))
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PYEOF
# T5's forward cut at 73 % of its blocks' weights: its activations extrapolated to the whole
# forward land near what the B=8 run kept (3.42 GiB; from what was alive alone, 2.74: -20 %)
"$VT" predict --json --from "$D/t5small_b32_oom.vt" --batch_size=8 >t5p.json || { echo "predict T5 failed"; exit 1; }
python3 - t5p.json t5small_b8_fit.json <<'PYEOF' || exit 1
import json, sys
p, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
got, want = p["by_category"]["activations"], r["formula"]["activations"]["measured_bytes"]
assert 0.9 * want <= got <= 1.15 * want, ("T5 B=8 activations", got, want)
PYEOF
# every run out of memory predicts its sibling that fit (the same arguments, another micro-batch)
# within 5 % below and 6 % above the tensors that run measured (max_memory_allocated); a forward
# cut short is extrapolated over the weights it had still to use (ResNet-50 B=320 -> 128 had been
# -13.3 %, cut at 20 % of its weights; T5-small B=32 -> 8 +9.2 %, its logits at a causal LM's
# 12 B). Above by 6 % since its autocast copies are extrapolated too: ResNet-50's 9.9 MiB alive
# at the failure, 48.7 MiB for its whole forward, where B=128's run held 44.7 at its peak (48.6
# at most), took it from +4.5 % to +5.2 %, the rest over as before (its optimizer's state assumed,
# 195.4 MiB, where its SGD kept none; its activations x1.22, a CNN's later layers keeping less)
python3 - "$VT" "$D" <<'PYEOF' || exit 1
import json, os, subprocess, sys
vt, d = sys.argv[1], sys.argv[2]
facts = [json.loads(l) for l in open(os.path.join(d, "facts.jsonl"))]
key = lambda f: json.dumps({k: v for k, v in f["args"].items() if k != "batch_size"},
                           sort_keys=True) + f["program"]
bad, n = [], 0
for a in facts:
    for b in facts:
        if not a["oom"] or b["oom"] or key(a) != key(b) or a["batch_size"] <= b["batch_size"]:
            continue
        out = subprocess.run([vt, "predict", "--from", os.path.join(d, a["trace"]), "--batch-size",
                              str(b["batch_size"]), "--card", "80GiB", "--json"],
                             capture_output=True, text=True, check=True).stdout
        got, want = json.loads(out)["tensor_bytes"], b["max_memory_allocated"]
        n += 1
        if got < 0.95 * want or got > 1.06 * want:
            bad.append("%s -> B=%d: %.1f MiB of tensors, %s measured %.1f (%+.1f %%)" %
                       (a["trace"], b["batch_size"], got / 2 ** 20, b["trace"], want / 2 ** 20,
                        100.0 * (got - want) / want))
if n < 7 or bad:
    print("\n".join(bad) or "only %d pairs" % n)
    sys.exit(1)
PYEOF
