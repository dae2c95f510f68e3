#!/bin/sh
# unreached_eval.sh — a run that died in its first step, before the evaluation its loop runs every
# N steps at a batch of its own, is told the largest micro-batch and the what-ifs count the training
# step only: tests/python/inline_eval.py (a SIMULATED GPT-2 124M, an inline evaluation of
# --eval_batch_size, default 8, after every 2nd step) at a micro-batch of 32 on a 12 GiB card runs
# out of memory in step 1 (its truth: 0 steps, 0 evaluations). The report had said "largest
# micro-batch that fits (other settings unchanged, keeping >= 5 % free): 7" as if the step were the
# whole loop (a Lightning-style run told 22 ran out of memory right after its first validation at
# 22). Now the report (text, JSON prediction.unreached_pass, HTML) and predict --from (the trace
# and the report's JSON) say that the evaluation pass, where the script has it, with its own batch
# as the script's argparse gives it, did not run before the error and is not measured; no number
# is given for it (its batch given on the command line: said so; examples/sim/sim_hf.py's
# evaluate(), a function the loop calls, named). A run that reached its evaluation, or whose
# evaluation its flag turns off (sim_hf.py's --eval-batch-size 0), says nothing of the kind.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/inline_eval.py"
timeout 300 "$VT" run -q --card 12GiB -o oom.vt -- python3 "$P" --batch_size 32 </dev/null >oom.out 2>&1
timeout 300 "$VT" run -q --card 12GiB -o fits.vt -- python3 "$P" --batch_size 4 --steps 2 </dev/null >fits.out 2>&1
timeout 300 "$VT" run -q --card 12GiB -o argv.vt -- python3 "$P" --batch_size 32 --eval_batch_size 12 </dev/null >argv.out 2>&1
# sim_hf.py: its validation in a function evaluate() the loop calls, its batch
# --eval-batch-size (default 0: none)
H="$ROOT/examples/sim/sim_hf.py"
timeout 300 "$VT" run -q --card 12GiB -o hf.vt -- python3 "$H" --batch-size 32 --eval-batch-size 8 </dev/null >hf.out 2>&1
timeout 300 "$VT" run -q --card 12GiB -o hf0.vt -- python3 "$H" --batch-size 32 </dev/null >hf0.out 2>&1
report_both oom
report_both argv
report_both hf
report_both hf0
report_both fits
"$VT" export --html oom.html oom.vt >/dev/null 2>&1 || fail "export --html failed"
"$VT" predict --from oom.vt >p.txt 2>&1 || fail "predict --from the trace: $(tail -n 2 p.txt)"
"$VT" predict --from oom.json >pj.txt 2>&1 || fail "predict --from the JSON: $(tail -n 2 pj.txt)"
python3 - "$P" oom.out fits.out oom.json fits.json oom.txt p.txt pj.txt oom.html <<'PY' || fail "see above"
import html, json, re, sys
src, oout, fout, oj, fj, otxt, ptxt, pjtxt, ohtml = sys.argv[1:]
def truth(path):
    return next(json.loads(l.split(" ", 1)[1]) for l in open(path) if l.startswith("VRAMTRACE_TORCH_STATS "))
t, tf = truth(oout), truth(fout)
assert t["oom"] and t["steps"] == 0 and t["evals"] == 0, t  # (the case: died before its evaluation)
assert not tf["oom"] and tf["evals"] == 1, tf
# the pass where the program has it: the first line of its `with torch.no_grad():` block
lines = open(src).read().split("\n")
w = next(i for i, l in enumerate(lines) if "with torch.no_grad():" in l)
where = "inline_eval.py:%d" % (w + 2)
flag = "--eval_batch_size %d" % t["eval_batch_size"]  # (the program's own default, not on its command line)
u = json.load(open(oj))["prediction"]["unreached_pass"]
assert u and u["where"] == where and u["batch_flag"] == flag and not u["batch_flag_on_command_line"], u
note = ("the program's evaluation pass (%s; its own batch %s: inline_eval.py's argparse default, "
        "not on the command line) did not run before the out-of-memory error: what it needs is not "
        "measured" % (where, flag))
assert note in u["note"], u["note"]
assert note in json.load(open(oj))["prediction"]["notes"][-1], "not among the notes"
short = "the training step only: the evaluation pass at %s did not run" % where
for name, path, pre in (("report", otxt, "largest micro-batch that fits (other settings unchanged, keeping >= 5 % free; "),
                        ("predict --from the trace", ptxt, "largest micro-batch that fits (keeping >= 5 % free; "),
                        ("predict --from the JSON", pjtxt, "largest micro-batch that fits (keeping >= 5 % free; ")):
    text = open(path).read()
    assert note in text, (name, "no note")
    assert re.search(re.escape(pre + short) + r"\): \d+", text), (name, [l for l in text.split("\n") if "largest" in l])
h = html.unescape(open(ohtml).read())
assert short in h and note in h, "html"
# its batch given on the command line: said so, with the command line's value
ta, ua = truth("argv.out"), json.load(open("argv.json"))["prediction"]["unreached_pass"]
assert ta["oom"] and ta["evals"] == 0 and ta["eval_batch_size"] == 12, ta
assert ua["batch_flag"] == "--eval_batch_size 12" and ua["batch_flag_on_command_line"], ua
assert "its own batch --eval_batch_size 12 on the command line" in ua["note"], ua["note"]
# a function evaluate() the loop calls, its def's line; none where the flag's 0 turns it off
for n in ("hf", "hf0"):
    th = truth(n + ".out")
    assert th["oom"] and th["steps"] == 0, th
uh = json.load(open("hf.json"))["prediction"]["unreached_pass"]
d = next(i + 1 for i, l in enumerate(open(sys.argv[1].replace("tests/python/inline_eval.py", "examples/sim/sim_hf.py"))) if l.startswith("def evaluate("))
assert uh and uh["where"] == "sim_hf.py:%d" % d and uh["batch_flag"] == "--eval-batch-size 8", uh
assert "(evaluate, def at sim_hf.py:%d; its own batch --eval-batch-size 8 on the command line)" % d in uh["note"], uh["note"]
assert json.load(open("hf0.json"))["prediction"]["unreached_pass"] is None, "hf0: its evaluation is off"
# a run that reached its evaluation: nothing said of the kind
assert json.load(open(fj))["prediction"]["unreached_pass"] is None
assert "did not run" not in open("fits.txt").read()
PY
# a no_grad sample() with no batch flag it reads (sample_pass.py's --sample_batch renamed
# --n_draws), never reached (1 step, sampling every 2): a sampling pass by its def's name (it had
# been "the program's evaluation pass")
sed 's/"--sample_batch"/"--n_draws"/; s/a\.sample_batch/a.n_draws/g' "$ROOT/tests/python/sample_pass.py" >draws.py
PYTHONPATH="$ROOT/examples/sim:$ROOT/tests/python" timeout 300 "$VT" run -q --card 12GiB -o draws.vt -- \
    python3 draws.py --steps 1 </dev/null >draws.out 2>&1 || fail "draws: $(tail -n 2 draws.out)"
"$VT" report --no-color draws.vt >draws.txt || fail "draws: report failed"
d=$(grep -n '^def sample(' draws.py | cut -d: -f1)
grep -q "^  (the program's sampling pass (draws.py:$d; its batch not known" draws.txt ||
    fail "draws: $(grep 'did not run' draws.txt | head -1)"
echo "unreached_eval: ok (an evaluation pass the trace never reached said, with its own batch; none where it ran)"
