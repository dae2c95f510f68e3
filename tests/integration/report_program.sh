#!/bin/sh
# report_program.sh — the report reads the traced command line by program kind: the real H100
# trace of examples/hf/hf_train.py (`--model gpt2 --batch-size 4`) is an argparse script,
# batch 4 from --batch-size, no value read as a config file and no nanoGPT default presented
# as its setting; a nanoGPT trace keeps its nanoGPT reading. Over every committed trace: the
# configuration table's rows are named with nanoGPT's keys for nanoGPT alone (docs/report.md).
set -u
T="$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt"
"$VT" report "$T" >hf.txt 2>&1 || { echo "report on hf_gpt2_eager_b4 failed"; exit 1; }
grep -q '^configuration (an argparse script)' hf.txt || { echo "program kind not argparse"; exit 1; }
grep -Eq '^  micro-batch B \(--batch-size\) +4 +argument +--batch-size 4' hf.txt || { echo "batch 4 not from --batch-size"; exit 1; }
if grep -Eq 'note:.*(/4\b|/gpt2|config file)' hf.txt; then echo "a flag value was read as a config file"; exit 1; fi
if grep -q 'default (nanoGPT train.py)' hf.txt; then echo "nanoGPT default shown as the setting"; exit 1; fi
"$VT" report "$T" --json >hf.json 2>/dev/null || exit 1
python3 -c 'import json,sys; d=json.load(open("hf.json")); assert d["config_program"]=="an argparse script", d.get("config_program"); assert d["config"]["batch_size"]["value"]==4' || exit 1
N="$ROOT/examples/traces/b_oom_12gib.vt"
"$VT" report "$N" >nano.txt 2>&1 || { echo "report on a nanoGPT trace failed"; exit 1; }
grep -q '^configuration (nanoGPT)' nano.txt || { echo "nanoGPT trace not read as nanoGPT"; exit 1; }
# every committed trace (nanoGPT, Hugging Face / argparse / Lightning scripts, Trainer calls,
# simulated families): the configuration table names its rows as the program does: nanoGPT's
# config keys for nanoGPT (its settings, batch_size=8); for any other program the words of
# JSON's label, the program's own flag beside them where JSON config gives one (a keyword of
# its call with "="), never a nanoGPT key; the values in one column; the HTML page's rows alike
python3 - "$ROOT/examples/traces" "$VT" <<'PY' || exit 1
import glob, html, json, re, subprocess, sys
D, VT = sys.argv[1], sys.argv[2]
LABEL = {"batch_size": "micro-batch B", "block_size": "tokens per sample T",
         "gradient_accumulation_steps": "accumulation steps A", "n_layer": "layers L",
         "n_head": "attention heads H", "n_embd": "width d", "vocab_size": "vocabulary V",
         "dropout": "dropout", "bias": "bias", "dtype": "dtype", "compile": "torch.compile"}
run = lambda *a: subprocess.run([VT] + list(a), capture_output=True, check=True).stdout.decode()
n = {"nano": 0, "flag": 0, "call": 0, "words": 0}
for t in sorted(glob.glob(D + "/**/*.vt", recursive=True)):
    j = json.loads(run("report", "--json", t))
    text, page = run("report", "--no-color", t), run("report", "--html", "-", t)
    cfg, nano = j["config"], j["config_program"] == "nanoGPT"
    assert list(cfg) == list(LABEL), (t, list(cfg))
    for k in LABEL:
        assert cfg[k]["label"] == LABEL[k], (t, k, cfg[k])

    def name(k):  # the row's name as a pattern
        c = cfg[k]
        if nano:
            return re.escape(k)
        if "flag" in c:
            return re.escape("%s (%s%s)" % (LABEL[k], c["flag"], "=" if c["flag_sep"] == "(" else ""))
        # (an unknown value's flag, a script's default=None, is not in JSON)
        return re.escape(LABEL[k]) + (r"( \(\S+\))?" if c["source"] == "unknown" else "")
    lines = text.split("\n")
    i = next(i for i, l in enumerate(lines) if l.startswith("configuration ("))
    rows = []
    for l in lines[i + 1:]:
        if not l.startswith("  ") or l.startswith(("  note:", "  recorded:")):
            break
        rows.append(l)
    cols, r = set(), 0
    for k in LABEL:
        m = r < len(rows) and re.match("  (%s) +(?P<v>\\S+)" % name(k), rows[r])
        if not m:
            continue  # (not shown: a transformer's key of another model)
        v = cfg[k]["value"]
        want = "unknown" if v is None else str(v)  # (True / False as Python writes them)
        assert m.group("v") == want or isinstance(cfg[k]["value"], float), (t, rows[r], want)
        cols.add(m.start("v"))
        got = re.search(r'<tr data-key="%s"><td><code>(.*?)</code>' % k, page)
        assert got and re.fullmatch(name(k), html.unescape(got.group(1))), (t, k, got and got.group(1))
        if not nano:
            n["call" if cfg[k].get("flag_sep") == "(" else "flag" if "flag" in cfg[k] else "words"] += 1
        r += 1
    assert r == len(rows) and r >= 3, (t, "rows not named as the program names them", rows[r:] or rows)
    assert len(cols) == 1, (t, "the values are not in one column", rows)
    n["nano"] += nano
print("  configuration tables: %(nano)d nanoGPT runs; other programs' rows: %(flag)d with a flag, "
      "%(call)d with a call's keyword, %(words)d in words alone" % n)
assert n["nano"] >= 8 and n["flag"] >= 150 and n["call"] >= 4 and n["words"] >= 300, n
PY
exit 0
