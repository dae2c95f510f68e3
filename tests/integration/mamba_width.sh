#!/bin/sh
# mamba_width.sh — an attention-free state-space LM: tests/python/mamba_width.py (SIMULATED), a
# Mamba whose in_proj (2E×d, E = 2·d) has E² elements, run without --d_model (its argparse default
# is the width). The weights' sizes had given d = E ("d = 512: the smallest size in every block ...
# whose square is a block's parameter (d×d); 5 of 256 (key / value biases) only divide one",
# labelled --d_model) and V over it (4000, the embedding's 8000×256 read as 4000×512); now the
# width is the flag's default, from the program, and V the embedding's elements over it. With
# --d_model on the command line the argument is the width, as before, and V is read over it (had
# been 4000×256). "a transformer language model" from the sizes is no longer said: the d×d
# parameter it rested on is no square of the program's width; nor "transformer blocks 4 -> 3",
# "checkpoint around each transformer block", or that the formula "leaves out the attention's rows";
# nor is its JSON's family a transformer's ("decoder_transformer" before).
set -u
. "$ROOT/tests/sim_env.sh"
# run NAME ARGS...: mamba_width.py run with ARGS; its facts line must give d and V, and the
# report's (text and JSON) width and vocabulary rows must be those
run() {
    n=$1
    shift
    PYTHONPATH="$ROOT/examples/sim" timeout 300 "$VT" run -q --card 3GiB -o "$n.vt" -- python3 \
        "$ROOT/tests/python/mamba_width.py" "$@" </dev/null >"$n.out" 2>&1 || fail "$n: run: $(tail -n 2 "$n.out")"
    facts=$(grep '^facts:' "$n.out") || fail "$n: no facts line"
    d=$(echo "$facts" | sed 's/.* d_model=\([0-9]*\) .*/\1/')
    v=$(echo "$facts" | sed 's/.* vocab=\([0-9]*\) .*/\1/')
    report_both "$n"
    grep "width d (--d_model)" "$n.txt" | grep -q " $d  " || fail "$n: width: $(grep 'width d' "$n.txt")"
    grep "vocabulary V" "$n.txt" | grep -q " $v  *inferred  V = $v from the largest parameter, ${v}×$d " ||
        fail "$n: vocabulary: $(grep 'vocabulary V' "$n.txt")"
    ! grep -q "key / value biases" "$n.txt" || fail "$n: key / value biases said of a model with no attention"
    grep "repeating blocks" "$n.txt" | grep -q "of width $d.*a ${v}×$d embedding" ||
        fail "$n: family's evidence: $(grep 'repeating blocks' "$n.txt")"
    grep "^what was trained:" "$n.txt" | grep -q "a language model of repeating blocks (a transformer or another kind" ||
        fail "$n: family: $(grep '^what was trained' "$n.txt")"
    grep -q "^  - repeating blocks " "$n.txt" && ! grep -q "transformer block" "$n.txt" ||
        fail "$n: the blocks' what-ifs: $(grep 'blocks' "$n.txt")"
    grep -q "attention heads H unknown: the tensor sizes do not tell whether the blocks have an attention" "$n.txt" ||
        fail "$n: heads' note: $(grep 'heads H' "$n.txt")"
    python3 -c "import json, sys; c = json.load(open(sys.argv[1]))['config']; assert c['n_embd']['value'] == int(sys.argv[2]) and c['vocab_size']['value'] == int(sys.argv[3]), (c['n_embd'], c['vocab_size'])" "$n.json" "$d" "$v" ||
        fail "$n: JSON config.n_embd / vocab_size"
    python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['recognized']['family']; assert 'transformer' not in f, f" "$n.json" ||
        fail "$n: JSON recognized.family: $(grep -o '"family":"[a-z_]*"' "$n.json")"
}
run dflt
grep "width d (--d_model)" dflt.txt | grep -q "default=256 (its argparse; not on the command line)" ||
    fail "dflt: the width's source: $(grep 'width d' dflt.txt)"
run given --d_model 128
echo "mamba_width: ok (a state-space LM's width is its --d_model default, not its inner width)"
