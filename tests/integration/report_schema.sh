#!/bin/sh
# report_schema.sh — every `--json` output carries "schema_version", the integer the README
# documents for that command (read from the README's own sentence in the command's section:
# report "`schema_version` (an integer, ...; N: the fields listed here)", predict and diff
# "`--json` (`schema_version` N"); never compared with the macro the code prints.
set -u
fail() { echo "report_schema: $*"; exit 1; }
"$VT" report --json "$ROOT/tests/data/dump_small.vt" >report.json 2>/dev/null || fail "report --json"
"$VT" predict --json >predict.json 2>/dev/null || fail "predict --json"
"$VT" diff --json "$ROOT/tests/data/report_rank0.vt" "$ROOT/tests/data/report_rank1.vt" >diff.json 2>/dev/null ||
    fail "diff --json"
python3 - "$ROOT/README.md" <<'PYEOF' || fail "schema_version differs from the README (see above)"
import json, re, sys
readme = open(sys.argv[1], encoding="utf-8").read()
def section(cmd):
    m = re.search(r"^### `vramtrace %s\b.*?(?=^### |\Z)" % cmd, readme, re.S | re.M)
    assert m, "README: no section for vramtrace %s" % cmd
    return m.group(0)
patterns = {
    "report": r"`schema_version` \(an integer, raised when a field changes meaning or goes;\s*(\d+): the fields listed here\)",
    "predict": r"`--json` \(`schema_version`\s+(\d+)\)",
    "diff": r"`--json` \(`schema_version`\s+(\d+), raised when a field changes meaning",
}
for cmd, pat in patterns.items():
    m = re.findall(pat, section(cmd))
    assert len(m) == 1, "README's %s section: %d sentences giving schema_version" % (cmd, len(m))
    got = json.load(open(cmd + ".json")).get("schema_version")
    assert isinstance(got, int) and not isinstance(got, bool), "%s --json: schema_version %r" % (cmd, got)
    assert got == int(m[0]), "%s --json says schema_version %d, the README %s" % (cmd, got, m[0])
    print("%s: schema_version %d, as the README says" % (cmd, got))
PYEOF
