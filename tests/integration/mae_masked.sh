#!/bin/sh
# mae_masked.sh — a SIMULATED masked autoencoder (tests/python/mae_masked.py): its 384-wide
# encoder, 6 heads, sees the 16 patches left unmasked and its class token (17 tokens), its
# 256-wide decoder, 8 heads, every one of the 65 positions. T had been read from the position
# embedding ("T = 65 patch tokens from the position embedding 65×d"), and B from autocast's copy
# of the patch embedding's weight (d×768 of 2 bytes is 12·64×d): now T is the encoder's, from its
# attention kernels' outputs, and H its heads (the decoder's, whose log-sum-exp rows divide B·65,
# had been taken for them). The run out of memory in its first forward, after most of the
# blocks' weights but in the decoder's first blocks, recommends nothing: its what-ifs are lower
# bounds (it had said "largest 505", where 512 runs; with T 17 and the rest scaled by the
# weights' share, 2.81 GiB predicted at 512 where the run reserves 3.32, and "largest 757").
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/mae_masked.py"
timeout 300 "$VT" run -q --card 4GiB -o fit.vt -- python3 "$P" --batch_size 512 </dev/null >fit.out 2>&1 ||
    fail "the run at 512 failed: $(tail -n 2 fit.out)"
timeout 300 "$VT" run -q --card 4GiB -o oom.vt -- python3 "$P" --batch_size 1024 </dev/null >oom.out 2>&1
grep -q "^OOM in forward$" oom.out || fail "1024 did not run out of memory in its forward: $(tail -n 2 oom.out)"
report_both fit
report_both oom
python3 - fit.out fit.json oom.json oom.txt <<'PY' || fail "$(grep -A40 '^advice' oom.txt)"
import json, re, sys
out = open(sys.argv[1]).read()
facts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^facts: .*$", out, re.M).group(0))}
reserved = int(re.search(r"^trained 2 steps, reserved at most (\d+)$", out, re.M).group(1))
bad = []
for name in ("fit", "oom"):
    c = json.load(open(sys.argv[2] if name == "fit" else sys.argv[3]))["config"]
    for key, want in (("block_size", facts["encoder_tokens"]), ("n_head", facts["encoder_heads"]),
                      ("n_embd", facts["encoder_width"])):
        if c[key]["value"] != want:
            bad.append(f"{name}: {key} {c[key]['value']} ({c[key].get('where')}), the encoder's {want}")
j = json.load(open(sys.argv[3]))
largest = j["prediction"]["largest_batch_size"]
if not largest or not 512 <= largest < 1024:
    bad.append(f"oom: largest micro-batch {largest}, where 512 runs and 1024 does not")
txt = open(sys.argv[4]).read()
if re.search(r"^  recommended:", txt, re.M):
    bad.append("oom: a recommendation from a forward whose share made is not known")
# half the batch: what it predicts must not exceed what the run at 512 reserved (a lower bound)
m = re.search(r"^  - micro-batch 1024 → 512\n +predicted peak (at least )?([0-9.]+) GiB: ([^(\n]*)", txt, re.M)
if not m or float(m.group(2)) * 2**30 > reserved or "does not fit" in m.group(3) or not m.group(1):
    bad.append(f"oom: 512 predicted {m and m.group(0)!r}, the run at 512 reserved {reserved}")
for b in bad:
    print("mae_masked:", b)
sys.exit(1 if bad else 0)
PY
echo "mae_masked: ok (a masked autoencoder's T and H are its encoder's; its first-forward OOM bounds)"
