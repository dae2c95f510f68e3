#!/bin/sh
# patchtst.sh — a time-series transformer of PatchTST's shape (tests/python/patchtst.py,
# SIMULATED): --batch_size series of --seq_len steps and --enc_in channels, each channel cut into
# patches (unfold: 42 of 16 steps every 8 for 336) and run through the encoder as a sequence of
# its own: the blocks see B·C sequences of 42 patch tokens, no tensor of --seq_len tokens. The
# report had taken T from --seq_len and B from --batch_size ("tokens per sample T (--seq_len)
# 336", N = B·T = 43008 tokens where the blocks saw 112896). Now, against the program's own
# truth (its B, channels, sequences, patches a sequence, d_model): T is the patches a sequence,
# read from the attention's softmax over the blocks' d-wide tensors; B the sequences, channels
# × the flag (the flag kept as the micro-batch the what-ifs change), d the flag's; no what-if at
# the flag's length; predict --from names the flag at whole samples. A fit and an out-of-memory
# run with the flags on the command line (as PatchTST's scripts give them), and one at another
# length and channel count, its width and heads its argparse defaults.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/patchtst.py"
FLAGS="--model PatchTST --seq_len 336 --pred_len 96 --enc_in 21 --e_layers 3 --n_heads 16
 --d_model 128 --d_ff 256 --dropout 0.2 --patch_len 16 --stride 8 --batch_size 128"
run() { # NAME CARD ARGS...
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card "$card" -o $n.vt -- python3 "$P" "$@" </dev/null >$n.out 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' $n.out || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
    "$VT" predict --from $n.vt >$n.pred 2>&1 || fail "predict --from $n.vt: $(tail -n 3 $n.pred)"
}
# shellcheck disable=SC2086 # (the flags split into words)
run fit 6GiB $FLAGS
# shellcheck disable=SC2086
run oom 3GiB $FLAGS
run def 6GiB --seq_len 512 --enc_in 7 --batch_size 32
python3 - fit oom def <<'PY' || fail "see above"
import json, re, sys
bad = []
for base in sys.argv[1:]:
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert t["oom"] == (base == "oom") and (not t["oom"] or t["oom_phase"] == "forward"), t
    r, txt, pred = json.load(open(base + ".json")), open(base + ".txt").read(), open(base + ".pred").read()
    c = r["config"]
    B, C, S, T, L = t["batch_size"], t["channels"], t["sequences"], t["patches"], t["seq_len"]
    bt, bb, d = c["block_size"], c["batch_size"], c["n_embd"]
    if bt["value"] != T or bt.get("shown") is False:
        bad.append("%s: T %s (%s: %s); the blocks saw %d patches a sequence" % (base, bt["value"], bt["source"],
                                                                               bt["where"], T))
    if bb["value"] != S or "%d \u00d7 --batch_size %d" % (C, B) not in bb["where"] or bb.get("flag") != "--batch_size":
        bad.append("%s: B %s (%s); the blocks saw %d sequences, %d a sample of --batch_size %d" % (
            base, bb["value"], bb["where"], S, C, B))
    if d["value"] != t["d_model"]:
        bad.append("%s: d %s; the program's d_model is %d" % (base, d["value"], t["d_model"]))
    for a in r["advice"]:
        if a.get("block_size") not in (None, T):
            bad.append("%s: what-if %r at T = %s" % (base, a["change"], a["block_size"]))
        if a["batch_size"] and a["batch_size"] % C == 0 and a["command_line"] and \
                "--batch_size %d" % (a["batch_size"] // C) not in a["command_line"]:
            bad.append("%s: what-if %r changes %r" % (base, a["change"], a["command_line"]))
    for line in txt.splitlines() + pred.splitlines():
        if re.search(r"\b%d\b.*(\u2192|->)|(\u2192|->) *%d\b" % (L, L // 2), line) or \
                re.search(r"\bT\b.*\b%d\b" % L, line) and "never saw" not in line:
            bad.append("%s: says %r" % (base, line.strip()))
    m = re.search(r"largest micro-batch that fits [^\n]*?(\d+) (?:to \d+ )?sequences: --batch_size (\d+)", txt)
    n = re.search(r"largest micro-batch that fits [^\n]*\(--batch_size (\d+)\)", pred)
    if not m or int(m.group(1)) != C * int(m.group(2)) or not n or n.group(1) != m.group(2):
        bad.append("%s: the largest %r, predict --from %r" % (base, m and m.group(0), n and n.group(0)))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "patchtst: ok (T the patches a sequence, B the sequences of the flag's samples, no what-if at --seq_len)"
