#!/bin/sh
# token_lever.sh — a run out of memory whose batches are made by a token budget:
# tests/python/token_cap.py (SIMULATED, fairseq's speech_to_text shape) takes --max-tokens, each
# step's batch max_tokens // T utterances of T frames, so no micro-batch is the run's and none
# is read. Its advice had named no lever ("the micro-batch is not known: no what-if of it, nor of
# the flags that may set it (--max-tokens ...), which vramtrace does not read"), where lowering
# the budget is the one that works (audit: fairseq-shaped 120000 out of memory on 12 GiB, 80000
# fits). The trace shows each batch's bytes, not its tokens, so no value is predicted; now a note
# names the flag, its value and what grows with it, in every view, with no number of its own; and
# the rerun it points to, a lower --max-tokens, runs through on the same card.
set -u
. "$ROOT/tests/sim_env.sh"
P="$ROOT/tests/python/token_cap.py"
timeout 300 "$VT" run -q --card 1400MiB -o oom.vt -- python3 "$P" --max-tokens 48000 </dev/null >oom.out 2>&1
facts=$(grep '^facts: ' oom.out) || fail "no facts: $(tail -n 2 oom.out)"
mt=$(echo "$facts" | tr ' ' '\n' | sed -n 's/^max_tokens=//p')
[ "$mt" = 48000 ] || fail "the program did not take its flag: $facts"
grep -q "^trained" oom.out && fail "the run did not run out of memory (the case): $(tail -n 2 oom.out)"
report_both oom
"$VT" report --html oom.html oom.vt >/dev/null 2>&1 || fail "report --html failed"
want="--max-tokens ($mt on the command line), by its name a cap on each batch's tokens"
grep -qF "  ($want" oom.txt || fail "text: no note names the token budget: $(grep -A3 '^advice' oom.txt)"
grep -qF "lowering it is the lever on what grows with a batch" oom.txt || fail "text: the lever is not said"
grep -qF "no value of it is predicted" oom.txt || fail "text: a value is implied"
# (no other value of the flag anywhere: none is predicted)
grep -o -- "--max-tokens [0-9][0-9]*" oom.txt | grep -v -- "--max-tokens $mt\$" && fail "text: another value"
python3 - oom.json "$want" <<'PY' || fail "JSON: the note is missing"
import json, sys
notes = json.load(open(sys.argv[1]))["prediction"]["notes"]
raise SystemExit(0 if any(n.startswith(sys.argv[2]) for n in notes) else 1)
PY
grep -qF "max-tokens ($mt on the command line), by its name a cap" oom.html || fail "page: the note is missing"
# the rerun the note points to: a lower budget, the same card
timeout 300 "$VT" run -q --card 1400MiB -o low.vt -- python3 "$P" --max-tokens $((mt / 2)) </dev/null >low.out 2>&1 ||
    fail "the rerun at --max-tokens $((mt / 2)) failed: $(tail -n 2 low.out)"
grep -q "^trained 3 steps" low.out || fail "the rerun did not train: $(tail -n 2 low.out)"
echo "token_lever: ok (the token budget named as the lever, no value predicted; a lower one runs)"
