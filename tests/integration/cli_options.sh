#!/bin/sh
# cli_options.sh — one option parser (analyzer/cmd/cli.c) for every command: -h and --help
# print the usage on stdout and exit 0 everywhere; an unknown option or a missing value is
# exit 2 with "vramtrace CMD: ..." naming it; report keeps --KEY=VALUE overrides; run stops
# at the command (its own options are not taken as vramtrace's).
set -u
fail() { echo "cli_options: $*"; exit 1; }
T="$ROOT/examples/traces/b_oom_12gib.vt"
for cmd in "" report dump run predict flame diff export watch fit; do
    for h in -h --help; do
        "$VT" $cmd $h >out.txt 2>err.txt || fail "'$cmd $h': exit $?"
        grep -q "^usage: vramtrace $cmd" out.txt || fail "'$cmd $h': no usage on stdout"
        [ -s err.txt ] && fail "'$cmd $h': wrote to stderr: $(cat err.txt)"
    done
done
"$VT" dump -h | grep -q '^usage: vramtrace dump .*-h' || fail "dump's usage line omits -h"
"$VT" --version | grep -q '^vramtrace [0-9]' || fail "--version"
for cmd in "" report dump run diff flame export watch fit; do
    "$VT" $cmd --no-such-option x y >out.txt 2>err.txt
    rc=$?
    [ $rc = 2 ] || fail "'$cmd --no-such-option': exit $rc, expected 2"
    grep -q "^vramtrace${cmd:+ $cmd}: unknown option --no-such-option" err.txt ||
        fail "'$cmd --no-such-option': $(cat err.txt)"
done
for cmd in report diff; do
    "$VT" $cmd --top >out.txt 2>err.txt
    [ $? = 2 ] || fail "$cmd --top without a value: not exit 2"
    grep -q "^vramtrace $cmd: --top needs a value" err.txt || fail "$cmd --top: $(cat err.txt)"
done
"$VT" run -o >out.txt 2>err.txt
grep -q '^vramtrace run: -o needs a value' err.txt || fail "run -o: $(cat err.txt)"
"$VT" report -x "$T" >out.txt 2>err.txt
grep -q '^vramtrace report: unknown option -x' err.txt || fail "report -x: $(cat err.txt)"
# options after the file, an override, --opt=value spelling
"$VT" report "$T" --top=1 --no-color --batch_size=8 >out.txt 2>err.txt ||
    fail "report FILE --top=1 --batch_size=8: $(cat err.txt)"
grep -q 'batch_size  *8 ' out.txt || fail "the --batch_size=8 override is not in the report"
# a value past any model's (config.h's bounds) is refused, not predicted from
"$VT" report --batch-size 99999999999 "$T" >out.txt 2>err.txt
[ $? = 2 ] || fail "report --batch-size 99999999999: expected exit 2"
grep -q 'batch_size = 99999999999 is out of range.*at most 16777216' err.txt ||
    fail "report --batch-size 99999999999: $(cat err.txt)"
"$VT" report --json=1 "$T" >out.txt 2>err.txt
[ $? = 2 ] || fail "report --json=1: expected exit 2"
# either spelling of an option, '_' for '-', and "--KEY VALUE" as "--KEY=VALUE" (report had said
# "unknown option --block_size" and "unknown key 'grad_accum'", which predict takes)
for a in "--block_size 512" "--block_size=512"; do
    # shellcheck disable=SC2086
    "$VT" report --json "$T" $a >out.json 2>err.txt || fail "report $a: $(cat err.txt)"
    python3 -c "import json,sys; v = json.load(open('out.json'))['config']['block_size']; sys.exit(v['value'] != 512 or v['source'] != 'flag')" ||
        fail "report $a: block_size not 512 from the flag"
done
"$VT" report --json "$T" --grad_accum=4 --no_color >out.json 2>err.txt || fail "report --grad_accum=4: $(cat err.txt)"
python3 -c "import json,sys; sys.exit(json.load(open('out.json'))['config']['gradient_accumulation_steps']['value'] != 4)" ||
    fail "report --grad_accum=4: A not 4"
# a key with no value before the trace: its value is missing, not the trace
"$VT" report --compile "$T" >out.txt 2>err.txt
[ $? = 2 ] && grep -q "^vramtrace report: --compile needs a value, not the file $T" err.txt ||
    fail "report --compile TRACE: $(cat err.txt)"
# a flag given a value: "takes no value", in predict's words as in every command's
for a in --checkpointing=0 --json=1 --no-bias=1; do
    "$VT" predict $a >out.txt 2>err.txt
    [ $? = 2 ] && grep -q "^vramtrace predict: ${a%%=*} takes no value (see vramtrace predict --help)" err.txt ||
        fail "predict $a: $(cat err.txt)"
done
# run: options end at the command; the command's own -h / --help are its own
"$VT" run -q -- sh -c 'exit 7' >out.txt 2>&1
[ $? = 7 ] || fail "run -- sh -c 'exit 7': not the command's status"
"$VT" run -q sh -c 'echo "$0 $1"' --help x >out.txt 2>&1 || fail "run sh ... --help: $(cat out.txt)"
grep -q -- '--help x' out.txt || fail "run took the command's --help: $(cat out.txt)"
exit 0
