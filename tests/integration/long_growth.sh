#!/bin/sh
# long_growth.sh — growth across steps (report text and JSON) against the simulated programs' own
# truth (examples/sim/sim_long.py, on the fake CUDA): a loss kept with its graph each step (a
# Python list, and `total_loss += loss`) is named — the model's forward that made it and the
# script's line that kept calling it — with the rate the program's own allocator counters give
# (within 5 %), since an early step, and when it reaches the card (the steps the JSON gives are
# the headroom over the rate, the text says them); a cache filled every 5 steps grows at its own
# rate and is not called a forward's graph; plain training grows nothing and the report says
# nothing alarming; the same leak in a bounded trace (--max-size) is found from the per-step
# summaries of every step, its rate the same; the same leak over a few steps, too few step ends
# for the rule to find growth in, is never called "nothing grows": the report says how many step
# ends it saw and that it cannot tell. The HTML page shows the same. The model's shape inferred
# from the trace is the program's (B, T, L, d, V).
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "long_growth: $*"; exit 1; }
SIM="$ROOT/examples/sim/sim_long.py"
N=40
NS=3 # a short run: fewer step ends than a rise over at least 4 steps needs
for sc in leak steady; do
    "$VT" run -q -o short_$sc.vt -- python3 "$SIM" --scenario=$sc --max_iters=$NS >short_$sc.out 2>&1 ||
        { cat short_$sc.out; fail "sim_long --scenario=$sc --max_iters=$NS failed"; }
done
"$VT" report --no-color short_leak.vt >short_leak.txt 2>/dev/null || fail "report short_leak"
"$VT" report --json short_leak.vt >short_leak.json || fail "report --json short_leak"
"$VT" report --html short_leak.html short_leak.vt >/dev/null 2>&1 || fail "report --html short_leak"
for sc in leak steady cache; do
    "$VT" run -q -o "$sc.vt" -- python3 "$SIM" --scenario=$sc --max_iters=$N >"$sc.out" 2>&1 ||
        { cat "$sc.out"; fail "sim_long --scenario=$sc failed"; }
    "$VT" report --no-color "$sc.vt" >"$sc.txt" 2>"$sc.err" || fail "report $sc"
    "$VT" report --json "$sc.vt" >"$sc.json" || fail "report --json $sc"
done
"$VT" run -q -o sum.vt -- python3 "$SIM" --scenario=leak --leak=sum --max_iters=$N >sum.out 2>&1 ||
    fail "sim_long --leak=sum failed"
"$VT" report --json sum.vt >sum.json || fail "report --json sum"
"$VT" run -q --max-size 8MiB -o bounded.vt -- python3 "$SIM" --scenario=leak --max_iters=$N \
    >bounded.out 2>&1 || fail "sim_long under --max-size failed"
"$VT" report --json bounded.vt >bounded.json || fail "report --json bounded"
"$VT" report --no-color bounded.vt >bounded.txt 2>/dev/null || fail "report bounded"

python3 - "$N" "$NS" <<'PYEOF' || exit 1
import json, math, re, sys
N, NS = int(sys.argv[1]), int(sys.argv[2])
def truth(name):
    for line in open(name + ".out"):
        if line.startswith("VRAMTRACE_TORCH_STATS "):
            return json.loads(line.split(" ", 1)[1])
    raise SystemExit("no truth line in %s.out" % name)
def growth(name):
    return json.load(open(name + ".json"))["growth"]
bad = []
steady, leak = truth("steady"), truth("leak")
assert steady["iters"] == leak["iters"] == N, (steady["iters"], leak["iters"])
# the leak's truth: what its allocator holds at the end beyond the same run without the leak,
# per step (the first kept loss comes after the first step)
true_rate = (leak["memory_allocated"] - steady["memory_allocated"]) / (N - 1)
# the model's shape read from the trace is the program's (its 32 MiB cuBLAS workspace, a
# multiple of its vocabulary of 1024, had been taken for B·T×V logits: B = 128 for 4)
cfg = json.load(open("steady.json"))["config"]
for k in ("batch_size", "block_size", "n_layer", "n_embd", "vocab_size"):
    if cfg[k]["value"] != steady["config"][k]:
        bad.append("steady: %s %s (%s), the program's %s" % (k, cfg[k]["value"], cfg[k]["where"],
                                                            steady["config"][k]))
assert true_rate > 1 << 20, true_rate
for name in ("leak", "bounded", "sum"):
    g = growth(name)
    if g["steps"] < N:
        bad.append("%s: %d steps seen, the run made %d" % (name, g["steps"], N))
    if not g["growing"]:
        bad.append("%s: nothing found growing" % name)
        continue
    if abs(g["bytes_per_step"] - true_rate) > 0.05 * true_rate:
        bad.append("%s: %.0f B per step, the program's own counters say %.0f" % (name, g["bytes_per_step"], true_rate))
    top = g["growing"][0]
    # (made in the program's validation_loss: the evaluation phase, by its name)
    if "forward" not in top["site"] or top["phase"] != "eval" or not top["in_module_forward"]:
        bad.append("%s: the growing site is not the model's forward: %s" % (name, top))
    if "validation_loss" not in top["caller"] or "sim_long.py" not in top["caller"]:
        bad.append("%s: the script's line that keeps the loss is not named: %r" % (name, top["caller"]))
    if top["since_step"] > 3:
        bad.append("%s: growth said to start at step %d (the leak starts after step 1)" % (name, top["since_step"]))
    k = g["reaches_card"]
    if not k:
        bad.append("%s: no estimate of when it reaches the card" % name)
    else:
        want = math.ceil((k["capacity_bytes"] - g["last_step_peak_bytes"]) / g["bytes_per_step"])
        if abs(k["steps"] - want) > 1 or k["at_step"] != g["steps"] + int(k["steps"]):
            bad.append("%s: reaches the card in %s steps, the headroom over the rate is %d" % (name, k["steps"], want))
if growth("bounded")["source"] != "summaries" or growth("leak")["source"] != "replay":
    bad.append("sources: bounded %s, plain %s" % (growth("bounded")["source"], growth("leak")["source"]))
# the bounded trace's steps are the plain trace's (the packer's STEP rule is the replay's: the
# scale GradScaler.scale makes lazily at the first step is the forward's, not the optimizer's)
b, l = growth("bounded"), growth("leak")
# ... and so are its step ends and what was live at the last (the record written as the trace
# ended is the run's teardown, as the trace's end is in the replay: the bounded trace said
# "(step N+1) 0 B of tensors live" until 2026-12-01)
for k in ("step_ends", "live_at_step", "live_at_last_step_bytes"):
    if b[k] != l[k]:
        bad.append("bounded: %s %s, plain %s" % (k, b[k], l[k]))
if (b["steps"], b["optimizer_steps"]) != (l["steps"], l["optimizer_steps"]) or \
        [g["since_step"] for g in b["growing"]] != [g["since_step"] for g in l["growing"]]:
    bad.append("bounded: %d steps (%d optimizer), growth since %s; plain: %d (%d), since %s" % (
        b["steps"], b["optimizer_steps"], [g["since_step"] for g in b["growing"]], l["steps"],
        l["optimizer_steps"], [g["since_step"] for g in l["growing"]]))
txt = open("leak.txt").read()
m = re.search(r"reaches the card \(([^,]+), [^)]*\) in about (\d+) steps", txt)
if not m or int(m.group(2)) != int(growth("leak")["reaches_card"]["steps"]):
    bad.append("leak: the text does not say when it reaches the card as the JSON does")
if "validation_loss" not in txt or "stays alive past its step" not in txt:
    bad.append("leak: the text does not name the loop's line or say what stays alive")
# a cache, every 5 steps 1 MiB: its rate, and no word of a forward's graph
c, ct = growth("cache"), truth("cache")
if not c["growing"] or abs(c["bytes_per_step"] - ct["cache_bytes_per_step"]) > 0.1 * ct["cache_bytes_per_step"]:
    bad.append("cache: %s B per step, the program adds %s" % (c["growing"] and c["bytes_per_step"], ct["cache_bytes_per_step"]))
elif c["growing"][0]["in_module_forward"] or "its graph" in open("cache.txt").read():
    bad.append("cache: called a forward's graph")
# plain training: nothing grows, nothing alarming
s = growth("steady")
stxt = open("steady.txt").read()
if s["growing"] or s["reaches_card"] is not None or s["steps"] < N:
    bad.append("steady: %s" % {k: s[k] for k in ("growing", "reaches_card", "steps")})
if "nothing grows step after step" not in stxt or "reaches the card" in stxt or "stays alive" in stxt:
    bad.append("steady: the text says more than that nothing grows")
# "nothing grows" is said of enough step ends: the long runs' are every step of the program's
for name in ("leak", "steady", "cache"):
    g = growth(name)
    if g.get("step_ends") != g["steps"] or g["steps"] < N or not g.get("enough_steps") or \
            g["step_ends"] < g.get("step_ends_needed", N + 1):
        bad.append("%s: %r step ends of %d steps, %r needed, enough %r" % (
            name, g.get("step_ends"), g["steps"], g.get("step_ends_needed"), g.get("enough_steps")))
# the leak over a few steps: the program kept more at its end than the same run without the
# leak (its own counters), so "nothing grows" would be false; the rule cannot find growth in so
# few step ends, and the report says so with the number it saw
ls, ss = truth("short_leak"), truth("short_steady")
assert ls["iters"] == ss["iters"] == NS and ls["memory_allocated"] > ss["memory_allocated"], (ls, ss)
g, ltxt = growth("short_leak"), open("short_leak.txt").read()
ends, need = g.get("step_ends"), g.get("step_ends_needed")
lines = [l for l in ltxt.splitlines() if "grow" in l]
if "nothing grows" in ltxt:
    bad.append("short leak: a leaking run of %d steps said to grow nothing: %s" % (NS, lines))
if ends is None or not need or ends > NS or ends >= need or g.get("enough_steps") is not False:
    bad.append("short leak: %r step ends of %d steps, %r needed, enough %r" % (
        ends, NS, need, g.get("enough_steps")))
elif "too few step ends to tell growth (%d seen" % ends not in ltxt:
    bad.append("short leak: the text does not say its %d step ends are too few: %s" % (ends, lines))
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("long_growth: leak %.2f MiB/step (truth %.2f), cache %.0f KiB/step, steady none" % (
    growth("leak")["bytes_per_step"] / 2**20, true_rate / 2**20, c["bytes_per_step"] / 1024))
PYEOF
# the HTML page: the same section (what grows, the script's line, when it reaches the card)
for sc in leak steady bounded; do
    "$VT" report --html $sc.html $sc.vt >/dev/null 2>&1 || fail "report --html $sc"
done
grep -q '<table id=growing>' leak.html && grep -q 'validation_loss' leak.html &&
    grep -q '<p id=growth-card>' leak.html || fail "the page does not show the leak"
grep -q '<p id=growth-none>' steady.html && ! grep -q 'id=growing' steady.html ||
    fail "the page of plain training shows growth"
grep -q '<p id=growth-few>Too few step ends' short_leak.html && ! grep -q 'id=growth-none' short_leak.html ||
    fail "the page of a short run says nothing grows"
# watch: the short leak's growth is not known (?), the steady long run's none (0)
"$VT" watch --once short_leak.vt >short_leak.watch || fail "watch --once short_leak"
grep -q ' growth ?/step' short_leak.watch || { cat short_leak.watch; fail "watch: a short run's growth given"; }
"$VT" watch --once steady.vt >steady.watch || fail "watch --once steady"
grep -q ' growth 0/step' steady.watch || { cat steady.watch; fail "watch: the steady run's growth not 0"; }
grep -q '<p id=bounded>' bounded.html || fail "the page of a bounded trace does not say so"
# a run that ends inside a step (nanoGPT's loop: its last allocations the optimizer's), plain and
# bounded: the record the packer writes as the trace ends is the run's teardown, as the trace's
# end is in the replay: the same step ends, the same last step and its live bytes (the bounded
# trace said 6 step ends, "(step 6) 0 B of tensors live", where the plain said 5, 2.30 GiB); its
# header counts the optimizer steps of the events it kept and says the run's where they differ
for m in plain bounded; do
    o=""
    [ $m = bounded ] && o="--max-size 8MiB"
    # shellcheck disable=SC2086
    "$VT" run -q $o --card 12GiB -o "end_$m.vt" -- python3 "$ROOT/examples/sim/sim_train.py" \
        "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" --batch_size=4 --gradient_accumulation_steps=2 \
        --max_iters=3 --eval_iters=1 --compile=False >"end_$m.out" 2>&1 ||
        { tail -n 5 "end_$m.out"; fail "sim_train ($m) failed"; }
    "$VT" report --json "end_$m.vt" >"end_$m.json" || fail "report --json end_$m"
done
python3 - end_plain.json end_bounded.json <<'PY' || fail "a bounded run's steps differ from its plain twin's"
import json, sys
p, b = (json.load(open(f))["growth"] for f in sys.argv[1:3])
for k in ("steps", "optimizer_steps", "step_ends", "live_at_step", "live_at_last_step_bytes"):
    assert p[k] == b[k], (k, p[k], b[k])
print("  nanoGPT's loop, plain and bounded: %d step ends, %d B live at step %d" %
      (p["step_ends"], p["live_at_last_step_bytes"], p["live_at_step"]))
PY
# 128 micro-steps a step, bounded to 8 MiB: the events of its first steps dropped, the header says
# the steps of the events kept and the run's (it said "2 optimizer steps", its growth section 3)
"$VT" run -q --max-size 8MiB --no-compress --card 12GiB -o drop.vt -- python3 \
    "$ROOT/examples/sim/sim_train.py" "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" --batch_size=4 \
    --gradient_accumulation_steps=128 --max_iters=3 --eval_iters=1 --compile=False >drop.out 2>&1 ||
    { tail -n 5 drop.out; fail "sim_train (bounded, 128 micro-steps) failed"; }
"$VT" report --no-color drop.vt >drop.txt 2>/dev/null || fail "report drop"
grep -q '^  events .* optimizer steps* in the events kept (the run made 3: its per-step summaries)' drop.txt ||
    { grep '^  events' drop.txt; fail "a bounded trace's header does not say the run's optimizer steps"; }
echo "long_growth: ok"
