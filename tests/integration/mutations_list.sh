#!/bin/sh
# mutations_list.sh — every entry of tests/mutations.txt (the bugs `make mutate` plants) still
# applies to this tree: its text is found exactly once in its file and the tests it names exist
# (scripts/mutate.sh --check). A change to a line an entry names must update the entry, or the
# mutation run would stop at it. The mutation run itself is not part of `make test` (~10 min).
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: not checked"; exit 77; }
sh "$ROOT/scripts/mutate.sh" --check || { echo "mutations_list: tests/mutations.txt no longer applies (see above)"; exit 1; }
# and the check can fail: an entry whose text is not in its file
bad="$TESTDIR/bad.txt"
printf 'id: x\nwhat: w\nfile: README.md\nfrom: no such text in the README, surely\nto: y\ntests: free_paths\n' >"$bad"
MUTATE_LIST="$bad" sh "$ROOT/scripts/mutate.sh" --check >/dev/null 2>&1 &&
    { echo "mutations_list: --check passed a stale entry"; exit 1; }
exit 0
