#!/bin/sh
# ex_sim.sh — the SIMULATION workload (examples/sim/sim_train.py) on the fake CUDA runtime,
# without vramtrace: OOM like PyTorch's on a small device (exit 1), peaks equal to the refined
# formula (formula.md §3) when it fits, tensor mode (cudaMallocAsync) agreeing with the caching
# allocator, gradient accumulation adding the fp32 gradients, usage errors.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
SIM="$ROOT/examples/sim/sim_train.py"
CFG="$ROOT/examples/gpt/config/gpt2-124m-12gb.py"
stats() { sed -n 's/^VRAMTRACE_TORCH_STATS //p' "$1" >"$1.json"; }
ARGS="--max_iters=2 --eval_iters=1 --eval_interval=1000"

# 1. the documents' case on a 12 GiB device: out of memory, exit 1, PyTorch-like message
FAKECUDA_MEM=12GiB "$PY" "$SIM" "$CFG" $ARGS >oom.txt 2>&1
rc=$?
[ $rc = 1 ] || { cat oom.txt; fail "12 GiB device: expected exit 1 (OOM), got $rc"; }
grep -q 'OutOfMemoryError: CUDA out of memory (SIMULATED). Tried to allocate' oom.txt || fail "no OOM message: $(tail -3 oom.txt)"
grep -q 'SIMULATION' oom.txt || fail "the run does not say it is a simulation"
stats oom.txt

# 2. fits on a large device: peaks against the refined formula, A=32 and A=1, caching and async
for run in "c32 --allocator=caching" "a32 --allocator=async" "c1 --allocator=caching --gradient_accumulation_steps=1"; do
    name=${run%% *}
    # shellcheck disable=SC2086
    FAKECUDA_MEM=48GiB "$PY" "$SIM" "$CFG" $ARGS ${run#* } >"$name.txt" 2>&1 || { tail -5 "$name.txt"; fail "$name: failed"; }
    stats "$name.txt"
done
PYTHONDONTWRITEBYTECODE=1 "$PY" - <<'PYEOF' || fail "figures wrong"
import json
def load(n):
    return json.load(open(n + ".txt.json"))
oom, c32, a32, c1 = (load(n) for n in ("oom", "c32", "a32", "c1"))
L, H, d, T, V, B = 12, 12, 768, 1024, 50304, 16
N = B * T
P = V * d + T * d + L * (12 * d * d + 2 * d) + d
Pmm = 12 * L * d * d + V * d
peak = 4 * P + 8 * P + 2 * Pmm + L * (36 * N * d + 16 * N + 4 * N * H) + 6 * N * d + 24 * N + 12 * N * V
assert c32["params"] == P, (c32["params"], P)
for name, s, want in (("c32", c32, peak + 4 * P), ("a32", a32, peak + 4 * P), ("c1", c1, peak)):
    got = s["max_memory_allocated"]
    assert abs(got - want) / want < 0.01, f"{name}: allocated peak {got} vs formula {want}"
    assert s["oom"] is False and s["iters"] == 2 and s["simulation"] is True, s
# caching allocator: segments (2 MiB / 20 MiB / own), reserved above allocated; async: none
assert c32["num_device_alloc"] > 10 and c32["max_memory_reserved"] > c32["max_memory_allocated"], c32
assert a32["num_device_alloc"] == 0 and a32["allocator_backend"] == "cudaMallocAsync", a32
assert abs(a32["max_memory_allocated"] - c32["max_memory_allocated"]) / c32["max_memory_allocated"] < 0.005
# the OOM: PyTorch's retry after freeing the cache, one OOM counted
assert oom["oom"] is True and oom["num_ooms"] == 1 and oom["num_alloc_retries"] >= 1, oom
assert oom["mem_get_info_total"] == 12 << 30, oom
PYEOF

# 3. PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync selects tensor mode, like PyTorch
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync FAKECUDA_MEM=48GiB "$PY" "$SIM" "$CFG" $ARGS \
    --n_layer=2 >env.txt 2>&1 || fail "async via env failed"
grep -q 'allocator=async' env.txt || fail "PYTORCH_CUDA_ALLOC_CONF backend not honoured"

# 4. usage errors: exit 2 naming the argument
"$PY" "$SIM" --no_such_knob=1 >bad.txt 2>&1
[ $? = 2 ] && grep -q no_such_knob bad.txt || fail "unknown knob not a usage error"
"$PY" "$SIM" --allocator=magic >bad.txt 2>&1
[ $? = 2 ] || fail "bad allocator not a usage error"
echo ok
