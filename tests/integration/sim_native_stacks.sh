#!/bin/sh
# sim_native_stacks.sh — a run recorded with native frames alone (--stacks native) is told its
# phases and sites as well as with no stacks at all, not worse: a ViT-B/16 at B=64 had its whole
# first forward counted as init ("init 5.00 GiB" for 720 MiB with every frame, 836 with none) and
# its activations as temporaries (4.16 GiB, for 330 MiB), because no Python frame named a phase
# and the first forward was never seen begun; and every tensor's site was the allocator's own
# innermost frame (one site for all 488 activations). Now the phases follow the no-stacks rule
# (the first forward begins at the main thread's first free of a young tensor), sooner where a
# native frame names an operator only a model's forward runs, and a site without
# Python frames is the operation its native frames name (at::_ops::addmm), once, with no "via";
# the allocator's own library never names one.
set -u
. "$ROOT/tests/sim_env.sh"
for m in all native none; do
    timeout 300 "$VT" run -q --stacks $m --card 24GiB -o "v_$m.vt" -- python3 "$ROOT/examples/sim/sim_vision.py" \
        --model vit-b16 --batch-size 64 --steps 2 </dev/null >"v_$m.out" 2>&1 ||
        { tail -n 5 "v_$m.out"; fail "--stacks $m: run failed"; }
    "$VT" report --json "v_$m.vt" >"v_$m.json" && "$VT" report --no-color "v_$m.vt" >"v_$m.txt" ||
        fail "--stacks $m: report failed"
done
python3 - v_all.json v_native.json v_none.json <<'PY' || fail "native: phases or category peaks off"
import json, sys
a, n, z = (json.load(open(f)) for f in sys.argv[1:])
# init the weights, the first batch and the library's workspace: never the first forward's
# activations; native frames tell the forward's first operator (its patch embedding's
# convolution), which no stacks cannot: init as with every frame, no more than with none (it had
# been none's 876.6 MB for 755.0 with every frame, the forward's first tensors counted in it
# until its first free); the temporaries' largest the forward's, not the activations
assert n["phases"]["init"] <= 1.05 * a["phases"]["init"], (n["phases"], a["phases"])
assert n["phases"]["init"] <= z["phases"]["init"], (n["phases"], z["phases"])
ta, tn = a["category_peaks"]["temporaries"]["bytes"], n["category_peaks"]["temporaries"]["bytes"]
assert tn <= 1.1 * ta, (ta, tn)
assert n["category_peaks"]["activations"]["bytes"] >= 0.9 * a["category_peaks"]["activations"]["bytes"], \
    (a["category_peaks"], n["category_peaks"])
assert n["growth"]["steps"] == a["growth"]["steps"] == 2, (n["growth"]["steps"], a["growth"]["steps"])
PY
# the sites: operations, several for the activations, none the allocator's own frame
sed -n '/^Top allocation sites/,/^$/p' v_native.txt >sites.txt
grep -q '^Top allocation sites at the peak (the native op: no Python frames were recorded)' sites.txt ||
    fail "native: $(head -n 1 sites.txt)"
grep -q 'at::_ops::addmm' sites.txt || fail "native: no operation named: $(cat sites.txt)"
grep -q ' via ' sites.txt && fail "native: a 'via' line repeats the site: $(grep -m1 ' via ' sites.txt)"
# (nor for a cuBLAS workspace, nor as the native op below a Python site: the allocator's own
# library is skipped, at::cuda::getCurrentCUDABlasHandle named; it had been "via fake_c10_malloc")
grep -q 'c10_malloc\|CachingAllocator' sites.txt && fail "native: the allocator's frame as a site: $(cat sites.txt)"
grep 'via ' v_all.txt | grep -q 'c10_malloc\|CachingAllocator' && fail "all: $(grep -m1 'via .*c10' v_all.txt)"
grep -q 'getCurrentCUDABlasHandle' sites.txt || fail "native: the workspace's site: $(cat sites.txt)"
python3 - sites.txt <<'PY' || fail "native: the activations under one site"
import re, sys
t = open(sys.argv[1]).read()
act = re.search(r"^  activations\n((?:   .*\n)+)", t, re.M).group(1)
assert len(re.findall(r" x  ", act)) >= 2, act
PY
grep -q '^Top allocation sites at the peak (none: no stacks were recorded)' v_none.txt ||
    fail "none: $(grep '^Top allocation sites' v_none.txt)"
grep -q '^Top allocation sites at the peak (Python file:line function, the native op below)' v_all.txt ||
    fail "all: $(grep '^Top allocation sites' v_all.txt)"
# diff between recordings with and without Python frames says its category changes are the
# recordings' as much as the runs' (the same run: optimizer -660.5, activations +887.7 MiB, said
# as changes with no word of why); JSON python_frames; none said between two alike
"$VT" diff v_all.vt v_none.vt >d.txt && "$VT" diff --json v_all.vt v_none.vt >d.json && "$VT" diff v_all.vt v_all.vt >dd.txt ||
    fail "diff"
grep -q '^(B was recorded without Python frames: its categories rest on the order of events' d.txt ||
    fail "diff: no word of the recordings: $(cat d.txt)"
grep -q 'without Python frames' dd.txt && fail "diff of two alike: a note of the recordings"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["python_frames"] == {"a": True, "b": False}, d["python_frames"]' d.json ||
    fail "diff --json: python_frames"
echo "sim_native_stacks: ok"
