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
# renamed NAME ADD_ARGUMENT_START WHY: own_llama_nopos.py with its flag's add_argument started as
# given, run with --rows 2: the micro-batch row must be 2 from --rows, for the reason WHY
renamed() {
    sed "s/ap.add_argument(\"--micro_batch_size\",/ap.add_argument($2,/" \
        "$ROOT/tests/python/own_llama_nopos.py" >"$1.py"
    grep -qF "ap.add_argument($2," "$1.py" || fail "$1: the program's flag was not renamed"
    PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 3GiB -o "$1.vt" -- python3 "$1.py" \
        --rows 2 </dev/null >"$1.out" 2>&1 || fail "$1: run: $(tail -n 2 "$1.out")"
    grep -q "^facts: micro_batch=2 " "$1.out" || fail "$1: the program did not run at 2: $(grep '^facts' "$1.out")"
    report_both "$1"
    grep -qF "micro-batch B (--rows)" "$1.txt" && grep "micro-batch B" "$1.txt" | grep -q "  2  *argument  --rows 2 ($3)" ||
        fail "$1: report: $(grep 'micro-batch B' "$1.txt")"
    python3 -c "import json, sys; b = json.load(open(sys.argv[1]))['config']['batch_size']; assert b['value'] == 2 and b['source'] == 'argument' and b['flag'] == '--rows', b" "$1.json" ||
        fail "$1: JSON config.batch_size"
}
renamed alias '"--micro_batch_size", "--rows"' "its argparse's other name for --micro_batch_size"
renamed dest '"--rows", dest="micro_batch_size"' 'its argparse.s dest="micro_batch_size"'
echo "flag_alias: ok (a flag given under its other argparse name is the argument, not its default)"
