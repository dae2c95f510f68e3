#!/bin/sh
# install-deps.sh — make sure the build dependencies (Debian packages) are present; with
# --test, the test tools (chromium, for the HTML page's browser test; python3-torch, a CPU
# PyTorch for the trainer example's smoke test; called by `make test`).
# Called by `make` once (stamp build/.deps-ok); installs only what is missing, with apt-get,
# after printing the commands and how to skip them. VRAMTRACE_NO_INSTALL=1: never install, only
# say what is missing (exit 2). DEPS_PREFIX=DIR on make's command line skips this script.
set -eu
missing=""
what="build dependencies"
if [ "${1:-}" = --test ]; then
    # `make test`'s own tools: a headless browser for tests/integration/html_browser.sh, a CPU
    # PyTorch for ex_gpt_cpu.sh (each test is skipped, saying why, when its tool is missing)
    what="test tools"
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
        command -v google-chrome >/dev/null 2>&1 || missing=" chromium"
    # a CPU PyTorch for the system's python3 (tests/integration/ex_gpt_cpu.sh runs the trainer
    # example with it): Debian's python3-torch, when no python3 on the PATH has torch already
    if ! python3 -c 'import torch' >/dev/null 2>&1 && [ -x /usr/bin/python3 ] &&
        ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
        missing="$missing python3-torch"
    fi
else
    have_hdr() { printf '#include <%s>\nint main(void){return 0;}\n' "$1" | ${CC:-cc} -x c - -fsyntax-only $2 >/dev/null 2>&1; }
    have_hdr libunwind.h "" || missing="$missing libunwind-dev"
    have_hdr cjson/cJSON.h "" || missing="$missing libcjson-dev"
    have_hdr elfutils/libdwfl.h "" || missing="$missing libdw-dev"
    have_hdr zstd.h "" || missing="$missing libzstd-dev"
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' |
        ${CC:-cc} -x c - -fsyntax-only >/dev/null 2>&1 || missing="$missing libcmocka-dev"
    command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
fi
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ "$what" = "test tools" ] && [ -n "$SUDO" ]; then
    SUDO="sudo -n" # optional tools: never a password prompt in the middle of the tests
fi
echo "vramtrace: missing $what:$missing" >&2
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
