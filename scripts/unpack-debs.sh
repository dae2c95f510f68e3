#!/bin/sh
# unpack-debs.sh ROOT — the build dependencies carried to a GPU machine (scripts/fetch-debs.sh
# puts them in ROOT/.debs/) unpacked into ROOT/.deps/: dpkg -x, or ar + tar where dpkg is
# missing. Prints "DEPS_PREFIX=ROOT/.deps/usr" for make when there was a .deb, nothing
# otherwise; a .deb dpkg could not unpack is named on stderr, a line each. Used by
# gpu-validate.sh and gpu-beyond.sh.
set -u
ROOT=$1
ls "$ROOT"/.debs/*.deb >/dev/null 2>&1 || exit 0
rm -rf "$ROOT/.deps" && mkdir -p "$ROOT/.deps"
for deb in "$ROOT"/.debs/*.deb; do
    if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$deb" "$ROOT/.deps" || echo "could not unpack $deb" >&2
    else # a .deb is an ar archive holding data.tar.*
        (d=$(mktemp -d) && cd "$d" && ar x "$deb" && tar -xf data.tar.* -C "$ROOT/.deps"; rm -rf "$d")
    fi
done
echo "DEPS_PREFIX=$ROOT/.deps/usr"
