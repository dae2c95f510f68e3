#!/bin/sh
# own_parts.sh — labels true of a program that writes its own parts (tests/python/own_parts.py,
# SIMULATED): its own decoder class named GPT had been called "nanoGPT's model class on the
# Python stacks (GPT.forward)"; its own fp32 EMA of the weights "EMA weights off" (no library's
# EMA code ran, but the run kept a copy); its own low-rank adapters "(0.1 %, not LoRA's
# adapters; ...)". Now: the program's own class GPT, in its file; the EMA not recognised (its
# untrained weights could hold a copy), off only where every weight trains; the adapters not
# recognised as peft's; where it ran out of memory before any backward (no gradient says which
# weights train), unknown where its weights hold a copy of themselves (the EMA's, the sizes of
# the model again in order: it had been "off"; or copy.deepcopy's copy of it, in another order:
# "off" too), off where they hold none. A class GPT in
# minGPT's layout (tests/python/mingpt/model.py, no nanoGPT class beside it, no configurator)
# had been "nanoGPT's model class" by its file's name, model.py.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, arguments
    n=$1
    shift
    timeout 300 "$VT" run --card 12GiB -o "$n.vt" -- python3 "$ROOT/tests/python/own_parts.py" "$@" \
        </dev/null >"$n.out" 2>&1 || { tail -n 5 "$n.out"; fail "$n: run failed"; }
    report_both "$n"
}
run plain
run ema --ema
run lora --lora 4
# out of memory in the first forward (1 GiB), before any backward says which weights train: its
# own EMA had been "off"; without one, off still (its weights hold no copy of themselves)
# (ema_copy_oom: its EMA copy.deepcopy of the model, in another order than .to() had moved it:
# it had been "off" too)
for n in ema_oom plain_oom ema_copy_oom; do
    e=; [ $n = ema_oom ] && e=--ema
    [ $n = ema_copy_oom ] && e=--ema_copy
    timeout 300 "$VT" run --card 1GiB -o "$n.vt" -- python3 "$ROOT/tests/python/own_parts.py" $e \
        --batch_size 64 </dev/null >"$n.out" 2>&1 && fail "$n: the run did not run out of memory"
    grep -q OutOfMemoryError "$n.out" || { tail -n 5 "$n.out"; fail "$n: run failed"; }
    "$VT" report --no-color "$n.vt" >"$n.txt" && "$VT" report --json "$n.vt" >"$n.json" ||
        fail "$n: report failed"
done
# nanoGPT's own run (its configurator, examples/sim/sim_train.py, whose class GPT is in that file):
# its class is nanoGPT's still
timeout 300 "$VT" run -q --card 12GiB -o nano.vt -- python3 "$ROOT/examples/sim/sim_train.py" \
    "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" --max_iters=1 --eval_iters=1 --compile=False \
    --batch_size=2 </dev/null >nano.out 2>&1 || { tail -n 5 nano.out; fail "nano: run failed"; }
"$VT" report --no-color nano.vt >nano.txt || fail "nano: report failed"
grep -q "^  evidence  *nanoGPT's model class on the Python stacks (GPT.forward)$" nano.txt ||
    fail "nano: $(grep '^  evidence' nano.txt)"
timeout 300 "$VT" run -q --card 12GiB -o mingpt.vt -- python3 "$ROOT/tests/python/mingpt_train.py" \
    --steps 2 </dev/null >mingpt.out 2>&1 || { tail -n 5 mingpt.out; fail "mingpt: run failed"; }
"$VT" report --no-color mingpt.vt >mingpt.txt || fail "mingpt: report failed"
grep -q "^  evidence  *the program's own model class GPT on the Python stacks (GPT.forward in model.py)$" \
    mingpt.txt || fail "mingpt: $(grep '^  evidence' mingpt.txt)"
# the same with no arguments: its argparse flags make it an argparse script, never nanoGPT's
# configurator command line (its docstring's word "configurator" had: "configuration (nanoGPT)")
timeout 300 "$VT" run -q --card 12GiB -o mingpt0.vt -- python3 "$ROOT/tests/python/mingpt_train.py" \
    </dev/null >mingpt0.out 2>&1 || { tail -n 5 mingpt0.out; fail "mingpt0: run failed"; }
"$VT" report --no-color mingpt0.vt >mingpt0.txt || fail "mingpt0: report failed"
grep -q "^configuration (an argparse script)" mingpt0.txt && ! grep -q "nanoGPT" mingpt0.txt ||
    fail "mingpt0: $(grep -m3 'nanoGPT\|^configuration' mingpt0.txt)"
python3 - <<'PY' || exit 1
import json, re, sys
bad = []
for n in ("plain", "ema", "lora"):
    r, text = json.load(open(n + ".json")), open(n + ".txt").read()
    rec = r["recognized"]
    if "nanoGPT" in text or "nanoGPT" in json.dumps(r) or "own_parts.py" not in rec["family_where"]:
        bad.append("%s: %s" % (n, rec["family_where"]))
    if "not LoRA" in text:
        bad.append("%s: 'not LoRA' said of its own adapters" % n)
    facts = dict(kv.split("=") for kv in next(l for l in open(n + ".out") if l.startswith("FACTS ")).split()[1:])
    ema = rec["ema"]
    if facts["ema"] == "1" and (ema["on"] is not None or "not recognised" not in ema["where"]):
        bad.append("%s: its own EMA said %s" % (n, ema))
    if n == "plain" and ema["on"] is not False:  # every weight trains: no room for a copy
        bad.append("%s: no EMA, every weight trained, said %s" % (n, ema))
    if facts["lora"] != "0" and "no adapters recognised as peft's" not in (r["formula_note"] or ""):
        bad.append("%s: its own adapters: %s" % (n, r["formula_note"]))
for n in ("ema_oom", "plain_oom", "ema_copy_oom"):
    r, out = json.load(open(n + ".json")), open(n + ".out").read()
    facts = dict(kv.split("=") for kv in next(l for l in out.splitlines() if l.startswith("FACTS ")).split()[1:])
    ema = r["recognized"]["ema"]
    if "\nstep " in out or r["backward_passes"]:
        bad.append("%s: not out of memory in its first forward" % n)
    elif facts["ema"] == "1":
        m = re.search(r"\(([0-9.]+) MiB\) repeat", ema["where"])
        if ema["on"] is not None or not m or abs(float(m.group(1)) - int(facts["ema_bytes"]) / 2**20) > 0.05:
            bad.append("%s: its own EMA of %s B said %s" % (n, facts["ema_bytes"], ema))
        elif ("in another order (copy.deepcopy made them)" in ema["where"]) != (n == "ema_copy_oom"):
            bad.append("%s: its copy's order said wrong: %s" % (n, ema["where"]))
    elif ema["on"] is not False:
        bad.append("%s: no EMA, no copy among its weights, said %s" % (n, ema))
if bad:
    print("own_parts: " + "\n  ".join(bad))
    sys.exit(1)
PY
echo "own_parts: ok"
