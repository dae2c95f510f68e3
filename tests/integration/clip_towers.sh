#!/bin/sh
# clip_towers.sh — a SIMULATED CLIP-like two-tower model of the program's own (tests/python/
# clip_towers.py): its one Conv2d is the image tower's patch embedding, its weights are almost all
# in attention blocks. It is no convolutional network (text, JSON, HTML), and the evidence names
# the one module that calls a convolution (the program's conv_callers), none of its attention
# blocks (they had been "Conv2d layers ... in the program's own modules ImageTower, CLIP, Block,
# Attn": every module of the program).
set -u
fail() { echo "clip_towers: $*"; exit 1; }
[ -f "$BUILD/examples/libsimtorch.so" ] || fail "$BUILD/examples/libsimtorch.so not built (make progs)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP clip_towers: no python3"; exit 77; }
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
timeout 300 "$VT" run --card 12GiB -o c.vt -- python3 "$ROOT/tests/python/clip_towers.py" 32 \
    </dev/null >c.out 2>&1 || { cat c.out; fail "run failed"; }
facts=$(sed -n 's/^facts: //p' c.out)
callers=$(echo "$facts" | sed -n 's/.*conv_callers=\([A-Za-z_,]*\).*/\1/p')
blocks=$(echo "$facts" | sed -n 's/.*blocks=\([0-9]*\).*/\1/p')
[ -n "$callers" ] && [ "${blocks:-0}" -gt 0 ] || fail "the program's facts: $(cat c.out)"
"$VT" report --no-color c.vt >c.txt && "$VT" report --json c.vt >c.json &&
    "$VT" report --html c.html c.vt >/dev/null || fail "report failed"
grep -q '^what was trained: a vision transformer (patch tokens)$' c.txt ||
    fail "$(grep '^what was trained' c.txt)"
ev=$(grep '^  evidence ' c.txt)
echo "$ev" | grep -q "attention kernels ran; the Conv2d layers (torch's conv.py, called in the program's own module $callers) made [0-9.]* % of the activations live at the tensors' peak: a convolution at the input (a patch embedding), not the layers of a convolutional network$" ||
    fail "evidence: $ev"
for m in Block Attn CLIP TextTower; do # (modules of the program that call no convolution)
    case $ev in *" $m"*) fail "the evidence names $m, which holds no convolution: $ev" ;; esac
done
python3 -c "
import json, sys
r = json.load(open('c.json'))
sys.exit(r['recognized']['family'] != 'vision_transformer' or 'convolutional' in r['formula_note'])" ||
    fail "JSON: $(python3 -c "import json; r = json.load(open('c.json')); print(r['recognized'], r['formula_note'])")"
! grep -q 'convolutional network:' c.txt || fail "$(grep 'convolutional network:' c.txt)"
grep -q '<span class="st fam">a vision transformer (patch tokens)</span>' c.html ||
    fail "the HTML's family: $(grep -o '<span class="st fam">[^<]*' c.html)"
echo "clip_towers: ok"
