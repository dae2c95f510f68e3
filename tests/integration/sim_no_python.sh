#!/bin/sh
# sim_no_python.sh — a run recorded without Python frames (--stacks native, --stacks none): the
# report says at its top that categories and phases then rest on the order of events alone, and
# says nothing the recording cannot tell: never "no state (plain SGD)" for a fused AdamW whose
# state it counted as activations, never more trainable elements than weights ("132.76 M of the
# 124.37 M"); the same run with Python frames measures AdamW's 8 B per trainable parameter.
# Recorded with no stacks at all, the run's steps are still its own (3 optimizer steps, not 1),
# the parameters at the peak are the weights (not 4.47 GiB of every later forward's tensors),
# the weights are not read as 16-bit (no cast can be seen); without Python frames the optimizer's
# state the steps made is said to be in other rows (never "no optimizer state was alive"), and the
# current configuration needs what the completed run took, not that plus the state again.
set -u
. "$ROOT/tests/sim_env.sh"
for m in all native none; do
    timeout 300 "$VT" run --stacks $m --card 12GiB -o "s_$m.vt" -- python3 \
        "$ROOT/examples/sim/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" \
        --batch_size=4 --gradient_accumulation_steps=2 --max_iters=3 --eval_iters=1 \
        --compile=False >"run_$m.out" 2>&1 || { tail -n 5 "run_$m.out"; fail "--stacks $m: run failed"; }
    "$VT" report --no-color "s_$m.vt" >"r_$m.txt" || fail "--stacks $m: report failed"
done
grep -q '^  optimizer  .*8.00 B of state per trainable parameter' r_all.txt ||
    fail "with Python frames: AdamW's state not measured: $(grep '^  optimizer  ' r_all.txt)"
grep -q '^  stacks ' r_all.txt && fail "with Python frames: a stacks caveat"
for m in native none; do
    want="native only"
    [ $m = none ] && want="none"
    grep -q "^  stacks   $want: no Python frames" "r_$m.txt" || fail "--stacks $m: no caveat at the top"
    grep -q 'plain SGD' "r_$m.txt" && fail "--stacks $m: $(grep 'plain SGD' "r_$m.txt" | head -n 1)"
    grep -q '^  events .* 3 optimizer steps' "r_$m.txt" || fail "--stacks $m: $(grep '^  events' "r_$m.txt")"
    grep -q 'no optimizer state was alive' "r_$m.txt" && fail "--stacks $m: 'no optimizer state was alive'"
    grep -q '^    optimizer (vs basic): not told apart: no Python frames were recorded' "r_$m.txt" ||
        fail "--stacks $m: $(grep '^    optimizer (vs basic)' "r_$m.txt")"
    python3 - r_all.txt "r_$m.txt" <<'PY' || fail "--stacks $m: parameters, P or the current need off"
import re, sys
GIB = {"B": 1 / 2**30, "KiB": 1 / 2**20, "MiB": 1 / 1024, "GiB": 1, "TiB": 1024}
def gib(t, pat):
    m = re.search(pat + r" +([\d.]+) (B|KiB|MiB|GiB|TiB)", t, re.M)
    assert m, pat
    return float(m.group(1)) * GIB[m.group(2)]
a, b = (open(f).read() for f in sys.argv[1:])
pa, pb = gib(a, r"^  parameters"), gib(b, r"^  parameters")
assert abs(pb - pa) <= 0.1 * pa, (pa, pb)
assert re.search(r"P = ([\d.]+) M", a).group(1) == re.search(r"P = ([\d.]+) M", b).group(1)
need = float(re.search(r"current configuration needs ~([\d.]+) GiB", b).group(1))
assert need <= gib(b, r"^  process \(all device\)") + 0.01, need
PY
    # the state counted among the activations is taken out of them for the what-ifs: a smaller
    # micro-batch keeps it (native: the micro-batch what-ifs within 2 % of the run with every
    # frame; B=1 had been 3.34 GiB for 3.61)
    "$VT" report --json "s_$m.vt" >"r_$m.json" && "$VT" report --json s_all.vt >r_all.json || fail "json"
    [ $m = native ] && { python3 - r_all.json "r_$m.json" <<'PY' || fail "--stacks $m: the micro-batch what-ifs"
import json, sys
a, b = (json.load(open(f))["advice"] for f in sys.argv[1:])
key = lambda x: (x["batch_size"], x["gradient_accumulation_steps"], x["block_size"])
pa = {key(x): x["predicted_peak_bytes"] for x in a}
n = 0
for x in b:
    k = key(x)
    if k in pa and k[0] != 4:
        n += 1
        assert abs(x["predicted_peak_bytes"] / pa[k] - 1) < 0.02, (k, x["predicted_peak_bytes"], pa[k])
assert n >= 2, n
PY
    }
    grep -q 'the what-ifs take .* MiB of them for it (8.00 B per trainable parameter' "r_$m.txt" ||
        fail "--stacks $m: no note of the state taken out of the activations"
    python3 - "r_$m.txt" <<'PY' || fail "--stacks $m: more trainable elements than weights"
import re, sys
for m in re.finditer(r"trainable +([\d.]+) M of the ([\d.]+) M", open(sys.argv[1]).read()):
    assert float(m.group(1)) <= float(m.group(2)), m.group(0)
PY
done
# a Hugging Face Llama (autocast bf16 over fp32 weights) recorded without native frames, or with
# them cut short by --depth, and BERT without Python frames: no cast can be seen (or none as the
# first forward's), so the weights are never read as 16-bit (no "16-bit parameters", no doubled
# P or width, AdamW's 8 B per trainable parameter); without native frames or with them cut short,
# the report says so at its top, in JSON and on the HTML page
for c in "llama all" "llama python" "llama depth3" "bert all" "bert native"; do
    set -- $c
    model=llama-160m opt="--stacks all"
    [ $1 = bert ] && model=bert-base
    case $2 in python) opt="--stacks python" ;; depth3) opt="--depth 3" ;; native) opt="--stacks native" ;; esac
    # shellcheck disable=SC2086
    timeout 300 "$VT" run $opt --card 12GiB -o "h_$1_$2.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model $model --batch-size 4 --steps 2 >"hrun_$1_$2.out" 2>&1 ||
        { tail -n 5 "hrun_$1_$2.out"; fail "$1 $2: run failed"; }
    "$VT" report --no-color "h_$1_$2.vt" >"h_$1_$2.txt" && "$VT" report --json "h_$1_$2.vt" >"h_$1_$2.json" &&
        "$VT" export --html "h_$1_$2.html" "h_$1_$2.vt" >/dev/null || fail "$1 $2: report failed"
done
for c in "llama python" "llama depth3" "bert native"; do
    set -- $c
    grep -q '16-bit parameters' "h_$1_$2.txt" && fail "$1 $2: $(grep -m1 '16-bit parameters' "h_$1_$2.txt")"
    python3 - "h_$1_all.json" "h_$1_$2.json" <<'PY' || fail "$1 $2: P, width or trainable differ from the recording with every frame"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for k in ("n_embd",):
    assert a["config"][k]["value"] == b["config"][k]["value"], (k, a["config"][k], b["config"][k])
ra, rb = a["recognized"], b["recognized"]
assert ra.get("trainable_params") == rb.get("trainable_params") or rb.get("trainable_params") is None, \
    (ra.get("trainable_params"), rb.get("trainable_params"))
PY
done
for c in "llama python|python only: no native frames, so autocast's 16-bit copies of weights" \
    "llama depth3|native frames cut at --depth 3: none reached an ATen operator"; do
    t=$(echo "${c%%|*}" | tr ' ' _) want=${c#*|}
    grep -qF "  stacks   $want" "h_$t.txt" || fail "$t: no stacks line at the top: $(grep '^  stacks' "h_$t.txt")"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert sys.argv[2] in r["stacks_note"], r.get("stacks_note")' \
        "h_$t.json" "$want" || fail "$t: no stacks_note in JSON"
    grep -qF "${want%%\'*}" "h_$t.html" || fail "$t: no stacks note on the HTML page" # (' escaped)
done
grep -q '^  stacks' h_llama_all.txt && fail "all frames: a stacks line"
# BERT without Python frames: its kind is not told by the sizes, never "a decoder"
grep -q '^what was trained: a transformer language model (a decoder or an encoder: the tensor sizes do not tell)' h_bert_native.txt ||
    fail "bert native: $(grep '^what was trained' h_bert_native.txt)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["recognized"]; assert r["family_from_sizes"] is True, r' \
    h_bert_native.json || fail "bert native: family_from_sizes"
# steps ran: never "no step ran" beside them (the script's argparse default names the optimizer)
for t in r_native r_none h_bert_native; do
    grep -q 'no step ran' "$t.txt" && fail "$t: $(grep -m1 -o '.\{60\}no step ran.\{30\}' "$t.txt")"
done
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "stacks_note" not in r and r["run"]["stacks"] == "all" and r["run"]["stack_depth"] == 32, r["run"]' \
    h_llama_all.json || fail "all frames: run.stacks / stack_depth / stacks_note"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["run"]["stacks"] == "python", r["run"]' \
    h_llama_python.json || fail "python: run.stacks"
# recorded with no stacks, a run that ran out of memory in its first forward (no backward pass or
# step ever came): its weights are not its forward's tensors (it had been told "parameters 8.99
# GiB" for 474 MiB of weights, "needs ~53.27 GiB" and "none of these fits"): the first forward
# begins at the main thread's first free of a tensor; the weights within 1 % of the recording
# with every frame, the logits told, the OOM in the forward
for m in all none; do
    timeout 300 "$VT" run --stacks $m --card 12GiB -o "o_$m.vt" -- python3 \
        "$ROOT/examples/sim/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" \
        --max_iters=2 >"orun_$m.out" 2>&1 # (the program fails: out of memory)
    grep -q 'OOM: yes' "orun_$m.out" || { tail -n 5 "orun_$m.out"; fail "oom --stacks $m: no OOM"; }
    "$VT" report --json "o_$m.vt" >"o_$m.json" && "$VT" report --no-color "o_$m.vt" >"o_$m.txt" ||
        fail "oom --stacks $m: report failed"
done
grep -q '^OOM: .* during forward;' o_none.txt || fail "oom none: $(grep '^OOM' o_none.txt)"
python3 - o_all.json o_none.json <<'PY' || fail "oom none: the weights or the forward's tensors off"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["oom"] and b["oom"], "no OOM"
ca, cb = a["categories"], b["categories"]
assert abs(cb["parameters"] / ca["parameters"] - 1) < 0.01, (ca["parameters"], cb["parameters"])
assert cb["logits_loss"] == ca["logits_loss"] > 0, (ca["logits_loss"], cb["logits_loss"])
assert cb["activations"] >= ca["activations"], (ca["activations"], cb["activations"])
assert any(x.get("recommended") for x in b["advice"]), "no recommendation"
PY
# recorded with no stacks, weights cast to 16 bits on the device (model.to(dev), then
# model.to(bf16): each fp32 weight freed there): those frees are no forward's beginning (a
# tensor made long before is a weight), so the weights are all parameters (73 MiB of 237 had
# been, the rest of init taken for the forward); a cuBLAS workspace of 33 MiB made before the
# first forward's first free is still counted with them
for m in all none; do
    timeout 300 "$VT" run --stacks $m --card 12GiB -o "c_$m.vt" -- python3 "$ROOT/examples/sim/sim_hf.py" \
        --model gpt2 --batch-size 4 --steps 2 --dtype bf16 --amp none --cast-on-device >"crun_$m.out" 2>&1 ||
        { tail -n 5 "crun_$m.out"; fail "cast on device, --stacks $m: run failed"; }
    "$VT" report --json "c_$m.vt" >"c_$m.json" || fail "cast on device, --stacks $m: report failed"
done
python3 - c_all.json c_none.json <<'PY' || fail "cast on device, no stacks: the weights"
import json, sys
a, b = (json.load(open(f))["categories"]["parameters"] for f in sys.argv[1:])
assert a <= b <= a + (40 << 20), (a, b)
PY
# with every frame the weights cast on the device are read as what they became: 16-bit, their
# element count and the model's shape the program's, AdamW's state 4 B (its moments in the
# parameters' 16 bits) per parameter (the fp32 weights freed by the cast had broken the weights
# read from the first allocation on: "62.22 M elements at 4 B", 8 B of state, no L, d or T)
python3 - c_all.json crun_all.out <<'PY' || fail "cast on device: the weights' shape and dtype"
import json, sys
r = json.load(open(sys.argv[1]))
truth = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2])
             if l.startswith("VRAMTRACE_TORCH_STATS "))
inf = r["inferred"]
assert inf["params"]["value"] == truth["params"], (inf["params"], truth["params"])
assert inf["param_dtype_bytes"]["value"] == 2, inf["param_dtype_bytes"]
for k, want in (("n_layer", 12), ("n_embd", 768), ("block_size", 1024)):
    assert r["config"][k]["value"] == want, (k, r["config"][k])
state = truth["optim_state_bytes"] / truth["params"]
assert abs(state - 4) < 0.01, state
opt = r["recognized"]["optimizer"]
assert abs(opt["state_bytes_per_trainable_param"] - state) < 0.01, opt
PY
# with no stacks, position ids cannot be told from another small int64 tensor of the forward: T
# is not read from one (a Hugging Face Trainer's GPT-2 at T = 1024 had been told "the trace's
# T = 512 from the position ids does not agree"); the position embedding, or the batch, says it
timeout 300 "$VT" run --stacks none --card 12GiB -o tr_none.vt -- python3 "$ROOT/examples/sim/sim_trainer.py" \
    --model gpt2 >tr_none.out 2>&1 || { tail -n 5 tr_none.out; fail "trainer, --stacks none: run failed"; }
"$VT" report --no-color tr_none.vt >tr_none.txt || fail "trainer, --stacks none: report"
grep -Eq '^  tokens per sample T( \([^)]*\))? +1024 ' tr_none.txt && ! grep -q 'from the position ids' tr_none.txt ||
    fail "trainer, --stacks none: $(grep '^  tokens per sample T' tr_none.txt)"
# and its optimizer step has its row in the peaks by phase, the process level as with every
# stack (it had none beside "1 optimizer step"): the allocations after the backward were the step's
timeout 300 "$VT" run --card 12GiB -o tr_all.vt -- python3 "$ROOT/examples/sim/sim_trainer.py" \
    --model gpt2 >tr_all.out 2>&1 || { tail -n 5 tr_all.out; fail "trainer: run failed"; }
"$VT" report --json tr_none.vt >tr_none.json && "$VT" report --json tr_all.vt >tr_all.json || fail "trainer: report --json"
python3 - tr_none.json tr_all.json <<'PY' || fail "trainer, --stacks none: the optimizer phase's peak"
import json, sys
n, a = (json.load(open(f)) for f in sys.argv[1:])
pn, pa = n["phases"], a["phases"]
assert n["iterations"] == 1 and pn.get("optimizer") == pa["optimizer"], (pn, pa)
PY
echo "sim_no_python: ok"
