#!/bin/sh
# trace_portable.sh — a trace is self-contained (trace format 1.2): the config files its
# command line names are recorded (FILE records, with a Hugging Face model directory's
# config.json), so the report of a trace copied elsewhere, with the config files deleted, is
# byte-identical (text and --json); a FIFO or /dev/zero argument is never opened; the
# analyzer reads only what was recorded; PyTorch's torch/version.py is recorded too.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
SIM="$ROOT/examples/sim/sim_train.py"

# 1. nanoGPT config mode: a config file in the run directory, overridden by an argument
mkdir -p run && cp "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" run/mycfg.py
printf 'batch_size = 2\n' >run/small.py
(cd run && FAKECUDA_MEM=24GiB VRAMTRACE_NOTE=portable "$VT" run --card 12GiB -q -o t.vt -- \
    "$PY" "$SIM" mycfg.py small.py --max_iters=2 --eval_iters=1 --eval_interval=1000 \
    --compile=False --n_layer=2 >run.txt 2>&1) ||
    { tail -5 run/run.txt; fail "capture failed"; }
"$VT" dump run/t.vt >dump.jsonl || fail "dump failed"
"$PY" - dump.jsonl <<'PYEOF' || fail "FILE records wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
files = [r for r in recs if r["type"] == "file"]
names = [f["name"] for f in files]
assert "mycfg.py" in names and "small.py" in names, names
cfg = next(f for f in files if f["name"] == "mycfg.py")
assert cfg["kind"] == "arg" and cfg["file_flags"] == 0 and "batch_size = 16" in cfg["contents"], cfg
assert cfg["size"] == len(cfg["contents"].encode()) and cfg["path"].endswith("/run/mycfg.py"), cfg
proc = next(r for r in recs if r["type"] == "process")
assert "VRAMTRACE_NOTE=portable" in proc["env"], proc["env"]
PYEOF
(cd run && "$VT" report t.vt >../before.txt 2>&1 && "$VT" report --json t.vt >../before.json) ||
    fail "report before the move failed"
grep -q 'batch_size *2 *file *small.py:1' before.txt || fail "small.py's batch_size not used: $(grep batch_size before.txt)"
grep -q 'gradient_accumulation_steps *32 *file *mycfg.py' before.txt || fail "mycfg.py not used"
grep -q 'n_layer *2 *argument' before.txt || fail "--n_layer=2 not used"

mkdir -p elsewhere && cp run/t.vt elsewhere/ && rm -f run/mycfg.py run/small.py
(cd elsewhere && "$VT" report t.vt >../after.txt 2>&1 && "$VT" report --json t.vt >../after.json) ||
    fail "report after the move failed"
diff -u before.txt after.txt || fail "text report changed once the config files were gone"
cmp before.json after.json || fail "JSON report changed once the config files were gone"

# 2. a Hugging Face style command line (a wrapper runs the simulation with its own arguments):
# the model directory's config.json is recorded and used; a FIFO and /dev/zero named on the
# command line are neither opened nor recorded (the capture does not block)
mkdir -p hf/model && cd hf || fail "cd"
printf '{"model_type": "llama", "num_hidden_layers": 3, "hidden_size": 256,\n "num_attention_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048}\n' >model/config.json
mkfifo pipe.json || fail "mkfifo"
cat >wrap.py <<PYEOF
import os, runpy, sys
sys.path.insert(0, os.path.dirname("$SIM"))
sys.argv = ["$SIM", "--max_iters=1", "--eval_iters=1", "--eval_interval=1000", "--compile=False",
            "--n_layer=2"]
runpy.run_path("$SIM", run_name="__main__")
PYEOF
FAKECUDA_MEM=24GiB timeout 120 "$VT" run -q -o hf.vt -- "$PY" wrap.py --model_name_or_path model \
    --per_device_train_batch_size 2 --data=/dev/zero --stream pipe.json >run.txt 2>&1 ||
    { tail -5 run.txt; fail "HF capture failed"; }
"$VT" dump hf.vt | grep '"type":"file"' >files.jsonl
grep -q '"name":"model/config.json"' files.jsonl || fail "config.json not recorded: $(cat files.jsonl)"
grep -q 'zero\|pipe' files.jsonl && fail "/dev/zero or a FIFO was recorded"
rm -rf model
"$VT" report --json hf.vt >hf.json || fail "report of the HF trace failed"
"$PY" - hf.json <<'PYEOF' || fail "config.json values not used"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
assert r["config_program"] == "flags spelled as Hugging Face's TrainingArguments", r["config_program"]
for k, v in (("n_layer", 3), ("n_embd", 256), ("n_head", 4), ("vocab_size", 32000)):
    assert c[k]["value"] == v and c[k]["source"] == "file", (k, c[k])
    assert c[k]["where"].startswith("model/config.json: "), c[k]
PYEOF
cd .. || fail "cd"

# 3. PyTorch loaded (here a stand-in torch/lib/libc10.so): its torch/version.py is recorded,
# and the report names the versions after the file is gone
mkdir -p tv/torch/lib && cd tv || fail "cd"
command -v cc >/dev/null 2>&1 || { echo "no cc"; exit 77; }
printf 'int vt_stand_in;\n' | cc -shared -x c - -o torch/lib/libc10.so || fail "cc -shared"
printf "from typing import Optional\n__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n" >torch/version.py
cat >wrap.py <<PYEOF
import ctypes, os, runpy, sys
ctypes.CDLL(os.path.abspath("torch/lib/libc10.so"))
sys.path.insert(0, os.path.dirname("$SIM"))
sys.argv = ["$SIM", "--max_iters=1", "--eval_iters=1", "--eval_interval=1000", "--n_layer=2"]
runpy.run_path("$SIM", run_name="__main__")
PYEOF
FAKECUDA_MEM=24GiB "$VT" run -q -o v.vt -- "$PY" wrap.py >run.txt 2>&1 || { tail -5 run.txt; fail "torch capture failed"; }
rm -rf torch
"$VT" report --json v.vt >v.json || fail "report of the torch trace failed"
"$PY" -c 'import json,sys; r=json.load(open("v.json")); assert (r["torch_version"], r["cuda_version"]) == ("2.11.0+cu130", "13.0"), r["torch_version"]' ||
    fail "versions not recorded"
"$VT" report v.vt | grep -q 'recorded: PyTorch 2.11.0+cu130, built for CUDA 13.0' || fail "no versions in the text report"
cd .. || fail "cd"

# 4. an old trace (format 1.1) never opens the files its argv names: it says so
"$VT" report "$ROOT/examples/traces/h100-torch2.11/s_nano_eager_b8.vt" >old.txt 2>&1 ||
    fail "report of a 1.1 trace failed"
grep -q 'not recorded (trace from an older vramtrace)' old.txt || fail "no 'not recorded' note for a 1.1 trace"
exit 0
