#!/bin/sh
# flag_alias.sh — a flag given under another of its argparse names: tests/python/own_llama_nopos.py
# (SIMULATED) with its --micro_batch_size given a second name, add_argument("--micro_batch_size",
# "--rows", ...), run with --rows 2. The micro-batch had been its default, "4 ... default=4 (its
# argparse; not on the command line)", where the command line gave 2 under the other name; now 2,
# an argument carried by --rows, and the advice spells a change with it. The same flag renamed,
# add_argument("--rows", dest="micro_batch_size"), had left the micro-batch unknown ("the command
# line does not give it"): its dest= names the key, so --rows 2 is the micro-batch.
set -u
. "$ROOT/tests/sim_env.sh"
sed 's/ap.add_argument("--micro_batch_size",/ap.add_argument("--micro_batch_size", "--rows",/' \
    "$ROOT/tests/python/own_llama_nopos.py" >alias.py
grep -q '"--micro_batch_size", "--rows"' alias.py || fail "the program's flag was not renamed"
PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 3GiB -o a.vt -- python3 alias.py \
    --rows 2 </dev/null >a.out 2>&1 || fail "run: $(tail -n 2 a.out)"
grep -q "^facts: micro_batch=2 " a.out || fail "the program did not run at 2: $(grep '^facts' a.out)"
report_both a
grep -q "^  micro-batch B (--rows)  *2  *argument  --rows 2 (its argparse's other name for --micro_batch_size)" a.txt ||
    fail "report: $(grep 'micro-batch B' a.txt)"
python3 -c "import json, sys; b = json.load(open(sys.argv[1]))['config']['batch_size']; assert b['value'] == 2 and b['source'] == 'argument' and b['flag'] == '--rows', b" a.json ||
    fail "JSON config.batch_size"
sed 's/ap.add_argument("--micro_batch_size",/ap.add_argument("--rows", dest="micro_batch_size",/' \
    "$ROOT/tests/python/own_llama_nopos.py" >dest.py
grep -q '"--rows", dest="micro_batch_size"' dest.py || fail "the program's flag was not renamed (dest)"
PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 3GiB -o d.vt -- python3 dest.py \
    --rows 2 </dev/null >d.out 2>&1 || fail "run dest: $(tail -n 2 d.out)"
grep -q "^facts: micro_batch=2 " d.out || fail "dest: the program did not run at 2: $(grep '^facts' d.out)"
report_both d
grep -q '^  micro-batch B (--rows)  *2  *argument  --rows 2 (its argparse.s dest="micro_batch_size")' d.txt ||
    fail "dest: $(grep 'micro-batch B' d.txt)"
echo "flag_alias: ok (a flag given under its other argparse name is the argument, not its default)"
