#!/bin/sh
# conv_stem.sh — a transformer whose input is a convolution that is no patch embedding:
# tests/python/token_cap.py (SIMULATED; fairseq's speech_to_text shape: filterbank frames through
# a stride-2 3x3 Conv2d subsampling, then encoder blocks; no image batch, no position embedding of
# a patch grid) had been "what was trained: a vision transformer (patch tokens)", with "a
# convolution at the input (a patch embedding)". Now a transformer with a convolutional input
# stem, the trace not telling a vision transformer's patches from an audio encoder's frames, in
# the text, its JSON's family_text and the HTML page (the JSON's family no vision transformer's:
# it had stayed "vision_transformer"); with its micro-batch given (--batch-size 15, its first
# step's), the formula needs "the tokens T", not "the patch tokens T".
# tests/integration/clip_towers.sh keeps a CLIP's image tower (its image batch seen) a vision
# transformer.
set -u
. "$ROOT/tests/sim_env.sh"
timeout 300 "$VT" run -q --card 3GiB -o s.vt -- python3 "$ROOT/tests/python/token_cap.py" \
    --max-tokens 6000 </dev/null >s.out 2>&1 || fail "run: $(tail -n 2 s.out)"
grep -q '^facts: max_tokens=6000 ' s.out || fail "the program did not run: $(tail -n 2 s.out)"
report_both s
stem="a transformer with a convolutional input stem (a vision transformer's patches or an audio encoder's subsampled frames: the trace does not tell which)"
grep -qxF "what was trained: $stem" s.txt || fail "family: $(grep '^what was trained' s.txt)"
grep -q "vision transformer (patch tokens)" s.txt && fail "still a vision transformer: $(grep -m1 'vision transformer (patch' s.txt)"
grep -qF "a convolution at the input (a patch embedding or a subsampling of frames: no image batch and no patch grid's position embedding seen), not the layers of a convolutional network" s.txt ||
    fail "evidence: $(grep '^  evidence' s.txt)"
python3 -c "import json, sys; r = json.load(open(sys.argv[1]))['recognized']; assert r['family_text'] == sys.argv[2], r['family_text']" s.json "$stem" ||
    fail "JSON recognized.family_text"
# (the JSON's family as the text says it: it had stayed "vision_transformer" of a speech encoder)
python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['recognized']['family']; assert f in ('conv_stem_transformer', 'encoder_transformer', 'transformer'), f" s.json ||
    fail "JSON recognized.family: $(grep -o '"family":"[a-z_]*"' s.json)"
"$VT" report --html s.html s.vt >/dev/null 2>&1 || fail "report --html failed"
grep -qF "a transformer with a convolutional input stem" s.html || fail "HTML: no stem"
grep -q "vision transformer (patch tokens)" s.html && fail "HTML: still a vision transformer"
b=$(sed -n 's/^facts: .* batches=\([0-9]*\)x.*/\1/p' s.out)
"$VT" report --no-color --batch-size "$b" s.vt >sb.txt || fail "report --batch-size $b failed"
grep -qF "the transformer formula needs the tokens T, which neither the program nor the trace gives" sb.txt ||
    fail "formula at B=$b: $(grep '^formula' sb.txt)"
echo "conv_stem: ok (a convolution at a transformer's input with no image batch is not said to be a patch embedding)"
