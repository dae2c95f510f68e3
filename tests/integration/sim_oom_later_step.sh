#!/bin/sh
# sim_oom_later_step.sh — a SIMULATED GAN (BatchNorm generator and discriminator, Adam) at
# B=1024 on a 12 GiB card ran three steps and ran out of memory in its fourth step's backward
# (fragmentation), its activations partly freed by then: 7.61 GiB of them at the failure, 9.48 at
# its tensors' peak in an earlier step. The what-ifs had taken the state at the failure for the
# step's peak: B=944 was predicted 9.26 GiB of tensors (its run took 10.06), B=800 7.90 (8.58).
# Where the tensors peaked in a step after the first that ended, that peak is kept too: a what-if
# is within 2 % of its run's tensors, not below them by more. (And a Llama whose OOM came in its
# second forward: below.)
set -u
. "$ROOT/tests/sim_env.sh"
gan() { # name, batch
    timeout 300 "$VT" run -q --card 12GiB -o "$1.vt" -- python3 "$ROOT/examples/sim/sim_gan.py" --batch-size "$2" \
        --width 128 --steps 4 </dev/null >"$1.out" 2>&1
    "$VT" report --json "$1.vt" >"$1.json" || fail "$1: report"
}
gan big 1024
python3 - big.json big.out <<'PY' || fail "the B=1024 run is not the case: see above"
import json, sys
r = json.load(open(sys.argv[1]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert st["oom"] and r["oom"]["phase"] == "backward" and r["iterations"] >= 2, (st["oom"], r["oom"]["phase"], r["iterations"])
PY
for b in 944 800; do
    "$VT" predict --from big.vt --batch-size $b --card 12GiB --json >p$b.json || fail "predict --from at $b"
    gan m$b $b
    python3 - p$b.json m$b.json m$b.out <<'PY' || fail "B=$b: see above"
import json, sys
p, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
st = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[3]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert not st["oom"], "it ran out of memory"
pred, got = p["tensor_bytes"], st["max_memory_allocated"]
assert abs(pred / got - 1) < 0.02, ("tensors predicted %.3f GiB, measured %.3f" % (pred / 2**30, got / 2**30))
print("B=%s: tensors predicted %.2f GiB, measured %.2f" % (sys.argv[1][1:-5], pred / 2**30, got / 2**30))
PY
done
# not a first step's peak: a compiled run's holds its warm-up (HF GPT-2 compiled at B=16 on an
# H100, out of memory in its second step: B=8 is predicted within 5 % of its sibling's measured
# tensors, 6.87 GiB; with its first step's peak kept it had been 10.65 GiB of process for 8.33)
H="$ROOT/examples/traces/h100-torch2.11"
"$VT" report --json "$H/hf_gpt2_compile_b16.vt" >h16.json && "$VT" report --json "$H/s_hf_gpt2_compile_b8.vt" >h8.json ||
    fail "report of the committed H100 traces"
python3 - h16.json h8.json <<'PY' || fail "HF GPT-2 compiled: see above"
import json, sys
r, m = (json.load(open(f)) for f in sys.argv[1:])
a = [x for x in r["advice"] if x["change"] == "micro-batch 16 \u2192 8"]
assert a, [x["change"] for x in r["advice"]]
pred, got = a[0]["predicted_allocated_bytes"], m["peak"]["allocated_bytes"]
assert abs(pred / got - 1) < 0.05, (pred, got)
PY
# an OOM in a later step's forward, after a step that ended: a SIMULATED Llama 160M at B=12 (HF,
# bf16 autocast, AdamW, the KV cache on) on 12 GiB ran its first step and ran out of memory in its
# second forward, the optimizer's state made. Its tensors had peaked at the end of the first
# forward (10*B*T*V of logits/loss and the KV cache's copies, freed before the backward); the
# whole step's 12*B*T*V is reached in the loss's backward, without the copies. Taken as a forward
# the OOM cut short, the logits were held at the formula's 12 on top of the copies: "needs 15.82
# GiB" (12.94 of tensors) for a configuration that takes 12.24 of tensors on a larger card, and
# B=6 A=2 predicted 7.84 for 7.50. The configuration and the recommended one, each run on 24 GiB:
# the tensors predicted within 2 %.
llama() { # name, card, batch, accumulation
    timeout 300 "$VT" run -q --card "$2" -o "$1.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model llama-160m --batch-size "$3" --grad-accum "$4" --steps 2 </dev/null >"$1.out" 2>&1
    "$VT" report --json "$1.vt" >"$1.json" || fail "$1: report"
}
llama l12 12GiB 12 1
llama l12big 24GiB 12 1
llama l6big 24GiB 6 2
"$VT" predict --from l12.vt --batch-size 6 --grad-accum 2 --card 12GiB --json >lp6.json ||
    fail "predict --from l12.vt"
python3 - l12.json l12.out l12big.out lp6.json l6big.out <<'PY' || fail "Llama 160M B=12: see above"
import json, sys
r = json.load(open(sys.argv[1]))
st = [next(json.loads(l.split(" ", 1)[1]) for l in open(f) if l.startswith("VRAMTRACE_TORCH_STATS "))
      for f in (sys.argv[2], sys.argv[3], sys.argv[5])]
assert st[0]["oom"] and r["oom"]["phase"] == "forward" and r["iterations"] == 1, "not the case"
assert not st[1]["oom"] and not st[2]["oom"], "a run on 24 GiB ran out of memory"
p6 = json.load(open(sys.argv[4]))
for what, pred, got in (("B=12", r["prediction"]["current_allocated_bytes"], st[1]["requested_bytes_peak"]),
                        ("B=6 A=2", p6["tensor_bytes"], st[2]["requested_bytes_peak"])):
    print("%s: tensors predicted %.3f GiB, its run %.3f" % (what, pred / 2**30, got / 2**30))
    assert abs(pred / got - 1) < 0.02, what
PY
echo "sim_oom_later_step: ok"
