#!/bin/sh
# cnn_not_vit.sh — CIFAR convolutional networks with BatchNorm (tests/python/cnn_bn_blocks.py,
# SIMULATED: a block of identical Conv2d + BatchNorm2d layers, or VGG16-BN's 13 at a quarter of
# their widths) keep an int64 num_batches_tracked scalar in every block: 8 bytes, two fp32
# elements. That scalar had been read as the width of a transformer, d = 2 ("d² divides the
# projections"), the head's 10 biases as a position embedding of 5×d ("T = 5 patch tokens"), the
# images' tensors as token activations (B from "the first token tensor", "fp32 token activations"):
# a PGD adversarial training out of memory in its first forward was "16 in its first forward (its
# image batch, 16 images of 32×32)" of a batch of 3072. Now, against the program's own facts, no
# width, no tokens and the micro-batch its own. With the program's own averaged copy of the model
# (SWA's deepcopy) beside it, that copy is not called "a second, frozen model's (a teacher or a
# reference model ...)" with EMA "off": it is the trained model's size, as a copy the program
# keeps is. YOLOv5's CSP backbone (--csp: C3 blocks whose two 1x1 convolutions c -> c/2 sit side by
# side) had its fp32 weights read at 2 B ("16-bit parameters: at 2 B an element each block has
# 64-element norms and 64×64 projections"): twice the program's trainable count and SGD's state "2 B
# per trainable parameter"; now the element size, the trainable count and the state per parameter
# are the program's.
set -u
. "$ROOT/tests/sim_env.sh"
run() { # NAME ARGS...
    n=$1
    shift
    timeout 300 "$VT" run -q --card 3GiB -o $n.vt -- python3 "$ROOT/tests/python/cnn_bn_blocks.py" "$@" \
        </dev/null >$n.out 2>&1 || fail "run $n failed: $(tail -n 3 $n.out)"
    report_both $n
}
run plain
run vgg --vgg 4
run vgg_swa --vgg 4 --swa 1
run csp --csp 32 --batch_size 64
python3 - plain vgg vgg_swa csp <<'PY' || fail "see above"
import json, sys
bad = []
for base in sys.argv[1:]:
    r = json.load(open(base + ".json"))
    txt = open(base + ".txt").read()
    t = next(json.loads(l.split(" ", 1)[1]) for l in open(base + ".out") if l.startswith("VRAMTRACE_TORCH_STATS "))
    assert not t["oom"] and t["steps"] == 3 and not t["transformer"], t
    inf = r["inferred"]
    for k in ("n_embd", "block_size", "n_head"):
        v = (inf.get(k) or {}).get("value")
        if v is not None:
            bad.append("%s: inferred %s = %s (%s) of a network with no tokens" % (base, k, v, inf[k].get("where")))
    b = (inf.get("batch_size") or {}).get("value")
    if b is not None and b != t["batch_size"]:
        bad.append("%s: inferred B = %s, the program's %d" % (base, b, t["batch_size"]))
    for words in ("token activations", "patch tokens", "position embedding"):
        if words in txt:
            bad.append("%s: says %r" % (base, words))
    if "param_bytes_each" in t:
        e = (inf.get("param_dtype_bytes") or {}).get("value")
        if e is not None and e != t["param_bytes_each"]:
            bad.append("%s: %s B parameters (%s), the program's %d B" % (base, e, inf["param_dtype_bytes"].get("where"), t["param_bytes_each"]))
        rec = r.get("recognized") or {}
        if rec.get("trainable_params") not in (None, t["trainable"]):
            bad.append("%s: %s trainable, the program's %d" % (base, rec["trainable_params"], t["trainable"]))
        per = (rec.get("optimizer") or {}).get("state_bytes_per_trainable_param")
        if per not in (None, t["param_bytes_each"]):  # SGD with momentum: one buffer of the parameter's dtype
            bad.append("%s: SGD's state %s B per trainable parameter, the program's %d" % (base, per, t["param_bytes_each"]))
        for words in ("16-bit parameters", "parameters' 16 bits", "16-bit gradients", "16-bit training"):
            if words in txt:
                bad.append("%s: says %r of fp32 weights" % (base, words))
    if t["copy_bytes"]:
        ema = [l for l in txt.splitlines() if l.strip().startswith("EMA weights")]
        if not ema or " off " in ema[0] or "teacher" in ema[0]:
            bad.append("%s: its own copy of the model (%d B) told as %r" % (base, t["copy_bytes"], ema))
print("\n".join(bad))
raise SystemExit(1 if bad else 0)
PY
echo "cnn_not_vit: ok (a CNN's BatchNorm counters are no width, its images no tokens, its own copy no teacher)"
