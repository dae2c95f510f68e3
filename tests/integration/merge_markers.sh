#!/bin/sh
# merge_markers.sh — no tracked file keeps a merge's conflict markers (a docs or data file
# with them still builds and passes every other test).
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
cd "$ROOT" || exit 2
command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "not a git checkout: not checked"; exit 77; }
hits=$(git grep -nE '^(<<<<<<<|>>>>>>>) ' -- . ':!tests/integration/merge_markers.sh')
[ -z "$hits" ] && exit 0
printf '%s\n' "$hits" | sed 's/$/  <- a merge conflict left in the file/'
exit 1
