#!/bin/sh
# json_keys_doc.sh — docs/json*.md list every JSON key vramtrace writes: `report --json` on
# every committed trace (examples/traces, tests/data; a file report refuses, exit 2 or 3, is
# skipped) and on two ranks together (README's report `--json` fields list must name each
# top-level key), `predict --json` on four configurations and `--from`
# three traces, `dump` on three traces, `diff --json` on two pairs; where `make progs fake` has
# built them, also a bounded trace of tests/prog/long_prog (report and dump: `bounded`,
# `snapshot`, `step`) and `fit --json` over tests/prog/rt_cases. Every key path seen (arrays as
# `[]`, dump's paths led by the line's `type`) must be documented in the command's page, as
# docs/json.md says a key is written there: a list item "- `PATH` ...", `<name>` for a key that
# is data (its values listed as items "- `<name>` = `VALUE`: ..."), "same keys as `OTHER`" for
# an object that repeats another's keys. Fails listing every path the pages lack, so a key
# added to the tool, or removed from the pages, is caught.
set -u
fail() { echo "json_keys_doc: $*"; exit 1; }
D="$ROOT/docs"
for f in json json-report json-report-advice json-predict json-dump json-diff json-fit; do
    [ -f "$D/$f.md" ] || fail "docs/$f.md is missing"
done
mkdir -p out/report out/predict out/dump out/diff out/fit

# report --json: every committed trace
n=0 refused=0
for f in $(find "$ROOT/examples/traces" "$ROOT/tests/data" -name '*.vt' | sort); do
    n=$((n + 1))
    o="out/report/$(printf '%s' "${f#"$ROOT"/}" | tr / _).json" # (named so a failure names it)
    "$VT" report --json "$f" >"$o" 2>err.txt
    rc=$?
    case $rc in
    0) ;;
    2 | 3) rm -f "$o"; refused=$((refused + 1)) ;;
    *) cat err.txt; fail "report --json $f: exit $rc" ;;
    esac
done
[ "$n" -ge 100 ] || fail "only $n committed traces found (the find is broken?)"
"$VT" report --json "$ROOT/tests/data/report_rank0.vt" "$ROOT/tests/data/report_rank1.vt" \
    >out/report/ranks.json 2>/dev/null || fail "report --json on two ranks"

# predict --json: the formula's configurations, and --from traces
T="$ROOT/examples/traces"
p=0
pred() {
    p=$((p + 1))
    "$VT" predict "$@" --json >"out/predict/$p.json" 2>err.txt || { cat err.txt; fail "predict $* --json"; }
}
pred
pred --model gpt2 --batch-size 8 --card rtx4070
pred --mlp-width 5632 --n-layer 22 --n-head 32 --n-embd 2048 --vocab-size 32000 --kv-heads 4 \
    --lora-rank 8 --optimizer adafactor --checkpointing --card 24GiB
pred "$ROOT/tests/data/hf/bert_base.json" --batch-size 16 --block-size 512 --card 12GiB
pred --from "$T/sim/gpt2_b4_fit.vt" --batch-size 8
pred --from "$T/h100-torch2.11/b_oom_12gib.vt"
pred --from "$T/sim/gpt2_evalb16_b4_fit.vt"

# dump: a small synthetic trace (every basic record type), one cut by a full disk (the
# trailer's "ended"), a simulated run with recorded files
for f in "$ROOT/tests/data/dump_small.vt" "$ROOT/tests/data/disk_full.vt" \
    "$T/sim/gan_b2560_oom_forward.vt"; do
    o="out/dump/$(basename "$f" .vt).jsonl"
    "$VT" dump "$f" >"$o" 2>/dev/null # (exit 3 for a malformed tail: its lines are written)
    [ -s "$o" ] || fail "dump $f wrote nothing"
done

# diff --json: a run that ran out of memory against one that did not, both ways
R0="$ROOT/tests/data/report_rank0.vt" R1="$ROOT/tests/data/report_rank1.vt"
"$VT" diff --json "$R0" "$R1" >out/diff/1.json 2>/dev/null || fail "diff --json"
"$VT" diff --json --top 1 "$R1" "$R0" >out/diff/2.json 2>/dev/null || fail "diff --json (B, A)"

# the built test programs, when there: a bounded trace, and fit
extra=""
C10="$FAKE/c10/cda/libc10_cuda.so" LP="$BUILD/tests/prog/long_prog" RT="$BUILD/tests/prog/rt_cases"
if [ -x "$LP" ] && [ -f "$C10" ]; then
    # 3M events under 8 MiB: the window rolls, so the trace holds a snapshot and step records
    LD_LIBRARY_PATH="$FAKE" FAKECUDA_NO_REUSE=1 "$VT" run -q --card 2GiB --max-size 8MiB \
        -o bounded.vt -- "$LP" "$C10" 3000000 50 4294967296 0 >/dev/null 2>&1
    [ -s bounded.vt ] || fail "run --max-size: no trace"
    "$VT" report --json bounded.vt >out/report/bounded.json 2>/dev/null || fail "report --json bounded.vt"
    "$VT" dump --no-resolve bounded.vt >out/dump/bounded.jsonl 2>/dev/null || fail "dump bounded.vt"
    extra="$extra bounded"
fi
if [ -x "$RT" ]; then
    for a in "" "{A=2}"; do
        rm -rf fitdir
        # shellcheck disable=SC2086
        LD_LIBRARY_PATH="$FAKE" "$VT" fit --json --card 1GiB --max-b 2 --dir fitdir -- \
            sh -c "exec $RT threads 1 10" x '{B=1}' $a >"out/fit/fit${a:+_a}.json" 2>err.txt ||
            { cat err.txt; fail "fit --json (${a:-no A})"; }
    done
    extra="$extra fit"
fi

python3 - "$D" "$refused" "$extra" <<'PYEOF' || exit 1
import glob, json, os, re, sys

docs, refused, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
PAGES = {"report": ["json-report.md", "json-report-advice.md"], "predict": ["json-predict.md"],
         "dump": ["json-dump.md"], "diff": ["json-diff.md"], "fit": ["json-fit.md"]}
problems = []

def items(path):
    """The list items of a page: '- `...`' and its indented continuation lines, joined."""
    out, cur = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("- `"):
            cur = [line]
            out.append(cur)
        elif cur is not None and line.startswith("  ") and line.strip():
            cur.append(line.strip())
        else:
            cur = None
    return [" ".join(c) for c in out]

# <name> = `value` items, from every page (docs/json.md holds the shared ones)
values = {}
for page in sorted(glob.glob(os.path.join(docs, "json*.md"))):
    for it in items(page):
        m = re.match(r"- `<(\w+)>` = `([^`]+)`(.*)", it)
        if m:
            values.setdefault(m.group(1), set()).add(m.group(2))
            if len(m.group(3).split()) < 2:
                problems.append("%s: <%s> = %s says nothing of it" % (os.path.basename(page), m.group(1), m.group(2)))

def documented(cmd):
    paths, alias = {}, []
    for name in PAGES[cmd]:
        for it in items(os.path.join(docs, name)):
            m = re.match(r"- `([^`]+)`(.*)", it)
            if not m or re.match(r"<\w+>$", m.group(1)):
                continue
            path, rest = m.group(1), m.group(2)
            if " " in path:
                problems.append("%s: `%s` is no path" % (name, path))
                continue
            if path in paths:
                problems.append("%s: %s documented twice" % (name, path))
            paths[path] = name
            if len(re.sub(r"\([^)]*\)", "", rest).split()) < 3:
                problems.append("%s: %s: no type and meaning" % (name, path))
            for ph in re.findall(r"<(\w+)>", path):
                if ph not in values:
                    problems.append("%s: %s uses <%s>, whose values no page lists" % (name, path, ph))
            a = re.search(r"same keys as `([^`]+)`", rest)
            if a:
                alias.append((path, a.group(1), name))
    for path, other, name in alias:
        kids = [p for p in paths if p.startswith(other + ".") or p.startswith(other + "[")]
        if not kids:
            problems.append("%s: %s: same keys as %s, which has none documented" % (name, path, other))
        for p in kids:
            paths.setdefault(path + p[len(other):], name)
    return paths

def segs(path):
    return path.split(".")

def matches(doc, seen):
    if len(doc) != len(seen):
        return False
    for d, s in zip(doc, seen):
        if d == s:
            continue
        m = re.match(r"<(\w+)>((?:\[\])*)$", d)
        if not m or not s.endswith(m.group(2)):
            return False
        key = s[: len(s) - len(m.group(2))] if m.group(2) else s
        if key not in values.get(m.group(1), ()):
            return False
    return True

def walk(v, prefix, out, where):
    if isinstance(v, dict):
        for k, x in v.items():
            p = prefix + "." + k if prefix else k
            out.setdefault(p, where)
            walk(x, p, out, where)
    elif isinstance(v, list):
        for x in v:
            walk(x, prefix + "[]", out, where)

seen = {c: {} for c in PAGES}
files = {c: sorted(glob.glob("out/%s/*" % c)) for c in PAGES}
for c in ("report", "predict", "diff", "fit"):
    for f in files[c]:
        walk(json.load(open(f, encoding="utf-8")), "", seen[c], f)
for f in files["dump"]:
    events = {}
    with open(f, encoding="utf-8") as fh:
        for line in fh:
            # a bounded trace has ~10^6 event lines of fixed keys: read the first ones, and
            # every one that carries the optional "aux"
            if line.startswith('{"type":"alloc"') or line.startswith('{"type":"free"'):
                t = line[9:14]
                events[t] = events.get(t, 0) + 1
                if events[t] > 2000 and '"aux"' not in line:
                    continue
            rec = json.loads(line)
            t = rec.get("type")
            seen["dump"].setdefault("type", f)
            walk({k: v for k, v in rec.items() if k != "type"}, str(t), seen["dump"], f)

# README's report section lists the top-level keys of `report --json` ("`--json` fields: ...
# what each holds is in"): every one printed must be in that list
readme = open(os.path.join(docs, "..", "README.md"), encoding="utf-8").read()
m = re.search(r"`--json` fields: (.*?)what each holds is in", readme, re.S)
if not m:
    problems.append("README.md: the report section's `--json` fields list is not found")
else:
    listed = set(re.findall(r"`(\w+)`", m.group(1)))
    for k in sorted({p.split(".")[0].split("[")[0] for p in seen["report"]}):
        if k not in listed:
            problems.append("README.md: report --json key %s is not in its `--json` fields list" % k)

missing, counts = [], []
for c in PAGES:
    if not files[c] and c != "fit":  # (fit: only where tests/prog is built)
        problems.append("no %s output was made" % c)
    doc = documented(c)
    dsegs = [segs(p) for p in doc]
    for p in sorted(seen[c]):
        s = segs(p)
        if not any(matches(d, s) for d in dsegs):
            missing.append("%s: %s (in %s; document it in docs/%s)" % (c, p, seen[c][p], PAGES[c][0]))
    counts.append("%s %d paths seen, %d documented" % (c, len(seen[c]), len(doc)))
for p in problems:
    print("json_keys_doc: " + p)
for m in missing:
    print("json_keys_doc: not documented: " + m)
if problems or missing:
    print("json_keys_doc: %d undocumented paths, %d problems in the pages" % (len(missing), len(problems)))
    sys.exit(1)
print("json_keys_doc: ok: %s (%d traces report refused; built programs used: %s)"
      % ("; ".join(counts), refused, " ".join(extra) or "none"))
PYEOF
