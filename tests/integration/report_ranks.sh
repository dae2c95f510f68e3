#!/bin/sh
# report_ranks.sh — several ranks' files: the one reported in full (header, advice, JSON, page)
# is the first that ran out of memory, where the first file given did not; every rank is in the
# per-rank table, on the page too. Two ranks of one run (tests/data/report_rank{0,1}.vt, rank 1
# out of memory) had been reported as rank 0's "(ok)", its advice "keep the current
# configuration", JSON oom null, and a page of rank 0 alone that named neither rank 1 nor an OOM.
set -u
fail() { echo "report_ranks: $*"; exit 1; }
D="$ROOT/tests/data"
"$VT" report --no-color "$D/report_rank0.vt" "$D/report_rank1.vt" >t.txt
[ $? -le 1 ] || fail "report"
"$VT" report --json "$D/report_rank0.vt" "$D/report_rank1.vt" >t.json
"$VT" report --html t.html "$D/report_rank0.vt" "$D/report_rank1.vt" >/dev/null 2>&1 || fail "report --html"
head -n 1 t.txt | grep -q 'report_rank1.vt' || fail "reported in full: $(head -n 1 t.txt)"
grep -q '^  ranks    2 files: this one in full (the first that ran out of memory)' t.txt ||
    fail "no ranks line: $(sed -n 2,5p t.txt)"
grep -q '^OOM: ' t.txt || fail "no OOM section for the rank that ran out of memory"
python3 - t.json <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["oom"], "oom null"
assert [x["oom"] for x in r["ranks"]] == [True, False], \
    [x.get("oom") for x in r["ranks"]]
PY
grep -q '<section id=ranks>' t.html || fail "no ranks on the page"
grep -q 'report_rank0.vt' t.html && grep -q 'report_rank1.vt (this page)' t.html ||
    fail "the page does not name both ranks"
grep -q 'this page is of the first that ran out of memory' t.html || fail "the page does not say whose it is"
# in the other order the first given is the one out of memory: reported as before
"$VT" report --no-color "$D/report_rank1.vt" "$D/report_rank0.vt" >u.txt
head -n 1 u.txt | grep -q 'report_rank1.vt' && grep -q '^  ranks    2 files: this one in full (the first given)' u.txt ||
    fail "the other order: $(sed -n 1,5p u.txt)"
# three: the one out of memory first, the rest in the order given (a.vt before b.vt)
cp "$D/report_rank0.vt" a.vt && cp "$D/report_rank0.vt" b.vt || fail "cp"
"$VT" report --no-color a.vt b.vt "$D/report_rank1.vt" >three.txt
sed -n '/^Per rank/,/^$/p' three.txt | grep -o '[a-z_0-9]*\.vt$' | tr '\n' ' ' | grep -q '^report_rank1.vt a.vt b.vt $' ||
    fail "three: $(sed -n '/^Per rank/,/^$/p' three.txt)"
# one file: no ranks line, no ranks section
"$VT" report --no-color "$D/report_rank0.vt" >one.txt
grep -q '^  ranks ' one.txt && fail "one file: a ranks line"
# one file given twice, by two spellings (README: a trace given twice is taken once): one rank,
# said on stderr (until 2026-12-06 "ranks 2 files", the same pid and file twice)
"$VT" report --no-color "$D/report_rank0.vt" "$D/../data/report_rank0.vt" >twice.txt 2>twice.err
grep -q 'given twice: read once' twice.err || fail "twice: $(cat twice.err)"
cmp -s one.txt twice.txt || fail "one file given twice reported as more: $(grep '^  ranks' twice.txt)"
echo "report_ranks: ok"
