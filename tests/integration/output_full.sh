#!/bin/sh
# output_full.sh — output that never reached standard output is an error: every command that
# prints its result there, into a full disk (/dev/full), says "vramtrace CMD: cannot write the
# output: No space left on device" and exits 2; the same commands into /dev/null exit as before
# (0, or 1 for --fail-if-oom's finding). Until 2026-12-01 report, report --json, dump, watch
# --once and predict --from ended 0 having written nothing (flame, diff and export said it).
set -u
fail() { echo "output_full: $*"; exit 1; }
[ -w /dev/full ] || { echo "no writable /dev/full"; exit 77; }
T="$ROOT/examples/traces/b_recommended_12gib.vt" OOM="$ROOT/examples/traces/b_oom_12gib.vt"
n=0
while IFS='|' read -r name args; do
    # shellcheck disable=SC2086
    "$VT" $args >/dev/null 2>ok.err || fail "$name into /dev/null: exit $?: $(tail -n 2 ok.err)"
    # shellcheck disable=SC2086
    "$VT" $args >/dev/full 2>full.err
    rc=$?
    [ $rc = 2 ] || fail "$name into /dev/full: exit $rc, want 2 ($(tail -n 2 full.err))"
    grep -q "^vramtrace $name: cannot write .*: No space left on device$" full.err ||
        fail "$name into /dev/full: no reason: $(cat full.err)"
    n=$((n + 1))
done <<EOF
report|report $T
report|report --json $T
dump|dump $T
watch|watch --once $T
predict|predict --from $T
predict|predict --json --from $T
flame|flame $T
diff|diff $T $T
export|export --perfetto - $T
EOF
[ $n = 9 ] || fail "only $n commands checked"
# the top level's own output alike: --help, --version, help, version (they ended 0 into a full
# disk); `help report` is report's help, not the top level's
for a in --help --version help version "help report"; do
    # shellcheck disable=SC2086
    "$VT" $a >/dev/full 2>full.err
    [ $? = 2 ] && grep -q "cannot write the output: No space left on device$" full.err ||
        fail "vramtrace $a into /dev/full: $(cat full.err)"
done
"$VT" help report >h1.txt && "$VT" report --help >h2.txt && cmp -s h1.txt h2.txt ||
    fail "vramtrace help report is not report's help: $(head -n 1 h1.txt)"
# a finding stays a finding where the output was written
"$VT" report --fail-if-oom "$OOM" >/dev/null 2>&1
[ $? = 1 ] || fail "report --fail-if-oom: not exit 1"
"$VT" report --fail-if-oom "$OOM" >/dev/full 2>/dev/null
[ $? = 2 ] || fail "report --fail-if-oom into /dev/full: not exit 2"
echo ok
