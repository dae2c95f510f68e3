#!/bin/sh
# dump_golden.sh — pins `vramtrace dump` output on a committed trace (tests/data/dump_small.vt:
# vtgen --events 12 --live 4 --stacks 2 --python=3.12 --oom --card 12884901888 --rank 0
# --tail cut) against tests/data/dump_small.jsonl with diff -u, and its warning on stderr. After a deliberate change to
# the dump format, regenerate: (cd tests/data && vramtrace dump dump_small.vt >dump_small.jsonl).
# REGRESSION CHECK, not accuracy: the expectation is vramtrace's own reviewed output.
set -eu
cp "$ROOT/tests/data/dump_small.vt" .
"$VT" dump dump_small.vt >got.jsonl 2>got.err
diff -u "$ROOT/tests/data/dump_small.jsonl" got.jsonl
tail -n 1 got.jsonl | grep -q '"status":"truncated"'
# the cut trace is said on stderr too, as every command says it (`dump | head` never shows the
# status line): one warning, exit 0
grep -q "^vramtrace dump: warning: dump_small.vt is truncated (.*: the process was killed or is still running); dumping every complete record$" got.err ||
    { cat got.err; echo "dump_golden: no warning on stderr for a truncated trace"; exit 1; }
"$VT" dump "$ROOT/tests/data/disk_full.vt" >/dev/null 2>full.err
if grep -q "truncated" full.err; then
    cat full.err
    echo "dump_golden: a whole trace said truncated"
    exit 1
fi
# a trace the capture stopped early (here at the file-size limit) is said so, as by every command
"$VT" dump "$ROOT/tests/data/disk_full_segment.vt" >/dev/null 2>seg.err
grep -q "^vramtrace dump: warning: .*disk_full_segment.vt stopped early (the process's file-size limit, ulimit -f: tracing stopped, the program went on); dumping every record made before$" seg.err ||
    { cat seg.err; echo "dump_golden: no warning for a trace stopped early"; exit 1; }
