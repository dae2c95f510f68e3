#!/bin/sh
# enc_no_head.sh — a sentence encoder with no output layer over its vocabulary (tests/python/
# enc_pairs.py, SIMULATED SimCSE: BERT-base's shape, each sentence twice in one forward, a bs x bs
# similarity matrix for its loss) out of memory in its first forward, where no class or tensor
# tells whether the model ends in such a layer. A language model's B·T×V logits had been assumed
# and added to its need and to every what-if: "needs ~24.60 GiB to 29.38 GiB" (its run on a
# larger card took 14), "micro-batch 1024 → 512 ... does not fit (3.96 GiB over)" where the same
# program at that size runs (the fit run below), "recommended: 1024 → 256", "largest 338", and
# predict's "largest single tensor ... fp32 logits for cross-entropy (4*B*T*V)". Now, against the
# program's own runs: no logits are counted, the what-ifs are lower bounds and none recommended;
# the need's lower bound is under what a larger card measures, the fit run's size is not said
# not to fit, and the largest is no less than the fit run's.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/enc_pairs.py"
timeout 300 "$VT" run -q --card 12GiB -o oom.vt -- python3 "$P" --bs 512 </dev/null >oom.out 2>&1
report_both oom
"$VT" predict --from oom.vt >pred.txt 2>&1 || fail "predict --from failed: $(tail -n 3 pred.txt)"
timeout 300 "$VT" run -q --card 12GiB -o fit.vt -- python3 "$P" --bs 256 </dev/null >fit.out 2>&1 ||
    fail "the fit run failed: $(tail -n 3 fit.out)"
report_both fit
FAKECUDA_MEM=40GiB timeout 300 "$VT" run -q --card 32GiB -o big.vt -- python3 "$P" --bs 512 \
    </dev/null >big.out 2>&1 || fail "the run on a 32 GiB card failed: $(tail -n 3 big.out)"
report_both big
python3 - oom fit big <<'PY' || fail "see above"
import json, re, sys
def truth(n):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
t = {n: truth(n) for n in sys.argv[1:]}
r = {n: json.load(open(n + ".json")) for n in sys.argv[1:]}
assert t["oom"]["oom"] and t["oom"]["oom_phase"] == "forward" and t["oom"]["steps"] == 0, t["oom"]
assert not t["fit"]["oom"] and not t["big"]["oom"], (t["fit"], t["big"])
bad = []
txt, pred = open("oom.txt").read(), open("pred.txt").read()
need = r["big"]["peak"]["process_bytes"]          # what the configuration needs (a larger card)
fitpeak = r["fit"]["peak"]["process_bytes"]
p = r["oom"]["prediction"]
if p["current_peak_bytes"] > need * 1.02 and not p["largest_batch_size_at_most"]:
    bad.append("need %d stated, the run on a larger card measured %d" % (p["current_peak_bytes"], need))
if p["largest_batch_size_at_most"] and p["current_peak_bytes"] > need:
    bad.append("need at least %d stated, the run on a larger card measured %d" % (p["current_peak_bytes"], need))
seq_fit = t["fit"]["sequences_per_forward"]
for a in r["oom"]["advice"]:
    if a["batch_size"] == seq_fit and not a["fits"] and a["block_size"] == t["oom"]["seq_len"]:
        bad.append("%s: says does not fit; the fit run at %d sequences peaked at %d" % (a["change"], seq_fit, fitpeak))
    if a["recommended"]:
        bad.append("%s recommended on logits the program never makes" % a["change"])
if (p["largest_batch_size"] or 0) < seq_fit:
    bad.append("largest %s sequences; the fit run's %d fit" % (p["largest_batch_size"], seq_fit))
if re.search(r"logits for cross-entropy", pred):
    bad.append("predict --from: %s" % [l for l in pred.splitlines() if "logits" in l][:2])
need_line = [l for l in txt.splitlines() if l.startswith("advice for ")]
if not need_line or "needs at least " not in need_line[0] or "recommended:" in txt:
    bad.append("the text: %s" % [l for l in txt.splitlines() if l.startswith("advice for ") or "recommended:" in l])
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
# The fit run's batch flag is the micro-batch, each sentence twice in its forward: it had been
# called "not the micro-batch" ("--bs 256 is not the micro-batch"), its what-ifs left with no
# change: line and "largest 699 to 794" counted in sequences. Now the what-ifs name --bs at
# their sequences over the program's own sequences per sentence, the largest too, and the
# largest it names runs.
"$VT" predict --from fit.vt >fitpred.txt 2>&1 || fail "predict --from fit.vt: $(tail -n 3 fitpred.txt)"
"$VT" report --html fit.html fit.vt >fit.herr 2>&1 || fail "report --html fit.html fit.vt: $(tail -n 3 fit.herr)"
python3 - <<'PY' >largest.txt || fail "the fit run's batch flag: see above"
import json, re
t = next(json.loads(l.split(" ", 1)[1]) for l in open("fit.out") if l.startswith("VRAMTRACE_TORCH_STATS "))
r, txt, pred = json.load(open("fit.json")), open("fit.txt").read(), open("fitpred.txt").read()
k = t["sequences_per_forward"] // t["sentences"]  # the program's own: sequences per sentence
bad = []
if "is not the micro-batch" in txt:
    bad.append([l for l in txt.splitlines() if "is not the micro-batch" in l][0].strip())
seqs = [a for a in r["advice"] if a["batch_size"] and a["batch_size"] != t["sequences_per_forward"]]
if not seqs:
    bad.append("no batch what-if")
for a in seqs:
    want = "--bs %d" % (a["batch_size"] // k)
    if not (a["command_line"] or "").startswith(want):
        bad.append("%s: change %r, want %r" % (a["change"], a["command_line"], want))
m = re.search(r"largest micro-batch that fits .*: (\d+)(?: to \d+)? sequences: --bs (\d+)", txt)
if not m or int(m.group(1)) % k or int(m.group(2)) != int(m.group(1)) // k:
    bad.append("largest: %s" % [l for l in txt.splitlines() if "largest micro-batch" in l])
p = re.search(r"largest micro-batch that fits .*\(--bs (\d+)\)", pred)
if not p or not m or p.group(1) != m.group(2):
    bad.append("predict --from: %s" % [l for l in pred.splitlines() if "largest micro-batch" in l])
h = [l for l in open("fit.html") if "Largest micro-batch" in l]
if not m or not h or " sequences: --bs %s" % m.group(2) not in h[0]:
    bad.append("the HTML: %s" % h)
for b in bad:
    print(b, file=__import__("sys").stderr)
print(m.group(2) if m else 0)
raise SystemExit(1 if bad else 0)
PY
lb=$(cat largest.txt)
timeout 300 "$VT" run -q --card 12GiB -o lb.vt -- python3 "$P" --bs "$lb" </dev/null >lb.out 2>&1 ||
    fail "--bs $lb, the largest named, failed: $(tail -n 3 lb.out)"
grep -q '"oom": false' lb.out || fail "--bs $lb, the largest named, ran out of memory"
echo "enc_no_head: ok (an encoder out of memory in its first forward: no vocabulary logits assumed, lower bounds; its batch flag the micro-batch at 2 sequences a sentence)"
