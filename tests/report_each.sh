# report_each.sh — sourced by the integration tests that hold committed traces to their facts:
# report_each DIR writes the JSON report (NAME.json) and the plain text report (NAME.txt) of every
# DIR/*.vt into the current folder; a report that fails ends the test.
report_each() {
    for f in "$1"/*.vt; do
        t=$(basename "$f" .vt)
        "$VT" report --json "$f" >"$t.json" || { echo "report --json $t failed"; exit 1; }
        "$VT" report --no-color "$f" >"$t.txt" 2>/dev/null || { echo "report $t failed"; exit 1; }
    done
}
