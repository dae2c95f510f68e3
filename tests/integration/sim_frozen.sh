#!/bin/sh
# sim_frozen.sh — runs with frozen weights, on the committed SIMULATED traces of a
# linear probe (examples/traces/sim/vit_probe_*: a ViT-B/16 whose weights are frozen but its
# head's), against the program's own counts (facts.jsonl). A run that fit: the transformer
# formula, which trains every weight and keeps what their gradients need, is not applied, and
# says why with the program's trainable and total weights; no checkpointing offered (there is
# nothing saved to drop); the largest micro-batch it predicts held to its sibling that ran it.
# A run out of memory in its first forward, which freed each weight's 16-bit copy after use
# (autocast keeps one only of a weight that needs a gradient): the copies it made are the
# program's count; no activations live at the failure (its tensors were in use: temporaries),
# no formula (before: "needs ~225.57 GiB", "largest micro-batch 131"), lower bounds whose
# largest is at least the sibling that fit. A run whose what-ifs are lower bounds says what its
# step needs as one. A frozen teacher beside its student: the vocabulary read, and, out of memory
# in the student's first forward, the student told from the teacher by the copies each kept. And
# the converse on every other simulated OOM in a first forward: a model that trains keeps its
# copies, and is never said to be frozen (the student after its teacher neither). An evaluation
# out of memory in its first forward (no_grad): forwards only, no training predicted.
set -u
D="$ROOT/examples/traces/sim"
python3 - "$D" <<'PYEOF' || exit 1
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests"))
from pairs import argv_of, predict
D = sys.argv[1]
ALL = [json.loads(l) for l in open(os.path.join(D, "facts.jsonl"))]
bad, n, held, lbn, kd, ev = [], 0, 0, 0, 0, 0


def report(f, *args):
    out = subprocess.run([os.environ["VT"], "report", "--no-color", *args,
                          os.path.join(D, f["trace"])], capture_output=True, text=True)
    return out.stdout


FROZEN_OOM = "which freed each weight's 16-bit copy after use"
for f in ALL:
    r = json.loads(report(f, "--json"))
    text = report(f)
    pr = r.get("prediction") or {}
    copies = r.get("first_forward_weight_copies") or {}
    # a run whose what-ifs are lower bounds says what its step needs as one (the U-Net at B=32
    # was told "the step needs 12.13 GiB of tensors")
    cause = text.split("cause:")[-1].split("\n\n")[0] if f["oom"] else ""
    if pr.get("largest_batch_size_at_most") and "the step needs " in cause:
        lbn += 1
        if "the step needs at least " not in cause:
            bad.append("%s: the cause's need not said as a lower bound" % f["trace"])
    # a frozen teacher beside the student (its embedding, 1024 wide, first among the weights;
    # the student's norms 768): the vocabulary read all the same, its logits and their casts
    # logits, not activations (before: none, 1.53 GiB of casts "temporaries" at B=4). Out of
    # memory in the student's first forward, after the teacher's: the student is the model
    # trained, told by its 16-bit copies kept where the teacher's were freed (before: the
    # teacher's L 24 and d 1024, B=2 predicted 16.14 GiB for 6.50)
    # an evaluation out of memory in its first forward (no_grad: every block ran, its copies kept
    # for the autocast region, next to nothing kept for a backward): forwards only, no training
    # formula, no optimizer state; an upper bound at least the batch its sibling ran (before:
    # "what was trained", AdamW assumed, "needs ~19.94 GiB", "largest micro-batch 12" where 18
    # ran; then "at most 16" with the cache's floor counted in the lower bounds); its tensors
    # per sample are not what a forward saves for a backward (before: "the whole forward saves
    # more for the backward")
    if f.get("eval_only") and f["oom"]:
        ev += 1
        ran = max(g["batch_size"] for g in ALL if g.get("eval_only") and not g["oom"] and
                  argv_of(g) == argv_of(f))
        if "a forward under no_grad" not in (r.get("formula_note") or "") or \
                "forwards only" not in text or "AdamW" in text or "for the backward" in text or \
                "with no backward a forward keeps a tensor only until" not in text or \
                not (pr.get("run_shape") or {}).get("no_training") or \
                not pr.get("largest_batch_size_at_most") or (pr.get("largest_batch_size") or 0) < ran:
            bad.append("%s: an evaluation's OOM: %r, largest %s (at most %s), B=%d ran" %
                       (f["trace"], r.get("formula_note"), pr.get("largest_batch_size"),
                        pr.get("largest_batch_size_at_most"), ran))
    # a run of forwards only (an evaluation, fit or not) is told nothing true only of training
    # (before: "training loop", dtype evidence "...: fp32 training")
    if f.get("eval_only"):
        for words in ("training loop", "fp32 training", "for the backward"):
            if words in text:
                bad.append("%s: forwards only, yet %r" % (f["trace"], words))
    if f.get("teacher"):
        kd += 1
        inf = r["inferred"]
        if r["vocab_inferred"] != f["vocab_size"]:
            bad.append("%s: vocabulary %s, the program's %d" % (f["trace"], r["vocab_inferred"],
                                                             f["vocab_size"]))
        if f["oom"] and ((inf.get("n_layer") or {}).get("value") != f["layers"] or
                         (inf.get("n_embd") or {}).get("value") != f["hidden"] or
                         "16-bit copies kept" not in inf["n_layer"]["where"] or
                         (inf.get("frozen_blocks") or {}).get("value") is None):
            bad.append("%s: the student not told from the teacher at the failure: %s" %
                       (f["trace"], {k: inf.get(k) for k in ("n_layer", "n_embd", "frozen_blocks")}))
    if not f.get("freeze_backbone"):
        if f["oom"] and f.get("oom_phase") == "forward" and FROZEN_OOM in text:
            bad.append("%s: trains its weights, said frozen" % f["trace"])
        continue
    n += 1
    share = "only %.2f M of its %.2f M weights train" % (f["trainable_params"] / 1e6, f["params"] / 1e6)
    if not f["oom"]:
        # (the weights that do not train are frozen ones, or buffers: the trace cannot tell)
        if r["formula_applies"] or share not in (r.get("formula_note") or "") or \
                "the rest frozen weights or buffers" not in r["formula_note"]:
            bad.append("%s: formula %s: %r" % (f["trace"], r["formula_applies"], r.get("formula_note")))
        if any("checkpointing" in a["change"] for a in r["advice"]):
            bad.append("%s: checkpointing offered to a frozen model" % f["trace"])
        # (its sibling at the largest it predicts, where one ran: within -2 / +5 %, and it fit)
        sib = [g for g in ALL if g.get("freeze_backbone") and not g["oom"] and
               g["batch_size"] == pr.get("largest_batch_size") and g is not f]
        for g in sib:
            p, why = predict(os.path.join(D, f["trace"]), g["batch_size"], 1)
            err = p["tensor_bytes"] / g["max_memory_allocated"] - 1 if p else None
            if err is None or not -0.02 <= err <= 0.05:
                bad.append("%s: B=%d predicted %s, %s allocated %d (%s)" %
                           (f["trace"], g["batch_size"], p and p["tensor_bytes"], g["trace"],
                            g["max_memory_allocated"], why))
        held += len(sib)
        continue
    if copies.get("bytes_made") != f["autocast_copy_bytes"] or \
            not copies.get("bytes_freed_in_forward") or copies.get("made_after_the_last_freed", 3) > 2:
        bad.append("%s: copies %s, the program made %d" % (f["trace"], copies, f["autocast_copy_bytes"]))
    live = r["oom"]["live_by_category"]
    if live.get("activations") or not live.get("temporaries"):
        bad.append("%s: at the failure activations %s, temporaries %s" %
                   (f["trace"], live.get("activations"), live.get("temporaries")))
    if r["formula_applies"] or FROZEN_OOM not in (r.get("formula_note") or ""):
        bad.append("%s: formula %s: %r" % (f["trace"], r["formula_applies"], r.get("formula_note")))
    fits = [g["batch_size"] for g in ALL if g.get("freeze_backbone") and not g["oom"]]
    lb = pr.get("largest_batch_size")
    if not pr.get("largest_batch_size_at_most") or not lb or lb < max(fits):
        bad.append("%s: largest %s (at most: %s), yet B=%d fit" %
                   (f["trace"], lb, pr.get("largest_batch_size_at_most"), max(fits)))
    # how far its forward had got: the copies it made (each freed) against its weights
    used = "after about %.0f %% of its blocks' weights had been used" % (
        200.0 * f["autocast_copy_bytes"] / f["param_bytes"])
    if used not in text or "with no gradient and no optimizer state" not in text:
        bad.append("%s: %r or no state counted not said" % (f["trace"], used))
if n < 3 or not held or not lbn or kd < 5 or not ev:
    bad.append("only %d frozen-backbone traces, %d held to a sibling at their largest, %d lower "
               "bounds' causes, %d teachers, %d evaluations" % (n, held, lbn, kd, ev))
print("\n".join(bad) if bad else "ok: %d frozen-backbone traces" % n)
sys.exit(1 if bad else 0)
PYEOF
