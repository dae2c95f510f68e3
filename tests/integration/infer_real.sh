#!/bin/sh
# infer_real.sh — `vramtrace report --json` "inferred" on the real H100 traces against the
# truth in facts.jsonl: P within 1 %, L, d, V exact (GPT-2 nanoGPT 50304, HF 50257, Llama
# 32000), B and T exact from the command line. A run that died of an out-of-memory error in its
# first forward (no backward: the parameters are what was alive at the failure, less the token
# batch and the forward's first outputs) gives P, L, d and V exactly too, and B or T only when its
# logits were made (never a wrong one); one that died in its first backward the same way.
set -u
D="$ROOT/examples/traces/h100-torch2.11"
for t in hf_gpt2_eager_b4 hf_gpt2_compile_b4 hf_llama_fp16_b4 s_llama_fp16_b12 s_nano_eager_b8 \
         s_nano_compile_b10 g_compile_b8_12gib hf_llama_fp16_b24 s_hf_gpt2_eager_b12 hf_gpt2_eager_b16 \
         b_oom_12gib s_hf_gpt2_eager_b8; do
    "$VT" report --json "$D/$t.vt" >"$t.json" || { echo "report $t failed"; exit 1; }
done
python3 - "$D/facts.jsonl" <<'PYEOF' || exit 1
import json, re, sys
facts = {json.loads(l)["trace"]: json.loads(l) for l in open(sys.argv[1])}
def want(cmd):
    b = re.search(r"--batch[-_]size[= ](\d+)", cmd)
    return int(b.group(1)) if b else None
cases = {"hf_gpt2_eager_b4": (12, 768, 50257), "hf_gpt2_compile_b4": (12, 768, 50257),
         "hf_llama_fp16_b4": (12, 768, 32000), "s_llama_fp16_b12": (12, 768, 32000),
         "s_nano_eager_b8": (12, 768, 50304), "s_nano_compile_b10": (12, 768, 50304),
         "g_compile_b8_12gib": (12, 768, 50304),
         # out of memory in its first backward: what was alive at the failure, as in a forward
         "s_hf_gpt2_eager_b8": (12, 768, 50257)}
for t, (L, d, V) in cases.items():
    f = facts[t + ".vt"]
    inf = json.load(open(t + ".json"))["inferred"]
    val = lambda k: inf[k]["value"]
    P = val("params")
    assert abs(P - f["params"]) / f["params"] < 0.01, (t, P, f["params"])
    assert (val("n_layer"), val("n_embd"), val("vocab_size")) == (L, d, V), (t, inf)
    B = want(f["command"])
    if B is None:
        B = 16  # the config's batch_size (gpt2-124m-12gb.py)
    assert val("batch_size") == B, (t, val("batch_size"), B)
    assert val("block_size") == 1024, (t, val("block_size"))
    assert all(inf[k]["where"] for k in inf), t
# died in the first forward (an OOM before any backward)
oom = {"hf_llama_fp16_b24": (12, 768, 32000), "s_hf_gpt2_eager_b12": (12, 768, 50257),
       "hf_gpt2_eager_b16": (12, 768, 50257), "b_oom_12gib": (12, 768, 50304)}
for t, (L, d, V) in oom.items():
    f = facts[t + ".vt"]
    inf = json.load(open(t + ".json"))["inferred"]
    val = lambda k: inf[k]["value"]
    assert abs(val("params") - f["params"]) / f["params"] < 0.01, (t, val("params"), f["params"])
    assert "out-of-memory" in inf["params"]["where"], (t, inf["params"])
    assert (val("n_layer"), val("n_embd"), val("vocab_size")) == (L, d, V), (t, inf)
    B = want(f["command"]) or 16
    assert "batch_size" not in inf or val("batch_size") == B, (t, inf.get("batch_size"), B)
    assert "block_size" not in inf or val("block_size") == 1024, (t, inf.get("block_size"))
assert json.load(open("b_oom_12gib.json"))["inferred"]["batch_size"]["value"] == 16
# a program that is not nanoGPT: the formula comparison counts the trace's own parameters (a
# Llama's P is not the GPT formula's of the same L, d, V); nanoGPT keeps the formula's
for t in list(cases) + list(oom):
    j = json.load(open(t + ".json"))
    pc, P = j["formula"]["parameter_count"], facts[t + ".vt"]["params"]
    if "hf_train.py" in facts[t + ".vt"]["command"]:
        assert pc["from_trace"] and abs(pc["from_trace"] - P) / P < 0.01, (t, pc, P)
    else:
        assert pc["from_trace"] is None, (t, pc)
PYEOF
# a run recorded in tensor mode (--tensors: PyTorch's cudaMallocAsync backend, a cudaMallocAsync
# per tensor, no tracker): its tensors say the model as the tracker's do: the shape of
# examples/gpt/config/nanogpt-30m-4070.py, which it ran (every value "unknown" until 2026-12-01),
# and the formula applies
"$VT" report --json "$ROOT/examples/traces/a_tensors_eager.vt" >a_tensors.json || { echo "report a_tensors_eager failed"; exit 1; }
python3 - a_tensors.json "$ROOT/examples/gpt/config/nanogpt-30m-4070.py" <<'PYEOF' || exit 1
import json, re, sys
r = json.load(open(sys.argv[1]))
cfg = dict(re.findall(r"^(\w+) = (\d+)$", open(sys.argv[2]).read(), re.M))
inf = r["inferred"]
for k in ("batch_size", "block_size", "n_layer", "n_head", "n_embd"):
    assert inf[k]["value"] == int(cfg[k]), (k, inf.get(k), cfg[k])
assert inf["vocab_size"]["value"] == 50304 and inf["bias"]["value"] == 0, inf
assert r["formula_applies"] and r["formula"]["parameters"]["refined_bytes"] == r["formula"]["parameters"]["measured_bytes"], \
    (r["formula_applies"], r.get("formula_note"))
PYEOF
echo ok
