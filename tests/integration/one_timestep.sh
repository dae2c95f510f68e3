#!/bin/sh
# one_timestep.sh — a diffusion denoiser's training (tests/python/one_timestep.py, SIMULATED) that
# draws ONE timestep for its whole batch of 4 images of 64²: its one int64 beside the image batch
# had been read as one label per image, "B = 1: one int64 per image" and the batch "1 images of
# 128×128" (4·3·64² fp32 bytes are 1·3·128²), its --batch_size "not the micro-batch" and the
# activations per sample and the largest micro-batch that fits counted over 1, in the very run in
# which 4 ran. Now B is the program's (its flag, given or its default) against its own facts, and a
# timestep per image still gives B from the trace.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME ARGS...
    n=$1
    shift
    timeout 300 "$VT" run -q --card 3GiB -o $n.vt -- python3 "$ROOT/tests/python/one_timestep.py" "$@" \
        </dev/null >$n.out 2>&1 || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
}
run given --batch_size 4 --per_batch 1
run default --per_batch 1
run per_image --batch_size 4 --per_batch 0
python3 - given default per_image <<'PY' || fail "see above"
import json, re, sys
bad = []
for base in sys.argv[1:]:
    r = json.load(open(base + ".json"))
    txt = open(base + ".txt").read()
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] == 2, t
    b = (r["inferred"].get("batch_size") or {}).get("value")
    if b is not None and b != t["batch_size"] and "not known" not in r["inferred"]["batch_size"].get("where", ""):
        bad.append("%s: inferred B = %s (%s), the program's %d" % (base, b, r["inferred"]["batch_size"].get("where"), t["batch_size"]))
    s = r["inferred"].get("image_size") or {}
    if s.get("value") not in (None, t["resolution"]) and " if " not in s.get("where", ""):
        bad.append("%s: %sx%s images (%s), the program's %d" % (base, s["value"], s["value"], s.get("where"), t["resolution"]))
    line = next((l for l in txt.splitlines() if l.strip().startswith("micro-batch B")), "")
    m = re.search(r"micro-batch B[^0-9]*?\s(\d+)\s", line)
    if not m or int(m.group(1)) != t["batch_size"]:
        bad.append("%s: %r, the program's B = %d" % (base, line.strip(), t["batch_size"]))
    if "is not the micro-batch" in txt:
        bad.append("%s: says its batch flag is not the micro-batch" % base)
    m = re.search(r"largest micro-batch that fits[^:]*: (\d+)", txt)
    if m and int(m.group(1)) < t["batch_size"]:
        bad.append("%s: largest micro-batch that fits %s in a run of %d" % (base, m.group(1), t["batch_size"]))
    m = re.search(r"per sample of the micro-batch \((\d+)\)", txt)
    if m and int(m.group(1)) != t["batch_size"]:
        bad.append("%s: activations per sample of a micro-batch of %s, the program's %d" % (base, m.group(1), t["batch_size"]))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "one_timestep: ok (one timestep for a batch of images counts no images: B is the program's)"
