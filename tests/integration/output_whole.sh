#!/bin/sh
# output_whole.sh — an output file is whole or untouched: a page, a Perfetto trace or a
# memory_viz pickle is written beside its name and renamed over it once whole, so a write that
# fails (ulimit -f here; a full disk alike) leaves the file that was there byte for byte and no
# temporary beside it, where it had left 40 KiB of a page in place of a good one; every output
# of a command is checked before anything is read or written, so one that cannot be created
# (its directory missing) leaves none of the others written; a file's mode is kept; a link is
# written through (its target replaced, the link kept) and a FIFO in place; a name too long for
# a file beside it is written in place.
set -u
fail() { echo "output_whole: $*"; exit 1; }
T="$ROOT/examples/traces/b_recommended_12gib.vt"
"$VT" report --html page.html "$T" >/dev/null || fail "report --html"
cp page.html good.html
(ulimit -f 40; "$VT" report --html page.html "$T") >out.txt 2>err.txt
rc=$? # (SIGXFSZ as a user's shell leaves it: the command must not die of it, the file half made)
[ $rc = 2 ] && grep -q "^vramtrace report: page.html: cannot write it: File too large$" err.txt ||
    fail "a page past ulimit -f: exit $rc, $(cat err.txt)"
cmp -s page.html good.html || fail "the page that was there was not kept ($(wc -c <page.html) bytes)"
[ -z "$(ls -A | grep '^\.page\.html\.')" ] || fail "a temporary file left: $(ls -A)"
# every output checked first: none written when one cannot be made
"$VT" export --perfetto p.json --memory-viz m.pickle --html nodir/x.html "$T" >out.txt 2>err.txt
rc=$?
[ $rc = 2 ] && grep -q "nodir/x.html: cannot create it: No such file or directory" err.txt ||
    fail "an output in a missing directory: exit $rc, $(cat err.txt)"
[ ! -e p.json ] && [ ! -e m.pickle ] || fail "outputs written beside one that could not be"
# an empty name: said so (it was "vramtrace export: : cannot create it: No such file ...")
"$VT" export --html '' "$T" >/dev/null 2>err.txt
[ $? = 2 ] && grep -q "^vramtrace export: an output's file name is empty$" err.txt ||
    fail "an empty output name: $(cat err.txt)"
# a file's mode kept; a link written through; a FIFO in place
"$VT" export --perfetto p.json "$T" >/dev/null && chmod 640 p.json &&
    "$VT" export --perfetto p.json "$T" >/dev/null || fail "export --perfetto"
[ "$(stat -c %a p.json)" = 640 ] || fail "the mode of the file rewritten: $(stat -c %a p.json)"
echo old >target.html && ln -s target.html link.html && "$VT" report --html link.html "$T" >/dev/null &&
    [ -L link.html ] && cmp -s target.html good.html || fail "a link: $(ls -l link.html target.html)"
# a name one byte short of the longest: no file beside it can be named, so it is written in place
# (it had been refused, "File name too long")
long=$(printf 'a%.0s' $(seq 250)).html
"$VT" report --html "$long" "$T" >/dev/null && cmp -s "$long" good.html || fail "a 255-byte name"
if mkfifo fifo 2>/dev/null; then
    cat fifo >fifo.out &
    "$VT" report --html fifo "$T" >/dev/null || fail "report --html into a FIFO"
    wait
    cmp -s fifo.out good.html || fail "the FIFO's reader got $(wc -c <fifo.out) bytes"
fi
echo ok
