#!/bin/sh
# eval_largest.sh — the largest micro-batch that fits, where the next one is kept out only by
# the room for fragmentation assumed on top of the cache the run measured: a SIMULATED GPT-2
# evaluation (forwards only) at B=8 on 12 GiB is told 16 and that at 17 the allocator cache
# decides, with the most cache 17 would fit with; the same program measured at B=16 and B=18
# (examples/traces/sim: both fit, 18 with 5.8 % free) had less cache than that. It had been told
# 16 alone, where 17 and 18 fit. Text, JSON, page and predict --from say the same; so too after
# runs out of memory (Lightning Llama 400M at B=3, GPT-2 distillation at B=6). And an
# evaluation out of memory in its forward is told what its "activations" row holds.
set -u
. "$ROOT/tests/sim_env.sh"
"$VT" run -q --card 12GiB -o e8.vt -- \
    python3 "$ROOT/examples/sim/sim_hf.py" --model gpt2 --batch-size 8 --steps 3 --eval-only >e8.out 2>&1 ||
    { tail -n 3 e8.out; fail "run failed"; }
"$VT" report --json e8.vt >e8.json && "$VT" report --no-color e8.vt >e8.txt && "$VT" report --html e8.html e8.vt >/dev/null ||
    fail "report"
D="$ROOT/examples/traces/sim"
"$VT" report --json "$D/gpt2_eval_b16_fit.vt" >b16.json && "$VT" report --json "$D/gpt2_eval_b18_fit.vt" >b18.json ||
    fail "report of the committed runs"
"$VT" predict --from e8.vt --card 12GiB >e8.pred 2>&1 || fail "predict --from"
python3 - e8.json b16.json b18.json e8.txt e8.html e8.pred <<'PY' || fail "see above"
import json, re, sys
r, b16, b18 = (json.load(open(f)) for f in sys.argv[1:4])
txt, page = open(sys.argv[4]).read(), open(sys.argv[5]).read()
p = r["prediction"]
assert p["largest_batch_size"] == 16, p["largest_batch_size"]
most, assumed = p["next_batch_cache_most_bytes"], p["next_batch_cache_assumed_bytes"]
assert most and assumed and most < assumed, (most, assumed)
for b in (b16, b18):  # what the program's own runs near it measured: less than the most
    cache = b["peak"]["reserved_bytes"] - b["peak"]["allocated_blocks_bytes"]
    assert 0 < cache <= most, (cache, most)
line = re.search(r"^      at 17 the allocator cache decides: (.*) of it assumed; with at most (.*) it would keep 5 % free \(measure it: vramtrace fit\)$", txt, re.M)
assert line, [l for l in txt.splitlines() if "largest" in l]
assert "At 17 the allocator cache decides: %s of it assumed; with at most %s it would keep 5 %% free" % line.groups() in page
assert line.group(0).strip() in open(sys.argv[6]).read(), "predict --from does not say it as the report does"
print("eval_largest: 16, at 17 the cache decides:", line.groups())
PY
# so too after a run out of memory, whose cache is the fragmentation floor assumed whole (nothing
# of it measured; it had been said only where the floor was added to a measured cache): a
# SIMULATED Lightning Llama 400M at B=3 and a GPT-2 student of a GPT-2 medium teacher at B=6, out
# of memory on 12 GiB, were told 1 and 3 alone, where the same programs ran at 2 and 4 with 9.5 and
# 8.5 % free. Each now says the cache decides at the next, with a most the sibling's cache (its
# reserved over its tensors' peak, facts.jsonl) stayed under while its process kept 5 % free.
for t in lightning_llama400m_b3_oom_forward gpt2_kd_gpt2m_b6_oom_forward; do
    "$VT" report --json "$D/$t.vt" >"$t.json" && "$VT" report --no-color "$D/$t.vt" >"$t.txt" &&
        "$VT" report --html "$t.html" "$D/$t.vt" >/dev/null && "$VT" predict --from "$D/$t.vt" >"$t.pred" 2>&1 ||
        fail "$t: report or predict --from"
done
"$VT" report --json "$D/lightning_llama400m_b2_fit.vt" >l2.json && "$VT" report --json "$D/gpt2_kd_gpt2m_b4_fit.vt" >k4.json ||
    fail "report of the siblings"
python3 - "$D/facts.jsonl" <<'PY' || fail "after an out-of-memory run: see above"
import json, re, sys
facts = {f["trace"]: f for f in (json.loads(l) for l in open(sys.argv[1]))}
for t, sib, sj, n in (("lightning_llama400m_b3_oom_forward", "lightning_llama400m_b2_fit", "l2.json", 1),
                      ("gpt2_kd_gpt2m_b6_oom_forward", "gpt2_kd_gpt2m_b4_fit", "k4.json", 3)):
    r, txt = json.load(open(t + ".json")), open(t + ".txt").read()
    p, f, g = r["prediction"], facts[t + ".vt"], facts[sib + ".vt"]
    assert r["oom"] and f["oom"] and not g["oom"], t
    # the sibling is the same program and flags at the next micro-batch
    assert g["command"] == f["command"].replace("--batch-size %d" % f["batch_size"], "--batch-size %d" % (n + 1)), (f["command"], g["command"])
    assert p["largest_batch_size"] == n, (t, p["largest_batch_size"])
    most, assumed = p["next_batch_cache_most_bytes"], p["next_batch_cache_assumed_bytes"]
    assert most and assumed and most < assumed, (t, most, assumed)
    line = re.search(r"^      at %d the allocator cache decides: (.*) of it assumed; with at most (.*) it would keep 5 %% free \(measure it: vramtrace fit\)$" % (n + 1), txt, re.M)
    assert line, (t, [l for l in txt.splitlines() if "largest" in l or "decides" in l])
    assert "At %d the allocator cache decides: %s of it assumed; with at most %s it would keep 5 %% free" % ((n + 1,) + line.groups()) in open(t + ".html").read(), t
    assert line.group(0).strip() in open(t + ".pred").read(), t + ": predict --from does not say it as the report does"
    cap = p["capacity_bytes"]
    process = g["max_memory_reserved"] + json.load(open(sj))["category_peaks"]["cuda_context"]["bytes"]
    cache = g["max_memory_reserved"] - g["requested_bytes_peak"]
    assert 0 < cache <= most and process <= 0.95 * cap, (sib, cache, most, process, cap)
    print("eval_largest: %s: %d, at %d the cache decides (%s); %s held %.2f GiB of cache, %.1f %% free" % (
        t, n, n + 1, line.groups(), sib, cache / 2**30, 100 - 100 * process / cap))
PY
# and not said where the next one misses by a hair (GAN at B=64: the most within 2 % of the cache
# assumed: "1.85 GiB ... at most 1.85 GiB"). (GPT-2 bf16 at B=4 had been the case of a next one
# whose peak misses the headroom with the measured cache alone, at 9; now that every micro-batch
# above the run's own counts the room for fragmentation, its largest is 7 and the room decides 8.)
for t in gan_b64_fit; do
    "$VT" report --no-color "$D/$t.vt" | grep 'at [0-9]* the allocator cache decides' &&
        fail "$t: the next micro-batch's cache said"
done
# an evaluation that ran out of memory in its forward: its "activations" (936 MiB, the KV cache
# in them) are said to be the forward's tensors in use, none kept for a backward (the table's row
# name alone had said they were saved for one, beside "nothing was trained")
"$VT" report --no-color "$D/gpt2_eval_b24_oom_forward.vt" >e24.txt || fail "report e24"
grep -q '^  activations  *[1-9]' e24.txt || fail "e24: no activations row: the case is not reached"
grep -q 'the rows "activations" and "attention" at the out-of-memory error hold the forward.s tensors in use then (a KV cache among them where the model keeps one), none kept for a backward' e24.txt ||
    fail "e24: $(grep 'nothing was trained' e24.txt)"
grep -q 'the rows "activations"' e8.txt && fail "a completed evaluation told of its out-of-memory error"
echo "eval_largest: ok"
