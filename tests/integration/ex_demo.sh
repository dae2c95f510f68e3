#!/bin/sh
# ex_demo.sh — `make demo` end to end (scripts/demo.sh on the SIMULATION): the documents' GPT-2
# 124M case OOMs under `vramtrace run --card 12GiB`, the report's first advice fits on the same
# card, and the traces say what the simulation did (autograd thread, AdamW state, an OOM).
set -u
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "no python3"; exit 77; }
if "$VT" run -- true 2>&1 | grep -q 'not implemented'; then
    echo "vramtrace run is not implemented yet"
    exit 77
fi
fail() { echo "ex_demo: $*"; exit 1; }
DEMO_DIR="$TESTDIR/demo" BUILD="$BUILD" sh "$ROOT/scripts/demo.sh" >demo.txt 2>&1
rc=$?
[ $rc = 0 ] || { tail -60 demo.txt; fail "demo.sh exit $rc (expected: first run OOM, recommended run fits)"; }
grep -q 'SIMULATION' demo.txt || fail "the demo does not say it is a simulation"
grep -q 'out of memory, as expected' demo.txt || fail "no OOM in the first run"
D="$TESTDIR/demo"
"$VT" dump "$D/oom.vt" >oom.jsonl || fail "dump of the OOM trace failed"
grep -q '"pt_autograd_0"' oom.jsonl || fail "no pt_autograd_0 thread in the OOM trace"
grep -q '"type": *"oom"' oom.jsonl || fail "no OOM record in the trace"
"$VT" dump "$D/fit.vt" >fit.jsonl || fail "dump of the recommended run's trace failed"
grep -q 'adamw.py' fit.jsonl || fail "no allocation from simtorch/optim/adamw.py in the recommended run"
echo ok
