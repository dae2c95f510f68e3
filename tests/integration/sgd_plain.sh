#!/bin/sh
# sgd_plain.sh — optimizer steps that allocate and free nothing: tests/python/sgd_plain.py (a
# SIMULATED convolutional network, plain SGD with the learning rate alone, its gradients zeroed in
# place, 2 steps of 2 micro-batches: its own truth) had been reported "0 optimizer steps",
# "none ending in an optimizer step", "the run stopped before its first optimizer step" (report
# text and HTML), "(A ran no optimizer step" (diff), and its SGD, made without momentum, counted a
# momentum buffer of 4 B per trainable parameter. Now: none seen, how many ran not known (text,
# HTML, diff, JSON iterations_known false), "no state (plain SGD)" from the momentum its call gives
# (none), no momentum buffer counted; a run out of memory in its first forward (no backward
# completed) still ran none, said so. Its docstring names torch.optim.AdamW(...), which it does not
# make: a string is no call (the scan had taken it for a second kind, "the script constructs
# several kinds (AdamW( line 5, SGD( line 35", its optimizer unknown).
set -u
. "$ROOT/tests/sim_env.sh"
run() { # name, arguments
    n=$1
    shift
    timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" -- python3 "$ROOT/tests/python/sgd_plain.py" "$@" \
        </dev/null >"$n.out" 2>&1
    "$VT" report --no-color "$n.vt" >"$n.txt" && "$VT" report --json "$n.vt" >"$n.json" &&
        "$VT" report --html "$n.html" "$n.vt" >/dev/null || fail "$n: report failed"
}
run fit
run oom --batch 4096 --img 224
python3 - fit.json fit.out oom.json oom.out <<'PY' || fail "see above"
import json, sys
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
r, t, o, to = json.load(open(sys.argv[1])), truth(sys.argv[2]), json.load(open(sys.argv[3])), truth(sys.argv[4])
assert t["steps"] == 2 and t["backward_passes"] == 4 and not t["oom"], t  # (the case)
assert r["iterations"] == 0 and r["iterations_known"] is False, (r["iterations"], r["iterations_known"])
assert to["oom"] and to["oom_phase"] == "forward" and to["backward_passes"] == 0, to
assert o["iterations"] == 0 and "iterations_known" not in o, (o["iterations"], o.get("iterations_known"))
PY
grep -q '^  events .* 0 optimizer steps seen (how many ran is not known' fit.txt || fail "fit: $(grep '^  events' fit.txt)"
grep -q 'Growth across steps (4 steps of forward and backward, none seen ending in an optimizer step (whether any did is not known)' fit.txt ||
    fail "fit: $(grep '^Growth across' fit.txt)"
grep -q '^  optimizer  *no state (plain SGD)  SGD( in .*sgd_plain.py:[0-9]* (momentum not given' fit.txt ||
    fail "fit: $(grep '^  optimizer  ' fit.txt)"
for f in fit.txt fit.html oom.txt; do
    grep -q "stopped before its first optimizer step\|momentum buffer is counted" $f &&
        fail "$f: $(grep -o '[^(]*stopped before its first optimizer step\|[^(]*momentum buffer is counted[^)]*' $f | head -n 2)"
done
grep -q "0 optimizer steps seen (how many ran is not known" fit.html || fail "fit.html: no steps hedge"
grep -q '^  events .* 0 optimizer steps, ' oom.txt || fail "oom: $(grep '^  events' oom.txt)"
"$VT" diff fit.vt oom.vt >diff.txt 2>&1 || true
grep -q '^(A showed no optimizer step, .*whether it ran any is not known)' diff.txt || fail "diff: $(sed -n 3p diff.txt)"
grep -q '^(A ran no optimizer step' diff.txt && fail "diff: $(sed -n 3p diff.txt)"
# a real run out of memory in its first backward (its optimizer not known from the trace): that
# backward did not complete, so no step can have run after it
"$VT" report --no-color "$ROOT/examples/traces/h100-torch2.11/s_hf_gpt2_eager_b8.vt" >real.txt ||
    fail "s_hf_gpt2_eager_b8: report failed"
grep -q '^  events .* 0 optimizer steps, ' real.txt || fail "s_hf_gpt2_eager_b8: $(grep '^  events' real.txt)"
echo "sgd_plain: ok (steps that leave no trace: not known; SGD without momentum: no state)"
