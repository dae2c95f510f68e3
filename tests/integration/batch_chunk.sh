#!/bin/sh
# batch_chunk.sh — SIMULATED: a batch cut into a flag's count of chunks, each its own forward and
# backward before one optimizer step (tests/python/txl_mems.py --batch_chunk, as Transformer-XL's
# train.py: torch.chunk(data, args.batch_chunk, 1)): gradient accumulation by another name, its
# --batch_size the optimizer's batch (audit 41 F4). It had been "micro-batch B (--batch_size) 32"
# of a run whose forwards took 16, "same effective batch 64" (the program's 32), and every change
# of the accumulation "--batch_size 16 (code change besides: gradients accumulated over 4
# micro-batches ...; txl_mems.py defines no flag for it)", where --batch_chunk 4 is that change.
# Now B = --batch_size / --batch_chunk (the trace agrees: that many backward passes a step), A is
# --batch_chunk's, and a change of A is spelled through it; T is the whole batch's tokens on the
# device over --batch_size (it had been 128, then 512 over the micro-batch: the program's 256).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/txl_mems.py"
timeout 300 "$VT" run -q --card 8GiB -o k.vt -- python3 "$P" --batch_size 32 --batch_chunk 2 --max_step 3 \
    </dev/null >k.out 2>&1
grep -q '^VRAMTRACE_TORCH_STATS ' k.out || fail "no truth line: $(tail -n 2 k.out)"
report_both k
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
bad = []
j, txt = json.load(open("k.json")), open("k.txt").read()
c = j["config"]
b, a = c["batch_size"], c["gradient_accumulation_steps"]
if b["value"] != 16:
    bad.append("micro-batch %s (%s), the program's 32 / 2 = 16" % (b["value"], b.get("where")))
t = c["block_size"]
if t["value"] != 256:  # (the program's --tgt_len; the batch's 8192 tokens over 32, not over 16)
    bad.append("T %s (%s), the program's 256" % (t["value"], t.get("where")))
if a["value"] != 2 or a.get("flag") != "--batch_chunk":
    bad.append("accumulation %s (%s)" % (a["value"], a.get("where")))
if "same effective batch 64" in txt or "same effective batch 32" not in txt:
    bad.append("effective batch: %s" % [l.strip() for l in txt.splitlines() if "effective batch" in l][:2])
ch = [l.strip() for l in txt.splitlines() if l.strip().startswith("change: --batch_size") and "code change" in l]
if ch:
    bad.append("an accumulation change as a code change: %s" % ch[0])
if not any(l.strip() == "change: --batch_chunk 4" for l in txt.splitlines()):
    bad.append("no change spelled --batch_chunk 4")
print("\n".join(bad))
exit(1 if bad else 0)
PY
echo "batch_chunk: ok (--batch_size 32 cut into --batch_chunk 2: B 16, A 2, changes through --batch_chunk)"
