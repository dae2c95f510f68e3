#!/bin/sh
# distill_frozen.sh — a SIMULATED distillation whose frozen teacher, written in the program, runs
# under no_grad beside the student it trains (tests/python/distill_frozen.py), out of memory in
# its loss after both forwards, before its first optimizer step. The teacher's weights' 16-bit
# copies were freed after each use, the student's kept: the trainable count is the student's (at
# least), the gradients and AdamW state predicted are the student's that the program measures
# at a batch that fits (all the weights' had been costed: 3.08 / 6.16 GiB for 0.34 / 0.68), the
# largest micro-batch that fits is at least that batch (it had said "none, not even 1"), and the
# forward is not said to have died after a share of its blocks (it had said "about 9 %"). The
# weights that take no gradient are said to be a second model's (not room for an EMA), at most the
# teacher's count before any backward. Its student is told a transformer from its sizes (the
# formula applies: gradients and state still of the weights whose copies were kept, 91.62 M with
# its untied head, not the formula's GPT blocks' 67.84 M, which had left the teacher "758.89 M").
# The same program with its batch flag renamed --rows (B not told: no formula) is read from the
# measured breakdown: its forward said to have run past the trained model's last layer.
set -u
fail() { echo "distill_frozen: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP distill_frozen: no python3"; exit 77; }
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
P="$ROOT/tests/python/distill_frozen.py"
timeout 300 "$VT" run --card 12GiB -o fit.vt -- python3 "$P" --batch_size 6 </dev/null >fit.out 2>&1 ||
    { cat fit.out; fail "the run at batch 6 failed"; }
timeout 300 "$VT" run --card 12GiB -o oom.vt -- python3 "$P" --batch_size 12 </dev/null >oom.out 2>&1
grep -q "^OOM in loss$" oom.out || { cat oom.out; fail "batch 12 did not run out of memory in its loss"; }
# (its own name, read as a.rows: a dest="batch_size" would tell vramtrace the micro-batch)
sed 's/"--batch_size"/"--rows"/; s/a\.batch_size/a.rows/g' "$P" >rows.py
PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run --card 12GiB -o rows.vt -- python3 rows.py --rows 12 \
    </dev/null >rows.out 2>&1
grep -q "^OOM in loss$" rows.out || { cat rows.out; fail "--rows 12 did not run out of memory in its loss"; }
"$VT" report --no-color rows.vt >rows.txt && "$VT" report --json rows.vt >rows.json || fail "report failed"
"$VT" report --no-color oom.vt >oom.txt && "$VT" report --json oom.vt >oom.json &&
    "$VT" report --json fit.vt >fit.json || fail "report failed"
"$VT" predict --from oom.vt >oom.predict 2>&1 || fail "predict --from failed"
python3 - oom.out fit.out oom.json fit.json rows.json <<'EOF' || fail "$(cat oom.txt)"
import json, re, sys
facts = dict(re.findall(r"(\w+)=(\d+)", open(sys.argv[1]).read().split("\n")[0]))
fit = open(sys.argv[2]).read()
state = dict(re.findall(r"(\w+)=(\d+)", re.search(r"^STATE .*$", fit, re.M).group(0)))
reserved = int(re.search(r"^trained 2 steps at batch 6, reserved at most (\d+)$", fit, re.M).group(1))
trainable, grads, opt = int(facts["trainable"]), int(state["grads"]), int(state["optimizer"])
j, rows = json.load(open(sys.argv[3])), json.load(open(sys.argv[5]))
bad = []
if rows["formula_applies"] is not False:
    bad.append("--rows 12 (B not told) had a formula: the measured breakdown's path not tested")
for name, js in (("oom", j), ("rows", rows)):
    tp = js["recognized"]["trainable_params"]
    if js["recognized"]["trainable_params_at_least"] is not True:
        bad.append(f"{name}: trainable_params_at_least is not true")
    if not tp or not 0.99 * trainable <= tp <= trainable:
        bad.append(f"{name}: trainable {tp}, the program's {trainable} (teacher {facts['teacher']})")
    cat = js["prediction"]["calibrated_by_category"]
    for k, want in (("gradients", grads), ("optimizer", opt)):
        if not 0.99 * want <= cat[k] <= want:
            bad.append(f"{name}: predicted {k} {cat[k]}, the program's at batch 6 {want}")
# batch 6 ran with more than 5 % of the 12 GiB free (its reserved peak under 90 %)
if reserved > 0.9 * 12 * 2**30:
    bad.append(f"the run at 6 reserved {reserved}: not a fit with headroom")
# the weights that take no gradient: the teacher's (at most that, before any backward), no EMA
teacher = int(facts["teacher"])
for name, js, most in (("oom", j, "at most "), ("rows", rows, "at most "),
                       ("fit", json.load(open(sys.argv[4])), "")):
    e = js["recognized"]["ema"]
    m = re.search(r"a second, frozen model's \(a teacher or a reference model: (at most )?([0-9.]+) M", e["where"])
    if e["on"] is not False or not m or (m.group(1) or "") != most or \
            not teacher / 1e6 - 0.005 <= float(m.group(2)) <= teacher / 1e6 + (0.5 if most else 0.005):
        bad.append(f"{name}: EMA {e}, the teacher's {teacher}")
largest = j["prediction"]["largest_batch_size"]
if not largest or largest < 6:
    bad.append(f"largest micro-batch {largest}, where 6 runs")
for b in bad:
    print("distill_frozen:", b)
sys.exit(1 if bad else 0)
EOF
# where no formula applies the measured breakdown explains the run: its forward is said to have
# run past the trained model's last layer (the formula's path prints no such note); in neither
# a share of its blocks
for r in oom rows; do
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["formula_applies"])' $r.json ||
        continue
    grep -q "died in its first forward" $r.txt || fail "$r: no first-forward note"
    grep -q "died in its first forward, after the model it trains had used every weight it casts" $r.txt ||
        fail "$r: $(grep 'died in its first forward' $r.txt | head -1)"
    ! grep -q "^    activations:" $r.txt ||
        grep -q "^    activations: .* when the out-of-memory error came, after every layer of the model trained had run" $r.txt ||
        fail "$r: $(grep '^    activations:' $r.txt)"
done
grep -q "% of its blocks' weights had been used" oom.txt oom.predict rows.txt &&
    fail "$(grep -h "% of its blocks' weights" oom.txt oom.predict rows.txt | head -1)"
grep -q "not even 1" oom.txt oom.predict && fail "$(grep -h 'not even 1' oom.txt oom.predict | head -1)"
echo "distill_frozen: ok"
