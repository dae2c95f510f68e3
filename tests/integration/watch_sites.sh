#!/bin/sh
# watch_sites.sh — `vramtrace watch` names the growing site as the report does, also where the
# stacks have no Python frame (a C++ program; a Python run recorded with --stacks native): the
# operation, or the program's own function, not the innermost frame, the caching allocator's own
# trace hook that every tensor has. It had said "growth +204.6 KiB/step at
# c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::trace(...)+0xf0
# (libc10_cuda.so)" for tests/prog/long_prog's leak, where the report says "long_prog_forward
# (long_prog) at .../long_prog.c:40", and the same hook for sim_long.py's leak recorded with
# --stacks native (the report: at::_ops::_to_copy::call (libsimtorch.so)).
set -u
export LD_LIBRARY_PATH="$FAKE"
fail() { echo "watch_sites: $*"; exit 1; }
C10="$FAKE/c10/cda/libc10_cuda.so"
[ -f "$C10" ] || { echo "no $C10 (make fake)"; exit 77; }
# same NAME: watch --once's growing site is the report's first growing one, not the allocator's
same() {
    "$VT" watch --once --plain "$1.vt" >"$1.watch" 2>&1 || { cat "$1.watch"; fail "$1: watch --once"; }
    "$VT" report --json "$1.vt" >"$1.json" 2>/dev/null || fail "$1: report"
    python3 - "$1" "$2" <<'PY' || { cat "$1.watch"; fail "$1: watch's growing site is not the report's"; }
import json, re, sys
n, want = sys.argv[1], sys.argv[2]
line = open(n + ".watch").read().strip()
g = json.load(open(n + ".json"))["growth"]
assert g["growing"], g
site = g["growing"][0]["site"]
assert want in site and "libc10_cuda" not in site, site
m = re.search(r"/step at (.*?)\)?( out of memory: .*)? \(ended\)$", line)
assert m and m.group(1) == site, (line, site)
PY
}
VRAMTRACE_OUTPUT=c.vt LD_PRELOAD="$VT_PRELOAD" "$BUILD/tests/prog/long_prog" "$C10" 200000 5 >c.out 2>&1 ||
    { cat c.out; fail "long_prog"; }
same c long_prog_forward
if [ -f "$BUILD/examples/libsimtorch.so" ] && command -v python3 >/dev/null 2>&1; then
    SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB VRAMTRACE_STACKS=native \
        VRAMTRACE_OUTPUT=n.vt LD_PRELOAD="$VT_PRELOAD" python3 "$ROOT/examples/sim/sim_long.py" \
        --scenario=leak --max_iters=60 >n.out 2>&1 || { cat n.out; fail "sim_long --stacks native"; }
    same n "at::_ops::"
fi
exit 0
