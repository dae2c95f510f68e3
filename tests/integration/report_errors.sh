#!/bin/sh
# report_errors.sh — the report is built before anything is printed: an override the model
# refuses is exit 2 with "vramtrace report: configuration: ..." on stderr and nothing on
# stdout (text and JSON); predict --from the same trace with the same bad value is exit 2 too.
set -u
T="$ROOT/examples/traces/h100-torch2.11/b_oom_12gib.vt" # d = 768 from its tensors
fail() { echo "report_errors: $*"; exit 1; }
for fmt in --no-color --json; do
    "$VT" report "$fmt" --n_head=7 "$T" >out.txt 2>err.txt
    rc=$?
    [ $rc = 2 ] || fail "$fmt: bad override: exit $rc, expected 2"
    [ -s out.txt ] && fail "$fmt: a partial report was printed before the error"
    grep -q 'vramtrace report: configuration: n_embd = 768 is not divisible by n_head = 7' err.txt ||
        fail "$fmt: no configuration message: $(cat err.txt)"
done
"$VT" report --no-color --n_head=6 "$T" >ok.txt 2>&1 || fail "a valid override failed: $(tail -3 ok.txt)"
grep -q 'n_head  *6 ' ok.txt || fail "the valid override is not in the configuration table"
"$VT" predict --from "$T" --n_head=7 >p.txt 2>&1
[ $? = 2 ] || fail "predict --from with n_head=7: expected exit 2"
exit 0
