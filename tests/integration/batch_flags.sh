#!/bin/sh
# batch_flags.sh — a program's batch flag against the batch its trace shows. A SIMULATED loop of
# its own whose micro-batch ramps up (tests/python/batch_ramp.py: --batch_size/4, /2, then
# --batch_size) had its T read as its first step's tokens over the final batch flag ("T = 64:
# B·T = 1024 tokens ... over the micro-batch 16; the trace's T = 256 from the position ids does
# not agree"), its context advice "--ctx 32" a cut by 8 called a halving; its --attn_heads was
# no flag. A CNN whose --batch is the optimizer's batch, divided by its --update_every
# (tests/python/global_batch.py), had --batch taken as the micro-batch and `--batch 32` advised
# as "same effective batch". Now the position ids' T stands and the batch's change is said, the
# moment explained's batch used where the flag is not its; the division makes --update_every
# the accumulation and --batch the optimizer's batch, B their quotient, and advice spells each;
# where the script splits it otherwise (SPLIT), --batch is said not to be the micro-batch. One
# rank of a data-parallel job whose --batch is split over --ngpus processes, every micro-batch a
# step (tests/python/ddp_split.py), had --ngpus read as the accumulation ("accumulation steps A
# (--ngpus) 4", "change: --ngpus 8"); a count of devices is no accumulation, whatever its name.
# Every number checked is the program's own (its FACTS line).
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, program, arguments
    n=$1 p=$2
    shift 2
    timeout 300 "$VT" run --card 12GiB -o "$n.vt" -- python3 "$ROOT/tests/python/$p" "$@" \
        </dev/null >"$n.out" 2>&1 || { tail -n 5 "$n.out"; fail "$n: run failed"; }
    report_both "$n"
}
run ramp batch_ramp.py --batch_size 16
run ramp2 batch_ramp.py --batch_size 16 --steps 2
run gb global_batch.py --batch 64
run gb3 global_batch.py --batch 96 --update_every 3 --momentum 0.9
SPLIT=4 run split global_batch.py --batch 64 --update_every 2
run ddp ddp_split.py --batch 64
# the ramp whose first step runs out of memory (1 GiB: 40 of --batch_size 160 fails): its
# position ids' T had given way to the flag ("T = 64 ... the trace's T = 256 from the position
# ids does not agree") and advice said "--batch_size 80", whose ramp runs 20, 40, 80
timeout 300 "$VT" run --card 1GiB -o oom.vt -- python3 "$ROOT/tests/python/batch_ramp.py" --batch_size 160 \
    </dev/null >oom.out 2>&1 && fail "oom: the run did not run out of memory"
grep -q OutOfMemoryError oom.out || { tail -n 5 oom.out; fail "oom: run failed"; }
"$VT" report --no-color oom.vt >oom.txt && "$VT" report --json oom.vt >oom.json || fail "oom: report failed"
"$VT" predict --json --from oom.vt >oom_pred.json || fail "oom: predict failed"
# fit with {B} in that --batch: the trials' traces show the micro-batch is {B} / 4, and the
# answer says {B} is not it (it had been "largest micro-batch that fits ...: 203")
"$VT" fit --card 1GiB -- python3 "$ROOT/tests/python/global_batch.py" --batch "{B=64}" --img 128 \
    --iters "{I}" </dev/null >fit4.txt 2>fit4.err || fail "fit: $(tail -n 3 fit4.err)"
best=$(sed -n 's/^largest {B} that fits with 5 % headroom on [^:]*: \([0-9]*\) (not the micro-batch: .*/\1/p' fit4.txt)
[ -n "$best" ] && grep -q "at {B} = $best its trace's forwards took a batch of $((best / 4))," fit4.txt ||
    fail "fit: $(grep '^largest' fit4.txt)"
"$VT" fit --json --card 1GiB -- python3 "$ROOT/tests/python/global_batch.py" --batch "{B=64}" \
    --img 128 --update_every 1 --iters "{I}" </dev/null >fit1.json 2>fit1.err || fail "fit1: $(tail -n 3 fit1.err)"
python3 - <<'PY' || fail "fit1: $(cat fit1.json)"
import json
d = json.load(open("fit1.json"))
assert d["best"]["is_micro_batch"] is True, d["best"]
assert all(t["trace_batch_size"] in (None, t["batch_size"]) for t in d["trials"]), d["trials"]
PY
# fit of the ramp with {B} in its --batch_size: the micro-batch at the moment explained is {B}
# (the ramp's last), as the report of the same trial says; the first forward's 4 had made fit
# say "(not the micro-batch: at {B} = 16 ... a batch of 4)"
"$VT" fit --json --card 12GiB --max-b 16 --iters 4 -- python3 "$ROOT/tests/python/batch_ramp.py" --batch_size "{B=16}" \
    --steps "{I}" </dev/null >fitr.json 2>fitr.err || fail "fit ramp: $(tail -n 3 fitr.err)"
python3 - <<'PY' || fail "fit ramp: $(cat fitr.json)"
import json
d = json.load(open("fitr.json"))
assert d["best"]["is_micro_batch"] is True, d["best"]
PY
python3 - <<'PY' || exit 1
import json, re, sys

def facts(n):
    line = next(l for l in open(n + ".out") if l.startswith("FACTS "))
    return dict(kv.split("=", 1) for kv in line.split()[1:])

bad = []
for n in ("ramp", "ramp2"):
    f, r, text = facts(n), json.load(open(n + ".json")), open(n + ".txt").read()
    cfg, ramp = r["config"], [int(b) for b in f["ramp"].split(",")]
    T = int(f["seq_len"])
    if cfg["block_size"]["value"] != T or "does not agree" in text:
        bad.append("%s: T %s (%s), the program's %d" % (n, cfg["block_size"]["value"],
                                                       cfg["block_size"]["where"], T))
    # the batch of the step explained: the ramp's last (its peak), said to have changed
    b = cfg["batch_size"]
    # (the position ids' T: a ramp of the batch, not a warm-up of T, which seq_warmup.sh says)
    if b["value"] != ramp[-1] or "the micro-batch changed during the run" not in b["where"] or \
            not re.search(r"(?<!\d)%d in its first forward" % ramp[0], b["where"]) or \
            "does not tell" in b["where"]:
        bad.append("%s: micro-batch %s (%s), the ramp %s" % (n, b["value"], b["where"], ramp))
    # the flag only where it is that batch
    if (b.get("flag") == "--batch_size") != (ramp[-1] == int(f["batch_size"])):
        bad.append("%s: micro-batch's flag %s at %s, --batch_size %s" % (n, b.get("flag"), b["value"], f["batch_size"]))
    if cfg["n_head"].get("flag") != "--attn_heads" or cfg["n_head"]["value"] != int(f["heads"]):
        bad.append("%s: heads %s" % (n, cfg["n_head"]))
    for a in r["advice"] or []:
        if a["block_size"] != T and a["command_line"] != "--ctx %d" % a["block_size"]:
            bad.append("%s: %s -> %r" % (n, a["change"], a["command_line"]))
for n in ("gb", "gb3"):
    f, r = facts(n), json.load(open(n + ".json"))
    cfg = r["config"]
    B, A, G = int(f["batch_size"]), int(f["grad_accum"]), int(f["global_batch"])
    if cfg["batch_size"]["value"] != B or cfg["batch_size"].get("flag"):
        bad.append("%s: micro-batch %s, the program's %d" % (n, cfg["batch_size"], B))
    a = cfg["gradient_accumulation_steps"]
    if a["value"] != A or a.get("flag") != "--update_every":
        bad.append("%s: accumulation %s, the program's %d" % (n, a, A))
    seen = 0
    for it in r["advice"] or []:
        b2, a2 = it["batch_size"], it["gradient_accumulation_steps"]
        if b2 == B and a2 == A:
            continue
        seen += 1
        want = " ".join(p for p in ("--batch %d" % (b2 * a2) if b2 * a2 != G else "",
                                    "--update_every %d" % a2 if a2 != A else "") if p)
        if it["command_line"] != want:
            bad.append("%s: %s -> %r, want %r" % (n, it["change"], it["command_line"], want))
    if not seen:
        bad.append("%s: no what-if of the micro-batch" % n)
# a split the script's flags do not give: --batch is still not the micro-batch, which the trace's
# forwards show; no advice spells a micro-batch through --batch
f, r = facts("split"), json.load(open("split.json"))
b = r["config"]["batch_size"]
if b["value"] != int(f["batch_size"]) or b.get("flag") or "--batch 64 is not the micro-batch" not in b["where"]:
    bad.append("split: micro-batch %s, the program's %s" % (b, f["batch_size"]))
for it in r["advice"] or []:
    if "--batch" in it["command_line"] or "--update_every" in it["command_line"]:
        bad.append("split: %s -> %r" % (it["change"], it["command_line"]))
# a split over --ngpus processes: no accumulation read from it, no advice changing it
# the ramp that died in its first step: T is the program's, B the step's that failed (the first
# of the ramp not printed as done), and no what-if runs a ramp through that batch again
f, r, text = facts("oom"), json.load(open("oom.json")), open("oom.txt").read()
ramp, T = [int(b) for b in f["ramp"].split(",")], int(f["seq_len"])
done = sum(1 for l in open("oom.out") if l.startswith("step "))
failed = ramp[done]
cfg = r["config"]
if cfg["block_size"]["value"] != T or "does not agree" in text:
    bad.append("oom: T %s (%s), the program's %d" % (cfg["block_size"]["value"], cfg["block_size"]["where"], T))
# (the flag, 4 times it, is the ramp's later steps': not said to be only the optimizer's batch)
if cfg["batch_size"]["value"] != failed or "a later step's batch" not in cfg["batch_size"]["where"]:
    bad.append("oom: micro-batch %s, the step that failed %d" % (cfg["batch_size"], failed))
pred = json.load(open("oom_pred.json"))
if (pred["recommended"] or {}).get("batch_size", failed) >= failed or pred["config"]["batch_size"]["value"] != failed:
    bad.append("oom: predict recommends %s at the micro-batch %s, the step that failed %d" % (pred["recommended"], pred["config"]["batch_size"], failed))
if not any(it.get("recommended") for it in r["advice"] or []):
    bad.append("oom: no recommendation")
for it in r["advice"] or []:
    m = re.search(r"--batch_size[ =](\d+)", it["command_line"])
    if (it.get("recommended") and it["batch_size"] >= failed) or \
            (m and max(1, int(m.group(1)) // 4) >= failed):
        bad.append("oom: %s -> %r (batch %s), the step that failed %d" % (it["change"], it["command_line"], it["batch_size"], failed))
f, r = facts("ddp"), json.load(open("ddp.json"))
b, a = r["config"]["batch_size"], r["config"]["gradient_accumulation_steps"]
if b["value"] != int(f["batch_size"]) or a.get("flag") == "--ngpus" or a["value"] not in (None, int(f["grad_accum"])):
    bad.append("ddp: micro-batch %s, accumulation %s, the program's %s, %s" % (b, a, f["batch_size"], f["grad_accum"]))
for it in r["advice"] or []:
    if "--ngpus" in it["command_line"]:
        bad.append("ddp: %s -> %r" % (it["change"], it["command_line"]))
if bad:
    print("batch_flags: " + "\n  ".join(bad))
    sys.exit(1)
PY
echo "batch_flags: ok"
