#!/bin/sh
# report_fuzz.sh — hostile traces: 300 copies of a real trace with random bytes overwritten or
# cut short; `vramtrace report` (text and JSON) and `vramtrace dump` must end with 0 (ok or
# truncated) or 3 (malformed) every time, never crash or hang.
set -u
# regressions first: corrupt stack ids once made the report loop forever (a uint32 doubling)
for f in "$ROOT"/tests/data/fuzz_*.vt; do
    timeout 20 "$VT" report --json "$f" >/dev/null 2>&1
    rc=$?
    [ $rc = 0 ] || [ $rc = 3 ] || { echo "report_fuzz: $f: exit $rc"; exit 1; }
done
SRC="$ROOT/examples/traces/b_recommended_12gib.vt"
python3 - "$SRC" <<'PYEOF' || exit 1
import os, random, subprocess, sys
data = open(sys.argv[1], "rb").read()
vt = os.environ["VT"]
rnd = random.Random(20261122)
bad = 0
for i in range(300):
    b = bytearray(data)
    if i % 3 == 0:
        b = b[: rnd.randrange(32, len(b))]
    for _ in range(rnd.randrange(1, 12)):
        pos = rnd.randrange(32 if i % 5 else 0, len(b))
        b[pos] = rnd.randrange(256)
    open("fuzz.vt", "wb").write(b)
    for cmd in ([vt, "report", "--no-color", "fuzz.vt"], [vt, "report", "--json", "fuzz.vt"], [vt, "dump", "fuzz.vt"]):
        try:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        except subprocess.TimeoutExpired:
            print("hang:", cmd[1], "case", i); bad += 1; continue
        if p.returncode not in (0, 3):
            print("exit", p.returncode, cmd[1], "case", i)
            open(f"fuzz-fail-{i}.vt", "wb").write(b)
            bad += 1
print(f"{300 * 3 - bad} of {300 * 3} runs ended cleanly")
sys.exit(1 if bad else 0)
PYEOF
