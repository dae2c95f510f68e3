#!/bin/sh
# pip_wheel.sh — the pip route: the wheel that `make wheel` builds (the in-tree PEP 517
# backend) installs offline into a fresh venv with `vramtrace` on PATH, libvramtrace.so in
# lib/vramtrace/ where `vramtrace run` finds it, and `python -m vramtrace`; a traced run on the
# fake CUDA uses the installed preload; `pip install .` from the source tree; uninstall.
set -u
PY=${PYTHON_PIP:-python3}
fail() { echo "pip_wheel: $*"; exit 1; }
$PY -m pip --version >/dev/null 2>&1 || { echo "pip_wheel: $PY has no pip"; exit 77; }
$PY -c 'import venv' 2>/dev/null || { echo "pip_wheel: $PY has no venv module"; exit 77; }
unset VRAMTRACE_PRELOAD PIP_REQUIRE_VIRTUALENV
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
# a fresh venv: without pip when this pip can install into another interpreter (fast)
newvenv() {
    if $PY -m pip install --help 2>/dev/null | grep -q -- '--python'; then
        $PY -m venv --without-pip "$1" && PIP="$PY -m pip --python $1/bin/python"
    else
        $PY -m venv "$1" && PIP="$1/bin/python -m pip"
    fi
}

# 1. the wheel, built the way `make wheel` builds it
$PY -c 'import sys; sys.path.insert(0, sys.argv[1] + "/python/backend")
import vramtrace_build as b; print(b.build_wheel(sys.argv[2]))' "$ROOT" dist >whl.out 2>build.log ||
    { cat build.log; fail "build_wheel failed"; }
WHL="dist/$(cat whl.out)"
[ -f "$WHL" ] || fail "no wheel $WHL"
$PY - "$WHL" <<'PYEOF' || fail "wheel contents"
import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
v = sys.argv[1].split("-")[1]
for n in ("vramtrace/__init__.py", "vramtrace/__main__.py", f"vramtrace-{v}.data/scripts/vramtrace",
          f"vramtrace-{v}.data/data/lib/vramtrace/libvramtrace.so",
          f"vramtrace-{v}.data/data/share/doc/vramtrace/README.md",
          f"vramtrace-{v}.data/data/share/doc/vramtrace/docs/formula.md",
          f"vramtrace-{v}.dist-info/METADATA", f"vramtrace-{v}.dist-info/WHEEL"):
    assert n in names, (n, names)
assert z.read(f"vramtrace-{v}.data/scripts/vramtrace")[:4] == b"\x7fELF"
rec = z.read(f"vramtrace-{v}.dist-info/RECORD").decode().split()
assert len(rec) == len(names), (rec, names)
for line in rec:
    name, h, size = line.rsplit(",", 2)
    if name.endswith("RECORD"):
        continue
    data = z.read(name)
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert h == "sha256=" + d and int(size) == len(data), name
PYEOF

# 2. installed offline into a fresh venv
newvenv v || fail "venv"
$PIP install -q --no-index "$WHL" >pip.log 2>&1 || { cat pip.log; fail "pip install wheel"; }
V=$(cd v && pwd -P)
[ -x "$V/bin/vramtrace" ] || fail "no bin/vramtrace"
[ -f "$V/lib/vramtrace/libvramtrace.so" ] || fail "no lib/vramtrace/libvramtrace.so"
# every docs/ page --help cites is installed where --help says
for d in $("$V/bin/vramtrace" --help | grep -o 'docs/[a-z0-9_-]*\.md' | sort -u); do
    [ -f "$V/share/doc/vramtrace/$d" ] || fail "--help cites $d: not in $V/share/doc/vramtrace"
done
[ -f "$V/share/doc/vramtrace/README.md" ] || fail "no share/doc/vramtrace/README.md"
for f in "$ROOT"/docs/*; do # (every file: html-report.png, validation-results.jsonl too)
    cmp -s "$f" "$V/share/doc/vramtrace/docs/${f##*/}" || fail "docs/${f##*/} not installed as it is"
done
PATH="$V/bin:$PATH" vramtrace --help >help.txt 2>&1 || fail "vramtrace --help"
grep -q '^usage: vramtrace' help.txt || fail "vramtrace --help: $(head -3 help.txt)"
"$V/bin/python" -m vramtrace --help >pyhelp.txt 2>&1 || fail "python -m vramtrace --help"
cmp -s help.txt pyhelp.txt || fail "python -m vramtrace --help differs from vramtrace --help"
"$V/bin/python" -m vramtrace --version | grep -q "^vramtrace $(cut -d- -f2 whl.out) " ||
    fail "python -m vramtrace --version"
"$V/bin/python" -m vramtrace dump /nonexistent.vt >/dev/null 2>&1
[ $? = 2 ] || fail "python -m vramtrace: the program's exit status is not passed on"

# 3. a traced run on the fake CUDA through the installed program and preload
LD_LIBRARY_PATH="$FAKE" PATH="$V/bin:$PATH" vramtrace run -q -o a.vt -- "$BUILD/tests/prog/sym_static" \
    >run.out 2>&1 || { cat run.out; fail "vramtrace run"; }
LD_LIBRARY_PATH="$FAKE" "$V/bin/python" -m vramtrace run -q -o b.vt -- "$BUILD/tests/prog/sym_static" \
    >run2.out 2>&1 || { cat run2.out; fail "python -m vramtrace run"; }
for t in a.vt b.vt; do
    "$V/bin/vramtrace" dump "$t" >"$t.jsonl" || fail "dump $t"
    grep -q '"type":"alloc","api":"cudaMalloc".*"size":123456789' "$t.jsonl" || fail "$t: no cudaMalloc"
    # the preload that recorded it is the installed one (its own frames name their module)
    grep -Eq "\"type\":\"module\".*\"path\":\"$V/(bin/\.\./)?lib/vramtrace/libvramtrace.so\"" "$t.jsonl" ||
        fail "$t: not recorded by $V/lib/vramtrace/libvramtrace.so: $(grep '"module"' "$t.jsonl")"
done

# 4. uninstall removes the program and the library
$PIP uninstall -q -y vramtrace >un.log 2>&1 || { cat un.log; fail "pip uninstall"; }
[ ! -e "$V/bin/vramtrace" ] && [ ! -e "$V/lib/vramtrace/libvramtrace.so" ] || fail "uninstall left files"
[ -z "$(find "$V/share/doc/vramtrace" -type f 2>/dev/null)" ] || fail "uninstall left the docs"

# 5. `pip install .` from the source tree (build isolation, nothing downloaded)
newvenv s || fail "venv s"
$PIP install -q --no-index "$ROOT" >src.log 2>&1 || { cat src.log; fail "pip install ROOT"; }
s/bin/vramtrace --version | grep -q '^vramtrace ' || fail "source install: vramtrace --version"
[ -f s/lib/vramtrace/libvramtrace.so ] || fail "source install: no lib/vramtrace/libvramtrace.so"
exit 0
