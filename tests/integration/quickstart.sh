#!/bin/sh
# quickstart.sh — the README's quick start works as written: every line of its first code block
# (the no-GPU simulation; `make` lines aside, `make test` has built what they build) runs, in
# order, from a directory laid out as a fresh clone's top (build/ and examples/), and each exits
# 0 (`run` 1, as its program: the simulated run runs out of memory on its emulated card, as the
# README says); the report says why, the page has the advice, and predict answers.
set -u
fail() { echo "quickstart: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP quickstart: no python3 for the simulation"; exit 77; }
# its `make` lines build all the rest needs from nothing: what `make progs` would do in an empty
# build directory includes the fake libc10_cuda.so the simulation loads (a fresh clone's first
# `run` said "libc10_cuda.so: cannot open shared object file" until 2026-12-01)
make -n -C "$ROOT" BUILD="$PWD/fresh-build" progs >plan.txt 2>&1 || fail "make -n progs: $(tail -3 plan.txt)"
grep -q 'c10/cda/libc10_cuda.so' plan.txt || fail "make progs does not build the fake libc10_cuda.so the simulation loads"
ln -s "$BUILD" build && ln -s "$ROOT/examples" examples || fail "cannot lay out the clone"
# the block: indented lines after "## Quick start" up to the first prose line after it
python3 - "$ROOT/README.md" >lines.txt <<'PY' || fail "no quick start block in README.md"
import sys
text = open(sys.argv[1], encoding="utf-8").read().split("## Quick start\n", 1)[1]
out, started = [], False
for line in text.split("\n"):
    if line.startswith("    "):
        started = True
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + " " + line.strip()
        else:
            out.append(line.strip())
    elif started and line.strip():
        break
cmds = [c for c in out if not c.startswith(("make", "#"))]
assert len(cmds) >= 5, cmds
print("\n".join(cmds))
PY
n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    echo "\$ $cmd"
    sh -c "$cmd" >"out.$n" 2>"err.$n" </dev/null
    rc=$?
    case $cmd in # `run` exits as its program: the simulated run runs out of memory, exit 1
    *" run "*) [ $rc = 1 ] && grep -q 'OOM: yes' "err.$n" || fail "line $n: exit $rc, no OOM: $(tail -n 3 "err.$n")" ;;
    *) [ $rc = 0 ] || fail "line $n exits $rc: $cmd: $(tail -n 3 "err.$n")" ;;
    esac
done <lines.txt
[ -f oom.vt ] && [ -f oom.html ] || fail "the block wrote no oom.vt / oom.html"
grep -l '^OOM: ' out.* >/dev/null || fail "the report of the simulated run names no OOM"
grep -q '<section id=advice>' oom.html || fail "the page has no advice"
grep -l '^card rtx4070' out.* >/dev/null || fail "predict --card rtx4070 gave no verdict"
echo "ok: $n lines"
