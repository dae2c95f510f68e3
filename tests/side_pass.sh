# side_pass.sh — sourced after tests/sim_env.sh by inline_eval.sh and sample_pass.sh, whose
# programs (tests/python/PROG.py, a SIMULATED GPT-2 124M trained at a micro-batch of 4) run a pass
# with a batch of its own (--FLAG) after their second step, outside any function named evaluate.
# side_pass PROG FLAG PHASE COUNT runs PROG on a 12 GiB card with --FLAG 32 (oom.vt, .out, .txt,
# .json) and --FLAG 8 (fits.*), and checks what the two tests share: at 32 the program ran out of
# memory in that pass (its truth's oom_phase PHASE) after 2 steps, and the report says phase eval,
# as many iterations, and recommends no smaller micro-batch (each keeps the pass's batch of 32);
# at 8 the program made the pass once (its truth's COUNT) and the eval phase's peak is above the
# forward's.
side_pass() {
    for b in 32 8; do
        n=oom
        [ "$b" = 8 ] && n=fits
        timeout 300 "$VT" run -q --card 12GiB -o "$n.vt" -- python3 "$ROOT/tests/python/$1.py" \
            --batch_size 4 "--$2" "$b" </dev/null >"$n.out" 2>&1
        report_both "$n"
    done
    python3 - oom.json oom.out fits.json fits.out "$3" "$4" <<'PY' || fail "see above"
import json, sys
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
r, t, f, tf = json.load(open(sys.argv[1])), truth(sys.argv[2]), json.load(open(sys.argv[3])), truth(sys.argv[4])
phase, count = sys.argv[5], sys.argv[6]
assert t["oom"] and t["oom_phase"] == phase and t["steps"] == 2, t  # (the case)
assert r["oom"]["phase"] == "eval", r["oom"]["phase"]
assert r["iterations"] == t["steps"], r["iterations"]
# no smaller micro-batch recommended: each keeps the pass's batch of 32
assert not [a for a in r["advice"] if a["recommended"]], [a["change"] for a in r["advice"] if a["recommended"]]
assert not tf["oom"] and tf[count] == 1, tf
# the fitting run's pass is the eval phase's, above its forward's peak
ph = f["phases"]
assert ph.get("eval", 0) > ph["forward"], ph
PY
}
