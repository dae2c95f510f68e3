#!/bin/sh
# frozen_first.sh — SIMULATED fine-tunings whose 16-bit frozen weights read as the whole model's
# dtype (tests/python/frozen_dtypes.py): a frozen fp16 text encoder of more blocks (12, d 768, a
# CLIP-L's) beside a larger trained fp32 transformer (6 blocks, d 1024) under bf16 autocast, and a
# small QLoRA-like decoder (d 512, 4 blocks, no checkpointing) whose bf16 head made bf16 logits
# beside fp32 adapters. The encoder's blocks had told "16-bit parameters" by their sizes, the
# head's logits "16-bit training": AdamW "in the parameters' 16 bits, 4 B per trainable
# parameter" where the program's is 8, the trainable parameters twice the program's count. The
# trained weights' dtype is theirs: the trainable count, the state per trainable parameter, the
# trained weights' bytes and the frozen ones' are the program's; the 4-bit run's dtype row says
# the 16 bits are the frozen head's. The encoder's count is its own (its line casts it to fp16).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/frozen_dtypes.py"
timeout 300 "$VT" run --card 12GiB -o enc.vt -- python3 "$P" --base encoder --enc_d 768 --enc_l 12 \
    --trained_d 1024 --trained_l 6 --batch_size 8 </dev/null >enc.out 2>&1 ||
    { cat enc.out; fail "the encoder run failed"; }
timeout 300 "$VT" run --card 12GiB -o nf4.vt -- python3 "$P" --base nf4 --llama_d 512 --llama_l 4 \
    --llama_i 1408 --rank 8 --no_recompute --batch_size 4 </dev/null >nf4.out 2>&1 ||
    { cat nf4.out; fail "the 4-bit run failed"; }
for r in enc nf4; do report_both $r; done
python3 - <<'PYEOF' || fail "$(grep -h 'optimizer    \|trainable    \|dtype    \|parameters: ' enc.txt nf4.txt)"
import json, re
bad = []
for r in ("enc", "nf4"):
    out = open(r + ".out").read()
    facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^FACTS .*$", out, re.M).group(0))}
    state = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^STATE .*$", out, re.M).group(0))}
    j, txt = json.load(open(r + ".json")), open(r + ".txt").read()
    rec = j["recognized"]
    if rec["trainable_params"] != facts["trainable"]:
        bad.append(f"{r}: trainable {rec['trainable_params']}, the program's {facts['trainable']}")
    per = rec["optimizer"]["state_bytes_per_trainable_param"]
    want = state["optimizer"] / facts["trainable"]
    if abs(per - want) > 0.01:
        bad.append(f"{r}: {per:.2f} B of state per trainable parameter, the program's {want:.2f}")
    if "in the parameters' 16 bits" in rec["optimizer"]["text"] or "16-bit gradients" in txt:
        bad.append(f"{r}: the trained weights said 16-bit: {rec['optimizer']['text']}")
    # (the trained weights' element size: their bytes over their count, the program's)
    elem = facts["trainable_bytes"] // facts["trainable"]
    row = re.search(r"^    parameters(?: \(vs basic\))?: (.*)$", txt, re.M)
    if not row or f"{facts['trainable'] / 1e6:.2f} M trained weights at {elem} B" not in row.group(1):
        bad.append(f"{r}: weights' row {row and row.group(1)}")
    # the weights that take no gradient: the program's frozen ones (an fp16 encoder's count at 4 B
    # had been half its own, then said in bytes; its cast line, .to("cuda", dtype=torch.float16),
    # now gives its 2-byte elements: its count; the adapters at 2 B had left 0.6 MiB more)
    ema = rec["ema"]["where"]
    said = f"{facts['frozen_elems'] / 1e6:.2f} M elements in blocks" if r == "enc" else \
        f"{facts['frozen_bytes'] / 2**20:.1f} MiB of weights take no gradient"
    if said not in ema:
        bad.append(f"{r}: EMA row {ema!r}, the program's frozen bytes {facts['frozen_bytes']}")
    # (far more than an fp32 copy of the trained weights: never room for one, and how many)
    times = f"{round(facts['frozen_bytes'] / 4 / facts['trainable'])}x an fp32 copy of the"
    if r == "nf4" and ("can hold a copy" in ema or times not in ema):
        bad.append(f"nf4: EMA row {ema!r}, not {times!r}")
# the 4-bit run's 16 bits are its frozen head's logits: no 16-bit training said
dt = json.load(open("nf4.json"))["config"]["dtype"]
if "16-bit training" in dt["where"] or "trained weights' dtype the trace does not give" not in dt["where"]:
    bad.append(f"nf4: dtype {dt}")
for b in bad:
    print("frozen_first:", b)
raise SystemExit(1 if bad else 0)
PYEOF
echo "frozen_first: ok"
