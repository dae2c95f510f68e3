#!/bin/sh
# distill_teacher_last.sh — a SIMULATED distillation (tests/python/distill_frozen.py --teacher_last)
# whose frozen teacher runs AFTER the student's forward, out of memory in the student's first
# forward before the teacher ran (12 GiB card). Nothing in the trace says yet whether the
# teacher's weights train: the trainable count is the weights whose 16-bit copies were kept, a
# lower bound, and the predicted gradients and optimizer state are at most the student's that the
# program measures at a batch that fits (the teacher's had been costed: 3.31 / 6.61 GB with B not
# told, for 0.37 / 0.73; told B, the trainable count "42.47 M" said exactly of a 91.63 M
# student); the teacher is said mostly not cast by autocast before the error, neither frozen nor
# of a count exactly ("a second, frozen model's (... 758.89 M elements", its 735.10 M), and no
# share of the blocks used is claimed; the layers row says the teacher's blocks had no copy made
# before the failure (not run yet), not that they "had theirs freed after use (frozen ...)". Runs: --batch_size 48 (the formula's path) and the same program with its batch
# flag renamed --rows at 40 (B not told: the measured breakdown's). The formula's what-ifs, which
# take that model as frozen and count nothing of its forward, are lower bounds (the largest
# micro-batch "at most"; it had been "9" where 9 runs out of memory).
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/distill_frozen.py"
timeout 300 "$VT" run -q --card 12GiB -o fit.vt -- python3 "$P" --teacher_last --batch_size 6 </dev/null \
    >fit.out 2>&1 || { cat fit.out; fail "the run at batch 6 failed"; }
timeout 300 "$VT" run -q --card 12GiB -o oom.vt -- python3 "$P" --teacher_last --batch_size 48 </dev/null \
    >oom.out 2>&1
sed 's/"--batch_size"/"--rows"/; s/a\.batch_size/a.rows/g' "$P" >rows.py
PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 12GiB -o rows.vt -- python3 rows.py \
    --teacher_last --rows 40 </dev/null >rows.out 2>&1
for r in oom rows; do
    grep -q "^OOM in student forward$" $r.out || { cat $r.out; fail "$r: not out of memory in the student's forward"; }
    report_both $r
done
python3 - fit.out oom.out oom.json rows.json <<'PY' || fail "$(grep -h 'trainable  \|EMA weights' oom.txt rows.txt)"
import json, re, sys
fit = open(sys.argv[1]).read()
facts = dict(re.findall(r"(\w+)=(\d+)", open(sys.argv[2]).read().split("\n")[0]))
state = dict(re.findall(r"(\w+)=(\d+)", re.search(r"^STATE .*$", fit, re.M).group(0)))
trainable, teacher = int(facts["trainable"]), int(facts["teacher"])
bad = []
for name, path in (("oom", sys.argv[3]), ("rows", sys.argv[4])):
    j = json.load(open(path))
    rec = j["recognized"]
    if (name == "rows") != (j["formula_applies"] is False):
        bad.append(f"{name}: formula_applies {j['formula_applies']}")
    tp = rec["trainable_params"]
    if rec.get("trainable_params_at_least") is not True or not tp or tp > trainable:
        bad.append(f"{name}: trainable {tp} at least {rec.get('trainable_params_at_least')}, the program's {trainable}")
    cat = j["prediction"]["calibrated_by_category"]
    for k in ("gradients", "optimizer"):
        want = int(state["grads" if k == "gradients" else "optimizer"])
        if not 0 < cat[k] <= want * 1.01:
            bad.append(f"{name}: predicted {k} {cat[k]}, the program's at batch 6 {want}")
    if name == "oom" and j["prediction"].get("largest_batch_size_at_most") is not True:
        bad.append(f"oom: the formula's what-ifs not lower bounds: largest {j['prediction']['largest_batch_size']}")
    e = rec["ema"]["where"]
    m = re.search(r"a second model's blocks, mostly not cast by autocast before the error \(frozen or trained: .*; at most ([0-9.]+) M elements\)", e)
    if not m or float(m.group(1)) < teacher / 1e6 - 0.005 or "frozen model's" in e:
        bad.append(f"{name}: EMA {e}, the teacher's {teacher}")
    # the teacher never ran: its blocks had no copy made, not "freed after use (frozen ...)"
    row = j["inferred"].get("n_layer", {}).get("where", "")
    if "freed after use" in row or "frozen: a teacher" in row or "not run yet" not in row:
        bad.append(f"{name}: layers row {row!r}")
for b in bad:
    print("distill_teacher_last:", b)
sys.exit(1 if bad else 0)
PY
for r in oom rows; do
    grep -q "whether they train is not told" $r.txt || fail "$r: $(grep '^  trainable' $r.txt)"
    grep -q "% of its blocks' weights had been used\|had used every weight it casts\|are a frozen model's beside" $r.txt &&
        fail "$r: $(grep -h "blocks' weights had been used\|every weight it casts\|frozen model's beside" $r.txt | head -1)"
done
echo "distill_teacher_last: ok (a teacher not run before the student's error is not costed as trained)"
