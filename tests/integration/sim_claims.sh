#!/bin/sh
# sim_claims.sh — sentences of `vramtrace report` on the committed SIMULATED traces
# (examples/traces/sim) held to each program's own facts (facts.jsonl; sim_reports.sh holds the
# rest): the optimizer a run that took no step is said to have (a script's two of one kind, its
# several kinds with their lines, its --optimizer default), the growth heading's steps against
# the program's micro-steps, the refined block's words against the masks it counts, an fp32
# evaluation's weights, the documents' AdamW state of a Llama, the bf16 what-if through the
# script's own --amp flag, and a peak in an evaluation pass with a batch of its own (said with
# its flag; a smaller micro-batch predicted at that pass's peak, held to the run at it), a change
# of the accumulation in the script's own terms (its flag, else the code change), a distillation
# run's logits/loss said of both models' logits, an optimizer state cut by an OOM said as a part,
# an autocast run's precision, use_cache=False through the script's switch, a dtype not known
# never stated of the weights.
set -u
D="$ROOT/examples/traces/sim"
[ -f "$D/facts.jsonl" ] || { echo "no $D/facts.jsonl"; exit 1; }
. "$ROOT/tests/report_each.sh"
report_each "$D"
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
from pairs import predict
D = os.path.dirname(sys.argv[1])
ALL = [json.loads(line) for line in open(sys.argv[1])]
bad, n = [], 0
for f in ALL:
    t = f["trace"][:-3]
    r = json.load(open(t + ".json"))
    text = open(t + ".txt").read()
    rec = r["recognized"]
    n += 1
    # the documents' AdamW state counts the model's own matrices (a Llama has no position table
    # and matrices of its own): within 0.1 % of the state a Llama trained with AdamW measured
    # (its norms' weights apart), 2.50 for 2.79 GiB before 2026-11-30
    fo = r.get("formula") or {}
    if f["family"] == "llama" and f["optimizer"] == "adamw" and not f["lora_rank"] and \
            f["optim_state_bytes"] and fo.get("optimizer", {}).get("document_bytes") and \
            abs(f["optim_state_bytes"] / (8 * f["trainable_params"]) - 1) < 0.01:  # fp32 states
        if abs(fo["optimizer"]["document_bytes"] / f["optim_state_bytes"] - 1) > 0.001:
            bad.append("%s: the documents' AdamW state %d B, the program's %d" %
                       (t, fo["optimizer"]["document_bytes"], f["optim_state_bytes"]))
    # an fp32 run of a script with its own mixed-precision flag: the bf16 what-if changes that
    # flag, not the code (sim_hf.py / sim_vision.py: --amp, choices bf16 / fp16 / none)
    if "--amp none" in f["command"] and f["program"] in ("sim_hf.py", "sim_vision.py"):
        m = re.search(r"^  - bf16 mixed precision \(autocast\)\n(?:      .*\n)*?      change: (.*)$", text, re.M)
        if m and m.group(1) != "--amp bf16":
            bad.append("%s: the bf16 what-if's change %r, the script's flag --amp bf16" % (t, m.group(1)))
    # an evaluation in fp32 (no autocast): its weights' dtype follows from its compute, said
    # once (never "the trace does not give their dtype" beside "dtype float32 inferred")
    if "does not give their dtype" in text and re.search(r"^  dtype +float32 +inferred", text, re.M):
        bad.append("%s: the weights' dtype said unknown beside float32 inferred" % t)
    # a dtype the configuration says unknown is not stated as a fact of the weights either (a
    # U-Net out of memory in its first fp32 forward, no autocast, no gradient: "fp32 parameters"
    # beside its dtype row's "unknown", until 2026-12-06)
    if re.search(r"^  dtype +unknown +unknown", text, re.M) and \
            re.search(r"^    parameters: .*(?:fp32|16-bit) parameters", text, re.M):
        bad.append("%s: the weights' dtype stated beside the dtype row's unknown" % t)
    # masks the trace shows, counted by the refined formula: its words say so too (BERT's block
    # printed without them beside a figure that counts them, until 2026-11-30)
    if "the refined formula counts them (2·B·T·d bytes per block)" in text and any(
            "+ 2*N*d" not in x for x in re.findall(r"\d+\*N\*d \+ 16\*N[^b]*bytes per block", text)):
        bad.append("%s: dropout masks counted, the refined block's formula without them" % t)
    # the growth heading's counts of forward-backward steps are the program's own: its
    # micro-steps (optimizer steps times the accumulation) of a run that completed them, said
    # beside the split's steps where those differ (an EMA update, a Trainer's bookkeeping)
    if not f["oom"] and f["program"] in ("sim_hf.py", "sim_trainer.py", "sim_vision.py") and \
            f.get("steps") and r["backward_passes"]:
        micro = f["steps"] * f["grad_accum"]
        head = re.search(r"^Growth across steps \((.*)$", text, re.M)
        head = head.group(1) if head else ""
        own = re.search(r"its own: (\d+) backward pass(?:es)?, (\d+) optimizer steps?\)", head)
        fb = re.match(r"(\d+) steps?(?: of forward and backward, (\d+) ending in an optimizer step)?",
                      head)
        if own:
            got = (int(own.group(1)), int(own.group(2)))
        elif fb and "as its allocations split" not in head:
            got = (int(fb.group(1)), int(fb.group(2) or fb.group(1)))
        else:
            got = None
        if got != (micro, f["steps"]):
            bad.append("%s: growth heading %r, the program ran %d micro-steps, %d optimizer steps"
                       % (t, head[:120], micro, f["steps"]))
    # no step ran and a script that constructs two of one kind (sim_gan.py: the generator's and
    # the discriminator's AdamW): that kind, said as two, never "the script's only optimizer"
    if f["oom"] and not f.get("steps") and f["program"] == "sim_gan.py":
        o = rec["optimizer"]
        if o["kind"] != "adam" or "the script's only optimizer" in text or \
                "the first of the script's 2 optimizers, all of this kind" not in text:
            bad.append("%s: no step ran, two AdamW in the script: %s" % (t, o))
    # no step ran and the script constructs three kinds (sim_vision.py: SGD, AdamW, Adafactor,
    # picked by the model's name): the three said with their lines, never AdamW simply assumed
    if f["oom"] and not f.get("steps") and f["program"] == "sim_vision.py" and \
            "--optimizer" not in f["command"]:
        if "the script constructs several kinds (SGD( line" not in text or "assume AdamW" in text:
            bad.append("%s: no step ran, three kinds in the script: %s" % (t, rec["optimizer"]))
    # no step ran, no --optimizer on the command line, and the script's argparse defaults it
    # (sim_hf.py: default="adamw"): that one, said as the default, never an assumption (an
    # evaluation trains nothing: none is named for it, sim_frozen.sh)
    if f["oom"] and not f.get("steps") and f["program"] == "sim_hf.py" and \
            "--optimizer" not in f["command"] and not f.get("eval_only") and \
            rec["optimizer"]["state_bytes_per_trainable_param"] is None and not rec["optimizer"]["class"]:
        o = rec["optimizer"]
        if o["kind"] != "adam" or '--optimizer, default="adamw"' not in o["where"] or \
                "assume AdamW" in text:
            bad.append("%s: no step ran, --optimizer's default adamw: %s" % (t, o))
    # a validation pass after each step (evaluate(), no_grad) at a batch larger than the
    # micro-batch holds the tensors' peak: said, with the flag that sets its batch, and a
    # smaller micro-batch predicted at that pass's peak (GPT-2 trained at 4 and at 2, evaluating
    # 16: 9.96 GiB of tensors both; the B=4 run's what-if for 2 said 6.24 GiB "fits" until
    # 2026-11-30: now within 1 % of the B=2 run)
    if f.get("eval_batch_size", 0) > f["batch_size"] and not f["oom"]:
        notes = (r.get("prediction") or {}).get("notes") or []
        # (the script's flag for it: sim_hf.py's --eval-batch-size, sim_lightning.py's
        # --val_batch_size, read since 2026-12-05: "val" had not been taken for "eval")
        ef = re.search(r'add_argument\("(--(?:eval|val)[-_]batch[-_]size)"',
                       open(os.path.join(os.environ["ROOT"], "examples", "sim", f["program"])).read())
        want = "in an evaluation pass with a batch of its own (%s %d on the command line)" \
            % (ef and ef.group(1), f["eval_batch_size"])
        if not any(want in x for x in notes):
            bad.append("%s: a peak in its evaluation pass not said: %s" % (t, notes))
        for g in ALL:
            if g.get("eval_batch_size") == f["eval_batch_size"] and g["batch_size"] < f["batch_size"] \
                    and (g["program"], g["model"], g.get("amp"), g.get("optimizer")) == \
                    (f["program"], f["model"], f.get("amp"), f.get("optimizer")):  # (the same run but B)
                if abs(g["max_memory_allocated"] / f["max_memory_allocated"] - 1) > 0.01:
                    bad.append("%s: %s's evaluation peak moved with the micro-batch" % (t, g["trace"]))
                p, why = predict(os.path.join(D, f["trace"]), g["batch_size"], 1)
                err = p["tensor_bytes"] / g["max_memory_allocated"] - 1 if p else None
                if err is None or abs(err) > 0.01:
                    bad.append("%s: B=%d predicted %s, %s measured %d (%s)" %
                               (t, g["batch_size"], p and p["tensor_bytes"], g["trace"],
                                g["max_memory_allocated"], why))
    # the program's kind names no loop the run did not have: a script of its own loop under
    # accelerate that spells its flags as the Trainer's (run_clm_no_trainer.py's) had been called
    # "Hugging Face Trainer arguments" (sim_accelerate.py, until 2026-12-05)
    loop = (rec.get("training_loop") or {}).get("kind")
    if "Trainer" in r["config_program"] and loop != "hf_trainer":
        bad.append("%s: configuration of %r, the loop %s" % (t, r["config_program"], loop))
    # the configuration's counts account for every key the JSON has: the rows shown, and how
    # many more are not (T5's heading said "2 inferred, 0 unknown" where JSON had 6 and 3)
    m = re.search(r"^configuration \(.*?\): (\d+) from arguments/flags, (\d+) from files .*?, "
                  r"(\d+) inferred from the trace(?:, (\d+) nanoGPT defaults)?, (\d+) unknown"
                  r"(?:; (\d+) more not shown here)?", text, re.M)
    if not m or sum(int(x or 0) for x in m.groups()) != len(r["config"]):
        bad.append("%s: the configuration's heading %r counts other than JSON's %d keys" %
                   (t, m and m.group(0), len(r["config"])))
    # a what-if that changes the accumulation says how, in the script's own terms: its flag
    # where its argparse defines one (--grad-accum, --accumulate_grad_batches) or a Trainer's arguments, else the
    # micro-batch's flag and the code change, naming the script (sim_gan.py has no accumulation: no change line until 2026-11-30)
    src = open(os.path.join(os.environ["ROOT"], "examples", "sim", f["program"])).read()
    flag = re.search(r'add_argument\("(--grad[-_]accum[a-z_-]*|--gradient[-_]accumulation[a-z_-]*|'
                     r'--accumulate[-_]grad[-_]batches)"', src)  # (Lightning's spelling)
    bflag = re.search(r'add_argument\("(--batch[-_]size|--per_device_train_batch_size)"', src)
    bflag = bflag.group(1) if bflag else "--batch-size"
    for a in r.get("advice") or []:
        if "accumulation" not in a["change"] or a["change"].startswith("none"):
            continue
        cl = (a["command_line"] + " " + a["code_change"]).strip()  # (the change: line's)
        if "gradient_accumulation_steps=" in cl:
            continue  # a Trainer's: its training arguments' call
        cc = a["code_change"]
        if flag and flag.group(1) not in cl or not flag and \
                not cc.startswith("gradients accumulated over") and \
                "%s defines no flag for it" % f["program"] not in cc or bflag not in a["command_line"]:
            bad.append("%s: %r said with the command line %r (the script's flag: %s)" %
                       (t, a["change"], cl, flag and flag.group(1)))
    # a frozen teacher's logits are among the logits/loss bytes of a distillation run: the loss
    # over the vocabulary is said of both models' logits, never of cross-entropy alone (KD runs
    # said "cross-entropy over V=50257 kept 20.0*B*T*V bytes" until 2026-11-30)
    if f.get("teacher") and re.search(r"\bover V=\d+ kept", text) and (
            "cross-entropy over V=" in text or "the loss on both models' logits" not in text):
        bad.append("%s: a distillation run's logits/loss said of cross-entropy" % t)
    # out of memory in the first optimizer step, while its state was being made: the part made
    # is said as a part, never as the optimizer's state per parameter (Llama 400M: "7.04 B of
    # state per trainable parameter" of AdamW's 8, until 2026-11-30)
    o = rec["optimizer"]
    if f["oom"] and (r.get("oom") or {}).get("phase") == "optimizer" and r["iterations"] == 1:
        if o["state_bytes_per_trainable_param"] is not None or not o.get("state_cut") or \
                "made when the out-of-memory error stopped the first optimizer step" not in o["where"]:
            bad.append("%s: a state cut by the OOM said as measured: %s" % (t, o))
        # and every what-if of the same model and optimizer holds the whole state beside the
        # weights and their gradients (the part made had let checkpointing go 0.17 GiB under)
        live = r["oom"]["live_by_category"]
        floor = live["parameters"] + live["gradients"] + 8 * f["trainable_params"]
        for a in r.get("advice") or []:
            if not re.match(r"(model width|transformer blocks|8-bit)", a["change"]) and \
                    a["predicted_allocated_bytes"] < floor:
                bad.append("%s: %r predicts %d B of tensors, under the weights, gradients and "
                           "whole AdamW state's %d" % (t, a["change"], a["predicted_allocated_bytes"], floor))
    elif o.get("state_cut"):
        bad.append("%s: a state said cut by an OOM: %s" % (t, o))
    # a run under autocast says its precision: the 16-bit copies of weights it made over the run
    # say so even where the moment explained came after them (the U-Net B=1's peak late in its
    # backward, the ViT probes': "dtype unknown" beside 229 MiB of copies, until 2026-11-30)
    dt = (r["config"].get("dtype") or {}).get("value")
    if f.get("amp") in ("bf16", "fp16") and \
            dt not in ({"bf16": "bfloat16", "fp16": "float16"}[f["amp"]], "16-bit"):
        bad.append("%s: autocast %s, the configuration's dtype %r" % (t, f["amp"], dt))
    # ... and one without, that completed optimizer steps of fp32 weights, says float32 (a GAN's
    # said "dtype unknown" beside "fp32 parameters" until 2026-12-01)
    if f.get("amp") == "none" and t.startswith("gan_") and not f.get("oom") and dt != "float32":
        bad.append("%s: a GAN in fp32, the configuration's dtype %r" % (t, dt))
    # "no 16-bit copy of a weight over the run" never beside autocast copies counted over it (a
    # LoRA run's 4 KiB position ids .float(), half an adapter's size, until 2026-12-01)
    where = (r["config"].get("dtype") or {}).get("where") or ""
    ac = ((r.get("category_peaks") or {}).get("autocast_copies") or {}).get("bytes") or 0
    if ac and "no 16-bit copy of a weight over the run" in where:
        bad.append("%s: %d B of autocast copies beside: %s" % (t, ac, where))
    # use_cache=False through the script's own switch (sim_hf.py: --no-cache; said as a code
    # change until 2026-11-30), and an evaluation is not told it would recompute tokens: its
    # loss never reads the cache (only generation does)
    for a in r.get("advice") or []:
        if a["change"] != "use_cache=False":
            continue
        rec_src = [json.loads(x) for x in subprocess.run(
            [os.environ["VT"], "dump", os.path.join(D, f["trace"])], capture_output=True,
            text=True).stdout.splitlines() if '"kind":"arg"' in x]
        has = bool(rec_src) and '"--no-cache", action="store_true"' in rec_src[0].get("contents", "")
        if (a["command_line"] == "--no-cache") != has:  # (the script as the trace recorded it)
            bad.append("%s: use_cache=False through %r, the recorded script %s --no-cache" %
                       (t, a["command_line"], "has" if has else "lacks"))
        if f.get("eval_only") and "a forward's loss never reads them" not in a["note"]:
            bad.append("%s: an evaluation's use_cache=False note %r" % (t, a["note"]))
print("\n".join(bad) if bad else "ok: %d simulated runs" % n)
sys.exit(1 if bad or n < 50 else 0)
PYEOF
