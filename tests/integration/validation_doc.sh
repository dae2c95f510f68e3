#!/bin/sh
# validation_doc.sh — docs/validation.md's tables are what scripts/validation-doc.py makes from
# the real H100 traces and facts.jsonl with this build, and a changed figure is caught.
set -u
fail() { echo "validation_doc: $*"; exit 1; }
python3 "$ROOT/scripts/validation-doc.py" --check --vt "$VT" --doc "$ROOT/docs/validation.md" ||
    fail "docs/validation.md is stale: run scripts/validation-doc.py and review the diff"
sed 's/| 27 \/ 27 |/| 26 \/ 27 |/' "$ROOT/docs/validation.md" >bad.md
cmp -s bad.md "$ROOT/docs/validation.md" && fail "the test's edit did not apply"
python3 "$ROOT/scripts/validation-doc.py" --check --vt "$VT" --doc bad.md 2>/dev/null &&
    fail "--check accepted a changed figure"
exit 0
