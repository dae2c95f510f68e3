#!/bin/sh
# gradcache_chunks.sh — a SIMULATED dense retriever trained with a representation cache, GradCache's
# method written in the program (tests/python/gradcache_chunks.py): each step encodes its chunks
# under no_grad, back-propagates the loss to the cached representations (leaves that are not
# weights), then encodes each chunk again and back-propagates it: one optimizer step per batch.
# Its passes had been read as gradient accumulation: "A = 21: 21 backward passes before each of the
# 2 optimizer steps" (the program: no accumulation) and "same effective batch 1344" (64); out of
# memory in a chunk, "recommended: micro-batch 64 → 32 … fits", where 32 with the same chunks runs
# out of memory as 64 did. Now A and B are not known, their rows say why (the first pass of each
# step made no gradient of a weight) and name the program's chunk flags, and no what-if of the
# batch flag is made; vramtrace fit's trials say the same; its JSON family is no decoder's, and
# the gradients' elements are its weights' (the representations' gradient not among them), and so
# are the weights made before training (its token batches kept beside them not among them). The same program with real accumulation (--splits 4: four micro-batches,
# each its own loss and backward) is still A = 4 from the trace.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/gradcache_chunks.py"
# run NAME CARD ARGS...: the program under vramtrace, its facts in NAME.out
run() {
    n=$1 c=$2
    shift 2
    timeout 300 "$VT" run -q --card "$c" -o "$n.vt" -- python3 "$P" "$@" </dev/null >"$n.out" 2>&1
    grep -q "^FACTS " "$n.out" || fail "$n: no facts: $(tail -n 2 "$n.out")"
}
fact() { sed -n "s/^FACTS .*\<$2=\([0-9]*\).*/\1/p" "$1.out"; }
run fit 4GiB --grad_cache
grep -q "^step 1$" fit.out || fail "fit: did not train 2 steps: $(tail -n 2 fit.out)"
[ "$(fact fit accumulation)" = 0 ] && [ "$(fact fit backward_per_step)" -gt 2 ] || fail "fit: $(head -n 1 fit.out)"
report_both fit
# (the weights' gradients alone: the query representations' .grad, a 64-row position table's size,
# had been counted, "over 10611712 gradient elements" of the program's 10595328 weights; so where
# the program keeps that gradient alive through the optimizer step, --keep_rep_grads)
run keep 4GiB --grad_cache --keep_rep_grads
report_both keep
for r in fit keep; do
    python3 -c "import json, re, sys; r = json.load(open(sys.argv[1]))['recognized']; n = int(sys.argv[2])
assert r['trainable_params'] in (n, None), r['trainable_params']
assert all(int(g) == n for g in re.findall(r'over (\d+) gradient elements', r['optimizer']['where'])), r['optimizer']['where']" $r.json "$(fact $r trainable)" ||
        fail "$r: trainable: $(grep -o '"trainable_params":[0-9a-z]*' $r.json), $(grep -o 'over [0-9]* gradient elements' $r.txt)"
    # (the weights made before training: the program's (all trained), not its query and passage
    # token batches besides: "10.60 M of the 10.63 M weight elements", 36864 of them the batches')
    python3 -c "import json, sys; p = json.load(open(sys.argv[1]))['inferred']['params']
assert p['value'] in (int(sys.argv[2]), None), p" $r.json "$(fact $r trainable)" ||
        fail "$r: weights: $(grep 'weight elements made before training' $r.txt)"
done
# (two encoders: the JSON's family, as the text says it, had been "decoder_transformer")
python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['recognized']['family']; assert f != 'decoder_transformer', f" fit.json ||
    fail "fit: JSON recognized.family: $(grep -o '"family":"[a-z_]*"' fit.json)"
"$VT" predict --from fit.vt >fit.predict 2>&1
# chunks of 32 and 64 at a batch of 64 on 800 MiB: out of memory in a chunk; the batch flag halved,
# the same chunks (the program's facts), out of memory too
run oom 800MiB --grad_cache --per_device_train_batch_size 64 --gc_q_chunk_size 32 --gc_p_chunk_size 64
grep -q "^OOM in chunk" oom.out || fail "oom: not out of memory in a chunk: $(tail -n 2 oom.out)"
run half 800MiB --grad_cache --per_device_train_batch_size 32 --gc_q_chunk_size 32 --gc_p_chunk_size 64
[ "$(fact half q_chunk)" = 32 ] && [ "$(fact half p_chunk)" = 64 ] || fail "half: $(head -n 1 half.out)"
grep -q "^OOM in chunk" half.out || fail "half: 32 with the same chunks did not run out of memory"
report_both oom
"$VT" predict --from oom.vt >oom.predict 2>&1
for r in fit oom; do
    python3 - "$r.json" "$(fact $r backward_per_step)" <<'EOF' || fail "$r: $(grep 'micro-batch B  \|accumulation steps A' $r.txt)"
import json, sys
j, passes = json.load(open(sys.argv[1])), int(sys.argv[2])
c = j["config"]
bad = []
for k in ("gradient_accumulation_steps", "batch_size"):
    if c[k]["value"] is not None or "the first of which made no gradient of a weight" not in c[k]["where"]:
        bad.append(f"{k}: {c[k]}")
if "--gc_q_chunk_size, --gc_p_chunk_size" not in c["batch_size"]["where"]:
    bad.append(f"batch_size names no chunk flag: {c['batch_size']['where']}")
for it in j["advice"]:
    if "per_device_train_batch_size" in (it.get("change") or "") + (it.get("command") or ""):
        bad.append(f"a what-if of the batch flag: {it}")
if j["prediction"].get("largest_batch_size"):
    bad.append(f"largest micro-batch {j['prediction']['largest_batch_size']}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
done
grep -n "effective batch\|A = [0-9]" fit.txt fit.predict oom.txt oom.predict && fail "an accumulation said"
grep -n "per_device_train_batch_size 32" oom.txt oom.predict && fail "the half batch that ran out of memory advised"
# vramtrace fit's trials: their passes are no micro-steps (it had said "the trials accumulated 3
# micro-steps per optimizer step")
timeout 300 "$VT" fit --card 4GiB --max-b 2 --json --dir fitrun -- python3 "$P" --grad_cache --per_device_train_batch_size '{B}' \
    </dev/null >fitrun.json 2>fitrun.err || fail "fit: $(tail -n 3 fitrun.err)"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); t = j["trials"][0]
assert t["micro_steps_per_optimizer_step"] is None and "a representation cache" in j["accumulation_note"], (t, j["accumulation_note"])' fitrun.json ||
    fail "fit: $(cat fitrun.json)"
# real accumulation: four micro-batches, A = 4 from the trace
run acc 4GiB --splits 4
[ "$(fact acc accumulation)" = 4 ] || fail "acc: $(head -n 1 acc.out)"
report_both acc
python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["config"]["gradient_accumulation_steps"]; assert a["value"] == 4 and a["source"] == "inferred", a' acc.json ||
    fail "acc: $(grep 'accumulation steps A' acc.txt)"
echo "gradcache_chunks: ok (a representation cache's chunks are not accumulation: B and A not known, why said)"
