#!/bin/sh
# gpu_beyond_dry.sh — the GPU session's `VALIDATE_SET=beyond` (scripts/gpu-beyond.sh, through
# scripts/gpu-validate.sh) run here as a dry run: the SIMULATED programs on the fake CUDA
# (VALIDATE_PROGRAMS=sim), then the real programs on the simulation (shim, and real with `torch`
# being simtorch), a few runs each. Its plumbing is checked: arguments, runs without an offline
# counterpart or whose package is missing skipped with a line, a Llama's config.json written and
# `vramtrace predict` of it held to what the run measured, the
# truth lines parsed into results.jsonl and facts.jsonl, vramtrace's figures equal the program's,
# ONE tarball with traces, facts and reports, and runs past the time budget skipped, saying so.
# runs: early (the GPU workloads dry: about 1 minute)
set -u
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "no python3"; exit 77; }
[ -f "$BUILD/examples/libsimtorch.so" ] || { echo "gpu_beyond_dry: libsimtorch.so not built"; exit 1; }
export PYTHONDONTWRITEBYTECODE=1 TMPDIR="$PWD" # the script's work files stay in the test's folder
fail() { echo "gpu_beyond_dry: $*"; exit 1; }
RUNS=gan_b64_fit,vitb16_probe_b256_fit,gpt2_eval_b16_fit,gpt2_kd_gpt2m_b2_fit,gpt2_evalb16_b4_fit,llama_gqa300m_b4_fit,bert_b32_oom,resnet50_b128_fit,gpt2_adafactor_b4_fit,t5small_b8_fit,lit_gpt2_b4_fit

# dry OUT PROGRAMS [BUDGET]: the script as the GPU session runs it, on the simulation
dry() {
    PYTHON=$PY BUILD_DIR=$BUILD VALIDATE_PROGRAMS=$2 VALIDATE_BUDGET_S=${3:-300} BEYOND_ONLY=$RUNS \
        VALIDATE_SET=beyond bash "$ROOT/scripts/gpu-validate.sh" "$1" >"$1.out" 2>&1 ||
        { tail -20 "$1.out"; fail "$2: gpu-validate.sh VALIDATE_SET=beyond failed"; }
}
dry sim sim
for f in beyond.tgz results.jsonl summary.md beyond.log; do
    [ -s "sim/$f" ] || fail "sim: $f missing from OUTDIR"
done
for r in t5small_b8_fit lit_gpt2_b4_fit; do
    grep -q "$r: skipped, no sim counterpart" sim/summary.md || fail "sim: $r not said skipped"
done
mkdir x && tar -xzf sim/beyond.tgz -C x || fail "sim: the tarball does not unpack"
"$PY" - x/pack sim <<'PYEOF' || fail "sim: see above"
import json, os, sys
pack, out = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
rows_all, gan, probe, rows = rows, rows[0], rows[1], rows[2:]
# a GAN: its two models' weights all train, counted as the program does
assert gan["case"] == "gan_b64_fit" and gan["verdict"] == "PASS", gan
assert gan["vt"]["trainable_params"] == gan["torch"]["trainable_params"] == gan["torch"]["params"], gan
# a linear probe: the head's weights alone train
assert probe["case"] == "vitb16_probe_b256_fit" and probe["verdict"] == "PASS", probe
assert probe["vt"]["trainable_params"] == probe["torch"]["trainable_params"] < probe["torch"]["params"] / 10, probe
assert [r["case"] for r in rows] == ["gpt2_eval_b16_fit", "gpt2_kd_gpt2m_b2_fit", "gpt2_evalb16_b4_fit",
                                    "llama_gqa300m_b4_fit", "bert_b32_oom", "resnet50_b128_fit",
                                    "gpt2_adafactor_b4_fit"], rows
for r in rows:
    t, vt = r["torch"], r["vt"]
    assert r["verdict"] == "PASS", (r["case"], r["problems"])
    assert r["as_expected"] is True and r["expect_source"] == "simulation", r
    assert t["simulation"] is True and t["program"].startswith("sim_"), t["program"]
    assert vt["segments"] == t["num_device_alloc"] and vt["peak_reserved"] == t["max_memory_reserved"]
    assert os.path.getsize(os.path.join(pack, "traces", r["case"] + ".vt")) > 10000, r["case"]
    assert os.path.exists(os.path.join(pack, "reports", r["case"] + ".txt")), r["case"]
oom = rows[4]
assert oom["outcome"] == "oom" and oom["torch"]["oom_phase"] == "backward" and oom["vt"]["oom"], oom
assert rows[5]["vt"]["family"] == "convolutional" and rows[5]["vt"]["optimizer"] == "momentum", rows[5]["vt"]
# the distilled run: the student's 124.44 M train, the teacher's weights are parameters too
kd = rows[1]
assert kd["vt"]["trainable_params"] == kd["torch"]["trainable_params"] < kd["torch"]["params"], kd
# the evaluation-only run: a run of forwards, said so, its eval_only checked against it
ev = rows[0]
assert ev["torch"]["eval_only"] is True and ev["vt"]["no_training"] is True and not ev["recognition"], ev
# the Llama wrote its config.json, and `vramtrace predict` of it was held to what the run measured
cfg = json.load(open(os.path.join(pack, "reports", "llama_gqa300m_b4_fit.config.json")))
assert cfg["model_type"] == "llama" and cfg["num_key_value_heads"] == 4, cfg
summary = open(os.path.join(out, "summary.md")).read()
import re
m = re.search(r"llama_gqa300m_b4_fit: `vramtrace predict` of its config.json: tensors .* measured: "
              r"([-+][0-9.]+) %.*; predicted to fit on 12 GiB, the run fit", summary)
assert m and abs(float(m.group(1))) < 4, summary
facts = [json.loads(l) for l in open(os.path.join(pack, "facts.jsonl"))]
assert [f["trace"] for f in facts] == [r["case"] + ".vt" for r in rows_all], facts
for f in facts:
    assert f["command"].startswith("vramtrace run --card 12GiB -- python examples/sim/"), f["command"]
    for k in ("exit_code", "params", "param_bytes", "grad_bytes", "optim_state_bytes", "steps", "oom",
              "requested_bytes_peak", "max_memory_reserved", "num_device_alloc", "batch_size"):
        assert k in f, (f["trace"], k)
print(f"sim: {len(rows)} runs PASS, {len(facts)} facts, tarball of {len(os.listdir(os.path.join(pack, 'traces')))} traces")
PYEOF

# the real programs on the simulation: the same figures as the simulated programs'
dry shim shim
"$PY" - sim/results.jsonl shim/results.jsonl <<'PYEOF' || fail "shim: see above"
import json, sys
sim, shim = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
assert [r["case"] for r in shim] == [r["case"] for r in sim], shim
for a, b in zip(sim, shim):
    assert b["verdict"] == "PASS" and b["torch"]["program"] in ("hf_train.py", "vision_train.py",
                                                                 "gan_train.py"), b
    assert b["command"].startswith("vramtrace run --card 12GiB -- python examples/"), b["command"]
    for k in ("max_memory_reserved", "requested_bytes_peak", "num_device_alloc", "grad_bytes"):
        assert a["torch"][k] == b["torch"][k], (a["case"], k, a["torch"][k], b["torch"][k])
print(f"shim: {len(shim)} runs of the real programs, figures as the simulated programs'")
PYEOF

# the real-program path (package checks) on the simulation: `torch` is simtorch, torchvision
# the simulated one, transformers and lightning missing
S=$ROOT/examples/sim
mkdir pp && ln -s "$S/simmodels/site-packages/torchvision" pp/torchvision
SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB VALIDATE_NO_BUILD=1 \
    PYTHONPATH="$ROOT/tests/realonsim:$PWD/pp:$S" dry real real
grep -q 'bert_b32_oom: skipped, not installed for .*: transformers$' real/summary.md &&
    grep -q 'lit_gpt2_b4_fit: skipped, not installed for .*: lightning or pytorch_lightning, transformers$' real/summary.md ||
    { cat real/summary.md; fail "real: no 'not installed' lines"; }
[ "$(wc -l <real/results.jsonl)" = 2 ] && grep -q '"case": "resnet50_b128_fit".*"verdict": "PASS"' real/results.jsonl &&
    grep -q '"case": "gan_b64_fit".*"verdict": "PASS"' real/results.jsonl ||
    { cat real/summary.md; fail "real: resnet50_b128_fit and gan_b64_fit (torch alone) did not run and pass"; }

# past the budget every run is skipped, saying so, and the results still come back
dry late sim 20
grep -q 'llama_gqa300m_b4_fit: skipped, out of time' late/summary.md || fail "late: no 'out of time' line"
[ ! -s late/results.jsonl ] && [ -s late/beyond.tgz ] || fail "late: results or tarball wrong"
echo "the dry run of VALIDATE_SET=beyond: sim, shim and out-of-time cases as expected"
exit 0
