#!/bin/sh
# two_terms.sh — two backward passes of ONE batch per optimizer step (a GAN critic's errD_real and
# errD_fake: tests/python/two_terms.py, the fake samples made under no_grad from noise copied
# between the passes) are no gradient accumulation: they had been "A = 2: 2 backward passes
# before each of the 3 optimizer steps", with "same effective batch 512" (twice the program's
# batch) and predict's "2 accumulation steps" (WGAN's critic: "keeping the effective batch 768:
# micro-batch 256, 3 accumulation steps" for its batch of 384). Now, against the program's own
# counts: A is not told as the passes' count where the batch copied before the step's first pass
# lived through both and no input of its size was copied between them, and no sentence names an
# effective batch of twice its batch; its --mode micro runs (2 micro-batches, each copied after the
# last's backward, freed or kept to the step with an output of their size, or all copied before
# the first pass) are still A = 2, and so is a committed Hugging Face
# Trainer trace's (every micro-batch copied before the step's first pass).
# A program that sets its accumulation from its batch itself (--nbs 64: YOLOv5's max(round(nbs /
# batch), 1), here with a floor of 2) needs no code change for a smaller --batch: it accumulates
# its own count at it. The what-ifs had said "--batch 8 (code change besides: gradients
# accumulated over 8 micro-batches ...; two_terms.py defines no flag for it)", and "micro-batch
# 16 → 8" at "effective batch 32 instead of 64" (the run's 4 kept, which the program never runs);
# now each says the program's own count round(64 / B'), which a run at the recommended batch
# prints, in the report and in predict, and no code change.
set -u
. "$ROOT/tests/sim_env.sh"
for m in terms micro micro_held micro_prefetch; do
    timeout 120 "$VT" run -q --card 3GiB -o $m.vt -- python3 "$ROOT/tests/python/two_terms.py" \
        --mode $m </dev/null >$m.out 2>&1 || fail "$m: run failed: $(tail -n 3 $m.out)"
    report_both $m
    "$VT" predict --from $m.json >$m.predict 2>&1 || fail "$m: predict --from failed"
done
# the nominal batch: a run that completed with less than 5 % free (a what-if recommended), and one
# out of memory in its first forward (no step seen: its accumulation read from the script)
for m in nt:790MiB:16:1024 no:1GiB:24:4096; do
    set -- $(echo "$m" | tr : ' ')
    timeout 120 "$VT" run -q --card "$2" -o "$1.vt" -- python3 "$ROOT/tests/python/two_terms.py" \
        --mode micro --nbs 64 --batch "$3" --rows "$4" </dev/null >"$1.out" 2>&1
    [ -f "$1.vt" ] || fail "$1: run failed: $(tail -n 3 "$1.out")"
    report_both "$1"
    "$VT" predict --from "$1.json" >"$1.predict" 2>&1 || fail "$1: predict --from failed"
done
rb=$(python3 -c 'import json; print(next(i["batch_size"] for i in json.load(open("nt.json"))["advice"] if i["recommended"]))') ||
    fail "nt: no option recommended"
timeout 120 "$VT" run -q -o nr.vt -- python3 "$ROOT/tests/python/two_terms.py" --mode micro --nbs 64 \
    --batch "$rb" --rows 1024 </dev/null >nr.out 2>&1 || fail "the run at --batch $rb failed: $(tail -n 3 nr.out)"
# a GAN's steps (the critic's of 2 passes, the generator's of 1): `fit` says the steps it saw and
# that no one count of passes came before each (it had said "no trial's trace showed an optimizer
# step" of trials whose traces each showed 6)
timeout 300 "$VT" fit --card 3GiB --max-b 512 --json --dir fg -- python3 "$ROOT/tests/python/two_terms.py" \
    --mode gan --batch "{B=256}" </dev/null >fg.json 2>fg.err || fail "fit --mode gan failed: $(tail -n 3 fg.err)"
# an accumulation the program sets from its batch (YOLOv5's round(nbs / batch)): `fit`'s trials
# accumulate 4 and 2; its note had said "the trials accumulated 4 micro-steps per optimizer step,
# as the command does" (the first trial's count) of both
timeout 300 "$VT" fit --card 3GiB --max-b 512 --json --dir fn -- python3 "$ROOT/tests/python/two_terms.py" \
    --mode micro --nbs 1024 --batch "{B=256}" </dev/null >fn.json 2>fn.err || fail "fit --nbs failed: $(tail -n 3 fn.err)"
"$VT" report --json "$ROOT/examples/traces/sim/trainer_gpt2_fit.vt" >trainer.json ||
    fail "trainer_gpt2_fit: report failed"
python3 - <<'PY' || fail "see above"
import json
bad = []
for m in ("terms", "micro", "micro_held", "micro_prefetch"):
    r = json.load(open(m + ".json"))
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(m + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] == 3, t  # (the case: it ran through)
    a = r["config"]["gradient_accumulation_steps"]["value"]
    text = open(m + ".txt").read() + open(m + ".predict").read()
    twice = "effective batch %d" % (2 * t["batch_size"])
    if m == "terms":
        if a not in (None, t["gradient_accumulation_steps"]):
            bad.append("terms: A = %s, the program accumulates %d (its %d passes read one batch)" % (
                a, t["gradient_accumulation_steps"], t["backward_passes_per_step"]))
        for words in (twice, "%d accumulation steps" % t["backward_passes_per_step"]):
            if words in text:
                bad.append("terms: says %r" % words)
    elif a != t["gradient_accumulation_steps"]:
        bad.append("%s: A = %s, the program accumulates %d" % (m, a, t["gradient_accumulation_steps"]))
# Hugging Face's Trainer copies every micro-batch of a step before its first pass: accumulation
# still (the committed sim_trainer.py trace: TrainingArguments(gradient_accumulation_steps=4))
r = json.load(open("trainer.json"))
if (r["inferred"].get("gradient_accumulation_steps") or {}).get("value") != 4:
    bad.append("trainer_gpt2_fit: inferred A %s, its script's 4" % r["inferred"].get("gradient_accumulation_steps"))
# the fit of the GAN: its trials' steps are told, and the note does not say none was seen
f = json.load(open("fg.json"))
note = f["accumulation_note"] or ""
steps = f["trials"][0]["optimizer_steps"]
t = json.loads(next(l for l in open("fg/b256/output.log") if l.startswith("VRAMTRACE_TORCH_STATS ")).split(" ", 1)[1])
if steps != t["optimizer_steps"]:
    bad.append("fit gan: a trial's optimizer_steps %s, the program's %d" % (steps, t["optimizer_steps"]))
if "no trial's trace showed an optimizer step" in note or "showed %d optimizer steps" % steps not in note:
    bad.append("fit gan: accumulation note %r (its first trial showed %d optimizer steps)" % (note, steps))
# the fit of the batch-set accumulation: the note gives the trials' own counts
import glob
f = json.load(open("fn.json"))
own = sorted({json.loads(next(l for l in open(g) if l.startswith("VRAMTRACE_TORCH_STATS ")).split(" ", 1)[1])
              ["gradient_accumulation_steps"] for g in glob.glob("fn/b*/output.log")})
note = f["accumulation_note"] or ""
if len(own) < 2:
    bad.append("fit nbs: the trials' own counts %s (the case needs two)" % own)
elif "%d to %d micro-steps" % (own[0], own[-1]) not in note:
    bad.append("fit nbs: accumulation note %r, the trials accumulated %s" % (note, own))
# the nominal batch: the accumulation is the program's own at every what-if's batch, and no code
# change is said; the recommended one's count is what a run at its batch accumulates
def truth(name):
    return json.loads(next(l for l in open(name) if l.startswith("VRAMTRACE_TORCH_STATS ")).split(" ", 1)[1])
def own(b):
    return max(round(64 / b), 2)
for m in ("nt", "no"):
    r, t = json.load(open(m + ".json")), truth(m + ".out")
    text = open(m + ".txt").read() + open(m + ".predict").read()
    if "code change" in text:
        bad.append("%s: says a code change: %s" % (m, [l for l in text.splitlines() if "code change" in l][:2]))
    a = r["config"]["gradient_accumulation_steps"]["value"]
    if a != t["gradient_accumulation_steps"]:
        bad.append("%s: A = %s, the program accumulates %d" % (m, a, t["gradient_accumulation_steps"]))
    seen = 0
    for it in r["advice"]:
        b = it["batch_size"]
        if b is None or b == t["batch_size"] or it["evaluation_batch"] is not None:
            continue
        seen += 1
        # the text's change: line says the program's own count; JSON's command_line is the
        # batch flag alone, no code change (the program makes the count itself)
        words = "round(64 / %d), 2) = %d micro-batches" % (b, own(b))
        said = [l for l in text.splitlines() if l.strip().startswith("change: " + it["command_line"] + " (")]
        if it["gradient_accumulation_steps"] != own(b) or it["code_change"] or \
                not it["command_line"].startswith("--") or not any(words in l for l in said):
            bad.append("%s: what-if at %d: A %s, %r, %r (the program's own: %d)" % (
                m, b, it["gradient_accumulation_steps"], it["command_line"], it["code_change"], own(b)))
    if not seen:
        bad.append("%s: no what-if of a smaller batch (the case needs one)" % m)
rec = next(i for i in json.load(open("nt.json"))["advice"] if i["recommended"])
tr = truth("nr.out")
if rec["gradient_accumulation_steps"] != tr["gradient_accumulation_steps"] or \
        "round(64 / %d)" % rec["batch_size"] not in open("nt.predict").read():
    bad.append("nt: recommended %d with A %s (predict: %r); the program at --batch %d accumulates %d" % (
        rec["batch_size"], rec["gradient_accumulation_steps"],
        [l for l in open("nt.predict") if l.startswith("recommended")], rec["batch_size"],
        tr["gradient_accumulation_steps"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "two_terms: ok (two backward passes of one batch are no accumulation; two micro-batches are)"
