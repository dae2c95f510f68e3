#!/bin/sh
# oom_caught.sh — a run that caught an out-of-memory error and went on: a SIMULATED Hugging Face
# Trainer (examples/sim/sim_trainer.py --auto-find-batch-size) of GPT-2 medium at a batch of 4
# on a 12 GiB card runs out of memory in its first forward, and the Trainer's
# auto_find_batch_size trains again at 2. It had been reported "ok" with no word of the error,
# its failed attempt's peak taken as the configuration's whole need ("needs ~14.11 GiB",
# predictions as if the forward had completed). Now the report says the program went on after
# the error it caught, which is the run's OOM still (its configuration failed: the advice of a
# run out of memory), though the run did not end in it, also where its allocator later recovered
# from a failure of its own; an evaluation's error the program skipped is not (the training's
# configuration did not fail), and the advice's predictions from the pass it cut short are lower
# bounds; the same run without auto_find_batch_size ends in the error (no error caught), and a
# run that fits catches none. tests/python/oom_retry.py is a loop of its own that does the same.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, model, card, extra arguments
    n=$1 m=$2 card=$3
    shift 3
    timeout 300 "$VT" run --card "$card" -o "$n.vt" -- python3 "$ROOT/examples/sim/sim_trainer.py" \
        --model "$m" "$@" </dev/null >"$n.out" 2>&1
    "$VT" report --no-color "$n.vt" >"$n.txt" && "$VT" report --json "$n.vt" >"$n.json" &&
        "$VT" report --html "$n.html" "$n.vt" >/dev/null || fail "$n: report failed"
}
run caught gpt2-medium 12GiB --auto-find-batch-size
grep -q "OOM: yes, caught (a request for 786.0 MiB failed; the program went on after it), complete" caught.out ||
    fail "caught: run's summary: $(grep -o 'OOM: [^,]*,[^,]*' caught.out)"
run ended gpt2-medium 12GiB
run fits gpt2 12GiB --auto-find-batch-size
# on 10 and 11 GiB the retry at 2 reaches the card as well, and its allocator goes on by
# releasing its cache once (oom_recovered 1, counted apart); on 10 GiB a request as large as the
# one PyTorch raised the error for succeeds in the retry before its backward, which is the
# program going on, not another recovery; each run caught one error
# on 14 GiB the same: its steps at 2 after the error kept the card's headroom, where the
# predictions from the attempt at 4 alone had said "largest micro-batch that fits: 1"
run caught14 gpt2-medium 14GiB --auto-find-batch-size
# the batch it went on with, run on its own for two steps on the same card (the script as
# committed, its per_device_train_batch_size that batch): the program's own counters say whether
# that batch keeps the headroom there (its attempt at 4 had left 13.23 GiB of segments its steps
# at 2 mostly never used; the fragmentation floor's cache at 2 had said "too tight", "largest
# micro-batch that fits: 1")
b14=$(sed -n 's/^VRAMTRACE_TORCH_STATS //p' caught14.out | python3 -c "import json,sys; print(json.load(sys.stdin)['batch_size'])")
S="$ROOT/examples/sim"
sed -e "s|^HERE = .*|HERE = \"$S\"|" -e 's|^sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))$|&\nsys.path.insert(0, HERE)|' \
    -e "s/per_device_train_batch_size=4,/per_device_train_batch_size=$b14,/" "$S/sim_trainer.py" >trainer_at.py
grep -q "per_device_train_batch_size=$b14," trainer_at.py && grep -q "sys.path.insert(0, HERE)" trainer_at.py ||
    fail "the variant of sim_trainer.py was not made (its lines changed?)"
timeout 300 "$VT" run --card 14GiB -o at14.vt -- python3 trainer_at.py --model gpt2-medium --max-steps 2 \
    </dev/null >at14.out 2>&1 || fail "at14: the batch $b14 alone did not train"
run caught10 gpt2-medium 10GiB --auto-find-batch-size
run caught11 gpt2-medium 11GiB --auto-find-batch-size
# two steps after the retry: its completion is of B=2, never "keep the current configuration"
run caught2 gpt2-medium 12GiB --auto-find-batch-size --max-steps 2
# a loop of its own that catches an error in its first backward at 14 and trains at 4: the error
# is the run's OOM still (the configuration failed; the advice of a run out of memory), one it
# went on from; its steps after it are counted (2, each of one backward pass), and the largest
# micro-batch said to fit trains on this card
retry() { # name, micro-batches to try
    BS=$2 timeout 300 "$VT" run --card "${CARD:-12GiB}" -o "$1.vt" -- python3 "$ROOT/tests/python/oom_retry.py" \
        </dev/null >"$1.out" 2>&1 || fail "$1: run failed"
    report_both "$1"
}
retry r14 14,4
export EVAL=64
retry ev 4
unset EVAL
grep -q "^evaluation OOM at 64 skipped$" ev.out && grep -q "^after the evaluation, trained at 4$" ev.out || fail "ev: $(cat ev.out)"
grep -q "OOM: 1 caught, the program went on (the first a request for 6.14 GiB), complete" ev.out ||
    fail "ev: run's summary: $(grep -o 'OOM: [^)]*)' ev.out)"
"$VT" report --html ev.html ev.vt >/dev/null || fail "ev: report --html"
grep -q "^OOM at 14$" r14.out && grep -q "^trained at 4$" r14.out || fail "r14: $(cat r14.out)"
grep -q "OOM: yes, caught (a request for 2.69 GiB failed; the program went on after it), complete" r14.out ||
    fail "r14: run's summary: $(grep -o 'OOM: [^)]*)' r14.out)"
grep -q "^  oom      .*during backward; it is the OOM below: the run did not end in it; it went on at micro-batch 4 (" r14.txt &&
    grep -q "^  events .*, 2 optimizer steps," r14.txt &&
    grep -q "^  accumulation steps A  *1 " r14.txt || fail "r14: $(grep '^  oom\|^  events\|accumulation steps' r14.txt)"
# (its evaluate(), which these runs never reach, qualifies the line: "the training step only: ...")
largest=$(sed -n 's/^  largest micro-batch that fits (other settings unchanged, keeping >= 5 % free[^)]*): \([0-9]*\)$/\1/p' r14.txt)
[ -n "$largest" ] && [ "$largest" -lt 14 ] || fail "r14: largest micro-batch '$largest'"
retry "at$largest" "$largest"
grep -q "^trained at $largest$" "at$largest.out" || fail "the largest micro-batch said to fit, $largest, did not: $(cat "at$largest.out")"
# the same, then a failure its allocator recovers from (it releases its cache) and one more step:
# the caught error stays the run's OOM (it had been replaced by the recovered one, the run then
# told its 14 "fits, tightly", largest 13)
export FRAG=1
retry frag 14,4
unset FRAG
grep -q "^after the retry, trained at 4$" frag.out || fail "frag: $(cat frag.out)"
grep -q "^  largest micro-batch that fits (other settings unchanged, keeping >= 5 % free[^)]*): $largest$" frag.txt &&
    ! grep -q "it fits, tightly\|keep the current configuration" frag.txt ||
    fail "frag: $(grep 'largest micro-batch\|fits, tightly\|keep the current' frag.txt)"
python3 -c "import json,sys; j = json.load(open('frag.json')); sys.exit(not (j['oom_recovered'] >= 1 and j['run']['oom'] and j['oom_caught']['oom_is_caught']))" ||
    fail "frag: not the caught error as the run's OOM beside a recovered one"
# a second error caught (12, then trained at 4), or an evaluation's skipped after training at 4:
# the first stays the run's OOM, with the configuration the trace's first forward shows (the
# second's had been described beside 14's configuration, "largest 9", which runs out; the
# evaluation's had erased it: "fits, tightly", largest 13)
retry two 14,12,4
export EVAL=64
retry evr 14,4
unset EVAL
for n in two evr; do
    grep -q "^  oom      the program went on after 2 out-of-memory errors it caught: .*; the OOM below is the first of them: the run did not end in it; it went on at micro-batch 4 (" $n.txt &&
        grep -q "^OOM: 2.69 GiB requested at .* during backward" $n.txt &&
        grep -q "^  largest micro-batch that fits (other settings unchanged, keeping >= 5 % free[^)]*): $largest$" $n.txt ||
        fail "$n: $(grep '^  oom\|^OOM\|largest micro' $n.txt)"
done
# 14 fails, then 9 fails too and the program gives up (the trace ends in the second error): the
# run's OOM is 9's, described by what was live when it failed (its snapshot had been the live set
# as the trace ended, the program's tensors freed: "needs ~5.99 GiB", nothing but the context and
# the cache live at the OOM), and its configuration is the batch that failed, 9 (the first
# forward's 14 beside 9's live set had said "largest micro-batch that fits: 61", then 13)
retry r9 14,9
grep -q "^OOM at 14$" r9.out && grep -q "^OOM at 9$" r9.out || fail "r9: $(cat r9.out)"
grep -q "^  micro-batch B  *9  *inferred  B = 9: " r9.txt || fail "r9: $(grep 'micro-batch B ' r9.txt)"
l9=$(sed -n 's/^  largest micro-batch that fits (other settings unchanged, keeping >= 5 % free[^)]*): \([0-9]*\)$/\1/p' r9.txt)
[ -n "$l9" ] && [ "$l9" -lt 9 ] || fail "r9: largest micro-batch '$l9' where 9 ran out"
[ "$l9" = "$largest" ] || { retry "at$l9" "$l9"; grep -q "^trained at $l9$" "at$l9.out" || fail "r9: $l9 does not train"; }
# the same with no Python frame on the stacks (--stacks native / none): the retry's token batch
# is the oldest tensor made after the caught error that position ids follow (it had been the
# first forward's 14, "largest micro-batch that fits: 11", and predict --from "micro-batch 7, 2
# accumulation steps", where 9 had run out)
for st in native none; do
    BS=14,9 timeout 300 "$VT" run --stacks $st --card 12GiB -o "r9$st.vt" -- python3 "$ROOT/tests/python/oom_retry.py" \
        </dev/null >"r9$st.out" 2>&1 || fail "r9$st: run failed"
    grep -q "^OOM at 9$" "r9$st.out" || fail "r9$st: $(cat "r9$st.out")"
    "$VT" report --no-color "r9$st.vt" >"r9$st.txt" && "$VT" predict --from "r9$st.vt" >"r9$st.pred" || fail "r9$st: report"
    grep -q "^  micro-batch B  *9  *inferred  B = 9: " "r9$st.txt" || fail "r9$st: $(grep 'micro-batch B ' "r9$st.txt")"
    for f in "r9$st.txt" "r9$st.pred"; do
        l=$(sed -n 's/^  largest micro-batch that fits (.*): \([0-9]*\)$/\1/p' "$f")
        [ -z "$l" ] || [ "$l" -lt 9 ] || fail "$f: largest micro-batch '$l' where 9 ran out"
    done
done
# a retry at a shorter sequence, the same batch (14 at T = 1024 ran out, 14 at T = 512 trained):
# it went on with 7168 tokens, 512 a sample, not "at micro-batch 7"; and where 40 at 512 ran
# out too, the configuration is 40 at T = 512 (it had been "B = 20 ... the batch of the attempt
# that ran out of memory")
TS=1024,512 timeout 300 "$VT" run --card 12GiB -o seq.vt -- python3 "$ROOT/tests/python/oom_retry.py" </dev/null >seq.out 2>&1 ||
    fail "seq: run failed"
B=40 TS=1024,512 timeout 300 "$VT" run --card 12GiB -o seqf.vt -- python3 "$ROOT/tests/python/oom_retry.py" </dev/null >seqf.out 2>&1 ||
    fail "seqf: run failed"
grep -q "^trained at T 512$" seq.out && grep -q "^OOM at T 512$" seqf.out || fail "seq: $(cat seq.out seqf.out)"
"$VT" report --no-color seq.vt >seq.txt && "$VT" report --no-color seqf.vt >seqf.txt || fail "seq: report"
grep -q "^  oom .*; it went on with a batch of 7168 tokens (512 a sample, by its position ids) for 2 optimizer steps" seq.txt ||
    fail "seq: $(grep '^  oom' seq.txt)"
grep -q "^  micro-batch B  *40  *inferred  B = 40: B·T = 20480 over T = 512, " seqf.txt &&
    grep -q "^  tokens per sample T  *512  *inferred" seqf.txt || fail "seqf: $(grep 'micro-batch B \|per sample T' seqf.txt)"
python3 -c "
import json, sys
a, b = (json.load(open(n + '.json'))['oom']['live_by_category'] for n in ('r9', 'r14'))
sys.exit(not (a['parameters'] == b['parameters'] > 0 and a['activations'] > 0))" ||
    fail "r9: the model's weights or activations not live at its OOM"
grep -q "^formula comparison at the out-of-memory error (N = B\*T = 9216 tokens" r9.txt ||
    fail "r9: $(grep '^formula comparison' r9.txt)"
# --fail-if-oom: a trace that ends in its error, not one the program went on from
"$VT" report --fail-if-oom r14.vt >/dev/null || fail "r14: --fail-if-oom exit $?"
"$VT" report --fail-if-oom ended.vt >/dev/null
[ $? = 1 ] || fail "ended: --fail-if-oom did not exit 1"
# diff against the run at the batch it went on with: not 'after 2 optimizer steps', in JSON neither
"$VT" diff --json r14.vt "at$largest.vt" >diff.json 2>&1 || fail "diff --json: exit $?"
python3 -c "import json,sys; o = json.load(open('diff.json'))['out_of_memory']['a']; sys.exit(not (o['went_on'] and o['optimizer_steps'] == 0))" ||
    fail "diff --json: $(python3 -c "import json; print(json.load(open('diff.json'))['out_of_memory'])")"
"$VT" diff r14.vt "at$largest.vt" >diff.txt 2>&1 || fail "diff: exit $?"
grep -q "^(A ran out of memory at .* after 0 optimizer steps, and the program caught it and went on" diff.txt ||
    fail "diff: $(grep 'ran out of memory' diff.txt)"
"$VT" dump --no-resolve caught.vt | grep -m1 '"type":"oom"' >caught.dump || fail "caught: no OOM record"
# predict --from the trace and from its report's JSON: the same lower bounds, the same words,
# never "the run died" (it went on)
for f in ev.vt ev.json; do
    "$VT" predict --from "$f" >"pred_$f.txt" 2>&1 || fail "predict --from $f"
    grep -q "^  (a lower bound: an out-of-memory error the program caught" "pred_$f.txt" &&
        ! grep -q "the run died" "pred_$f.txt" || fail "predict --from $f: $(grep -i 'lower bound\|none recommended' "pred_$f.txt")"
done
python3 - <<'PY' || fail "see above"
import json, re
def load(n):
    return json.load(open(n + ".json")), open(n + ".txt").read(), open(n + ".out").read()
def truth(out):
    return json.loads(out.split("VRAMTRACE_TORCH_STATS ", 1)[1].splitlines()[0])
bad = []
j, text, out = load("caught")
t = truth(out)
# the program's own account: an OOM, then training at half the batch
if not ("trying batch size 2" in out and t["batch_size"] == 2 and t["steps"] == 1 and not t["oom"]):
    bad.append("caught: the program did not go on at 2 (%s)" % {k: t[k] for k in ("batch_size", "steps", "oom")})
oc = j["oom_caught"]
if not oc or oc["count"] != 1 or not oc["peak_in_its_pass"] or oc["first_phase"] != "forward":
    bad.append("caught: oom_caught %r" % oc)
if not (j["run"]["oom"] and oc and oc["oom_is_caught"] and j["oom"]["phase"] == "forward"):
    bad.append("caught: not the run's OOM, one it went on from (run.oom %r)" % j["run"]["oom"])
line = re.search(r"^  oom      (.*)$", text, re.M)
if not line or not line.group(1).startswith("the program went on after 1 out-of-memory error it caught: the first at ") \
        or "the allocated peak below came in the same pass, before the error cut it short" not in line.group(1) \
        or "; it is the OOM below: the run did not end in it; it went on at micro-batch %d (" % t["batch_size"] \
        not in line.group(1):
    bad.append("caught: oom line %r" % (line and line.group(1)))
page = open("caught.html").read()
if line and "<p class=note>out of memory: " + line.group(1) + "</p>" not in page:
    bad.append("caught: the page does not say what the text's oom line says")
if "The current configuration needs at least " not in open("ev.html").read():
    bad.append("ev: the page's advice is not of lower bounds")
if "\n  oom      " in open("fits.txt").read() or "out of memory: the program went on" in open("fits.html").read():
    bad.append("fits: said to have caught an error")
j, text, out = load("ev")
if "current configuration needs at least " not in text or "which the program caught and went on from" not in text \
        or j["run"]["oom"] or not j["oom_caught"] or j["oom_caught"]["first_phase"] != "eval":
    bad.append("ev: the evaluation's error as the run's OOM, or no lower bounds")
j, text, out = load("caught")
if oc and oc["first_requested_bytes"] != int(re.search(r'"requested":(\d+)', open("caught.dump").read()).group(1)):
    bad.append("caught: requested %r" % oc["first_requested_bytes"])
for n, recovered in (("caught10", 1), ("caught11", 1)):  # (the run's OOM: the caught one)
    j, text, out = load(n)
    t = truth(out)
    if not ("trying batch size 2" in out and t["batch_size"] == 2 and t["steps"] == 1):
        bad.append("%s: the program did not go on at 2" % n)
    if not j["oom_caught"] or j["oom_caught"]["count"] != 1 or not j["oom_caught"]["oom_is_caught"] or j["oom_recovered"] != recovered:
        bad.append("%s: oom_caught %r, run.oom %r, oom_recovered %r" % (n, j["oom_caught"], j["run"]["oom"], j["oom_recovered"]))
# what the program went on with, as its own account says (the batch it trained at, its steps):
# read from the trace, named in the oom line, never said not to fit, the largest at least it
def went_on(n, b, steps, card):
    j, text, out = load(n)
    w = (j["oom_caught"] or {}).get("went_on") or {}
    if w.get("batch_size") != b or w.get("optimizer_steps") != steps:
        bad.append("%s: went_on %r, the program trained at %d for %d steps" % (n, w, b, steps))
    elif not 0 < w["tensors_peak_bytes"] <= w["reserved_peak_bytes"] <= w["process_peak_bytes"] <= card:
        bad.append("%s: went_on's peaks %r on a card of %d" % (n, w, card))
    if not re.search(r"^  oom      .*; it went on at micro-batch %d \(\d+ tokens\) for %d optimizer steps?: its "
                     r"tensors peaked at " % (b, steps), text, re.M):
        bad.append("%s: the oom line does not name micro-batch %d" % (n, b))
    items = re.findall(r"^  (?:recommended:|-) micro-batch \d+ → %d\b.*\n      predicted peak [^\n]*: ([^\n]*)" % b,
                       text, re.M)
    if any(v.startswith("does not fit") for v in items):
        bad.append("%s: micro-batch %d, which the program trained with, said not to fit: %r" % (n, b, items))
    m = re.search(r"^  largest micro-batch that fits \(other settings unchanged, keeping >= 5 % free[^)]*\): (\d+)$",
                  text, re.M)
    # (where its steps kept the headroom: a retry that held the failed attempt's cache, or reached
    # the card, trained with less free)
    if w.get("process_peak_bytes", card) <= card * 0.95 and (not m or int(m.group(1)) < b):
        bad.append("%s: largest micro-batch %r below the %d it trained at" % (n, m and m.group(1), b))
    return j, text, out
for n, card in (("caught", 12), ("caught14", 14), ("caught10", 10), ("caught11", 11), ("caught2", 12)):
    t = truth(open(n + ".out").read())
    went_on(n, t["batch_size"], t["steps"], card << 30)
for n in ("r14", "two", "evr", "frag"):
    out = open(n + ".out").read()
    b = int(re.search(r"^trained at (\d+)$", out, re.M).group(1))
    # two steps at it, one more after the fill or the evaluation
    went_on(n, b, 2 + ("after the " in out), 12 << 30)
# on 14 GiB: where the batch it went on with kept the card's headroom in a run of its own (its
# own max_memory_reserved over two steps), it fits: the largest at least it, its what-if not
# "too tight" (as the run at it measured)
j, text, out = load("caught14")
b, a = truth(out)["batch_size"], truth(open("at14.out").read())
if a["steps"] == 2 and not a["oom"] and a["max_memory_reserved"] <= 0.95 * (14 << 30):
    m = re.search(r"^  largest micro-batch that fits \(other settings unchanged, keeping >= 5 % free[^)]*\): (\d+)$",
                  text, re.M)
    items = re.findall(r"^  (?:recommended:|-) micro-batch \d+ → %d\b.*\n      predicted peak [^\n]*: ([^\n]*)" % b,
                       text, re.M)
    if not m or int(m.group(1)) < b or not items or any(not v.startswith("fits") for v in items):
        bad.append("caught14: %d keeps the headroom on its own (%.2f GiB reserved), told largest %r, %r"
                   % (b, a["max_memory_reserved"] / 2**30, m and m.group(1), items))
else:
    bad.append("caught14: the run at %d alone: %r" % (b, {k: a[k] for k in ("steps", "oom", "max_memory_reserved")}))
j, text, out = load("caught2")
if truth(out)["steps"] != 2 or "keep the current configuration" in text or "it fits, tightly" in text:
    bad.append("caught2: the completion of B=2 said of the configuration that failed")
j = json.load(open("r14.json"))
if not j["run"]["oom"] or not j["oom_caught"]["oom_is_caught"] or j["oom"]["phase"] != "backward":
    bad.append("r14: run.oom %r, oom_caught %r" % (j["run"]["oom"], j["oom_caught"]))
j, text, out = load("ended")
if not truth(out)["oom"] or j["oom_caught"] is not None or not j["run"]["oom"] or "\n  oom      " in text:
    bad.append("ended: oom_caught %r, run.oom %r" % (j["oom_caught"], j["run"]["oom"]))
j, text, out = load("fits")
if truth(out)["oom"] or j["oom_caught"] is not None or "\n  oom      " in text:
    bad.append("fits: oom_caught %r" % j["oom_caught"])
for b in bad:
    print("FAIL:", b)
raise SystemExit(1 if bad else 0)
PY
