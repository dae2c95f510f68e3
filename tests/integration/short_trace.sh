#!/bin/sh
# short_trace.sh — a trace cut before PyTorch's first allocation (the first 1000 bytes of a real
# one) is told it is cut and too short to diagnose or advise, by every command that reads it:
# report and export warn on stderr, the HTML page says so in place of a summary and advice (no
# "run with --tensors", no what-if of a run that never allocated), predict --from refuses it.
set -u
fail() { echo "short_trace: $*"; exit 1; }
head -c 1000 "$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt" >cut.vt
"$VT" report cut.vt >report.txt 2>err.txt || fail "report: exit $?"
grep -q 'cut.vt holds no allocation of PyTorch.s (0 events, cut before the first one): too short to diagnose or advise' err.txt ||
    fail "report does not say the trace is too short: $(cat err.txt)"
# the text report neither advises nor claims a feature off, nor says --tensors
grep -q '^advice: none (the trace holds no allocation' report.txt || fail "report advises: $(cat report.txt)"
grep -q -- '--tensors\|predicted peak\|largest micro-batch' report.txt && fail "report advises a cut trace"
grep -q 'checkpointing *off' report.txt && fail "report says checkpointing off for a cut trace"
"$VT" report --json cut.vt 2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r["no_allocation"] and r["advice"] == [] else 1)' ||
    fail "report --json advises a cut trace"
"$VT" export --html cut.html cut.vt >/dev/null 2>err.txt || fail "export: exit $?"
grep -q 'too short to diagnose or advise' err.txt || fail "export does not warn: $(cat err.txt)"
grep -q '<p id=too-short class=warn>The trace is cut (' cut.html || fail "the page does not say the trace is cut"
grep -q -- '--tensors' cut.html && fail "the page advises --tensors for a cut trace"
grep -qE 'id=(advice|summary|formula|oom)>' cut.html && fail "the page diagnoses a cut trace"
grep -q '<section id=config>' cut.html || fail "the page lost the command line's configuration"
msg=$("$VT" predict --from cut.vt 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] || fail "predict --from cut.vt: exit $rc, want 2"
printf '%s\n' "$msg" | grep -q 'no allocation of PyTorch.s in it (0 events, cut before the first one): too short to calibrate with' ||
    fail "predict --from: $msg"
echo ok
