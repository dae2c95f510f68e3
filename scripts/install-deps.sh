#!/bin/sh
# install-deps.sh — make sure the build dependencies (Debian packages) are present.
# Called by `make` once (stamp build/.deps-ok); installs only what is missing, with apt-get,
# after printing the commands and how to skip them. VRAMTRACE_NO_INSTALL=1: never install, only
# say what is missing (exit 2). DEPS_PREFIX=DIR on make's command line skips this script.
set -eu
missing=""
have_hdr() { printf '#include <%s>\nint main(void){return 0;}\n' "$1" | ${CC:-cc} -x c - -fsyntax-only $2 >/dev/null 2>&1; }
have_hdr libunwind.h "" || missing="$missing libunwind-dev"
have_hdr cjson/cJSON.h "" || missing="$missing libcjson-dev"
have_hdr elfutils/libdwfl.h "" || missing="$missing libdw-dev"
printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' |
    ${CC:-cc} -x c - -fsyntax-only >/dev/null 2>&1 || missing="$missing libcmocka-dev"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "vramtrace: missing build dependencies:$missing" >&2
if [ "${VRAMTRACE_NO_INSTALL:-0}" = 1 ]; then
    echo "vramtrace: VRAMTRACE_NO_INSTALL=1: not installing; install them, or build with" \
         "make DEPS_PREFIX=DIR (packages unpacked with dpkg -x, see README)" >&2
    exit 2
fi
echo "vramtrace: running: ${SUDO:+$SUDO }apt-get update && ${SUDO:+$SUDO }apt-get install -y$missing" >&2
echo "vramtrace: to skip this, install them yourself, or run make with VRAMTRACE_NO_INSTALL=1" \
     "(stop here) or DEPS_PREFIX=DIR (packages unpacked with dpkg -x, see README)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || { echo "vramtrace: apt-get update failed; install$missing by hand" >&2; exit 2; }
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $missing >/dev/null || { echo "vramtrace: apt-get install$missing failed" >&2; exit 2; }
