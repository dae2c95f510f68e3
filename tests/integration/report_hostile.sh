#!/bin/sh
# report_hostile.sh — hand-made hostile traces (tests/data/hostile_*.vt, made by
# tests/data/hostile.py) and hostile arguments: each must give a correct report or a clear
# error, in bounded time and memory, never a crash, a hang or an empty JSON document.
set -u
D="$ROOT/tests/data"
fail() { echo "report_hostile: $*"; exit 1; }
# run_ok NAME CMD...: CMD must exit 0 within 60 s; its stdout in NAME.out, stderr in NAME.err
run_ok() {
    n=$1
    shift
    timeout 60 "$@" >"$n.out" 2>"$n.err"
    rc=$?
    [ $rc = 0 ] || { tail -n 5 "$n.err"; fail "$n: exit $rc (want 0): $(echo "$*" | cut -c1-120)"; }
}
json_check() { # json_check FILE PYTHON-EXPR-ON-r (must be true)
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" ||
        fail "$1: not true: $2"
}
deep() { python3 -c 'import sys; n=int(sys.argv[1]); print("("*n + "8" + ")"*n)' "$1"; }

# 1. --batch_size=((((...8...)))) 20,000 deep in the traced argv: a note, not a stack overflow
run_ok deep "$VT" report --json "$D/hostile_deep_argv.vt"
json_check deep.out 'any("nested more than 100" in w for w in r["config_warnings"])'
json_check deep.out 'r["config"]["batch_size"]["source"] in ("default", "unknown")'
run_ok deep_text "$VT" report --no-color "$D/hostile_deep_argv.vt"
grep -q "nested more than 100" deep_text.out || fail "deep_text: no note"
# ... and on the command line of report and predict: a usage error naming the reason
timeout 60 "$VT" report --batch_size="$(deep 20000)" "$D/dump_small.vt" >/dev/null 2>cmd.err
[ $? = 2 ] && grep -q "nested more than 100" cmd.err || fail "report --batch_size=<deep>: $(cut -c1-200 cmd.err)"
timeout 60 "$VT" predict --batch_size="$(deep 10000)" >/dev/null 2>cmd.err
[ $? = 2 ] && grep -q "nested more than 100" cmd.err || fail "predict --batch_size=<deep>: $(cut -c1-200 cmd.err)"

# 2. the config evaluator: Python's integers, or a refusal with its reason (a file given to
# predict: the line that cannot be evaluated is named, exit 2, never a default in its place)
printf 'gradient_accumulation_steps = (-1)**65 + 2\nblock_size = -7 // 2 + 260\n' >hostile_cfg.py
run_ok cfg "$VT" predict --json hostile_cfg.py
json_check cfg.out 'r["config"]["gradient_accumulation_steps"]["value"] == 1'
json_check cfg.out 'r["config"]["block_size"]["value"] == 256'
for line in "batch_size = 2**64 + 8|an integer beyond 64 bits" "n_layer = 10 // 0|division by zero" \
    "dropout = 1e999|a float that is not finite"; do
    printf 'block_size = 256\n%s\n' "${line%%|*}" >hostile_line.py
    timeout 60 "$VT" predict --json hostile_line.py >/dev/null 2>cfg.err
    [ $? = 2 ] || fail "predict: '${line%%|*}' not refused"
    grep -qF "hostile_line.py:2: '${line%%|*}' cannot be evaluated: ${line#*|}" cfg.err ||
        fail "predict: no reason for '${line%%|*}' in: $(cat cfg.err)"
done

# 3. a huge batch: from the trace, past any model's (2^24) it is not taken and the note says
# why; from the command line it is refused (exit 2); the largest taken ends quickly (the
# advice's walk is bounded)
run_ok huge "$VT" report --json "$D/hostile_huge_batch.vt"
json_check huge.out 'r["config"]["batch_size"]["value"] is None'
"$VT" report "$D/hostile_huge_batch.vt" 2>/dev/null |
    grep -q 'batch_size = 1099511627776 is out of range (must be a positive integer, at most 16777216) (not used)' ||
    fail "huge batch from the trace: no note that it is out of range"
"$VT" report --batch_size=1099511627776 "$D/dump_small.vt" >/dev/null 2>huge_flag.err
[ $? = 2 ] || fail "report --batch_size=1099511627776: not refused"
run_ok huge_most "$VT" report --json --batch_size=16777216 "$D/dump_small.vt"
json_check huge_most.out 'r["config"]["batch_size"]["value"] == 16777216 and len(r["advice"]) > 0' 

# 4. allocations near 2^63: not counted (with a warning), so the peak is the sum of its categories
run_ok big "$VT" report --json "$D/hostile_big_alloc.vt"
grep -q "allocations not counted" big.err || fail "big alloc: no warning"
json_check big.out 'r["peak"]["process_bytes"] < 2**62 and sum(r["categories"].values()) == r["peak"]["process_bytes"]'
# ... and watch applies the same rule: the peak is report's process peak, with the same warning
# (2^63 had been "peak 8388608.00 TiB", UBSan: a signed negation's overflow in growth_free)
python3 "$D/hostile.py" "$D/dump_small.vt" big63.vt bigalloc 0x8000000000000000
python3 "$D/hostile.py" "$D/dump_small.vt" big64.vt bigalloc 0xffffffffffff0000
for t in "$D/hostile_big_alloc.vt" big63.vt big64.vt; do
    run_ok watch "$VT" watch --once "$t"
    run_ok big_text "$VT" report --no-color "$t"
    want=$(sed -n 's/^  process (all device) *\([0-9.]* [KMGT]*i*B\) .*/\1/p' big_text.out)
    [ -n "$want" ] || fail "report $t: no process peak: $(grep process big_text.out)"
    grep -q " peak $want headroom " watch.out || fail "watch $t: peak not report's $want: $(cat watch.out)"
    grep -q "allocations not counted (they would make more than 4 EiB" watch.err ||
        fail "watch $t: no warning: $(cat watch.err)"
done

# 5. no PROCESS record: defaults, a report
run_ok noproc "$VT" report --json "$D/hostile_no_process.vt"
json_check noproc.out 'r["config"]["batch_size"]["source"] in ("default", "unknown")'

# 6. values the model cannot use are notes; the report is complete (text and JSON, exit 0)
run_ok bad "$VT" report --json "$D/hostile_bad_values.vt"
json_check bad.out '"advice" in r and "formula" in r'
for v in "fp8" "auto"; do
    json_check bad.out "any('$v' in w for w in r['config_warnings'])"
done
# n_embd 100 with nanoGPT's 12 heads assumed was a contradiction; not nanoGPT, heads are unknown
json_check bad.out 'r["config"]["n_head"]["source"] == "unknown" or any("n_embd = 100 is not divisible" in w for w in r["config_warnings"])'
json_check bad.out 'r["config"]["n_embd"]["value"] == 100'
run_ok bad_text "$VT" report --no-color "$D/hostile_bad_values.vt"

# 7. the analyzer never opens a file the trace names (/dev/zero, a FIFO): "not recorded"
run_ok devzero "$VT" report --json "$D/hostile_devzero.vt"
json_check devzero.out 'any("not recorded" in w for w in r["config_warnings"])'
mkfifo "$TESTDIR/cfg_fifo.py" || fail "mkfifo"
python3 "$D/hostile.py" "$D/dump_small.vt" fifo.vt argv --cwd "$TESTDIR" python3 train.py cfg_fifo.py
run_ok fifo "$VT" report --json fifo.vt
json_check fifo.out 'any("not recorded" in w for w in r["config_warnings"])'

# 8. dump's memory follows what the trace holds: stack id 0xFFFFFF once took 131 MB
python3 - "$VT" "$D/hostile_stack_ffffff.vt" <<'PYEOF' || fail "dump of hostile_stack_ffffff.vt"
import resource, subprocess, sys
p = subprocess.run([sys.argv[1], "dump", sys.argv[2]], stdout=subprocess.PIPE, timeout=60)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
assert p.returncode == 0, p.returncode
assert b'"stack_id":16777215' in p.stdout
assert kb < 32 * 1024, f"dump took {kb} KB"
print(f"dump of a stack id 0xFFFFFF: {kb} KB")
PYEOF
# refused FILE MESSAGE MAX_MIB WHAT CMD... (commands apart by ";"): each command exits 3 on FILE
# saying MESSAGE, all of them in less than MAX_MIB of memory
refused() {
    python3 - "$VT" "$@" <<'PYEOF'
import resource, subprocess, sys
vt, path, msg, max_mib, what = sys.argv[1:6]
cmds = [[]]
for a in sys.argv[6:]:
    if a == ";":
        cmds.append([])
    else:
        cmds[-1].append(a)
for cmd in cmds:
    p = subprocess.run([vt] + cmd + [path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=60)
    assert p.returncode == 3, (cmd, p.returncode)
    assert msg.encode() in p.stderr, (cmd, p.stderr)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
assert kb < int(max_mib) * 1024, f"took {kb} KB"
print(f"{what}: exit 3, {kb} KB")
PYEOF
}
# 9. ... and every analysis refuses it (stack ids are given in order: trace_format.h): per-stack
# tables sized by that id took 938 MB and 1 s for this 2,880-byte file (a fuzz_views timeout)
refused "$D/hostile_stack_ffffff.vt" "far past the stacks defined before it" 32 \
    "report / flame / export of a stack id 0xFFFFFF" \
    report --json ";" flame ";" export --perfetto x.json ||
    fail "report of hostile_stack_ffffff.vt"
# ... and a STEP record naming it (1.3's per-step summaries: growth.c's per-stack arrays sized
# by its ids; this 3 KB file had taken report 791 MB and 5.5 s)
python3 "$D/hostile.py" "$D/dump_small.vt" step_ffffff.vt stepid 0xffffff
refused step_ffffff.vt "step record: a stack id far past the stacks defined before it" 32 \
    "report / watch of a STEP naming stack 0xFFFFFF" report --json ";" watch --once ||
    fail "report of step_ffffff.vt"
# 10. a snapshot's zstd pieces that decompress to gigabytes (a 64 KiB chunked file whose 43
# pieces of 1.4 KiB each say 16 MiB: dump took 1.4 GB and over 30 s): malformed, at once
refused "$D/hostile_snapshot_bomb.vt" "decompresses to more than 64 times its size" 128 \
    "dump / report of a snapshot bomb" dump ";" report --json || fail "hostile_snapshot_bomb.vt"
# ... and definitions that do (HEAD and META chunks, kept for good in the tables: a 40 KB file of
# 64 zstd chunks each one 16 MiB code object had taken report over 1 GB, and a 390 KB one 5.8 GB
# before the memory ran out): malformed, past 64 MiB and 64 times their stored bytes, as the chunks'
# headers say before any is decompressed
refused "$D/hostile_defs_bomb.vt" "its definitions (1073741824 bytes) decompress to more than 64 times" 32 \
    "dump / report of a definitions bomb" dump ";" report --json || fail "hostile_defs_bomb.vt"
# 11. terminal escapes in what the traced program gave: its config file's name and a line of it
# (the simulation records both). The report shows them escaped, in the run line, the
# configuration table ("file  e\x1b[5mcfg.py:4") and its notes; predict quotes the line the same
# way (the table and the notes had passed ESC to the terminal until 2026-12-01)
if [ -f "$BUILD/examples/libsimtorch.so" ] && command -v python3 >/dev/null 2>&1; then
    E=$(printf '\033')
    cfg="e${E}[5mcfg.py"
    cp "$ROOT/examples/gpt/config/gpt2-124m-12gb.py" "$cfg" || fail "copy the config"
    printf "n_head = 12 if '%s[2J' else 0\n" "$E" >>"$cfg"
    timeout 120 "$VT" run --card 12GiB -o esc.vt -- python3 "$ROOT/examples/sim/sim_train.py" "$cfg" \
        --max_iters=1 --eval_iters=1 --compile=False >esc_run.out 2>&1
    [ -f esc.vt ] || { tail -n 5 esc_run.out; fail "the simulation wrote no trace"; }
    run_ok esc "$VT" report --no-color esc.vt
    grep -q "file  e.x1b\[5mcfg.py:4" esc.out || fail "esc: no escaped config file in the table"
    if grep -q "$E" esc.out; then
        grep -n "$E" esc.out | cat -v | head -n 3
        fail "esc: a terminal escape from the trace reached the report"
    fi
    timeout 60 "$VT" predict "$cfg" >/dev/null 2>esc_predict.err
    grep -q "$E" esc_predict.err && fail "predict: a terminal escape from the config file reached stderr"
fi

# 12. the emulated card's name is the trace's (CONFIG): escaped where the advice and predict --from
# name the card ("advice for NAME (emulated)", "card NAME (emulated)": the raw ESC had reached the
# terminal), valid UTF-8 in predict's JSON (its 0xff had made the document invalid)
python3 "$D/hostile.py" "$D/dump_small.vt" card.vt card
E=$(printf '\033')
run_ok card_report "$VT" report --no-color card.vt
grep -q '^advice for rtx.x1b\[5m<b>' card_report.out || fail "card: no escaped name in the advice"
run_ok card_predict "$VT" predict --from card.vt
grep -q '^card rtx.x1b\[5m<b>' card_predict.out || fail "card: no escaped name in predict's verdict"
for f in card_report.out card_predict.out; do
    ! grep -q "$E" $f || fail "card: a terminal escape from the trace reached $f: $(grep -a "$E" $f | cat -v)"
done
run_ok card_json "$VT" predict --json --from card.vt
python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' card_json.out ||
    fail "card: predict --json is not valid UTF-8 JSON"

# 13. terminal escapes in the program's own code names (CODE: every file name and qualname of the
# real H100 runs begins with one): what was trained ("a decoder transformer language model
# (\x1b]0;t\x07\x1b[5mGPT2LMHeadModel)"), its evidence, the features' frames, the formula's block
# that names the class, predict --from's model, watch: escaped, never raw (the recognition's rows
# and predict's model line had passed them to the terminal until 2026-12-06)
ncodes=0 named=0
for f in "$ROOT"/examples/traces/h100-torch2.11/*.vt "$ROOT"/examples/traces/h100-torch2.11-beyond/*.vt; do
    python3 "$D/hostile.py" "$f" codes.vt codes || fail "codes: $f"
    run_ok codes_report "$VT" report --no-color codes.vt
    run_ok codes_predict "$VT" predict --from codes.vt
    run_ok codes_watch "$VT" watch --once --plain codes.vt
    for o in codes_report.out codes_predict.out codes_watch.out; do
        if LC_ALL=C grep -q "$(printf '[\033\007]\|\302\233')" $o; then
            LC_ALL=C grep -a -m 2 "$(printf '[\033\007]')" $o | cat -v | cut -c1-200
            fail "codes: a terminal escape from $(basename "$f")'s code names reached $o"
        fi
    done
    grep -q '^what \(was trained\|ran\): .*(.x1b\]0;t.x07.x1b\[5m[A-Za-z]' codes_report.out && named=$((named + 1))
    ncodes=$((ncodes + 1))
done
[ $ncodes -ge 37 ] && [ $named -ge 20 ] || fail "codes: $ncodes traces, $named with an escaped model class"

# 10. thousands of module texts at the allocated peak (60,000 stacks over 24,000 code objects:
# ~5,100 modules, ~12,000 tensors): each text one row, found by its text (not one row per stack),
# the rows summing to the peak's batch categories
"$BUILD/tests/prog/vtgen" --events 120000 --live 60000 --stacks 60000 --codes 24000 --tensor \
    --python -o mods.vt >/dev/null || fail "vtgen --codes"
run_ok mods "$VT" report --json mods.vt
json_check mods.out 'len(r["activations_by_module"]["at_peak"]) > 4000'
json_check mods.out 'len({m["module"] for m in r["activations_by_module"]["at_peak"]}) == len(r["activations_by_module"]["at_peak"])'
json_check mods.out 'sum(m["bytes"] for m in r["activations_by_module"]["at_peak"]) == sum(r["activations_by_module"]["peak_categories"][k] for k in ("activations", "logits_loss", "attention"))'

# 11. a file name with terminal escapes (a shell pattern may match any name): every command's
# error names it escaped ("\x1b[2J..."), a directory and an empty file alike; it had reached the
# terminal raw from report, dump, flame, watch, diff and export
esc=$(printf '\033[2J')
mkdir -p "${esc}dir.vt" && : >"${esc}empty.vt"
for f in "${esc}dir.vt" "${esc}empty.vt"; do
    for c in report dump flame "watch --once" "export --html x.html"; do
        # shellcheck disable=SC2086
        "$VT" $c "$f" >/dev/null 2>name.err
        grep -q "$esc" name.err && fail "$c: the file name's escape reached the terminal: $(cat -v name.err)"
        grep -q '\\x1b\[2J' name.err || fail "$c: the file name not said: $(cat -v name.err)"
    done
    "$VT" diff "$f" "$f" >/dev/null 2>name.err
    grep -q "$esc" name.err && fail "diff: the file name's escape reached the terminal"
done
# 14. stacks of 65,535 Python frames on one code object whose qualname is 8 MiB (a 10 MB file):
# watch reads each code object's name once, as report does (it read the name again for every
# frame of every stack: 45 s a stack, over 120 s for these four)
# (and section 16's deepnative.vt: 16 stacks of native frames on one symbol whose name is 8 MiB,
# 4 of them 65,535 frames deep, the other 12 of 320)
python3 - deep.vt deepnative.vt <<'PYEOF' || fail "deep.vt not written"
import struct, sys
def rec(t, payload, flags=0):
    payload += b"\0" * (-len(payload) % 8)
    return struct.pack("<HHI", t, flags, 8 + len(payload)) + payload
def s(b):
    return struct.pack("<I", len(b)) + b
def head(stacks):  # the header, PROCESS, CONFIG (stacks: 3 Python, 1 native), DEVICE, THREAD
    out = b"VRAMTRC\n" + struct.pack("<HHIQQ", 1, 3, 32, 0, 0)
    out += rec(1, struct.pack("<IIIIQ", 1, 0, 1, 0, 0) + s(b"/bin/x") + s(b"/") + s(b"h") + s(b"x"))
    out += rec(2, struct.pack("<QIIII", 0, stacks, 64, 0, 0) + s(b""))
    out += rec(3, struct.pack("<IIIIQ", 0, 8, 0, 0, 16 << 30) + b"\0" * 16 + s(b"GPU"))
    return out + rec(4, struct.pack("<IIII", 0, 1, 1, 0) + s(b"main"))
def allocs(frames):  # a stack of each frame list, an allocation on each
    out = b""
    for sid, (native, python) in enumerate(frames, 1):
        out += rec(7, struct.pack("<IHH", sid, len(native), len(python)) +
                   b"".join(struct.pack("<Q", f) for f in native + python))
        out += rec(5, struct.pack("<QQQIHh", 1000 + sid, 0x7f0000000000 + (sid << 21), 1 << 21, sid, 0, 0), 1)
    return out + rec(14, struct.pack("<QQQQII", 100000, len(frames), 0, 0, 0, 0))
out = head(3) + rec(13, struct.pack("<IIII", 3, 11, 0, 1))             # PYINFO
out += rec(8, struct.pack("<II", 1, 1) + s(b"/x/train.py") + s(b"f" * (8 << 20)) + s(b""))
open(sys.argv[1], "wb").write(out + allocs([([], [1 << 32 | sid] * 65535) for sid in range(1, 5)]))
out = head(1) + rec(10, struct.pack("<IIQ", 1, 0, 0x400000) + s(b"/x/libx.so") + s(b""))  # MODULE
name = b"ns::f<" + b"a" * (8 << 20) + b">(int)"
out += rec(9, struct.pack("<QQII", 0x401000, 0x1000, 1, 0) + s(name))  # SYMBOL
stacks = [([0x401000] * (65535 if sid <= 4 else 320), []) for sid in range(1, 17)]
open(sys.argv[2], "wb").write(out + allocs(stacks))
PYEOF
run_ok deep_watch "$VT" watch --once --plain deep.vt
grep -q "peak 8.0 MiB" deep_watch.out || fail "deep: watch says $(cat deep_watch.out)"
run_ok deep_report "$VT" report deep.vt
# flame and the HTML page read no more of a name than what they show (each frame's name had been
# read whole into a 1 KiB buffer: flame 25 s, the page 20 s)
for c in flame "export --html deep.html"; do
    timeout 10 "$VT" $c deep.vt >deep_view.out 2>&1 || fail "deep: $c: exit $? (10 s)"
done
# the memory_viz export writes the 8 MiB name once and names it by its memo slot after (it had been
# written whole in each of the frames a stack shows: 10 GiB for these four stacks); a 20 MB
# limit on the file's size (ulimit -f) keeps a regression from filling the disk
(ulimit -f 40000 && exec "$VT" export --memory-viz deep.pickle deep.vt) >deep_export.out 2>&1 ||
    fail "deep: export --memory-viz: exit $?: $(tail -c 300 deep_export.out)"
python3 - deep.pickle <<'PYEOF' || fail "deep.pickle"
import os, pickle, sys
size = os.path.getsize(sys.argv[1])
assert size < (9 << 20), size  # the name once (8 MiB) and the rest
snap = pickle.load(open(sys.argv[1], "rb"))
frames = [f for seg in snap["segments"] for b in seg["blocks"] for f in b["frames"]]
named = [f for f in frames if f["name"] == "f" * (8 << 20)]
assert len(named) >= 4 * 128, (len(frames), len(named))
PYEOF

# 15. a window of 320,000 empty blocks (the 2.0 layout), each of another writer, or all of one: a
# block's writer moving on is one lookup (each block had scanned the window's blocks before it:
# 160,000 took 14 to 38 s, these 320,000 about four times that), now well under a second
python3 - blocks_many.vt blocks_one.vt <<'PYEOF' || fail "blocks_many.vt not written"
import struct, sys
def rec(t, payload):
    payload += b"\0" * (-len(payload) % 8)
    return struct.pack("<HHI", t, 0, 8 + len(payload)) + payload
for path, writer in ((sys.argv[1], lambda i: i), (sys.argv[2], lambda i: 7)):
    out = bytearray(b"VRAMTRC\n" + struct.pack("<HHIQQ", 2, 0, 32, 0, 0))
    for i in range(320000):
        out += struct.pack("<HHIII", 20, 0, 16, 1, writer(i))  # BLOCK: window 1, no records
    out += rec(14, struct.pack("<QQQQII", 1000, 0, 0, 0, 0, 0))
    open(path, "wb").write(out)
PYEOF
for f in blocks_many blocks_one; do
    timeout 10 "$VT" report --json $f.vt >$f.out 2>$f.err || fail "$f: exit $? (10 s)"
done

# 16. deepnative.vt (written in 14: 16 stacks of native frames on one 8 MiB symbol name): the
# operation that names a stack without Python frames is found reading each name of the stack
# once (each frame's name was read three times: report, predict --from, diff and every export ran
# for minutes); flame and the icicle copy no more of a name than they show (each of the 16 x 320
# frames shown had copied the whole name into a 1 KiB buffer)
for c in "report --json" flame "diff deepnative.vt" "export --html deepnative.html" report; do
    timeout 10 "$VT" $c deepnative.vt >deepnative.out 2>&1 || fail "deepnative: $c: exit $? (10 s)"
done
grep -q "16 x  ns::f<aaa" deepnative.out || fail "deepnative: the report does not name the operation"

echo "report_hostile: ok"
