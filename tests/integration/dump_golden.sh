#!/bin/sh
# dump_golden.sh — pins `vramtrace dump` output on a committed trace (tests/data/dump_small.vt:
# vtgen --events 12 --live 4 --stacks 2 --python=3.12 --oom --card 12884901888 --rank 0
# --tail cut) against tests/data/dump_small.jsonl with diff -u. After a deliberate change to
# the dump format, regenerate: (cd tests/data && vramtrace dump dump_small.vt >dump_small.jsonl).
# REGRESSION CHECK, not accuracy: the expectation is vramtrace's own reviewed output.
set -eu
cp "$ROOT/tests/data/dump_small.vt" .
"$VT" dump dump_small.vt >got.jsonl
diff -u "$ROOT/tests/data/dump_small.jsonl" got.jsonl
tail -n 1 got.jsonl | grep -q '"status":"truncated"'
