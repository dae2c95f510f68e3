#!/bin/sh
# two_runtimes.sh — a process with three CUDA runtimes (the one it links, and two copies loaded
# RTLD_LOCAL by path, as an extension's bundled runtime beside another framework's): a call made
# through one runtime's handle reaches that runtime under `vramtrace run` as without it (its own
# last error after its failed request, the others' untouched: it had been handed to the runtime
# the hooks call, whose error it set), and every allocation is recorded once (the other runtimes'
# one layer down, through the driver they reach by cuGetProcAddress).
set -u
export LD_LIBRARY_PATH="$FAKE"
P="$BUILD/tests/prog/two_runtimes"
fail() { echo "two_runtimes: $*"; exit 1; }
mkdir -p a b && cp "$FAKE/libcudart.so.13" a/ && cp "$FAKE/libcudart.so.13" b/ || fail "copy the runtime"
"$P" "$PWD/a/libcudart.so.13" "$PWD/b/libcudart.so.13" >plain.out 2>&1 || { cat plain.out; fail "plain run failed"; }
grep -qx 'errors: global 0 A 0 B 2' plain.out || fail "without vramtrace: $(cat plain.out)"
"$VT" run -q -o two.vt -- "$P" "$PWD/a/libcudart.so.13" "$PWD/b/libcudart.so.13" >traced.out 2>traced.err ||
    { cat traced.out traced.err; fail "traced run failed"; }
cmp -s plain.out traced.out || fail "the program noticed vramtrace: $(cat traced.out)"
"$VT" dump --no-resolve two.vt >two.jsonl || fail "dump two.vt"
python3 - two.jsonl <<'PYEOF' || fail "wrong events"
import json, sys, collections
ev = [json.loads(l) for l in open(sys.argv[1])]
a = collections.Counter((o["size"], o["failed"]) for o in ev
                        if o["type"] == "alloc" and o["kind"] == "ALLOC")
assert a == {(1 << 20, False): 1, (1 << 50, True): 1, (3 << 20, False): 1, (5 << 20, False): 1}, a
frees = [o for o in ev if o["type"] == "free" and o["kind"] == "FREE"]
assert len(frees) == 3, frees
PYEOF
"$VT" report --no-color two.vt >two.txt || fail "report two.vt"
echo "two_runtimes: ok"
