#!/bin/sh
# docs_refs.sh — ship what you cite: the user-facing text (README.md, docs/, the analyzer's
# sources and every command's --help) never points outside the repository ("../shared"),
# every "§N" it cites is a numbered section "## N." of docs/formula.md, and every docs/*.md
# it names exists.
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -u
cd "$ROOT" || exit 1
fail() { echo "docs_refs: $*"; exit 1; }
[ -f docs/formula.md ] || fail "docs/formula.md is missing"
files=$(find README.md docs analyzer -type f \( -name '*.md' -o -name '*.c' -o -name '*.h' \) | sort)
help="$TESTDIR/help.txt"
: >"$help"
for cmd in "" run dump report predict flame diff; do
    "$VT" $cmd --help >>"$help" 2>&1 || fail "vramtrace $cmd --help failed"
done
bad=$(grep -n '\.\./shared' $files "$help")
[ -z "$bad" ] || fail "points outside the repository: $bad"
sections=$(sed -n 's/^## \([0-9][0-9]*\)\. .*/\1/p' docs/formula.md | tr '\n' ' ')
[ -n "$sections" ] || fail "docs/formula.md has no numbered sections (## N. Title)"
refs=$(grep -o '§[0-9][0-9]*' $files "$help" | sed 's/.*§//' | sort -u)
[ -n "$refs" ] || fail "no §N reference found at all (the grep is broken)"
for n in $refs; do
    case " $sections " in
    *" $n "*) ;;
    *) fail "§$n is cited ($(grep -l "§$n\b" $files "$help" | head -3 | tr '\n' ' ')) but docs/formula.md has sections $sections" ;;
    esac
done
for doc in $(grep -oh 'docs/[A-Za-z0-9_-]*\.md' $files "$help" | sort -u); do
    [ -f "$doc" ] || fail "$doc is named but not in the repository"
done
# the sections the code cites by name are the ones there
for s in "1. Categories" "2. The basic formula" "3. The refined formula" "4. Advice"; do
    grep -q "^## $s" docs/formula.md || fail "docs/formula.md lacks '## $s'"
done
exit 0
