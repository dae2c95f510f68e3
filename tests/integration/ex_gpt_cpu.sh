#!/bin/sh
# ex_gpt_cpu.sh — examples/gpt/train.py's CPU smoke test: two iterations of a tiny GPT, one
# VRAMTRACE_TORCH_STATS line, config files and --key=value overrides. The python: $PYTHON, else
# python3 when it has torch, else /usr/bin/python3 (Debian's python3-torch, which `make test`
# installs with scripts/install-deps.sh --test). Skips (77) without torch, saying why.
set -u
PY=${PYTHON:-python3}
if [ -z "${PYTHON:-}" ] && ! "$PY" -c 'import torch' >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
    PY=/usr/bin/python3
fi
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    # one line (tests/run.sh prints the last): why, and what would run with torch
    echo "$PY cannot import torch (make test installs Debian's python3-torch for /usr/bin/python3" \
        "when missing; that failed or was skipped);" \
        "with PYTHON=a python that has torch (CPU build is enough) this runs examples/gpt/train.py" \
        "on the CPU: 2 iterations of a tiny GPT from a config file + --key=value, its stats line," \
        "and exit 2 for an unknown knob or a bad value"
    exit 77
fi
TRAIN="$ROOT/examples/gpt/train.py"
fail() { echo "ex_gpt_cpu: $*"; exit 1; }

# 1. a config file plus overrides, on the CPU: two iterations, stats line, exit 0
cat >cfg.py <<'CFG'
# test config
n_layer = 1
n_head = 2
n_embd = 16 * 2
dtype = 'float32'
CFG
"$PY" "$TRAIN" cfg.py --device=cpu --max_iters=2 --block_size=16 --batch_size=3 --eval_interval=1 \
    >out.txt 2>&1 || { cat out.txt; fail "CPU smoke run failed"; }
n=$(grep -c '^VRAMTRACE_TORCH_STATS ' out.txt)
[ "$n" = 1 ] || { cat out.txt; fail "expected one VRAMTRACE_TORCH_STATS line, got $n"; }
grep '^VRAMTRACE_TORCH_STATS ' out.txt | sed 's/^VRAMTRACE_TORCH_STATS //' >stats.json
"$PY" - stats.json <<'PYEOF' || fail "stats line wrong: $(cat stats.json)"
import json, sys
s = json.load(open(sys.argv[1]))
c = s["config"]
assert s["oom"] is False and s["iters"] == 2, s
assert (c["n_layer"], c["n_head"], c["n_embd"], c["block_size"], c["batch_size"]) == (1, 2, 32, 16, 3), c
assert c["vocab_size"] == 256 and c["compile"] is False, c  # smoke defaults for keys not given
assert s["ms_per_iter"] > 0 and s["params"] > 0, s
assert "torch_version" in s and "alloc_conf" in s, s
PYEOF
grep -q '^step 0: train loss' out.txt || fail "no evaluation at step 0"

# 2. an unknown knob and a wrongly typed value are usage errors (exit 2) naming the argument
"$PY" "$TRAIN" --device=cpu --bogus_knob=1 >bad.txt 2>&1
[ $? = 2 ] || fail "unknown knob: expected exit 2"
grep -q 'bogus_knob' bad.txt || fail "unknown knob not named: $(cat bad.txt)"
"$PY" "$TRAIN" --device=cpu --n_layer=two >bad.txt 2>&1
[ $? = 2 ] || fail "bad type: expected exit 2"
echo "ok"
