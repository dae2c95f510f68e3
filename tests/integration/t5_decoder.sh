#!/bin/sh
# t5_decoder.sh — a SIMULATED T5 fine-tune with Adafactor (tests/python/t5_adafactor.py: a shared
# embedding, 12 encoder blocks over 512 tokens, 12 decoder blocks with cross-attention over 128)
# out of memory in its first forward while still in its ENCODER (B=16 on an emulated 8 GiB card:
# the program's truth line says which stack and block it had reached), and in its decoder's second
# block (B=13: one decoder block complete, too few to repeat). Audit finding F3: every weight not
# reached (the decoder's among them) had been taken to keep what one cast of the last repeated
# block kept (x2.99 at B=16), and the logits were counted over the encoder's length: B=8 "16.21
# GiB: does not fit", the largest micro-batch that fits 2 (from B=13: B=8 "9.18 GiB: does not
# fit", largest 4), where B=8 runs (7.58 GiB). The weights not reached that do not repeat the
# blocks that ran are now not counted, the what-ifs lower bounds: no what-if at B=8 may say it
# does not fit, each bound stays at or below what B=8's run measured, and the largest micro-batch
# is "at most" one no smaller than 8.
# None of the three reached a step: their torch.optim.Adafactor (factored second moments, no
# first moment) had been counted at 1 B per parameter, 212.6 MiB, where B=8's step kept 1.85 MiB
# (the program's own count). Now estimated from the weights' sizes (a row and a column of each
# d x k matrix, the other tensors whole): predict --from's optimizer bytes at B=8 from each trace
# at or above what B=8's run kept, and within 10 % of it.
# B=12 runs out of memory in its decoder's fifth block (blocks enough to repeat: the what-ifs are
# estimates): its logits, not reached, had been counted over the encoder's 512 positions, not the
# decoder's 128 (10*B*512*V: 1.84 GiB at B=12, 1.23 GiB of predict --from's B=8 where B=8's run
# kept 376.5 MiB). Now over the decoder's token batch, the second the first forward looked up: at
# most 16 B per element of the program's B x tgt_len x vocab logits, and its T said in the note;
# the micro-batch recommended and the largest said to fit run without OOM when rerun.
# B=16's copies count the rest of the encoder it was in (its lower bound the encoder's 162.0 MiB,
# 138.4 alive), never the decoder's, not reached.
# B=12's autocast copies, 241.9 MiB alive at the failure, had been predict --from's at B=8 (its
# forward made 425.1 MiB): the decoder's blocks not reached and the tied head at its end cast none
# yet. Now the copies of the weights not reached, of the sizes the forward had cast, and of the
# head's V x d are added: within 5 % of what B=8's run made, at least the program's own count.
# Its workspaces, 32 MiB alive at the failure, had been B=8's, whose run made 64 (the backward's
# cuBLAS workspace on autograd's thread): now twice those alive, 64.
# With a head of its own (--untied_head, of the embedding's size), within 2 % of what its B=4 run
# made (the head's copy counted once: 234.0 MiB alive at B=12's failure had been B=4's).
# B=8 on a 7100 MiB card dies at its bf16 logits, its tied head's copy made: that copy counted
# once (472.1 MiB of copies had been predict --from's at B=8 and B=4, where B=8's run made 425.1).
# On 7200 MiB it dies casting those logits to fp32: counted whole (10*B*T*V), not the 62.8 MiB of
# bf16 logits alive (B=8's run kept 376.5).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/t5_adafactor.py"
for b in 16 13 12 8; do
    timeout 300 "$VT" run -q --card 8GiB -o "b$b.vt" -- python3 "$P" --batch_size "$b" </dev/null >"b$b.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "b$b.out" || fail "B=$b: no truth line: $(tail -n 2 "b$b.out")"
    report_both "b$b"
done
# the same T5 with a head of its own (T5 v1.1's lm_head, of the embedding's size, made after the
# decoder): out of memory in its decoder at B=12, its B=4 run's truth counts the head's copy
for b in 12 4; do
    timeout 300 "$VT" run -q --card 8GiB -o "u$b.vt" -- python3 "$P" --untied_head --batch_size "$b" </dev/null >"u$b.out" 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' "u$b.out" || fail "untied B=$b: no truth line: $(tail -n 2 "u$b.out")"
done
"$VT" predict --json --from u12.vt --batch_size=4 >pu12.json || fail "predict --from u12.vt failed"
# B=8 on a 7100 MiB card: out of memory at its bf16 logits, its head's copy made (alive); on
# 7200 MiB at their fp32 cast, the bf16 logits alive
for c in 7100 7200; do
    timeout 300 "$VT" run -q --card ${c}MiB -o h$c.vt -- python3 "$P" --batch_size 8 </dev/null >h$c.out 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' h$c.out || fail "B=8 on $c MiB: no truth line: $(tail -n 2 h$c.out)"
    for b in 8 4; do
        "$VT" predict --json --from h$c.vt --batch_size=$b >ph${c}_$b.json || fail "predict --from h$c.vt failed"
    done
done
for b in 16 13 12; do
    "$VT" predict --json --from "b$b.vt" --batch_size=8 >"p$b.json" || fail "predict --from b$b.vt failed"
    "$VT" predict --from "b$b.vt" --batch_size=8 >"p$b.txt" || fail "predict --from b$b.vt (text) failed"
done
python3 - <<'PY' >check.out 2>&1 || fail "$(cat check.out)"
import json
def truth(n):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(n) if l.startswith("VRAMTRACE_TORCH_STATS "))
t16, t13, t8 = truth("b16.out"), truth("b13.out"), truth("b8.out")
assert t16["oom"] and t16["oom_phase"] == "forward" and t16["oom_at"]["stack"] == "encoder", t16
assert t13["oom"] and t13["oom_phase"] == "forward" and t13["oom_at"]["stack"] == "decoder", t13
assert not t8["oom"] and t8["steps"] == 2, t8
meas = json.load(open("b8.json"))["peak"]["process_bytes"]  # what B=8's run took on the card
bad = []
for b in (16, 13):
    j, p = json.load(open("b%d.json" % b)), json.load(open("p%d.json" % b))
    for it in j["advice"]:
        if it.get("batch_size") != 8:
            continue
        if it["fits"] is False:
            bad.append("B=%d's report: B=8 does not fit (%.2f GiB), its run took %.2f" % (b, it["predicted_peak_bytes"] / 2**30, meas / 2**30))
        if it["predicted_peak_at_least"] and it["predicted_peak_bytes"] > meas:
            bad.append("B=%d's report: B=8 at least %.2f GiB, its run took %.2f" % (b, it["predicted_peak_bytes"] / 2**30, meas / 2**30))
        if not it["predicted_peak_at_least"]:
            bad.append("B=%d's report: B=8 predicted %.2f GiB as an estimate, the decoder's blocks not all seen" % (b, it["predicted_peak_bytes"] / 2**30))
    pr = j["prediction"]
    if pr["largest_batch_size"] is None or pr["largest_batch_size"] < 8 or \
            (pr["largest_batch_size"] > 8 and not pr["largest_batch_size_at_most"]):
        bad.append("B=%d's report: largest micro-batch %s (at most: %s); B=8 runs" % (b, pr["largest_batch_size"], pr["largest_batch_size_at_most"]))
    if p["fits"] is False or not p["lower_bound"] or p["peak_bytes"] > meas:
        bad.append("predict --from b%d.vt --batch_size=8: fits %s, lower bound %s, %.2f GiB; its run took %.2f" %
                   (b, p["fits"], p["lower_bound"], p["peak_bytes"] / 2**30, meas / 2**30))
    st, ps = t8["optim_state_bytes"], p["by_category"]["optimizer"]
    if not st <= ps <= 1.1 * st:
        bad.append("predict --from b%d.vt --batch_size=8: optimizer %.2f MiB; B=8's Adafactor kept %.2f MiB" %
                   (b, ps / 2**20, st / 2**20))
    note = " ".join(pr["notes"])
    for w in ("which the forward never reached", "lower bounds") + ((("do not repeat its blocks",) if b == 16 else ())):
        if w not in note:
            bad.append("B=%d's report: no %r in its notes: %s" % (b, w, note[:300]))
    if "does not fit" in open("p%d.txt" % b).read():
        bad.append("predict --from b%d.vt (text): does not fit" % b)
    # its autocast copies, a lower bound: B=16's the whole encoder's (one per weight of the rest
    # of the stack it was in, 138.4 MiB alive at the failure), not the decoder's, not reached
    ac, enc = p["by_category"]["autocast_copies"], 2 * t16["encoder_block_params"]
    if b == 16 and not 0.995 * enc <= ac <= 1.005 * enc:
        bad.append("predict --from b16.vt --batch_size=8: autocast copies %.1f MiB, the encoder's %.1f" %
                   (ac / 2**20, enc / 2**20))
# B=12: cut after blocks of the decoder enough to repeat; its logits over the decoder's length
t12 = truth("b12.out")
assert t12["oom"] and t12["oom_phase"] == "forward" and t12["oom_at"]["stack"] == "decoder" and \
    t12["oom_at"]["block"] >= 2, t12
j, p = json.load(open("b12.json")), json.load(open("p12.json"))
tv = t12["tgt_len"] * t12["vocab_size"]  # one sample's logits' elements, the decoder's positions
lw = j["prediction"]["calibration"].get("logits_whole_bytes") or 0
if not 8 <= lw / (t12["batch_size"] * tv) <= 16:
    bad.append("B=12's report: logits %.2f GiB, %.1f B per element of the program's B x tgt_len x vocab" %
               (lw / 2**30, lw / (t12["batch_size"] * tv)))
st, ps = t8["optim_state_bytes"], p["by_category"]["optimizer"]
if not st <= ps <= 1.1 * st or "Adafactor's state is estimated from the weights' sizes" not in " ".join(j["prediction"]["notes"]):
    bad.append("predict --from b12.vt --batch_size=8: optimizer %.2f MiB; B=8's Adafactor kept %.2f MiB; notes: %s" %
               (ps / 2**20, st / 2**20, " ".join(j["prediction"]["notes"])[:400]))
lp = p["by_category"]["logits_loss"]
if not 8 <= lp / (8 * tv) <= 16:
    bad.append("predict --from b12.vt --batch_size=8: logits/loss %.2f GiB, %.1f B per element of 8 x tgt_len x vocab" %
               (lp / 2**30, lp / (8 * tv)))
# its autocast copies: 241.9 MiB alive at the failure (4.4 of the decoder's 12 blocks cast, the
# head not reached) had been predict --from's B=8, where B=8's forward made 425.1 MiB: the
# weights not reached, of the sizes it cast, and the tied head's V x d are now counted
ac, acm = p["by_category"]["autocast_copies"], json.load(open("b8.json"))["categories"]["autocast_copies"]
if not (max(t8["autocast_copy_bytes"], 0.95 * acm) <= ac <= 1.05 * acm) or "autocast copies are taken whole" not in \
        (j["prediction"]["first_forward_note"] or ""):
    bad.append("predict --from b12.vt --batch_size=8: autocast copies %.1f MiB; B=8's run made %.1f MiB (the program's weights' %.1f); note: %s" %
               (ac / 2**20, acm / 2**20, t8["autocast_copy_bytes"] / 2**20, j["prediction"]["first_forward_note"]))
# its library workspaces: 32 MiB alive at the failure (the main thread's cuBLAS workspace) had been
# B=8's, whose run made 64 (its backward, on autograd's thread, gets one of its own): now twice
ws, wsm = p["by_category"]["workspaces"], json.load(open("b8.json"))["categories"]["workspaces"]
if not wsm <= ws <= 1.05 * wsm:
    bad.append("predict --from b12.vt --batch_size=8: workspaces %.1f MiB; B=8's run made %.1f MiB" %
               (ws / 2**20, wsm / 2**20))
# untied: its head's weight counted once (the B=4 run's truth: every weight's copy it made)
u12, u4, pu = truth("u12.out"), truth("u4.out"), json.load(open("pu12.json"))
assert u12["oom"] and u12["oom_at"]["stack"] == "decoder" and not u4["oom"], (u12, u4)
ac, acm = pu["by_category"]["autocast_copies"], u4["autocast_copy_bytes"]
if not 0.98 * acm <= ac <= 1.02 * acm:
    bad.append("untied: predict --from u12.vt --batch_size=4: autocast copies %.1f MiB; B=4's run made %.1f MiB" %
               (ac / 2**20, acm / 2**20))
# out of memory at its logits, the tied head's copy alive (425.1 MiB): counted once, not again at
# the forward's end (472.1 MiB had been predict --from's at B=8 and B=4, whose runs made 425.1)
# on 7200 MiB at their fp32 cast (62.8 MiB of bf16 logits alive, 126 asked for): the logits
# counted whole, 8 to 16 B per element (62.8 had been predict --from's B=8, its run kept 376.5)
acm = json.load(open("b8.json"))["categories"]["autocast_copies"]
for c in (7100, 7200):
    h = truth("h%d.out" % c)
    assert h["oom"] and h["oom_phase"] == "forward", h
    for b in (8, 4):
        p = json.load(open("ph%d_%d.json" % (c, b)))
        ac, lp = p["by_category"]["autocast_copies"], p["by_category"]["logits_loss"]
        if not 0.995 * acm <= ac <= 1.005 * acm:
            bad.append("predict --from h%d.vt --batch_size=%d: autocast copies %.1f MiB; B=8's run made %.1f MiB" %
                       (c, b, ac / 2**20, acm / 2**20))
        if c == 7200 and p["by_category"]["temporaries"] > 0:  # (the request among the logits)
            bad.append("predict --from h7200.vt --batch_size=%d: the failed request (the logits' fp32 copy) counted again: temporaries %.1f MiB" %
                       (b, p["by_category"]["temporaries"] / 2**20))
        if not 8 <= lp / (b * tv) <= 16:
            bad.append("predict --from h%d.vt --batch_size=%d: logits/loss %.1f MiB, %.1f B per element of B x tgt_len x vocab" %
                       (c, b, lp / 2**20, lp / (b * tv)))
if "T = %d, the decoder's length" % t12["tgt_len"] not in (j["prediction"]["first_forward_note"] or ""):
    bad.append("B=12's report: no T = %d in its note: %s" % (t12["tgt_len"], j["prediction"]["first_forward_note"]))
rec = [it["batch_size"] for it in j["advice"] if it.get("recommended") and it.get("batch_size")]
big = j["prediction"]["largest_batch_size"]
open("rerun.txt", "w").write(" ".join(str(b) for b in sorted(set(rec + ([big] if big else [])))))
print("\n".join(bad))
exit(1 if bad else 0)
PY
# the micro-batches B=12's report recommends and says fit, rerun on the same card: no OOM
for b in $(cat rerun.txt); do
    timeout 300 "$VT" run -q --card 8GiB -o "r$b.vt" -- python3 "$P" --batch_size "$b" </dev/null >"r$b.out" 2>&1
    grep '^VRAMTRACE_TORCH_STATS ' "r$b.out" | grep -q '"oom": false' ||
        fail "B=12's report: B=$b recommended or said to fit; its run: $(grep -o '"oom[^,]*,' "r$b.out" | head -n 2 | tr -d '\n')"
done
[ -s rerun.txt ] || fail "B=12's report: no micro-batch recommended or said to fit"
echo "t5_decoder: ok (a T5 cut in its encoder: the decoder not reached is not counted, B=8 at most a lower bound below its run's peak; cut in its decoder: logits over the decoder's length, micro-batches advised run)"
