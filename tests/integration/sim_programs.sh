#!/bin/sh
# sim_programs.sh — the SIMULATED training programs (examples/sim/sim_hf.py, sim_vision.py) run
# briefly under `vramtrace run --card 12GiB` (a larger fake device): each trace is in mode
# tensor+segment, vramtrace's reserved and allocated peaks equal the program's own allocator
# counters, the bytes the program reports for parameters, gradients and optimizer state are the
# ones its model and optimizer imply (fp32 parameters, one gradient per trainable element, AdamW
# 8 B + a step, SGD momentum 4 B, Adafactor's factored rows and columns, LoRA: adapters only),
# the out-of-memory sizes fail where expected (also under expandable segments, where an expansion
# that fails leaves physical chunks never mapped), the backward runs on pt_autograd_0 and a
# checkpointed block's forward runs again there (under dynamo's disable() wrapper, as in
# PyTorch: recognized as checkpointing on, compile off).
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
S="$ROOT/examples/sim"

# case NAME EXPECT PROGRAM ARGS...: EXPECT is fit, or oom:PHASE (forward / backward)
case_run() {
    name=$1 expect=$2 prog=$3
    shift 3
    "$VT" run -q --card 12GiB -o "$name.vt" -- "$PY" "$S/$prog" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    case $expect in
    fit) [ $rc = 0 ] || { tail -5 "$name.err"; fail "$name: exit $rc, expected 0 (fits)"; } ;;
    *) [ $rc = 1 ] || { tail -5 "$name.err"; fail "$name: exit $rc, expected 1 (out of memory)"; } ;;
    esac
    grep -q 'SIMULATION' "$name.out" || fail "$name: the program does not say it is a simulation"
    "$VT" report --json "$name.vt" >"$name.json" || fail "$name: report --json failed"
    "$VT" dump "$name.vt" >"$name.jsonl" || fail "$name: dump failed"
    "$PY" - "$name" "$expect" <<'PYEOF' || fail "$name: see above"
import json, sys
name, expect = sys.argv[1], sys.argv[2]
t = json.loads([l for l in open(name + ".out") if l.startswith("VRAMTRACE_TORCH_STATS ")][-1].split(" ", 1)[1])
r = json.load(open(name + ".json"))
assert t["simulation"] is True, t
assert r["mode"] == "tensor+segment", r["mode"]
assert r["peak"]["reserved_bytes"] == t["max_memory_reserved"], (r["peak"], t["max_memory_reserved"])
assert r["peak"]["allocated_bytes"] == t["requested_bytes_peak"], (r["peak"], t["requested_bytes_peak"])
# the program's own bytes, against what its model and optimizer imply
assert t["param_bytes"] == 4 * t["params"], (t["param_bytes"], t["params"])
assert t["trainable_param_bytes"] == 4 * t["trainable_params"], t
if expect == "fit":
    assert t["oom"] is False and t["steps"] >= 1 and r["oom"] is None, (t["oom"], r["oom"])
    assert t["grad_bytes"] == 4 * t["trainable_params"], (t["grad_bytes"], t["trainable_params"])
    n, k, opt = t["trainable_params"], t["trainable_tensors"], t["optimizer"]
    fused = t["program"] == "sim_hf.py"  # AdamW fused (device step counters) vs foreach (host)
    want = {"adamw": 8 * n + (4 * k if fused else 0), "sgd": 4 * n,
            "adafactor": 4 * t["factored_elements"]}[opt]
    assert t["optim_state_bytes"] == want, (opt, t["optim_state_bytes"], want)
else:
    phase = expect.split(":")[1]
    assert t["oom"] is True and t["oom_phase"] == phase and t["steps"] == 0, (t["oom"], t["oom_phase"])
    assert t["num_ooms"] == 1 and r["oom"] and r["oom"]["requested_bytes"] > 0, (t["num_ooms"], r["oom"])
threads = {o["index"]: o["name"] for l in open(name + ".jsonl") for o in [json.loads(l)]
           if o["type"] == "thread"}
assert "pt_autograd_0" in threads.values() or expect == "oom:forward", threads
print(f"{name}: {t['model']} B={t['batch_size']} oom={t['oom']} reserved {t['max_memory_reserved'] / 2**30:.2f} GiB = vramtrace's")
PYEOF
}

case_run gpt2m_fit fit sim_hf.py --model gpt2-medium --batch-size 2 --grad-accum 2 --steps 1
case_run gpt2m_oom oom:forward sim_hf.py --model gpt2-medium --batch-size 4 --steps 1
case_run llama_fit fit sim_hf.py --model llama-400m --batch-size 2 --steps 1
case_run lora_fit fit sim_hf.py --model llama-400m --batch-size 4 --lora-rank 8 --steps 1
case_run bert_fit fit sim_hf.py --model bert-base --batch-size 8 --amp fp16 --steps 1
case_run bert_oom oom:backward sim_hf.py --model bert-base --batch-size 32 --steps 1
case_run ckpt_fit fit sim_hf.py --model gpt2 --batch-size 4 --gradient-checkpointing --steps 1
case_run sgd_fit fit sim_hf.py --model gpt2 --batch-size 1 --seq-len 512 --optimizer sgd --steps 1
case_run ada_fit fit sim_hf.py --model gpt2 --batch-size 1 --seq-len 512 --optimizer adafactor --steps 1
case_run resnet_fit fit sim_vision.py --model resnet50 --batch-size 64 --steps 1
case_run vit_fit fit sim_vision.py --model vit-b16 --batch-size 32 --steps 1

# expandable segments (PyTorch's ExpandableSegment::map: every chunk of an expansion created,
# then mapped; when the card is full the chunks made so far are released unmapped): the reserved
# peak counts mapped chunks only, as max_memory_reserved does, and the report says what it left out
export FAKE_C10_EXPANDABLE=1
case_run exp_oom oom:forward sim_hf.py --model gpt2-medium --batch-size 4 --steps 1
unset FAKE_C10_EXPANDABLE
"$PY" - <<'PYEOF' || fail "exp_oom: the unmapped chunks are not reported"
import json
r = json.load(open("exp_oom.json"))
assert r["peak"]["allocated_blocks_basis"] == "expandable_segments", r["peak"]
assert r["peak"]["unmapped_chunks"] > 0 and r["peak"]["unmapped_chunks_bytes"] == r["peak"]["unmapped_chunks"] * (2 << 20), r["peak"]
PYEOF
for view in text html; do
    if [ $view = text ]; then "$VT" report exp_oom.vt >exp_oom.$view 2>/dev/null; else
        "$VT" report --html exp_oom.$view exp_oom.vt >/dev/null 2>&1; fi
    grep -q 'physical chunks created and released without being mapped' exp_oom.$view ||
        fail "exp_oom: the $view report does not say what reserved leaves out"
done

# LoRA: only the adapters train (rank 8 on q, k, v, o of 24 layers of width 1024)
"$PY" - <<'PYEOF' || fail "lora: trainable parameters are not the adapters'"
import json
t = json.loads([l for l in open("lora_fit.out") if l.startswith("VRAMTRACE_TORCH_STATS ")][-1].split(" ", 1)[1])
assert t["trainable_params"] == 24 * 4 * 2 * 8 * 1024 and t["params"] > 300e6, t
PYEOF
# frames as torch's: the allocations sit under simtorch/nn/modules/linear.py, optim/adamw.py,
# amp/grad_scaler.py; the checkpointed blocks' forward runs again on the autograd thread
grep -q 'simtorch/nn/modules/linear.py' gpt2m_fit.jsonl || fail "no frame in simtorch/nn/modules/linear.py"
grep -q 'simtorch/optim/adamw.py' gpt2m_fit.jsonl || fail "no frame in simtorch/optim/adamw.py"
grep -q 'transformers/models/gpt2/modeling_gpt2.py' gpt2m_fit.jsonl || fail "no GPT-2 model frame"
grep -q 'simtorch/amp/grad_scaler.py' resnet_fit.jsonl || fail "no GradScaler frame (fp16)"
grep -q 'simtorch/optim/sgd.py' resnet_fit.jsonl || fail "no SGD frame"
PYTHONPATH="$ROOT/tests/python" "$PY" - <<'PYEOF' || fail "checkpointing: no forward recomputed on the autograd thread"
import vtdump
recs, stacks = vtdump.load("ckpt_fit.jsonl")
auto = {o["index"] for o in recs if o["type"] == "thread" and o["name"] == "pt_autograd_0"}
def ops(o):
    return [f.get("symbol") or "" for f in stacks.get(o["stack_id"]) or [] if f.get("kind") == "native"]
fwd = [o for o in recs if o["type"] == "alloc" and o["api"] == "torchAlloc" and o["thread"] in auto
       and any("native_layer_norm::call" in s for s in ops(o))]
assert len(fwd) >= 12, len(fwd)  # 12 blocks, each recomputing its layer norms
PYEOF
# checkpointing runs under dynamo's disable() wrapper (torch/_dynamo/eval_frame.py), as in
# PyTorch: an eager run all the same, never "compiled"; checkpointing on and never recommended
grep -q 'simtorch/_dynamo/eval_frame.py' ckpt_fit.jsonl || fail "checkpointing: no frame in _dynamo/eval_frame.py"
"$PY" - ckpt_fit.json <<'PYEOF' || fail "checkpointing under dynamo's disable(): recognized wrong (see above)"
import json, sys
r = json.load(open(sys.argv[1]))["recognized"]
assert r["activation_checkpointing"]["on"] is True, r["activation_checkpointing"]
assert r["torch_compile"]["on"] is False, "an eager checkpointed run called compiled: %s" % r["torch_compile"]
PYEOF
echo ok
