#!/bin/sh
# fetch-debs.sh — on the dev machine (with apt), download the .deb files vramtrace builds against
# into .debs/ (git-ignored), for a GPU machine without a package registry: carry .debs there and
# run scripts/gpu-validate.sh, which unpacks them with `dpkg -x` into .deps/ (never into /).
set -eu
cd "$(dirname "$0")/.."
PKGS="libunwind8 libunwind-dev libcjson1 libcjson-dev liblzma5 liblzma-dev libcmocka0 libcmocka-dev libdw1 libdw-dev libelf1 libelf-dev libzstd1 libzstd-dev"
command -v apt-get >/dev/null 2>&1 || { echo "fetch-debs.sh: apt-get not found (run this on a Debian/Ubuntu dev machine)" >&2; exit 2; }
mkdir -p .debs
cd .debs
rm -f ./*.deb
# shellcheck disable=SC2086
if ! apt-get download $PKGS >/dev/null 2>&1; then
    echo "fetch-debs.sh: apt-get download failed; trying apt-get update first" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq || { echo "fetch-debs.sh: apt-get update failed (no network?)" >&2; exit 2; }
    # shellcheck disable=SC2086
    apt-get download $PKGS || { echo "fetch-debs.sh: apt-get download $PKGS failed" >&2; exit 2; }
fi
echo "fetch-debs.sh: $(ls ./*.deb | wc -l) packages in .debs/ ($(du -sh . | cut -f1)):"
ls -1 ./*.deb | sed 's|^\./|  |'
echo "next: carry .debs to the GPU machine and run: bash scripts/gpu-validate.sh OUTDIR"
