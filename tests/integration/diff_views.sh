#!/bin/sh
# diff_views.sh — `vramtrace diff A B` on two real H100 runs (HF GPT-2 eager, batch 4 and 6):
# the JSON's peaks and categories are each run's report figures and their difference, the
# sites' changes sum to the process peak's change; a run against itself changes nothing; a run
# that ran out of memory is said to have (inside its first optimizer step: none completed);
# torch.compile's hashed files' sites match by line.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
A="$D/hf_gpt2_eager_b4.vt" B="$D/s_hf_gpt2_eager_b6.vt"
fail() { echo "diff_views: $*"; exit 1; }
"$VT" diff --json --top 100000 "$A" "$B" >d.json 2>err.txt || fail "diff exit $?: $(cat err.txt)"
"$VT" report --json "$A" >a.json && "$VT" report --json "$B" >b.json || fail "report failed"
python3 - d.json a.json b.json <<'PY' || exit 1
import json, sys
d, a, b = (json.load(open(p)) for p in sys.argv[1:4])
for k in ("allocated_bytes", "reserved_bytes", "process_bytes"):
    p = d["peak"][k]
    assert (p["a"], p["b"]) == (a["peak"][k], b["peak"][k]), (k, p)
    assert p["change"] == p["b"] - p["a"]
for k in set(a["categories"]) | set(b["categories"]):
    x, y = a["categories"].get(k, 0), b["categories"].get(k, 0)
    if x or y:
        assert d["categories"][k] == {"a": x, "b": y, "change": y - x}, (k, d["categories"].get(k))
s = d["sites"]
assert sum(e["change"] for e in s) == d["peak"]["process_bytes"]["change"], "sites do not add up"
ch = [abs(e["change"]) for e in s]
assert ch == sorted(ch, reverse=True), "sites not by change"
assert any("hf_train.py" in e["site"] for e in s[:5]), [e["site"] for e in s[:5]]
PY
"$VT" diff --json "$A" "$A" >same.json || fail "diff A A failed"
python3 -c "
import json,sys; d=json.load(open('same.json'))
assert all(v['change']==0 for v in d['peak'].values()) and all(v['change']==0 for v in d['categories'].values())
assert all(e['change']==0 for e in d['sites'])" || fail "a run against itself changed"
"$VT" diff "$A" "$A" >same.txt || fail "text diff A A failed"
grep -A1 '^sites that changed most' same.txt | tail -n 1 | grep -q '^  (none: every site holds in B what it held in A)$' ||
    fail "diff A A: the sites' heading without a line under it: $(tail -3 same.txt)"
"$VT" diff "$A" "$B" >d.txt || fail "text diff failed"
grep -q '^activations ' d.txt || fail "no category row: $(head -20 d.txt)"
grep -q 'sites that changed most' d.txt || fail "no sites in the text"
# a site's bytes are every category's charged to it (ResNet-50's vision_train.py:104 holds 6146
# MiB at the process peak where the allocated peak is 5679): the heading says so, not tensors
R="$ROOT/examples/traces/h100-torch2.11-beyond"
"$VT" diff "$R/resnet50_b128_fit.vt" "$R/resnet50_b320_oom.vt" >r.txt || fail "resnet diff failed"
grep -qx "sites that changed most (MiB, B - A; a site's bytes at the process peak in every category, the CUDA context, kernel code, allocator cache and other / external charged to it included):" r.txt ||
    fail "the sites' heading does not say what their bytes are: $(grep '^sites' r.txt)"
"$VT" diff "$A" >/dev/null 2>&1; [ $? = 2 ] || fail "one file: expected exit 2"
# a tensor-mode run against a segment-mode one: no 'allocated' for the segment side (the report
# says it is not visible there), and the two ways of sorting categories are named
T="$ROOT/examples/traces/a_tensors_eager.vt" S="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" diff --json "$T" "$S" >m.json && "$VT" diff "$T" "$S" >m.txt || fail "mixed diff failed"
python3 -c "
import json; d=json.load(open('m.json'))
assert d['peak']['allocated_bytes']['b'] is None and d['peak']['allocated_bytes']['change'] is None, d['peak']
assert d['peak']['allocated_bytes']['a'] > 0
assert d['category_basis'] == {'a': 'tensors', 'b': 'segments'}, d['category_basis']" || fail "mixed modes: $(cat m.json | head -c 300)"
grep -Eq '^allocated +[0-9.]+ +- +-$' m.txt || fail "mixed modes: the allocated row $(grep ^allocated m.txt)"
grep -q "B's segments under the phase that grew them" m.txt || fail "mixed modes: not said"
grep -q "category_basis" same.json || fail "no category_basis"
grep -q "ways of sorting" d.txt && fail "same modes said to differ"
# a run that ran out of memory: said, with its request, time and steps as its report has them
# (gpt2_ckpt_b32_oom died in its first forward: 2 GiB "smaller" than its b8 sibling, no optimizer
# state: read as the batch size's doing, it was the error's)
X="$ROOT/examples/traces/h100-torch2.11-beyond"
"$VT" diff --json "$X/gpt2_ckpt_b8_fit.vt" "$X/gpt2_ckpt_b32_oom.vt" >o.json &&
    "$VT" diff "$X/gpt2_ckpt_b8_fit.vt" "$X/gpt2_ckpt_b32_oom.vt" >o.txt &&
    "$VT" report --json "$X/gpt2_ckpt_b32_oom.vt" >ob.json || fail "OOM diff failed"
python3 - o.json ob.json <<'PY' || fail "OOM run: $(head -c 400 o.json)"
import json, sys
d, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert d["out_of_memory"]["a"] is None, d["out_of_memory"]
o = d["out_of_memory"]["b"]
assert o["requested_bytes"] == b["oom"]["requested_bytes"] and o["optimizer_steps"] == 0, o
assert o["phase"] == "forward", o
PY
grep -q "^(B ran out of memory at [0-9.]* s (phase: forward), requesting 6284.0 MiB, after 0 optimizer steps: its peaks are what it held before the error.*no optimizer step ran" o.txt ||
    fail "OOM run not said: $(head -4 o.txt)"
grep -q "ran out of memory" d.txt && fail "runs that fit said to have run out of memory"
python3 -c "
import json; d=json.load(open('same.json')); assert d['out_of_memory'] == {'a': None, 'b': None}, d" || fail "out_of_memory of two runs that fit"
# torch.compile's generated files are named by a hash per compile: the same line of two runs'
# compiled code is one site (nanoGPT compiled, B=10 and 12: "+1180.0" and "-984.0" on two
# files' line 2416, a +196 MiB change)
C="$D/s_nano_compile_b10.vt" C2="$D/s_nano_compile_b12.vt"
"$VT" diff --json --top 100000 "$C" "$C2" >c.json && "$VT" diff "$C" "$C2" >c.txt || fail "compiled diff failed"
python3 - c.json <<'PY' || fail "compiled code's sites: $(grep -m3 Runner c.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sites"]
assert not any("torchinductor_" in e["site"] for e in s), [e["site"] for e in s if "torchinductor_" in e["site"]][:3]
x = [e for e in s if e["site"] == "<torch.compile code>:2416 Runner.call"]
assert len(x) == 1 and x[0]["a"] > 0 and x[0]["b"] > 0 and abs(x[0]["change"] - 196 * 2**20) < 2**20, x
assert sum(e["change"] for e in s) == d["peak"]["process_bytes"]["change"], "sites do not add up"
PY
grep -q "matched by line and function" c.txt || fail "compiled sites' matching not said"
grep -q "matched by line and function" d.txt && fail "matching of compiled code said of eager runs"
# a run that ran out of memory inside its first optimizer step completed none (it had said "after
# 1 optimizer step"), and only part of its state was made
S="$ROOT/examples/traces/sim"
"$VT" diff "$S/llama400m_b1_fit.vt" "$S/llama400m_b1_6gib_oom_optimizer.vt" >o.txt || fail "diff (oom in a step)"
grep -q 'requesting 20.0 MiB, inside its first optimizer step: .*; its first step.s optimizer state was being made: only part of it is in them)' o.txt ||
    fail "oom in the first step: $(grep 'ran out' o.txt)"
"$VT" diff --json "$S/llama400m_b1_fit.vt" "$S/llama400m_b1_6gib_oom_optimizer.vt" >o.json || fail "diff --json"
python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["out_of_memory"]["b"]; assert o["optimizer_steps"] == 0 and o["in_optimizer_step"] is True, o' \
    o.json || fail "oom in the first step: JSON"
# the script edited between the runs (an EMA added to sim_hf.py): a site of a file the traces
# recorded is matched by its line's text, not its number, so the statement that moved is one site
# (said with its line in A), and the change on top is the EMA's copy (+509.2 MiB; 9 of the 10
# sites shown had been one statement at two lines); the sites left out are counted, and with them
# the sites' changes sum to the process peak's
"$VT" diff "$S/gpt2_b4_fit.vt" "$S/gpt2_ema_b4_fit.vt" >m.txt || fail "diff (script edited)"
grep -A1 '^sites that changed most' m.txt | tail -n 1 | grep -q '^ *+509.2  examples/sim/sim_hf.py:122 main$' ||
    fail "edited script: $(grep -A3 '^sites that changed most' m.txt)"
grep -q 'examples/sim/sim_hf.py:133 main (line 141 in A)$' m.txt || fail "edited script: the moved line not said"
# a byte count too small for 0.1 MiB is given in KiB or bytes, never "0.0" (32 KiB of inputs)
grep -q '^inputs  *32.0 KiB  *32.0 KiB  *0$' m.txt || fail "small amounts: $(grep '^inputs' m.txt)"
"$VT" diff --json --top 2 "$S/gpt2_b4_fit.vt" "$S/gpt2_ema_b4_fit.vt" >m.json || fail "diff --json --top 2"
python3 - m.json <<'PY' || fail "edited script: JSON sites and more_sites"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sites"][0]["change"] > 500 << 20 and "line_in_a" not in d["sites"][0], d["sites"][0]
assert d["more_sites"]["count"] > 0, d["more_sites"]
total = sum(s["change"] for s in d["sites"]) + d["more_sites"]["change"]
assert total == d["peak"]["process_bytes"]["change"], (total, d["peak"]["process_bytes"])
PY
"$VT" diff --top 1 "$A" "$B" | grep -q '^  ([0-9]* more sites\? changed, .* together: --top N shows more)$' ||
    fail "--top 1: the sites left out not counted"
"$VT" diff --top x "$A" "$B" >/dev/null 2>&1; [ $? = 2 ] || fail "--top x: expected exit 2"
"$VT" diff "$A" "$D/no_such.vt" >/dev/null 2>&1; [ $? = 2 ] || fail "missing file: expected exit 2"
# two runs whose process peaks came in different phases: said, the rows compare those moments
# (a LoRA run's peak in its optimizer step, its activations freed into the cache: -5423 MiB of
# activations and +5998 MiB of cache beside a full run's backward, with no word)
"$VT" diff "$S/llama400m_b4_fit.vt" "$S/llama400m_lora8_b4_fit.vt" >ph.txt &&
    "$VT" diff --json "$S/llama400m_b4_fit.vt" "$S/llama400m_lora8_b4_fit.vt" >ph.json || fail "diff (phases)"
grep -q "^(A's process peak came in its backward phase, B's in its optimizer phase: the rows compare those two moments" ph.txt &&
    python3 -c "import json,sys; assert json.load(open('ph.json'))['peak_phase'] == {'a': 'backward', 'b': 'optimizer'}" ||
    fail "peaks in different phases not said: $(grep '^(' ph.txt)"
"$VT" diff "$S/gpt2_b4_fit.vt" "$S/gpt2_b4_fit.vt" | grep -q "process peak came in" && fail "the same run: a phase note"

# the same program given by a relative path in one run and an absolute one in the other (the
# quick start's trace against make demo's): each site matches itself (every one had been split in
# two, a key by its line's text in one run and by its number in the other)
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so"
SARGS="$ROOT/examples/gpt/config/gpt2-124m-12gb.py --max_iters=1 --eval_iters=1 --compile=False --batch_size=2"
# shellcheck disable=SC2086
(cd "$ROOT" && "$VT" run -q -o "$TESTDIR/rel.vt" -- python3 examples/sim/sim_train.py $SARGS) >/dev/null 2>&1 ||
    fail "the relative run failed"
# shellcheck disable=SC2086
"$VT" run -q -o "$TESTDIR/abs.vt" -- python3 "$ROOT/examples/sim/sim_train.py" $SARGS >/dev/null 2>&1 ||
    fail "the absolute run failed"
# shellcheck disable=SC2086
(cd "$ROOT" && "$VT" run -q -o "$TESTDIR/abs2.vt" -- python3 "$ROOT/examples/sim/sim_train.py" $SARGS) >/dev/null 2>&1 ||
    fail "the absolute run from the top failed"
for b in abs abs2; do # (abs2: run from the directory the script is under, shown short too)
    "$VT" diff --json --top 100000 "$TESTDIR/rel.vt" "$TESTDIR/$b.vt" >ra.json || fail "diff rel $b failed"
    python3 - ra.json <<'PY' || fail "a site of one program split in two by its path ($b)"
import json, sys
d = json.load(open(sys.argv[1]))
moved = [(e["site"], e["change"]) for e in d["sites"] if e["change"]]
assert d["sites"] and not moved, moved[:4]
PY
done

# what a recording does not measure is "-" (null), said why, never 0 compared as measured:
# cudaMallocAsync's tensor mode hides its pool's cache (a_tensors_eager had said reserved 5965.1,
# its tensors', and allocator cache 0.0 beside a caching allocator's 1348.6 MiB); a trace cut
# before PyTorch's first allocation has no allocated or reserved, nor a segment mode or a peak
# phase to name
T="$ROOT/examples/traces"
"$VT" diff "$T/a_tensors_eager.vt" "$D/s_nano_eager_b8.vt" >pool.txt 2>/dev/null || fail "pool diff exit $?"
grep -q '^reserved  *- .* -$' pool.txt && grep -q '^allocator cache  *- .* -$' pool.txt &&
    grep -q "not visible in A's tensor mode" pool.txt || { cat pool.txt; fail "a hidden pool's cache compared as measured"; }
"$VT" diff --json "$T/a_tensors_eager.vt" "$D/s_nano_eager_b8.vt" >pool.json 2>/dev/null || fail "pool diff --json exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["peak"]["reserved_bytes"]; c=d["categories"]["allocator_cache"]
assert r["a"] is None and r["change"] is None and r["b"] > 0, r
assert c["a"] is None and c["change"] is None and c["b"] > 0, c' pool.json || fail "a hidden pool's reserved / cache not null in JSON"
head -c 1000 "$ROOT/examples/traces/h100-torch2.11-beyond/bert_b16_fit.vt" >cut.vt
"$VT" diff cut.vt "$ROOT/examples/traces/h100-torch2.11-beyond/bert_b16_fit.vt" >cut.txt 2>/dev/null || fail "cut diff exit $?"
grep -q "segment mode\|process peak came in" cut.txt && { cat cut.txt; fail "a trace of no allocation said in segment mode / at a peak phase"; }
grep -q '^reserved  *- ' cut.txt && grep -q "A holds no allocation of PyTorch's" cut.txt || { cat cut.txt; fail "a trace of no allocation: reserved compared"; }
# an evaluation out of memory ran forwards only, as its report says: no optimizer state missed
"$VT" diff "$T/sim/gpt2_eval_b16_fit.vt" "$T/sim/gpt2_eval_b24_oom_forward.vt" >ev.txt 2>/dev/null || fail "eval diff exit $?"
grep -q "it ran forwards only" ev.txt && ! grep -q "optimizer's state" ev.txt || { cat ev.txt; fail "an evaluation told of a missing optimizer state"; }
# (a training run out of memory in its first forward still is)
"$VT" diff "$T/sim/gpt2_b4_fit.vt" "$T/sim/gpt2m_b4_oom_forward.vt" >tr.txt 2>/dev/null
grep -q "no optimizer step ran: an optimizer's state" tr.txt || { cat tr.txt; fail "a training run's first-forward OOM lost its note"; }
exit 0
