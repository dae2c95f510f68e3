#!/bin/sh
# watch_reread.sh — `vramtrace watch` reads a compressed or bounded trace again from its beginning
# at each refresh, and says the same of the same file each time, what the report says: a run of
# the simulated leak (examples/sim/sim_long.py, --compress) killed while its events were all in its
# first raw slot (no per-step summary written yet: watch reads those events each time), followed
# until watch sees its writer gone. Each read had kept the last one's live set: from the second
# line on, "(its own: 38 backward passes, 19 optimizer steps) growth +2912711.11 TiB/step at
# .../sim_train.py:73 MLP.forward" for a run of 19 steps whose report finds 4.9 MiB per step at
# GPT.forward (47 steps, "+5906991.75 TiB/step", for one killed from outside after 1.5 s).
set -u
export LD_LIBRARY_PATH="$FAKE"
. "$ROOT/tests/sim_env.sh"
# the run kills itself (SIGKILL) as its step 20 begins, its 19 steps' events all in its first 1 MiB
# slot (60 steps' plain trace: 880 KB)
cat >killself.py <<'PY'
import os, signal, sys
sys.path.insert(0, sys.argv[1])
import sim_long, simtorch
step0, n = sim_long.LongTrainer.step, [0]
def step(self, model, optimizer, scaler, ctx, X, Y):
    n[0] += 1
    if n[0] == int(os.environ["KILL_AT"]):
        if os.environ.get("KILL_AFTER") == "backward":  # before its optimizer step
            with ctx:
                _, loss = model(X, Y)
            scaler.scale(loss).backward()
        if os.environ.get("KILL_AFTER") == "oom":  # an evaluation too large for the card
            try:
                self.late_eval(model, ctx)
            except simtorch.OutOfMemoryError:
                pass
        os.kill(os.getpid(), signal.SIGKILL)
    step0(self, model, optimizer, scaler, ctx, X, Y)
sim_long.LongTrainer.step = step
sys.exit(sim_long.main(sys.argv[2:]))
PY
KILL_AT=20 VRAMTRACE_OUTPUT=k.vt VRAMTRACE_COMPRESS=1 LD_PRELOAD="$VT_PRELOAD" python3 killself.py \
    "$ROOT/examples/sim" --scenario=leak --max_iters=40 >k.run 2>&1
[ $? = 137 ] || { cat k.run; fail "the run did not kill itself"; }
"$VT" report --json k.vt >k.json 2>k.err || { cat k.err; fail "report of the killed run"; }
"$VT" dump --no-resolve k.vt >k.jsonl || fail "dump of the killed run"
python3 - <<'PY' || fail "the killed run is not what this test needs (see above)"
import json
r = json.load(open("k.json"))
assert r["run"]["status"] == "truncated", r["run"]["status"]
assert r["growth"]["steps"] == 19 and r["growth"]["growing"], r["growth"]["steps"]
assert not any('"type":"step"' in l for l in open("k.jsonl")), "a summary was written: not in its first slot"
PY
timeout 30 "$VT" watch --interval 0.1 k.vt >k.watch 2>k.werr || { cat k.werr; fail "watch: exit $?"; }
grep -q 'the process that wrote it (pid [0-9]*) is gone' k.werr || { cat k.werr; fail "watch did not end at its writer gone"; }
"$VT" watch --once k.vt >k.once || fail "watch --once"
python3 - <<'PY' || { cat k.watch; fail "watch's lines differ from each other or from the report"; }
import json, re
lines = open("k.watch").read().splitlines()
once = open("k.once").read().strip()
r = json.load(open("k.json"))
g = r["growth"]
assert len(lines) >= 3, lines
assert all(l == once for l in lines), "not the same each read:\n" + "\n".join(lines)
m = re.search(r" steps (\d+) (\(.*?\) )?growth \+([\d.]+) (KiB|MiB)/step (?:\((\d+) stacks; "
              r"the fastest \+([\d.]+) (KiB|MiB)/step )?at (\S+) ([^\s)]+)", once)
assert m, once
assert int(m.group(1)) == g["steps"] and not m.group(2), (once, g["steps"], r["backward_passes"])
rate = float(m.group(3)) * (1024 if m.group(4) == "KiB" else 1 << 20)
assert abs(rate - g["bytes_per_step"]) <= 0.01 * g["bytes_per_step"], (once, g["bytes_per_step"])
assert m.group(9) == g["growing"][0]["site"].split()[-1], (once, g["growing"][0]["site"])
# several stacks: the rate is theirs in all, the site the fastest's at its own rate (a leak of
# 14 stacks had read "+4.9 MiB/step at" its fastest line, the report's +1.0 MiB there)
top = g["growing"][0]["bytes_per_step"]
if m.group(5):
    assert int(m.group(5)) == len(g["growing"]) + g["more_growing"], (once, g["more_growing"])
    fast = float(m.group(6)) * (1024 if m.group(7) == "KiB" else 1 << 20)
    assert abs(fast - top) <= 0.01 * top, (once, top)
else:
    assert abs(top - g["bytes_per_step"]) <= 0.01 * g["bytes_per_step"], (once, g["growing"])
PY
# a run killed after a backward, before its optimizer step: that step ran into the trace's end and
# is a step, as the report counts it, once watch knows the writer is gone (followed, or --once):
# it had said "steps 7 (its own: 8 backward passes, 7 optimizer steps)" where the report says 8
# steps, 7 of them optimizer steps
for t in plain compressed; do
    c=0
    [ $t = compressed ] && c=1
    KILL_AT=8 KILL_AFTER=backward VRAMTRACE_OUTPUT=$t.vt VRAMTRACE_COMPRESS=$c LD_PRELOAD="$VT_PRELOAD" \
        python3 killself.py "$ROOT/examples/sim" --scenario=leak --max_iters=40 >$t.run 2>&1
    [ $? = 137 ] || { cat $t.run; fail "$t: the run did not kill itself"; }
    "$VT" report --json $t.vt >$t.json 2>/dev/null || fail "$t: report"
    timeout 30 "$VT" watch --interval 0.1 $t.vt >$t.watch 2>/dev/null || fail "$t: watch: exit $?"
    "$VT" watch --once $t.vt >>$t.watch || fail "$t: watch --once"
    python3 - $t <<'PY' || { cat $t.watch; fail "$t: watch's steps are not the report's"; }
import json, re, sys
t = sys.argv[1]
g = json.load(open(t + ".json"))["growth"]
assert (g["steps"], g["optimizer_steps"]) == (8, 7), (g["steps"], g["optimizer_steps"])
lines = open(t + ".watch").read().splitlines()
for l in (lines[-2], lines[-1]):  # the last line followed, and --once
    assert re.search(r" steps 8 \(7 ending in an optimizer step\) ", l), l
PY
done
# a bounded run killed after an out-of-memory error (a launcher that kills the job): its last
# summaries are those of the slots the packer took, the error and its peak are in the raw slots
# after them, which watch reads (whole, once) when it finds the writer gone, as the report reads
# them: it had said "peak 378.0 MiB headroom 1.63 GiB steps 82 growth 0/step" and no error where
# the report says 1.86 GiB and the error of 500 MiB
KILL_AT=100 KILL_AFTER=oom "$VT" run -q --max-size 8MiB --card 2GiB -o oom.vt -- python3 killself.py \
    "$ROOT/examples/sim" --scenario=steady --max_iters=400 --eval_scale=2000 >oom.run 2>&1
[ $? = 137 ] || { cat oom.run; fail "oom: the run did not kill itself"; }
"$VT" report --json oom.vt >oom.json 2>/dev/null || fail "oom: report"
timeout 30 "$VT" watch --interval 0.1 oom.vt >oom.watch 2>/dev/null || fail "oom: watch: exit $?"
"$VT" watch --once oom.vt >>oom.watch || fail "oom: watch --once"
python3 - <<'PY' || { cat oom.watch; fail "oom: watch's error or peak is not the report's"; }
import json, re
r = json.load(open("oom.json"))
assert r["bounded"] and r["oom"], (r["bounded"], r["oom"])
U = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
lines = open("oom.watch").read().splitlines()
for l in (lines[-2], lines[-1]):  # the last line followed, and --once
    m = re.search(r" peak ([\d.]+) (\w+) .* out of memory: ([\d.]+) (\w+) asked at ([\d.]+)s", l)
    assert m, l
    peak, req = float(m.group(1)) * U[m.group(2)], float(m.group(3)) * U[m.group(4)]
    assert abs(peak - r["peak"]["process_bytes"]) <= 0.006 * peak, (l, r["peak"]["process_bytes"])
    assert abs(req - r["oom"]["requested_bytes"]) <= 0.006 * req, (l, r["oom"]["requested_bytes"])
    ot = r["oom"]["time_ns"] / 1e9  # (3 decimals under 10 s)
    assert m.group(5) == ("%.3f" if ot < 10 else "%.1f") % ot, (l, r["oom"]["time_ns"])
PY
# the report's growth section on the same file: its per-step summaries end where the packer
# stopped (the run's last raw slots never packed), before its events do; it had said "every step
# of the run" of 82 steps where its header counted 99 optimizer steps
"$VT" report oom.vt >oom.txt 2>/dev/null
python3 - <<'PY' || { grep -A1 "Growth across" oom.txt; fail "oom: the growth section's steps are not said as they are"; }
import json
r = json.load(open("oom.json"))
g, text = r["growth"], open("oom.txt").read()
head = [l for l in text.splitlines() if l.startswith("Growth across steps")]
assert g["source"] == "summaries" and head, (g["source"], head)
gap = r["iterations"] - g["optimizer_steps"]
if gap > 0:  # (the usual: the last raw slot holds the steps after the last summary)
    assert "which end %d optimizer step%s before its events do" % (gap, "" if gap == 1 else "s") in head[0], head
    assert "every step of the run" not in head[0], head
else:
    assert "every step of the run" in head[0], head
print("summaries end %d optimizer steps before the events (%d)" % (gap, r["iterations"]))
PY
exit 0
