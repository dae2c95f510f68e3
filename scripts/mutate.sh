#!/bin/sh
# mutate.sh — `make mutate`: mutation testing. Each entry of tests/mutations.txt (a one-line bug:
# file, exact text, replacement, the tests that must catch it) is applied alone to a scratch copy
# of the tree (never this one), built in its own build dir, and its tests run there; a mutation
# that no test fails SURVIVED. Prints which test caught each one; exit 0 only when all are caught.
#   sh scripts/mutate.sh [ID...]   only those entries (default: all)
#   sh scripts/mutate.sh --check   only check the list against this tree (each text found exactly
#                                  once in its file; tests exist), no build (tests/integration/mutations_list.sh)
#   sh scripts/mutate.sh --list    the entries: id, file, tests, what
# env: MUTATE_LIST (default tests/mutations.txt), MUTATE_DIR (scratch, default a new temp dir,
# removed at the end unless MUTATE_KEEP=1), MUTATE_JOBS (make -j, default 2), MUTATE_FIRST=1 (stop
# at the first test that catches a mutation: faster, names one catcher).
# Exit: 0 every mutation caught, 1 one survived (or did not build: a stale entry), 2 usage, a
# list that does not apply, or a test that fails before any mutation (the baseline).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUTATE_LIST:-$ROOT/tests/mutations.txt}
JOBS=${MUTATE_JOBS:-2}
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "mutate: needs python3 (set PYTHON)" >&2; exit 2; }
[ -f "$LIST" ] || { echo "mutate: no list $LIST" >&2; exit 2; }

# helper CMD ARGS: the list's parser. check TREE | ids [ID...] | field ID KEY | apply ID TREE
helper() {
    "$PY" - "$LIST" "$@" <<'PYEOF'
import os, sys
path, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
KEYS = ("id", "what", "file", "from", "to", "tests")
entries, cur, errs = [], None, []
for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
    if not line.strip() or line.startswith("#"):
        if cur is not None and not line.strip():
            entries.append(cur)
            cur = None
        continue
    key, sep, val = line.partition(": ")
    if not sep and line.endswith(":"):
        key, val = line[:-1], ""
    elif not sep or key not in KEYS:
        errs.append("%s:%d: not 'key: value' with key one of %s" % (path, n, ", ".join(KEYS)))
        continue
    if cur is None:
        cur = {"line": n}
    if key in cur:
        errs.append("%s:%d: %s given twice in one entry" % (path, n, key))
    cur[key] = val
if cur is not None:
    entries.append(cur)
ids = {}
for e in entries:
    miss = [k for k in KEYS if k not in e]
    if miss:
        errs.append("%s:%d: entry lacks %s" % (path, e["line"], ", ".join(miss)))
    elif e["id"] in ids:
        errs.append("%s:%d: id %s used twice" % (path, e["line"], e["id"]))
    else:
        ids[e["id"]] = e
def fail(msgs):
    for m in msgs:
        print("mutate: " + m, file=sys.stderr)
    sys.exit(2)
if errs:
    fail(errs)
def tests_of(e, tree):
    out = []
    for t in e["tests"].split():
        if t.startswith("test_"):
            if not os.path.isfile(os.path.join(tree, "tests/unit", t + ".c")):
                errs.append("%s: unit test %s: no tests/unit/%s.c" % (e["id"], t, t))
        elif not os.path.isfile(os.path.join(tree, "tests/integration", t + ".sh")):
            errs.append("%s: test %s: no tests/integration/%s.sh" % (e["id"], t, t))
        out.append(t)
    if not out:
        errs.append("%s: no tests named" % e["id"])
    return out
def text_of(e, tree):
    p = os.path.join(tree, e["file"])
    if not os.path.isfile(p):
        errs.append("%s: no file %s" % (e["id"], e["file"]))
        return None
    s = open(p, encoding="utf-8").read()
    n = s.count(e["from"])
    if n != 1:
        errs.append("%s: the text to replace occurs %d times in %s (must be exactly once): %s"
                    % (e["id"], n, e["file"], e["from"]))
        return None
    if e["from"] == e["to"]:
        errs.append("%s: 'to' is the same text as 'from'" % e["id"])
    return s
if cmd == "check":
    for e in ids.values():
        text_of(e, args[0])
        tests_of(e, args[0])
    fail(errs) if errs else print("%d mutations, each applies once" % len(ids))
elif cmd == "ids":
    want = args or list(ids)
    bad = [i for i in want if i not in ids]
    fail(["no mutation %s in %s" % (i, path) for i in bad]) if bad else print("\n".join(want))
elif cmd == "field":
    e = ids[args[0]]
    print(" ".join(tests_of(e, ".")) if args[1] == "tests" else e[args[1]])
elif cmd == "list":
    for e in ids.values():
        print("%-22s %-44s %s\n%22s   %s" % (e["id"], e["file"], e["tests"], "", e["what"]))
elif cmd == "apply":
    e, tree = ids[args[0]], args[1]
    s = text_of(e, tree)
    if s is None:
        fail(errs)
    open(os.path.join(tree, e["file"]), "w", encoding="utf-8").write(s.replace(e["from"], e["to"]))
PYEOF
}

case "${1:-}" in
--check) helper check "$ROOT"; exit $? ;;
--list) helper list; exit $? ;;
-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
-*) echo "mutate: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
helper check "$ROOT" >/dev/null || exit 2
IDS=$(helper ids "$@") || exit 2

# the scratch copy: every file git would commit (tracked or not ignored), as it is now
S=${MUTATE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/vt-mutate.XXXXXX")}
mkdir -p "$S" || exit 2
S=$(cd "$S" && pwd)
cleanup() { [ "${MUTATE_KEEP:-0}" = 1 ] || rm -rf "$S"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "mutate: scratch copy in $S"
(cd "$ROOT" && git ls-files -co --exclude-standard | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
    tar -cf - -T -) | (cd "$S" && tar -xf -) || { echo "mutate: copying the tree failed" >&2; exit 2; }
B="$S/build"
build() { make -C "$S" -j"$JOBS" BUILD="$B" test-build >"$S/build.log" 2>&1; }
echo "mutate: building the scratch copy (log: $S/build.log)"
build || { tail -30 "$S/build.log"; echo "mutate: the unmutated copy does not build" >&2; exit 2; }

# run_test NAME TIMEOUT: one test as `make test` runs it; prints pass, fail, timeout or skip
run_test() {
    case $1 in
    test_*) out=$(cd "$S" && BUILD="$B" UNIT_ONLY=1 TEST_TIMEOUT=$2 sh tests/run.sh "$B/tests/$1" 2>&1) ;;
    *) out=$(cd "$S" && BUILD="$B" ONLY="$1" TEST_TIMEOUT=$2 KEEP_FAILED=0 sh tests/run.sh 2>&1) ;;
    esac
    printf '%s\n' "$out" >"$S/last-test.log"
    if printf '%s\n' "$out" | grep -q "^FAIL $1 (exit 124"; then echo timeout
    elif printf '%s\n' "$out" | grep -q "^FAIL $1"; then echo fail
    elif printf '%s\n' "$out" | grep -q "^SKIP $1"; then echo skip
    elif printf '%s\n' "$out" | grep -q "^PASS $1"; then echo pass
    else echo fail; fi
}

# the baseline: every test the chosen mutations name passes on the unmutated copy; its time
# sets the test's limit under a mutation (3x + 60 s: a mutation that hangs a test is caught)
TESTS=$(for id in $IDS; do helper field "$id" tests; done | tr ' ' '\n' | sort -u)
echo "mutate: baseline: $(echo "$TESTS" | wc -w) tests on the unmutated copy"
for t in $TESTS; do
    t0=$(date +%s)
    r=$(run_test "$t" 600)
    dt=$(($(date +%s) - t0))
    [ "$r" = pass ] || { cat "$S/last-test.log"; echo "mutate: $t does not pass without a mutation ($r): fix it first" >&2; exit 2; }
    lim=$((dt * 3 + 60))
    [ $lim -gt 600 ] && lim=600
    eval "LIMIT_$t=$lim"
    printf '  %-20s %4ss\n' "$t" "$dt"
done

caught=0 survived=0 broken=0 total=0
for id in $IDS; do
    total=$((total + 1))
    file=$(helper field "$id" file)
    what=$(helper field "$id" what)
    cp "$S/$file" "$S/.mutate-orig"
    helper apply "$id" "$S" || exit 2
    t0=$(date +%s)
    if ! build; then
        broken=$((broken + 1)); verdict="BROKEN (does not build: $S/build.log)"
        cp "$S/build.log" "$S/build.$id.log"
    else
        by=""
        for t in $(helper field "$id" tests); do
            eval "lim=\$LIMIT_$t"
            r=$(run_test "$t" "$lim")
            case $r in
            fail) by="$by${by:+, }$t" ;;
            timeout) by="$by${by:+, }$t (timed out)" ;;
            esac
            [ -n "$by" ] && [ "${MUTATE_FIRST:-0}" = 1 ] && break
        done
        if [ -n "$by" ]; then caught=$((caught + 1)); verdict="caught by $by"
        else survived=$((survived + 1)); verdict="SURVIVED ($(helper field "$id" tests) all pass)"; fi
    fi
    cp "$S/.mutate-orig" "$S/$file" # a new mtime: the next build recompiles it
    printf '%-24s %s  [%ss]\n%24s   %s\n' "$id" "$verdict" "$(($(date +%s) - t0))" "" "$what"
done
echo
echo "mutate: $caught/$total caught, $survived survived, $broken did not build"
[ $survived -eq 0 ] && [ $broken -eq 0 ]
