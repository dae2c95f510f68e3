#!/bin/sh
# advice_code_change.sh — JSON's advice[].command_line is what docs/json-report-advice.md says: the
# arguments to give the program (flags and their values, or an environment setting NAME=VALUE),
# nothing else; a change to make in the program's code is advice[].code_change. Until
# 2026-12-07 command_line held the text report's whole "change:" line: "(code change:
# bitsandbytes.optim.AdamW8bit for torch.optim.AdamW)", "TrainingArguments(optim=...)", "--batch-size
# 32 (code change besides: gradients accumulated over 2 micro-batches ...)" (154 of the committed
# traces' items), which a program that reruns with it would pass as arguments. On every committed
# trace: command_line is arguments alone; code_change is the change's words alone; the text
# report says both on the item's "change:" line; the traces' items with a code change are found.
set -u
fail() { echo "advice_code_change: $*"; exit 1; }
n=0
for t in $(find "$ROOT/examples/traces" -name '*.vt' | sort); do
    n=$((n + 1))
    "$VT" report --json "$t" >$n.json 2>/dev/null || fail "report --json $t"
    "$VT" report --no-color "$t" >$n.txt 2>/dev/null || fail "report $t"
    echo "$t" >$n.name
done
[ "$n" -ge 142 ] || fail "only $n traces"
python3 - "$n" <<'PYEOF' || fail "see above"
import json, re, sys
bad, code, calls, joined = [], 0, 0, 0
for i in range(1, int(sys.argv[1]) + 1):
    name = open("%d.name" % i).read().strip()
    d = json.load(open("%d.json" % i))
    lines = [l.strip()[len("change: "):] for l in open("%d.txt" % i, encoding="utf-8")
             if l.strip().startswith("change: ")]
    for a in d.get("advice") or []:
        cl, cc = a["command_line"], a["code_change"]
        toks = cl.split()
        for k, w in enumerate(toks):
            flag = w.startswith("-")
            value = k > 0 and toks[k - 1].startswith("-") and "=" not in toks[k - 1]
            env = k == 0 and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S+", w)
            if not (flag or value or env) or "(" in w or ")" in w:
                bad.append("%s: command_line %r: %r is no argument" % (name, cl, w))
                break
        if cc.startswith("(") or cc.endswith(")") and cc.count("(") < cc.count(")") or \
           cc.lower().startswith(("code change", "besides")):
            bad.append("%s: code_change %r keeps the text's wrapping" % (name, cc))
        if cl or cc:
            if not any(cl in l and cc in l for l in lines):
                bad.append("%s: no change line with %r and %r" % (name, cl, cc))
        code += cc != ""
        calls += cc != "" and re.match(r"[A-Za-z_]\w*\(", cc) is not None
        joined += cc != "" and cl != ""
if code < 50 or not calls or not joined:
    bad.append("code changes found %d, calls %d, with flags %d: fewer than the traces hold"
               % (code, calls, joined))
for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PYEOF
echo "advice_code_change: every command_line arguments alone over $n traces"
