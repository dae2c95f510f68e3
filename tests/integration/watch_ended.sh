#!/bin/sh
# watch_ended.sh — `vramtrace watch --once` on ended traces says what the report says (split from
# watch_live.sh, which follows live runs and runs alone; these read files that are done): the
# steps of every committed trace and how they split, the out-of-memory error of every real
# trace (its request and time), a bounded run that ends inside a forward (its last stretch's
# summary: the peak, the steps, the OOM), the bytes by phase at the last step's end on a terminal,
# and a trace with 20,000 allocations live at its end read without a crash.
# runs: early (watch and report on every committed trace: about 1.5 minutes)
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "watch_ended: $*"; exit 1; }
SIM="$ROOT/examples/sim/sim_long.py"
# an ended trace's steps are the report's: a step that ran into the trace's end counts in both
# (watch left it out: bert_b16_fit "steps 1", its report 2 steps), and so are those an optimizer
# step ended, said where fewer: a step that allocated nothing (fused AdamW after its first) is
# seen at zero_grad's frees, after an EMA's update too (gpt2_ema_b4_fit: watch "steps 2", its
# report 3 steps, 2 of them optimizer steps, until 2026-12-01), not an OOM's unwinding
for f in "$ROOT"/examples/traces/*/*.vt; do
    w=$("$VT" watch --once --plain "$f" | sed -n 's/.* steps \([0-9]*\) \(([0-9a-z]*\)\{0,1\}.*/\1 \2/p')
    r=$("$VT" report --json "$f" | python3 -c 'import json,sys; d=json.load(sys.stdin); g=d["growth"]; print(g["steps"], g["optimizer_steps"], g["source"], d["backward_passes"], g["basis"])')
    set -- $r
    want="$1 "
    [ "$2" != 0 ] && [ "$2" != "$1" ] && want="$1 ($2"
    [ "$2" = 0 ] && [ "$1" != 0 ] && [ "$3" = replay ] && want="$1 (none"
    # steps its allocations split otherwise than its backward passes: the run's own counts
    [ "$3" = replay ] && [ "$5" = tensors ] && [ "$4" != 0 ] && [ "$4" != "$1" ] && want="$1 (its"
    [ "$w" = "$want" ] || fail "$(basename "$f"): watch says steps [$w], the report [$r]"
done
# an out-of-memory error is the report's: its request and time, and none where the report has none
# (watch said nothing of it: b_oom_12gib "headroom 1.11 GiB ... (ended)" for a run that died
# asking for 3.07 GiB)
for f in "$ROOT"/examples/traces/h100-torch2.11/*.vt "$ROOT"/examples/traces/h100-torch2.11-beyond/*.vt; do
    w=$("$VT" watch --once --plain "$f" | sed -n 's/.* out of memory: \(.*\) asked at \([0-9.]*\)s.*/\1 \2/p')
    r=$("$VT" report --json "$f" | python3 -c '
import json, sys
o = json.load(sys.stdin).get("oom")
if o:
    b, u = float(o["requested_bytes"]), 0
    while b >= 1024 and u < 3:
        b, u = b / 1024, u + 1
    t = o["time_ns"] / 1e9  # (3 decimals under 10 s: a short run had read 0.0 s)
    print(("%.2f" if u == 3 else "%.1f") % b, ["B", "KiB", "MiB", "GiB"][u], ("%.3f" if t < 10 else "%.1f") % t)')
    [ "$w" = "$r" ] || fail "$(basename "$f"): watch says out of memory [$w], the report [$r]"
done
# a bounded run that ends inside a forward (an out-of-memory error there): its last stretch has a
# summary of its own (TAIL, no step), so watch's peak is the report's (it had said 506 MiB where
# the report says 10.34 GiB), the steps are the same, and the OOM is said
"$VT" run -q --card 12GiB --max-size 8MiB -o tail.vt -- python3 "$SIM" --scenario=late_oom --max_iters=60 \
    --eval_scale=20000 --n_embd=512 >tail.run 2>&1 # (exit 1: the OOM)
"$VT" watch --once tail.vt >tail.watch 2>&1 || { cat tail.watch; fail "tail: watch --once"; }
"$VT" report --json tail.vt >tail.json || fail "tail: report"
python3 - tail.watch tail.json <<'PYEOF' || { cat tail.watch; fail "tail: watch's peak or steps against the report"; }
import json, re, sys
line = open(sys.argv[1]).read()
r = json.load(open(sys.argv[2]))
m = re.search(r"peak ([\d.]+) (MiB|GiB)", line)
peak = float(m.group(1)) * (2**30 if m.group(2) == "GiB" else 2**20)
assert abs(peak - r["peak"]["process_bytes"]) <= 0.006 * 2**30, (line, r["peak"]["process_bytes"])
assert re.search(r"steps %d " % r["growth"]["steps"], line), (line, r["growth"]["steps"])
# the out-of-memory error that ended it, from its summary (the OOM record is among the events,
# which watch does not read there: it had said nothing of it): the report's request, "by" the
# summary's time
m = re.search(r"out of memory: ([\d.]+) (MiB|GiB) asked by ([\d.]+)s", line)
assert m and r["oom"], (line, r.get("oom"))
req = float(m.group(1)) * (2**30 if m.group(2) == "GiB" else 2**20)
assert abs(req - r["oom"]["requested_bytes"]) <= 0.006 * req, (line, r["oom"]["requested_bytes"])
t = r["oom"]["time_ns"] / 1e9  # (said to the millisecond under 10 s: 0.096 by 0.0861)
assert float(m.group(3)) >= round(t, 3 if t < 10 else 1) - 0.0005, (line, r["oom"]["time_ns"])
PYEOF
"$VT" dump --no-resolve tail.vt | grep '"type":"step"' >tail.steps
tail -n 1 tail.steps | grep -q '"step":0,.*"tail":true' || fail "tail: no TAIL summary at the end"
# the TAIL summary is no step: the growth's steps are the other summaries
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); n=sum(1 for l in open(sys.argv[2]) if not json.loads(l)["tail"]); assert r["growth"]["steps"] == n, (r["growth"]["steps"], n)' \
    tail.json tail.steps || fail "tail: counted as a step"
# on a terminal: the bytes by phase at the last step's end are that step's, as the report's growth
# series has them (it had printed the bytes live at the trace's end, after the teardown)
if command -v script >/dev/null 2>&1; then
    H="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
    script -qc "\"$VT\" watch --once \"$H\"" /dev/null >tty.out 2>&1 || fail "watch --once on a terminal"
    "$VT" report --json "$H" >h.json || fail "report of $H"
    python3 - tty.out h.json <<'PY' || fail "watch: the bytes by phase at the last step's end"
import json, re, sys
line = next(l for l in open(sys.argv[1], errors="replace") if "at the last step's end, by the phase" in l)
got = dict(re.findall(r"(\w+) ([\d.]+ \w+)", line.split(":", 1)[1]))
last = json.load(open(sys.argv[2]))["growth"]["series"][-1]["by_phase"]
def gib(t):
    v, u = t.split()
    return float(v) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[u]
for ph, text in got.items():
    assert abs(gib(text) - last[ph]) <= 0.01 * last[ph], (ph, text, last[ph])
assert set(got) == {p for p, b in last.items() if b >= 1 << 20}, (got, last)
PY
fi
# a trace with 20,000 allocations live at its end: watch frees its live set as the replay made it
# (arrays of 2 MiB and more are mapped, not malloc'ed: it had crashed there, exit 139)
"$BUILD/tests/prog/vtgen" -o many.vt --live 20000 --events 40000 --tensor >/dev/null || fail "vtgen"
"$VT" watch --once --plain many.vt >many.out 2>&1
rc=$?
[ $rc = 0 ] || { tail -n 3 many.out; fail "watch with 20,000 live: exit $rc"; }
echo "watch_ended: ok"
