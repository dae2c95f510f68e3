#!/bin/sh
# sim_fidelity.sh — the SIMULATION against real runs: sim_hf.py and sim_train.py with the
# arguments of three committed H100 traces (examples/traces/h100-torch2.11/facts.jsonl: HF GPT-2
# bf16 B=4, HF Llama fp16 B=4, nanoGPT eager B=8 A=4 which ran out of memory) give the real
# runs' allocator counters: reserved peak and segment count to the byte and the count, requested
# peak within 4 KiB, the same parameter, gradient and optimizer-state bytes, the same outcome.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
S="$ROOT/examples/sim"
FACTS="$ROOT/examples/traces/h100-torch2.11/facts.jsonl"

# compare NAME TRACE: the simulation's stats line (NAME.out) against TRACE's line in FACTS
compare() {
    "$PY" - "$1.out" "$FACTS" "$2" <<'PYEOF' || fail "$1: differs from the real run $2 (see above)"
import json, sys
out, facts, trace = sys.argv[1:4]
sim = json.loads([l for l in open(out) if l.startswith("VRAMTRACE_TORCH_STATS ")][-1].split(" ", 1)[1])
real = next(json.loads(l) for l in open(facts) if json.loads(l)["trace"] == trace)
assert sim["simulation"] is True
for k in ("max_memory_reserved", "num_device_alloc", "oom", "params"):
    assert sim[k] == real[k], (k, sim[k], real[k])
assert abs(sim["requested_bytes_peak"] - real["requested_bytes_peak"]) <= 4096, \
    ("requested_bytes_peak", sim["requested_bytes_peak"], real["requested_bytes_peak"])
for k in ("grad_bytes", "optim_state_bytes", "param_bytes"):
    if real.get(k) is not None and sim.get(k) is not None:
        assert sim[k] == real[k], (k, sim[k], real[k])
print(f"{trace}: reserved {sim['max_memory_reserved']:,} B, {sim['num_device_alloc']} segments, "
      f"requested {sim['requested_bytes_peak']:,} B (real {real['requested_bytes_peak']:,}), oom {sim['oom']}")
PYEOF
}

# the real runs: an 80 GB H100, a 12 GiB card emulated by vramtrace (only the OOM run needs it)
export FAKECUDA_MEM=80GiB
"$PY" "$S/sim_hf.py" --model gpt2 --batch-size 4 --grad-accum 2 --steps 4 >hf.out 2>hf.err ||
    { tail -3 hf.err; fail "sim_hf.py gpt2 failed"; }
compare hf hf_gpt2_eager_b4.vt
"$PY" "$S/sim_hf.py" --model llama-160m --amp fp16 --batch-size 4 --grad-accum 2 --steps 4 \
    >llama.out 2>llama.err || { tail -3 llama.err; fail "sim_hf.py llama-160m failed"; }
compare llama hf_llama_fp16_b4.vt
# nanoGPT's OOM needs the card: run under vramtrace with it, as the real run was
"$VT" run -q --card 12GiB -o nano.vt -- "$PY" "$S/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" \
    --max_iters=2 --eval_iters=1 --eval_interval=1000 --compile=False --batch_size=8 \
    --gradient_accumulation_steps=4 >nano.out 2>nano.err
[ $? = 1 ] || { tail -3 nano.err; fail "sim_train.py B=8 was expected to run out of memory (exit 1)"; }
compare nano s_nano_eager_b8.vt
echo ok
