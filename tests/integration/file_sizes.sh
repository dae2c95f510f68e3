#!/bin/sh
# file_sizes.sh — no source file grows past 600 lines (house style; issue 11): every tracked
# *.c, *.h, *.cpp, *.py, *.sh under analyzer/ preload/ include/ tests/ examples/ scripts/
# (git ls-files) is counted, and each one over the limit is listed with its count. The check
# first runs on a made-up file of 601 lines, so that it can be seen to fail.
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
LIMIT=600
# Files allowed past the limit, one path a line, each with a comment saying why. Empty today:
# every file that was longer has been split.
EXCEPTIONS=""

command -v git >/dev/null || { echo "no git"; exit 77; }
git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "$ROOT is not a git checkout"; exit 77; }

# offenders DIR < paths: prints "COUNT PATH" for each path (relative to DIR) over LIMIT lines
# that is not an exception; exit status 1 when it printed any.
offenders() {
    found=0
    while IFS= read -r f; do
        [ -f "$1/$f" ] || continue
        for e in $EXCEPTIONS; do [ "$e" = "$f" ] && continue 2; done
        n=$(wc -l <"$1/$f")
        if [ "$n" -gt "$LIMIT" ]; then
            echo "$n $f"
            found=1
        fi
    done
    return $found
}

# The checker must catch a long file and pass a short one.
mkdir -p self/a
seq 1 601 >self/a/long.c
seq 1 600 >self/a/short.c
out=$(printf 'a/long.c\na/short.c\n' | offenders self) && { echo "self-check: a 601-line file passed"; exit 1; }
[ "$out" = "601 a/long.c" ] || { echo "self-check: expected '601 a/long.c', got '$out'"; exit 1; }

list=$(git -C "$ROOT" ls-files -- analyzer preload include tests examples scripts |
    grep -E '\.(c|h|cpp|py|sh)$')
[ -n "$list" ] || { echo "git ls-files found no sources under $ROOT"; exit 1; }
if out=$(printf '%s\n' "$list" | offenders "$ROOT"); then
    echo "all $(printf '%s\n' "$list" | wc -l) source files have at most $LIMIT lines"
    exit 0
fi
echo "files over $LIMIT lines (split them; see docs/architecture.md for where parts go):"
printf '%s\n' "$out" | sort -rn
exit 1
