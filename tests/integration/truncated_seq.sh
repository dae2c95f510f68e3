#!/bin/sh
# truncated_seq.sh — a trace cut early in its first forward (a SIGKILLed run: 15 to 35 % of its
# bytes, no logits yet) says the run's sequence length T, or says it does not know it: never a
# stray tensor's. Until 2026-12-06 a weight passed for the token batch there (BERT's 2×d
# token-type table, 6144 B, for 768 tokens: T = 48 where the run had 512, the current
# configuration predicted at 2.72 GiB where the whole run measured 8.24; a GPT-2 block's 4·d
# fp32 bias, 12288 B, for 1536 tokens: T = 384, 192 or 96 where it had 1024), and a run cut in
# its first forward kept its first outputs among the weights (BERT's position ids there, the
# inferred T 8192). Checked on the committed BERT and Hugging Face GPT-2 traces (their runs' T
# in facts.jsonl) and on a simulated BERT recorded with --stacks none, where nothing tells a
# weight from the batch: T unknown there, the need a lower bound. A whole GPT-2 medium run, whose
# batch has a bias's size, has its T from the position ids after the real batch.
set -u
fail() { echo "truncated_seq: $*"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP truncated_seq: no python3"; exit 77; }
cut_at() { # cut_at TRACE PERCENT OUT: the first PERCENT % of TRACE's bytes
    n=$(wc -c <"$1")
    head -c $((n * $2 / 100)) "$1" >"$3"
}
TR="$ROOT/examples/traces"

# check TRACE T PERCENT...: at each cut, the report's T (its configuration, and the trace's own
# inferred T and B·T where it says them) is T or unknown; prints the cuts where it is T
check() {
    t=$1 want=$2
    shift 2
    for pc in "$@"; do
        cut_at "$t" "$pc" c.vt
        "$VT" report --json c.vt >c.json 2>c.err || fail "$(basename "$t") at $pc %: $(cat c.err)"
        python3 - c.json "$want" "$(basename "$t") at $pc %" <<'EOF' || exit 1
import json, sys
d, want, name = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
c, inf = d["config"], d["inferred"] or {}
t = c["block_size"]
ok = t["value"] == want or (t["value"] is None and t["source"] == "unknown")
if not ok:
    sys.exit("truncated_seq: %s: T = %s (%s), the run's is %d" % (name, t["value"], t["where"], want))
if "block_size" in inf and inf["block_size"]["value"] != want:
    sys.exit("truncated_seq: %s: the trace's T = %s (%s), the run's is %d"
             % (name, inf["block_size"]["value"], inf["block_size"]["where"], want))
b = c["batch_size"]["value"]
if "tokens" in inf and b and inf["tokens"]["value"] != b * want:
    sys.exit("truncated_seq: %s: B·T = %s (%s), the run's is %d"
             % (name, inf["tokens"]["value"], inf["tokens"]["where"], b * want))
if t["value"] == want:
    print(name)
EOF
    done
}
B="$TR/h100-torch2.11-beyond" H="$TR/h100-torch2.11"
check "$B/bert_b16_fit.vt" 512 15 20 25 30 35 >said.txt || exit 1
check "$B/bert_b32_oom.vt" 512 25 30 35 >>said.txt || exit 1
check "$TR/sim/bert_b16_fit.vt" 512 20 25 30 35 >>said.txt || exit 1
for g in hf_gpt2_eager_b4 hf_gpt2_eager_b16 s_hf_gpt2_eager_b8 s_hf_gpt2_eager_b6 s_hf_gpt2_compile_b8; do
    check "$H/$g.vt" 1024 15 20 25 30 35 >>said.txt || exit 1
done
# (not "unknown" throughout: the cuts that reached the batch and its position ids say T)
for want in "bert_b16_fit.vt at 25 %" "bert_b32_oom.vt at 35 %" "hf_gpt2_eager_b4.vt at 15 %" \
    "s_hf_gpt2_eager_b8.vt at 30 %"; do
    grep -qx "$want" said.txt || fail "$want: T not said ($(cat said.txt | tr '\n' ','))"
done

# the prediction of BERT's whole step from its cut (25 %): within 10 % of what the whole run
# measured (8.24 GiB at the process level; 2.72 GiB had been predicted from T = 48)
cut_at "$B/bert_b16_fit.vt" 25 c.vt
"$VT" report --json c.vt >c.json 2>/dev/null && "$VT" report --json "$B/bert_b16_fit.vt" >w.json ||
    fail "BERT: report --json"
python3 - c.json w.json <<'EOF' || fail "BERT at 25 %: the prediction"
import json, sys
c, w = (json.load(open(f)) for f in sys.argv[1:])
need, peak = c["prediction"]["current_peak_bytes"], w["peak"]["process_bytes"]
assert abs(need / peak - 1) <= 0.10, (need / 2**30, peak / 2**30)
EOF

# a whole run too: GPT-2 medium at B = 2 has B·T = 2048 tokens, 16384 B, the size of a block's
# 4·d fp32 bias; that weight, not the batch, had been read as the tokens before the logits, so
# the position ids after the batch were not looked for (T only from B·T over the program's B)
"$VT" report --json "$TR/sim/gpt2m_b2_a2_fit.vt" >m.json 2>/dev/null || fail "gpt2m_b2_a2_fit: report"
python3 - m.json <<'EOF' || fail "gpt2m_b2_a2_fit: the trace's own T"
import json, sys
i = json.load(open(sys.argv[1]))["inferred"]
assert i["block_size"]["value"] == 1024 and "position ids" in i["block_size"]["where"], i.get("block_size")
assert i["batch_size"]["value"] == 2, i.get("batch_size")
EOF

# no Python frames (--stacks none): no stack tells a weight from the batch, so a cut before the
# logits says no T (it had said 48) and its need is a lower bound
[ -f "$BUILD/examples/libsimtorch.so" ] || { echo "SKIP truncated_seq: stackless part (make progs)"; exit 0; }
timeout 300 "$VT" run --stacks none --card 12GiB -o s.vt -- python3 "$ROOT/examples/sim/sim_hf.py" \
    --model bert-base --batch-size 16 --steps 1 >run.out 2>&1 || { tail -n 5 run.out; fail "sim run"; }
check s.vt 512 20 25 30 35 >said_s.txt || exit 1
[ -s said_s.txt ] && fail "--stacks none: T said from a cut with no logits: $(cat said_s.txt)"
cut_at s.vt 25 c.vt
"$VT" report c.vt >c.txt 2>/dev/null || fail "--stacks none: report"
grep -q "current configuration needs at least" c.txt ||
    fail "--stacks none: $(grep 'current configuration needs' c.txt)"
exit 0
