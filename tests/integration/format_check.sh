#!/bin/sh
# format_check.sh — the C sources are formatted as .clang-format says (`make format` applies
# it). Pinned to clang-format 14, the version the tree is formatted with: another version
# formats some constructs differently, so the check is skipped there, saying so.
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
cd "$ROOT" || exit 2
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: not checked"; exit 77; }
v=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$v" = 14 ] || { echo "clang-format $v, the tree is formatted with 14: not checked"; exit 77; }
out=$(make -s --no-print-directory format-check 2>&1) && exit 0
printf '%s\n' "$out" | grep -o '^[^:]*\.[ch]p*:' | sort -u | sed 's/:$/: not formatted (run make format)/'
exit 1
