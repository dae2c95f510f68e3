#!/bin/sh
# install_layout.sh — `make install DESTDIR=D PREFIX=/usr/local` puts what the README says where
# it says: bin/vramtrace, lib/vramtrace/libvramtrace.so, and share/doc/vramtrace (the README and
# docs/, which --help and the reports cite as docs/formula.md: until 2026-12-06 an installed
# vramtrace named pages it had not installed); the installed program reports a committed trace;
# `make uninstall` leaves no file behind.
set -u
fail() { echo "install_layout: $*"; exit 1; }
command -v make >/dev/null 2>&1 || { echo "SKIP install_layout: no make"; exit 77; }
D="$PWD/dest"
make -s -C "$ROOT" install BUILD="$BUILD" DESTDIR="$D" PREFIX=/usr/local >make.out 2>&1 ||
    { tail -n 5 make.out; fail "make install failed"; }
P="$D/usr/local"
[ -x "$P/bin/vramtrace" ] || fail "no bin/vramtrace"
[ -f "$P/lib/vramtrace/libvramtrace.so" ] || fail "no lib/vramtrace/libvramtrace.so"
[ -f "$P/share/doc/vramtrace/README.md" ] || fail "no share/doc/vramtrace/README.md"
# every docs/ page --help cites is there
for page in $("$P/bin/vramtrace" --help | grep -o 'docs/[a-z-]*\.md' | sort -u) \
    $("$P/bin/vramtrace" run --help | grep -o 'docs/[a-z-]*\.md' | sort -u); do
    [ -f "$P/share/doc/vramtrace/$page" ] || fail "--help cites $page, not installed"
done
cmp -s "$ROOT/docs/formula.md" "$P/share/doc/vramtrace/docs/formula.md" || fail "docs/formula.md differs"
# every file of docs/, not only its pages: the README's and views.md's picture (html-report.png),
# validation.md's results (validation-results.jsonl) had not been installed
for f in "$ROOT"/docs/*; do
    cmp -s "$f" "$P/share/doc/vramtrace/docs/${f##*/}" || fail "docs/${f##*/} not installed as it is"
done
"$P/bin/vramtrace" report "$ROOT/examples/traces/sim/gpt2_b4_fit.vt" >r.txt 2>&1 ||
    { head -n 5 r.txt; fail "the installed vramtrace's report failed"; }
make -s -C "$ROOT" uninstall BUILD="$BUILD" DESTDIR="$D" PREFIX=/usr/local >make.out 2>&1 ||
    { tail -n 5 make.out; fail "make uninstall failed"; }
left=$(find "$D" -type f | head -n 5)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install_layout: installed, cited pages present, report ran, uninstalled clean"
