#!/bin/sh
# sim_kv_cache.sh — the advice's use_cache=False against the run it predicts: SIMULATED Hugging
# Face runs (examples/sim/sim_hf.py) with transformers' KV cache on, as the config has it, and the
# same runs with --no-cache, two optimizer steps each (a prediction is of a step with the
# optimizer's state, which a one-step run's forward never held). The report of each run with the
# cache lists use_cache=False with a
# predicted peak within 1 % of the process peak the run without it measured (and the same fit
# verdict); a run without the cache is not told to turn it off; an out-of-memory run's what-if
# equals what the report of the run without the cache says that configuration needs.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail() { echo "FAIL: $*"; exit 1; }

# run NAME ARGS...: a traced simulated run and its report (NAME.json)
run() {
    name=$1
    shift
    "$VT" run -q --card 12GiB -o "$name.vt" -- "$PY" "$ROOT/examples/sim/sim_hf.py" "$@" \
        >"$name.out" 2>&1
    "$VT" report --json "$name.vt" >"$name.json" || fail "report $name"
}

for c in "gpt2 4 2" "gpt2-medium 2 2" "llama-400m 2 2" "llama-400m 4 2"; do
    set -- $c
    run "on-$1-$2" --model "$1" --batch-size "$2" --steps "$3"
    run "off-$1-$2" --model "$1" --batch-size "$2" --steps "$3" --no-cache
    "$PY" - "on-$1-$2.json" "off-$1-$2.json" "$c" <<'PYEOF' || fail "$c: see above"
import json, sys
on, off, what = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert on["recognized"]["kv_cache"]["on"], "the cache not seen"
assert not off["recognized"]["kv_cache"]["on"], "a cache seen in a run without one"
assert not [a for a in off["advice"] if a["change"] == "use_cache=False"], "told to turn off none"
item = [a for a in on["advice"] if a["change"] == "use_cache=False"]
assert len(item) == 1, f"{len(item)} use_cache=False what-ifs"
p = item[0]["predicted_peak_bytes"]
if on["run"]["oom"]:  # the same configuration as the run without the cache says it needs
    need = off["prediction"]["current_peak_bytes"]
    print(f"{what}: OOM; use_cache=False predicted {p / 2**30:.3f} GiB, its run says it needs "
          f"{need / 2**30:.3f} GiB")
    assert abs(p - need) <= 0.01 * need, "the what-if and the run's own prediction differ"
    assert item[0]["fits"] == off["advice"][0]["fits"] or not item[0]["fits"]
else:
    got = off["peak"]["process_bytes"]
    print(f"{what}: use_cache=False predicted {p / 2**30:.3f} GiB, measured {got / 2**30:.3f} "
          f"GiB (with the cache {on['peak']['process_bytes'] / 2**30:.3f})")
    assert abs(p - got) <= 0.01 * got, f"off by {(p - got) / got:+.1%}"
    assert p < on["peak"]["process_bytes"], "no saving predicted"
PYEOF
done
# LoRA on a bf16 Llama: every copy the cache made replaced the keys and values it copied as what
# the attention keeps for its backward (the backward freed the copies; autocast made no cast of
# them), which it keeps without the cache: the run without the cache holds the same
# tensors at its peak, and use_cache=False is not advised (it had been predicted 7.23 GiB for a
# run that takes 7.67); the report says it saves nothing
run on-lora --model llama-400m --lora-rank 8 --dtype bf16 --batch-size 4 --steps 2
run off-lora --model llama-400m --lora-rank 8 --dtype bf16 --batch-size 4 --steps 2 --no-cache
"$PY" - on-lora.json off-lora.json <<'PYEOF' || fail "lora: see above"
import json, sys
on, off = (json.load(open(f)) for f in sys.argv[1:])
assert on["peak"]["allocated_bytes"] == off["peak"]["allocated_bytes"], "the sim changed"
assert not [a for a in on["advice"] if a["change"] == "use_cache=False"], "use_cache=False advised"
assert "saves nothing" in on["recognized"]["kv_cache"]["where"], on["recognized"]["kv_cache"]
PYEOF
# forwards only (an evaluation of a Llama, whose copies replace their inputs): no backward will
# ever keep anything, so what use_cache=False saves is measured, not "at most" (a run that ended
# before its first backward pass did says that: kv_unmeasured.sh)
run eval-llama --model llama-400m --eval-only --batch-size 2 --steps 2
"$PY" - eval-llama.json <<'PYEOF' || fail "eval: see above"
import json, sys
r = json.load(open(sys.argv[1]))
kv = r["recognized"]["kv_cache"]
assert kv["on"] and "makes none" in kv["where"], kv
assert "at most" not in kv["where"], kv["where"]
item = [a for a in r["advice"] if a["change"] == "use_cache=False"]
assert len(item) == 1 and "the least it can be" not in item[0]["note"], item
PYEOF
echo "sim_kv_cache: ok"
