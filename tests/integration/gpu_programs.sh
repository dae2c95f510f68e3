#!/bin/sh
# gpu_programs.sh — the REAL training programs of the GPU session (examples/hf/hf_train.py,
# examples/vision/vision_train.py, gan_train.py, examples/lightning/lit_train.py) checked without
# a GPU: they compile; their flags and choices include the SIMULATED programs' (examples/sim/
# sim_hf.py, sim_vision.py, sim_gan.py), so one command line runs both; and run on the simulation (tests/realonsim:
# `import torch` gives simtorch) they print the same VRAMTRACE_TORCH_STATS line as the simulated
# program with the same arguments: every field of it, with the same values, OOM included.
set -u
PY=${PYTHON:-python3}
. "$ROOT/tests/sim_env.sh"
export PYTHONDONTWRITEBYTECODE=1
E=$ROOT/examples
S=$E/sim

# 1. every real program compiles (nothing written beside it)
"$PY" - "$E"/hf/*.py "$E"/vision/*.py "$E"/lightning/*.py <<'PYEOF' || fail "a program does not compile"
import sys
for path in sys.argv[1:]:
    compile(open(path).read(), path, "exec")
print(f"{len(sys.argv) - 1} programs compile")
PYEOF

# 2. flags: the simulated program's options and choices are the real one's too (--help needs no
# PyTorch: the programs import it after parsing)
flags_cover() {
    env -u PYTHONPATH "$PY" "$1" --help >real.help 2>&1 || { cat real.help; fail "$1 --help failed"; }
    env -u PYTHONPATH "$PY" "$2" --help >sim.help 2>&1 || { cat sim.help; fail "$2 --help failed"; }
    "$PY" - "$1" "$2" <<'PYEOF' || fail "$1 lacks options of $2"
import re, sys
def options(path):
    usage = open(path).read().split("\n\n")[0]
    return {m.group(1): set(m.group(2)[1:-1].split(",")) if m.group(2) else set()
            for m in re.finditer(r"\[(--[a-z0-9-]+)(?: (\{[^}]*\}))?", usage)}
real, sim = options("real.help"), options("sim.help")
missing = [o for o in sim if o not in real]
assert not missing, f"options missing: {missing}"
for o, choices in sim.items():
    assert choices <= real[o], f"{o}: choices {choices - real[o]} missing"
print(f"{sys.argv[1].split('/')[-1]}: {len(real)} options, {len(sim)} of them the simulation's")
PYEOF
}
flags_cover "$E/hf/hf_train.py" "$S/sim_hf.py"
flags_cover "$E/vision/vision_train.py" "$S/sim_vision.py"
flags_cover "$E/vision/gan_train.py" "$S/sim_gan.py"
env -u PYTHONPATH "$PY" "$E/lightning/lit_train.py" --help >/dev/null 2>&1 || fail "lit_train.py --help failed"
# without PyTorch (this machine), a real program says so instead of failing on an import
if ! "$PY" -c 'import torch' 2>/dev/null; then
    env -u PYTHONPATH "$PY" "$E/hf/hf_train.py" --model gpt2 >none.out 2>&1 && fail "hf_train.py ran without torch"
    grep -q 'needs PyTorch' none.out || { cat none.out; fail "hf_train.py: no 'needs PyTorch' message"; }
fi

# 3. the same truth line, real program on the simulation vs simulated program
SHIM="$ROOT/tests/realonsim:$S/simmodels/site-packages:$S"
same_truth() {
    real=$1 sim=$2
    shift 2
    "$PY" "$S/$sim" "$@" >sim.out 2>sim.err
    src=$?
    PYTHONPATH=$SHIM "$PY" "$E/$real" "$@" >real.out 2>real.err
    rrc=$?
    [ $src = $rrc ] || { tail -5 real.err; fail "$real $*: exit $rrc, the simulation's $src"; }
    "$PY" - "$*" <<'PYEOF' || { tail -5 real.err; fail "$real $*: the truth lines differ"; }
import json, sys
def truth(path):
    lines = [l for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS ")]
    assert len(lines) == 1, (path, len(lines))
    return json.loads(lines[0].split(" ", 1)[1])
s, r = truth("sim.out"), truth("real.out")
assert r["simulation"] is True, "on simtorch the real program must say simulation: true"
missing = sorted(set(s) - set(r))
assert not missing, f"fields missing from the real program's line: {missing}"
differ = {k: (s[k], r[k]) for k in s if k not in ("pid", "program", "torch_version") and s[k] != r[k]}
assert not differ, f"fields that differ (simulated, real): {differ}"
print(f"{r['program']} {sys.argv[1]}: {len(s)} fields as the simulation's (oom {r['oom']}, "
      f"steps {r['steps']}, reserved {r['max_memory_reserved']})")
PYEOF
}
same_truth hf/hf_train.py sim_hf.py --model gpt2 --batch-size 2 --grad-accum 2 --steps 1
same_truth hf/hf_train.py sim_hf.py --model llama-400m --batch-size 1 --lora-rank 8 --grad-accum 1 --steps 2
same_truth hf/hf_train.py sim_hf.py --model bert-base --batch-size 4 --optimizer sgd --grad-accum 1 --steps 1
same_truth hf/hf_train.py sim_hf.py --model gpt2 --batch-size 2 --gradient-checkpointing --optimizer adafactor --amp fp16 --grad-accum 1 --steps 1
same_truth hf/hf_train.py sim_hf.py --model gpt2-medium --batch-size 16 --grad-accum 1 --steps 1
grep -q '"oom": true' real.out || fail "gpt2-medium B=16 on 24 GiB: no OOM in the real program's line"
same_truth vision/vision_train.py sim_vision.py --model resnet50 --batch-size 8 --steps 2
same_truth vision/vision_train.py sim_vision.py --model vit-b16 --batch-size 4 --steps 1
same_truth vision/vision_train.py sim_vision.py --model vit-b16 --freeze-backbone --batch-size 4 --steps 1
same_truth vision/gan_train.py sim_gan.py --batch-size 16 --steps 2
exit 0
