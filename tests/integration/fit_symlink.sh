#!/bin/sh
# fit_symlink.sh — `vramtrace fit --dir DIR` writes and deletes only what is its own: a trial's
# output.log planted as a symbolic link is replaced by a file of its own (0600, as the traces),
# its target untouched (it had been truncated and overwritten through the link); a trial
# directory DIR/bN that is a symbolic link is refused, exit 2, before anything is deleted (the
# *.vt of the directory it pointed to had been unlinked through it).
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/rt_cases"
fail() { echo "fit_symlink: $*"; exit 1; }

# 1. DIR/b1/output.log a link to another file
mkdir -p logd/b1
echo "precious data" >victim.txt
ln -s "$PWD/victim.txt" logd/b1/output.log
"$VT" fit --dir logd --max-b 2 -- sh -c "exec $P threads 1 10" x '{B=1}' >log.out 2>log.err
rc=$?
[ $rc = 0 ] || { cat log.err; fail "log link: exit $rc, want 0"; }
[ "$(cat victim.txt)" = "precious data" ] || fail "log link: its target was written: $(head -c 200 victim.txt)"
[ -f logd/b1/output.log ] && [ ! -L logd/b1/output.log ] || fail "log link: no log of its own"
mode=$(stat -c %a logd/b1/output.log)
[ "$mode" = 600 ] || fail "log link: the log's mode is $mode, want 600"
grep -q . logd/b1/output.log || fail "log link: the trial's log is empty"

# 2. DIR/b1 a link to another directory holding traces
mkdir -p other dird
echo keep >other/a.vt
ln -s "$PWD/other" dird/b1
"$VT" fit --dir dird --max-b 2 -- sh -c "exec $P threads 1 10" x '{B=1}' >dir.out 2>dir.err
rc=$?
[ $rc = 2 ] || { cat dir.err; fail "dir link: exit $rc, want 2"; }
[ -f other/a.vt ] || fail "dir link: other/a.vt was deleted through dird/b1"
grep -q "dird/b1 is not a directory of yours (a symbolic link, or another user's): refused" dir.err ||
    { cat dir.err; fail "dir link: no reason"; }
ls other | grep -qv '^a\.vt$' && fail "dir link: the trial wrote into the linked directory: $(ls other)"
exit 0
