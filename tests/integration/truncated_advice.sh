#!/bin/sh
# truncated_advice.sh — a trace that ends before the run's first optimizer step with no
# out-of-memory error (its process killed, or still running: no trailer) is a step cut short, as
# the README says: without a formula the what-ifs are lower bounds ("at least") and none is
# recommended; with one the predictions take the formula's bytes where the run had not reached
# them; both say why, the report, its JSON and predict by either route alike. Until 2026-12-06
# such a trace was advised as a complete run: the demo's GPT-2 at B=16, cut in its first forward,
# "fits (794.8 MiB left)", "keep the current configuration", where the whole run ran out of 12 GiB
# at 20.11 GiB. The committed traces are cut here at a share of their bytes, as SIGKILL leaves them.
set -u
fail() { echo "truncated_advice: $*"; exit 1; }
cut_at() { # cut_at TRACE PERCENT OUT: the first PERCENT % of TRACE's bytes
    n=$(wc -c <"$1")
    head -c $((n * $2 / 100)) "$1" >"$3"
}
SIM="$ROOT/examples/traces/sim"
WHY="the trace ends with no optimizer step seen"

# 1. no formula (a ResNet-50), cut in its first forward: lower bounds, none recommended
cut_at "$SIM/resnet50_b128_fit.vt" 30 r.vt
"$VT" report r.vt >r.txt 2>r.err || fail "report r.vt: $(cat r.err)"
grep -q "is truncated" r.err || fail "no truncation warning: $(cat r.err)"
grep -q "$WHY and no out-of-memory error, before its first backward pass" r.txt || fail "ResNet: the cut not said"
grep -q "needs at least" r.txt || fail "ResNet: the need is not a lower bound"
grep -q "^  recommended:" r.txt && fail "ResNet: a configuration recommended from a cut step"
grep -q "none is recommended" r.txt || fail "ResNet: no word that none is recommended"
"$VT" report --json r.vt >r.json 2>/dev/null || fail "report --json r.vt"
python3 - r.json <<'EOF' || fail "ResNet: report --json"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["prediction"]
assert d["run"]["status"] == "truncated" and d["iterations"] == 0, d["run"]
assert p["largest_batch_size_at_most"] is True, p
assert "ends with no optimizer step seen" in p["first_forward_note"], p
assert not [a for a in d["advice"] if a["recommended"]], d["advice"]
assert all(a["predicted_peak_at_least"] for a in d["advice"]), d["advice"]
# (what it measured so far: a lower bound is never below it)
assert p["current_peak_bytes"] >= d["run"]["peak_process_bytes"], p
EOF
# predict: the trace and its report's JSON alike, and the same words
"$VT" predict --from r.vt --card 12GiB 2>/dev/null | sed 's|r\.vt|FROM|g' >a.out
"$VT" predict --from r.json --card 12GiB 2>/dev/null | sed 's|r\.json|FROM|g' >b.out
cmp -s a.out b.out || { diff a.out b.out | head; fail "predict: the trace and its JSON differ"; }
grep -q "^none recommended: $WHY" a.out || fail "predict: $(tail -n 3 a.out)"
grep -q "trace ends with no optimizer step seen: its step would have kept at least that" \
    a.out || fail "predict: the calibration's words: $(grep calibrated a.out)"
grep -q "OOM" a.out && fail "predict speaks of an OOM: $(grep OOM a.out)"

# 2. a formula (a Llama 160M), cut in its first forward: the formula's bytes where the run had
# not reached them (the whole run measured 6.06 GiB; the cut one had held 1.21)
cut_at "$SIM/llama160m_b4_fit.vt" 25 l.vt
"$VT" report --json l.vt >l.json 2>/dev/null || fail "report --json l.vt"
"$VT" report --json "$SIM/llama160m_b4_fit.vt" >whole.json 2>/dev/null || fail "report --json whole"
python3 - l.json whole.json <<'EOF' || fail "Llama: report --json"
import json, sys
d, whole = (json.load(open(f)) for f in sys.argv[1:])
p = d["prediction"]
assert d["run"]["status"] == "truncated" and d["iterations"] == 0, d["run"]
assert "predictions take the formula's bytes" in p["first_forward_note"], p
assert p["largest_batch_size_at_most"] is False, p
assert p["current_peak_bytes"] >= whole["run"]["peak_process_bytes"], \
    (p["current_peak_bytes"], whole["run"]["peak_process_bytes"])
assert whole["prediction"]["first_forward_note"] is None, whole["prediction"]
EOF
"$VT" report l.vt 2>/dev/null | grep -q "the run stopped at the OOM" && fail "Llama: an OOM said"

# 2b. a trace the capture stopped on a full disk (tests/data/disk_full_segment.vt: GPT-2 medium at
# B=8, `ulimit -f 72`, inside its first forward): the trailer says so, the file whole; read as
# the same bytes cut there (it had been advised as a complete run: "needs ~2.58 GiB", largest
# micro-batch 49, where the cut says ~29.58 and 2), and said as a stopped capture, not a kill
DF="$ROOT/tests/data/disk_full_segment.vt"
n=$(wc -c <"$DF")
head -c $((n - 60)) "$DF" >df_cut.vt # (its trailer left out: the same events, cut)
"$VT" report --json "$DF" >df.json 2>/dev/null || fail "report --json disk_full_segment.vt"
"$VT" report --json df_cut.vt >df_cut.json 2>/dev/null || fail "report --json df_cut.vt"
python3 - df.json df_cut.json <<'EOF' || fail "disk full: report --json"
import json, sys
d, cut = (json.load(open(f)) for f in sys.argv[1:])
assert d["run"]["status"] == "ok" and d["run"]["stopped_early"] == "disk_full", d["run"]
assert cut["run"]["status"] == "truncated" and cut["run"]["stopped_early"] is None, cut["run"]
for k in ("current_peak_bytes", "largest_batch_size"):
    assert d["prediction"][k] == cut["prediction"][k], (k, d["prediction"][k], cut["prediction"][k])
note = d["prediction"]["first_forward_note"]
assert "(its capture stopped early: no room for the file (a full disk, a quota or the file-size limit))" in note and "killed" not in note, note
EOF
"$VT" predict --from "$DF" --card 12GiB 2>/dev/null | sed "s|$DF|FROM|g" >dfa.out
"$VT" predict --from df.json --card 12GiB 2>/dev/null | sed 's|df\.json|FROM|g' >dfb.out
cmp -s dfa.out dfb.out || { diff dfa.out dfb.out | head; fail "disk full: predict's routes differ"; }
grep -q "its capture stopped early: no room for the file (a full disk, a quota or the file-size limit)" dfa.out || fail "disk full: predict: $(head -n 8 dfa.out)"

# 3. cut after its first optimizer step: read as measured, nothing said of a cut step
cut_at "$SIM/resnet50_b128_fit.vt" 90 s.vt
"$VT" report s.vt 2>/dev/null >s.txt || fail "report s.vt"
grep -q "optimizer step" s.txt || fail "the 90 % cut has no step"
grep -q "$WHY" s.txt && fail "a cut after the first step read as one before it"
exit 0
