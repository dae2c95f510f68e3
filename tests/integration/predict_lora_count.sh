#!/bin/sh
# predict_lora_count.sh — predict --from a LoRA run says its trained parameters as the run counts
# them, at its own model: a SIMULATED Llama-400M with LoRA of rank 16 and an EMA had been told
# "trained: 3.12 M parameters" (the formula's P, which leaves the adapters out, times their share
# of the trace's weights) for the program's 3,145,728, the report's own count; from the trace and
# from its report's JSON alike. A what-if of another model keeps the share of its P.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q -o x.vt -- python3 "$ROOT/examples/sim/sim_hf.py" --model llama-400m --lora-rank 16 --ema \
    --batch-size 8 --steps 2 </dev/null >x.out 2>&1 || { tail -n 3 x.out; fail "run failed"; }
"$VT" report --json x.vt >x.json || fail "report"
want=$(python3 -c "
import json
st = next(json.loads(l.split(' ', 1)[1]) for l in open('x.out') if l.startswith('VRAMTRACE_TORCH_STATS '))
r = json.load(open('x.json'))
assert r['recognized']['trainable_params'] == st['trainable_params'], (r['recognized']['trainable_params'], st['trainable_params'])
print('%.2f' % (st['trainable_params'] / 1e6))") || fail "the report's count is not the program's"
for f in x.vt x.json; do
    "$VT" predict --from $f --batch-size 2 >p.txt 2>&1 || fail "predict --from $f"
    grep -q "^trained: $want M parameters, " p.txt || fail "predict --from $f: $(grep '^trained' p.txt), the program's $want M"
done
"$VT" predict --from x.vt --batch-size 2 --n-layer 12 >p12.txt 2>&1 || fail "predict --from --n-layer 12"
grep "^trained: $want M" p12.txt && fail "a model of 12 blocks told the run's own count"
echo "predict_lora_count: ok ($want M)"
