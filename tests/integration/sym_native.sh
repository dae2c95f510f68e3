#!/bin/sh
# sym_native.sh — native frames named by the analyzer from the module files: a static
# function (no dladdr name at capture) of a -g program gets its .symtab name and DWARF
# file:line in dump and report (a C++ mangled one demangled), and in flame below main; the
# MODULE record carries the build-id read in memory; a file whose build-id differs (rebuilt
# program) keeps the recorded names, without file:line, and flame says why.
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "sym_native: $*"; exit 1; }
SRC="$ROOT/tests/prog/sym_static.c"
line_of() { grep -n "SYM_LINE $1" "$SRC" | cut -d: -f1; }
LS=$(line_of static) LE=$(line_of exported) LC=$(line_of cpp)
# a copy the test can replace later (the fake runtime comes from LD_LIBRARY_PATH)
cp "$BUILD/tests/prog/sym_static" ./sym_static || fail "copy"
PROG="$(pwd -P)/sym_static"

"$VT" run -q -o s.vt -- ./sym_static >run.out 2>&1 || { cat run.out; fail "run failed"; }
"$VT" dump s.vt >s.jsonl || fail "dump"
ID=$(readelf -n "$PROG" | sed -n 's/.*Build ID: *//p')
[ -n "$ID" ] || fail "readelf found no build-id in $PROG"

# check JSONL WANT-STATIC-SYMBOL WANT-FILE(1/0): the frames of the 123456789-byte cudaMalloc
check() {
    PYTHONPATH="$ROOT/tests/python" python3 - "$1" "$2" "$3" "$PROG" "$ID" "$SRC" "$LS" "$LE" "$LC" <<'PYEOF'
import sys
import vtdump
path, want_sym, want_file, prog, bid, src, ls, le, lc = sys.argv[1:]
ev, stacks = vtdump.load(path)
mods = [o for o in ev if o["type"] == "module" and o["path"] == prog]
assert len(mods) == 1, ("program's module record (real path, not argv[0])", [o for o in ev if o["type"] == "module"])
assert mods[0].get("build_id") == bid, (mods[0], bid)
a = [o for o in ev if o["type"] == "alloc" and o["api"] == "cudaMalloc" and o["size"] == 123456789]
assert len(a) == 1, len(a)
fr = [f for f in stacks[a[0]["stack_id"]] if f["kind"] == "native" and f["module"] == prog]
assert len(fr) >= 3, fr  # vt_static_alloc, vt_exported_caller, main (, _start)
st, ex = fr[0], fr[1]
want = None if want_sym == "-" else want_sym
assert st["symbol"] == want, ("static frame", st)
assert ex["symbol"] == "vt_exported_caller", ("exported frame keeps its name", ex)
if want_file == "1":
    assert st.get("file") == src and st.get("line") == int(ls), ("static file:line", st, src, ls)
    assert ex.get("file") == src and ex.get("line") == int(le), ("caller file:line", ex, src, le)
    assert st["symbol_offset"] > 0
else:
    assert "file" not in st and "line" not in st and "file" not in ex, ("no file:line", st, ex)
# the static function with a C++ mangled name calling vt_static_alloc: demangled
c = [o for o in ev if o["type"] == "alloc" and o["api"] == "cudaMalloc" and o["size"] == 2345678]
assert len(c) == 1, len(c)
cf = [f for f in stacks[c[0]["stack_id"]] if f["kind"] == "native" and f["module"] == prog][1]
assert cf["symbol"] == (None if want == None else "vt::static_cpp(unsigned long)"), cf
assert cf.get("line") == (int(lc) if want_file == "1" else None), (cf, lc)
PYEOF
}
check s.jsonl vt_static_alloc 1 || fail "dump: static function not named / no file:line"

# report: the site names the static function and its file:line
"$VT" report s.vt >report.txt || fail "report"
grep -q "vt_static_alloc (sym_static) at $SRC:$LS" report.txt ||
    { grep -A3 "Top allocation" report.txt; fail "report: site without the static name / file:line"; }

# flame (and so the HTML icicle): the same names, the program's entry frames as roots; a frame
# left module+0xoffset only with the reason said on stderr
"$VT" flame s.vt >flame.txt 2>flame.err || fail "flame"
grep -q '^_start;.*;main;vt_exported_caller;vt_static_alloc;' flame.txt ||
    fail "flame: the static function is not named below main: $(head -n 2 flame.txt)"
grep -q 'sym_static+0x' flame.txt && fail "flame: a frame of the program left unnamed: $(head -n 2 flame.txt)"
VRAMTRACE_SYMBOLIZE=0 "$VT" flame s.vt >off.txt 2>off.err || fail "flame (symbolize off)"
grep -q ';vt_exported_caller;sym_static+0x[0-9a-f]*;' off.txt || fail "flame (symbolize off): $(head -n 2 off.txt)"
grep -q 'sym_static.*VRAMTRACE_SYMBOLIZE=0' off.err || fail "flame (symbolize off) does not say why: $(cat off.err)"

# libdw is loaded only when a module's file is read: where it cannot be (a broken libdw.so.1
# first on the library path), the recorded names stay and flame says why; report still runs
mkdir -p nolibdw && printf 'not an ELF object' >nolibdw/libdw.so.1
LD_LIBRARY_PATH="$PWD/nolibdw:$FAKE" "$VT" flame s.vt >nodw.txt 2>nodw.err ||
    fail "flame (no libdw): $(cat nodw.err)"
grep -q ';vt_exported_caller;sym_static+0x[0-9a-f]*;' nodw.txt || fail "flame (no libdw): $(head -n 2 nodw.txt)"
grep -q 'sym_static.*libdw (elfutils) could not be loaded' nodw.err ||
    fail "flame (no libdw) does not say why: $(cat nodw.err)"
LD_LIBRARY_PATH="$PWD/nolibdw:$FAKE" "$VT" report s.vt >nodw_report.txt || fail "report (no libdw)"

# VRAMTRACE_SYMBOLIZE=0: only what was recorded
VRAMTRACE_SYMBOLIZE=0 "$VT" dump s.vt >off.jsonl || fail "dump (symbolize off)"
check off.jsonl - 0 || fail "VRAMTRACE_SYMBOLIZE=0 still symbolized"

# the same program with another build-id (as if rebuilt) at the same path: its symbols and
# lines would still match, but the file is refused and the recorded names are kept
python3 - sym_static "$ID" <<'PYEOF' || fail "could not patch the build-id"
import sys
path, bid = sys.argv[1], bytes.fromhex(sys.argv[2])
data = bytearray(open(path, "rb").read())
at = data.find(bid)
assert at > 0 and data.find(bid, at + 1) < 0
data[at + len(bid) - 1] ^= 0xff
open(path, "wb").write(data)
PYEOF
"$VT" dump s.vt >mis.jsonl || fail "dump (mismatch)"
check mis.jsonl - 0 || fail "build-id mismatch: the other file was used"
"$VT" report s.vt >mis.txt || fail "report (mismatch)"
grep -q "sym_static.c" mis.txt && fail "report (mismatch) shows a source line"
"$VT" flame s.vt >/dev/null 2>mis.err || fail "flame (mismatch)"
grep -q 'sym_static.*other builds' mis.err || fail "flame (mismatch) does not say why: $(cat mis.err)"
exit 0
