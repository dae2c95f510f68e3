#!/bin/sh
# deps_notice.sh — `make`'s dependency step (scripts/install-deps.sh) never runs sudo without
# saying so first: with every dependency missing (CC=false) and a user who is not root (fake
# `id`), it prints the exact sudo command and how to skip it before the first sudo call (fake
# `sudo` that only logs); with VRAMTRACE_NO_INSTALL=1 it calls nothing and exits 2. The same
# for `--test` (chromium, make test's browser), whose sudo is `sudo -n`.
# kind: hygiene (the code's shape, not what vramtrace does; counted apart by tests/run.sh)
set -eu
bin="$TESTDIR/bin"
mkdir -p "$bin"
printf '#!/bin/sh\necho 1000\n' >"$bin/id"
printf '#!/bin/sh\necho "SUDO-CALLED $*" >&2\n' >"$bin/sudo"
printf '#!/bin/sh\necho "APT-CALLED $*" >&2\n' >"$bin/apt-get"
chmod +x "$bin/id" "$bin/sudo" "$bin/apt-get"
log="$TESTDIR/deps.log"
CC=false PATH="$bin:$PATH" sh "$ROOT/scripts/install-deps.sh" >"$log" 2>&1 || {
    echo "install-deps.sh failed"; cat "$log"; exit 1; }
cat "$log"
said=$(grep -n '^vramtrace: running: sudo apt-get update && sudo apt-get install -y' "$log" | head -n 1 | cut -d: -f1)
skip=$(grep -n 'VRAMTRACE_NO_INSTALL=1' "$log" | head -n 1 | cut -d: -f1)
called=$(grep -n '^SUDO-CALLED apt-get' "$log" | head -n 1 | cut -d: -f1)
[ -n "$said" ] && [ -n "$skip" ] && [ -n "$called" ] || { echo "missing notice or sudo call"; exit 1; }
[ "$said" -lt "$called" ] && [ "$skip" -lt "$called" ] || { echo "sudo ran before the notice"; exit 1; }
! grep -q '^APT-CALLED' "$log" || { echo "apt-get ran without sudo as a non-root user"; exit 1; }
# VRAMTRACE_NO_INSTALL=1: says what is missing, installs nothing, exit 2
rc=0
CC=false PATH="$bin:$PATH" VRAMTRACE_NO_INSTALL=1 sh "$ROOT/scripts/install-deps.sh" >"$log" 2>&1 || rc=$?
cat "$log"
[ "$rc" -eq 2 ] || { echo "VRAMTRACE_NO_INSTALL=1: exit $rc, want 2"; exit 1; }
grep -q 'missing build dependencies:.*libcmocka-dev' "$log" || { echo "no list of what is missing"; exit 1; }
! grep -q 'CALLED' "$log" || { echo "VRAMTRACE_NO_INSTALL=1 still ran a command"; exit 1; }
# --test (make test's tools): with no chromium on PATH (only the fakes), the same notice first,
# then sudo -n (never a password prompt); VRAMTRACE_NO_INSTALL=1 names chromium, installs nothing
SH=$(command -v sh)
PATH="$bin" "$SH" "$ROOT/scripts/install-deps.sh" --test >"$log" 2>&1 || {
    echo "install-deps.sh --test failed"; cat "$log"; exit 1; }
cat "$log"
said=$(grep -n '^vramtrace: running: sudo -n apt-get update && sudo -n apt-get install -y chromium' "$log" | head -n 1 | cut -d: -f1)
called=$(grep -n '^SUDO-CALLED -n apt-get' "$log" | head -n 1 | cut -d: -f1)
[ -n "$said" ] && [ -n "$called" ] && [ "$said" -lt "$called" ] || { echo "--test: no notice before sudo -n"; exit 1; }
rc=0
PATH="$bin" VRAMTRACE_NO_INSTALL=1 "$SH" "$ROOT/scripts/install-deps.sh" --test >"$log" 2>&1 || rc=$?
cat "$log"
[ "$rc" -eq 2 ] && grep -q 'missing test tools: chromium' "$log" && ! grep -q 'CALLED' "$log" ||
    { echo "--test with VRAMTRACE_NO_INSTALL=1: exit $rc"; exit 1; }
echo "the sudo command and how to skip it come first; VRAMTRACE_NO_INSTALL=1 installs nothing"
