#!/bin/sh
# known_bugs.sh — EXPECTED FAILURES: real bugs that a strengthened test found and that are not
# fixed yet (in code this suite's authors do not own). Each entry checks that the bug is STILL
# THERE, prints it, and names the test its correct assertion belongs in. This test FAILS as soon
# as a bug is fixed, so none is forgotten: then delete the entry and add its assertion (given in
# the entry) to the named test. Empty list = nothing known; keep the file.
set -u
fail() { echo "known_bugs: $*"; exit 1; }
fixed=""

# (none today: vit-vocabulary, the first entry, was fixed; its assertion is in sim_reports.sh)

[ -z "$fixed" ] || fail "fixed, so no longer expected to fail:$fixed — delete the entry and add the assertion to the named test"
exit 0
