#!/bin/sh
# adam8bit_own.sh — SIMULATED optimizers of 2 B of state per bf16 parameter, written in the
# program (tests/python/adam8bit_own.py, a Llama in pure bf16): an 8-bit Adam the bitsandbytes way
# (two uint8 states per parameter, fp32 absmax per 2048-element block; no bitsandbytes on the
# stacks), the same two states packed in one uint8 tensor of the weight's bytes, and RMSprop's
# one state in bf16. Audit 41's F11: the 8-bit Adam had been "one state per trainable parameter in
# the parameters' 16 bits (2 B)" — the bytes right, the kind not. Now the state's tensors decide:
# two of one byte per element of each weight with small tensors beside them are two 8-bit states;
# one tensor of each weight's bytes alone is one 16-bit state; where neither shows (the packed
# pair, its scales beside it), the row says both readings and that the tensors do not tell.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/adam8bit_own.py"
for o in adam8bit packed8bit rmsprop16; do
    timeout 300 "$VT" run -q --card 8GiB -o "$o.vt" -- python3 "$P" --optim "$o" </dev/null >"$o.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "$o.out" || fail "$o: no truth line: $(tail -n 2 "$o.out")"
    report_both "$o"
done
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
bad = []
for n in ("adam8bit", "packed8bit", "rmsprop16"):
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(n + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] == 2 and t["dtype"] == "bfloat16", t
    j, txt = json.load(open(n + ".json")), open(n + ".txt").read()
    o = j["recognized"]["optimizer"]
    bpp = t["optim_state_bytes"] / t["trainable_params"]
    if abs(o["state_bytes_per_trainable_param"] - bpp) > 0.005:
        bad.append("%s: %s B of state per parameter, the program's %.3f" % (n, o["state_bytes_per_trainable_param"], bpp))
    row = [l for l in txt.splitlines() if l.startswith("  optimizer  ") and "B of state" in l]
    one16 = "one state per trainable parameter in the parameters' 16 bits"
    if t["states_per_param"] == 2 and t["optimizer"] == "adam8bit":
        if o["kind"] != "8bit" or "two 8-bit states" not in o["text"] or "two 8-bit states" not in o["where"]:
            bad.append("%s: %s: %s / %s (its two uint8 states and their absmax)" % (n, o["kind"], o["text"], o["where"]))
    elif t["states_per_param"] == 2:  # (packed: the tensors do not tell)
        if o["kind"] in ("one_state", "8bit") or "not told" not in o["where"] or \
                "one 16-bit state per parameter or two 8-bit ones" not in o["where"]:
            bad.append("%s: %s: %s (two 8-bit states packed in one tensor)" % (n, o["kind"], o["where"]))
    elif o["kind"] != "one_state" or one16 not in o["text"]:
        bad.append("%s: %s: %s (RMSprop's one bf16 state)" % (n, o["kind"], o["text"]))
    if t["states_per_param"] == 2 and (not row or one16 in row[0]):
        bad.append("%s: %s" % (n, row))
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "adam8bit_own: ok (two 8-bit states told from one 16-bit state by their tensors, or said not told)"
