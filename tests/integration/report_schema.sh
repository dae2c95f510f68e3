#!/bin/sh
# report_schema.sh — `report --json` carries "schema_version", the integer the README documents
# (VT_REPORT_SCHEMA_VERSION in analyzer/views/report_views.h).
set -u
fail() { echo "report_schema: $*"; exit 1; }
"$VT" report --json "$ROOT/tests/data/dump_small.vt" >out.json 2>/dev/null
v=$(python3 -c 'import json,sys; print(json.load(open("out.json"))["schema_version"])') ||
    fail "no schema_version in report --json"
want=$(sed -n 's/^#define VT_REPORT_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$ROOT/analyzer/views/report_views.h")
[ "$v" = "$want" ] || fail "schema_version $v, header says $want"
grep -q "^1: the fields listed here" "$ROOT/README.md" || fail "README does not document version $v"
exit 0
