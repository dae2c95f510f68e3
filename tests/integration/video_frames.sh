#!/bin/sh
# video_frames.sh — a video classifier of TSM / TSN's shape (tests/python/video_clips.py,
# SIMULATED): B clips of T frames put on the device as B x (T*3) x H x W and viewed as (B*T) x 3
# x H x W by the model's forward (input.view(-1, 3, H, W)). With T a square (4, 16) those bytes
# are B images of 3 x (H*sqrt(T))^2: TSM's 12 clips of 16 frames of 224^2 had been "896×896
# images: B·3·H·W fp32" (JSON inferred.image_size), and the batch read from the labels had kept
# the command line's -b (argparse's other name for --batch-size) unread: "micro-batch B
# (--batch-size) 12 inferred ... 0 from arguments/flags". Now, against the program's own facts:
# the image size is the frames' or not known, and B is -b's, as an argument.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME CARD ARGS...
    n=$1 card=$2
    shift 2
    timeout 300 "$VT" run -q --card $card -o $n.vt -- python3 "$ROOT/tests/python/video_clips.py" "$@" \
        </dev/null >$n.out 2>&1
    grep -q '^VRAMTRACE_TORCH_STATS ' $n.out || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
}
run fit4 3GiB -b 6 --num_segments 4
run fit16 3GiB -b 6 --num_segments 16
run oom16 1GiB -b 64 --num_segments 16
python3 - fit4 fit16 oom16 <<'PY' || fail "see above"
import json, sys
bad = []
for base in sys.argv[1:]:
    r = json.load(open(base + ".json"))
    txt = open(base + ".txt").read()
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert t["oom"] == base.startswith("oom"), t  # (the cases: fits, and out of memory)
    side = (r["inferred"].get("image_size") or {}).get("value")
    if side is not None and side != t["image_size"]:
        bad.append("%s: image size %s (%s); the frames are %d x %d" % (base, side, r["inferred"]["image_size"]["where"],
                                                                       t["image_size"], t["image_size"]))
    b = r["config"]["batch_size"]
    if b["value"] != t["batch_size"] or b["source"] != "argument" or not b["where"].startswith("-b "):
        bad.append("%s: B %s (%s: %s); the command line gives -b %d" % (base, b["value"], b["source"], b["where"],
                                                                      t["batch_size"]))
    for k in ("%d×%d" % (t["image_size"] * 2, t["image_size"] * 2), "%d×%d" % (t["image_size"] * 4, t["image_size"] * 4)):
        if k in txt:
            bad.append("%s: says %r" % (base, k))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "video_frames: ok (a clip's frames are no larger images, and -b is the batch flag)"
