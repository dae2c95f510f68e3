#!/bin/sh
# swa_largest.sh — stochastic weight averaging over a VGG16-BN (tests/python/swa_bn.py,
# SIMULATED: SGD with momentum, the program's own averaged copy and update_bn's no-grad forwards).
# Its caching allocator reserves a larger share over its tensors at a larger batch (1.16x them at
# 2048, 1.18x at 3700-3800): a run at 2048 had said "largest micro-batch that fits (other
# settings unchanged, keeping >= 5 % free): 3817" on 12 GiB, the share it measured kept for any
# batch up to twice its own, and 3817 runs with 3.5 % free. Now a batch above the run's own counts
# room up to the fragmentation floor: the largest it names, rerun, keeps the 5 %; the one with the
# share the run measured is said beside it: "3694 to 3817", "3694 with the allocator cache at 20 % of
# its tensors, the room for fragmentation a run can need; 3817 at the 16 % this run measured ...".
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME B
    timeout 300 "$VT" run -q --card 12GiB -o $1.vt -- python3 "$ROOT/tests/python/swa_bn.py" --batch_size $2 \
        </dev/null >$1.out 2>&1 || fail "run $1 failed: $(tail -n 3 $1.out)"
    report_both $1
}
run fit 2048
B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prediction"]["largest_batch_size"] or 0)' fit.json)
[ "$B" -gt 2048 ] || fail "no largest micro-batch above 2048 named: $B"
# the largest with the cache share the run measured is said beside it, as what that share gives
python3 - fit.json fit.txt "$B" <<'PY' || fail "see above"
import json, sys
p, txt, B = json.load(open(sys.argv[1]))["prediction"], open(sys.argv[2]).read(), int(sys.argv[3])
own = p["largest_batch_size_own_cache"]
if not own or own <= B or ("keeping >= 5 %% free): %d to %d\n" % (B, own)) not in txt or \
        ("      %d with the allocator cache at 20 %% of its tensors, the room for fragmentation a run can need; %d at the " % (B, own)) not in txt:
    print("the run's own cache share's largest not said beside %d: %s" % (B, own))
    raise SystemExit(1)
PY
run rerun "$B"
python3 - rerun.json rerun.out "$B" <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
t = next(json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[2]) if l.startswith("VRAMTRACE_TORCH_STATS "))
assert t["steps"] == 6 and t["update_bn_forwards"] == 4, t  # (the program's own run, as at 2048)
peak, card = r["peak"]["process_bytes"], 12 << 30
if t["oom"] or peak > 0.95 * card:
    print("largest %s: rerun %s, peak %.2f GiB, %.1f %% free (the advice keeps >= 5 %%)"
          % (sys.argv[3], "out of memory" if t["oom"] else "ran", peak / 2**30, 100 - 100 * peak / card))
    raise SystemExit(1)
PY
echo "swa_largest: ok (the largest micro-batch named for a larger batch than the run's keeps its headroom when rerun)"
