#!/bin/sh
# watch_died.sh — `vramtrace run --watch` of a program that dies before watch looks a second time
# (a tensor made, then SIGKILL) shows what its trace holds, as the report and run's summary say it:
# watch holds back a live trace's last 100 ms at each look (a thread's block may still be filling),
# and the program's death had left them never handed out: "live 0 B peak 0 B headroom ?" beside a
# summary of 320.0 MiB (18 of 20 runs).
set -u
export LD_LIBRARY_PATH="$FAKE"
. "$ROOT/tests/sim_env.sh"
cat >die.py <<PY
import os, signal, sys
sys.path.insert(0, "$ROOT/examples/sim")
import simtorch as torch
x = torch.empty(1 << 20, device="cuda")
os.kill(os.getpid(), signal.SIGKILL)
PY
for i in 1 2 3; do
    rm -f w.vt*
    "$VT" run --watch -o w.vt -- python3 die.py >out.txt 2>err.txt
    [ $? = 137 ] || fail "run $i: exit $?, the program's was SIGKILL (137): $(cat err.txt)"
    want=$("$VT" report --json w.vt 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak"]["process_bytes"])')
    [ "${want:-0}" -gt 0 ] || fail "run $i: the report finds no peak"
    # (its last look: an earlier one may come before the program's first allocation, on a busy
    # machine, and truly show nothing yet)
    last=$(grep ' live .* peak ' out.txt | tail -n 1)
    case "$last" in *" peak 0 B "*) fail "run $i: watch shows none of the trace: $(cat out.txt)" ;; esac
    case "$last" in *" peak 320.0 MiB "*) ;; *) fail "run $i: watch's peak is not the report's ($want B): $(cat out.txt)" ;; esac
done
exit 0
