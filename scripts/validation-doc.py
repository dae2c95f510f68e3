#!/usr/bin/env python3
"""validation-doc.py — docs/validation.md's tables from the real H100 traces.

Reads examples/traces/h100-torch2.11/facts.jsonl (what each run's PyTorch said at its end) and
runs `vramtrace report --json` and `vramtrace dump` on each committed trace, then rewrites the
part of docs/validation.md between the `<!-- tables:begin -->` and `<!-- tables:end -->` lines;
and from examples/traces/h100-torch2.11-beyond/ (programs this project did not write, each a fit
and an out-of-memory run of one workload) the part between `<!-- beyond:begin -->` and
`<!-- beyond:end -->`: each OOM run's what-if at the micro-batch its sibling fit, against that
run's measured peak, and each fit run's largest micro-batch.
No GPU needed. `--check`: write nothing, exit 1 when the committed tables differ (make test).

usage: scripts/validation-doc.py [--check] [--vt build/vramtrace] [--doc docs/validation.md]
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = os.path.join(ROOT, "examples", "traces", "h100-torch2.11")
BEGIN, END = "<!-- tables:begin -->", "<!-- tables:end -->"
BEYOND = os.path.join(ROOT, "examples", "traces", "h100-torch2.11-beyond")
BEGIN2, END2 = "<!-- beyond:begin -->", "<!-- beyond:end -->"


def mib(b):
    return "—" if b is None else f"{b / 2**20:,.1f}"


def delta(vt, torch):
    """The difference as bytes when exact or small, else as a percentage."""
    if vt is None or torch is None:
        return "—"
    d = vt - torch
    return "0 B" if d == 0 else f"{d:+,} B ({100.0 * d / torch:+.3f} %)"


def program(cmd):
    """The program and its arguments from facts' command line, without the machine's paths."""
    cmd = cmd.lstrip("$ ").split("  (")[0]
    cmd = re.sub(r"/\S*/examples/", "examples/", cmd)
    return cmd.replace("examples/gpt/config/", "")


def settings(cmd):
    m = re.search(r"\(PYTORCH_CUDA_ALLOC_CONF=([^,]*), vramtrace run ?([^)]*)\)", cmd)
    return (m.group(1), m.group(2)) if m else ("?", "?")


def segments(vt, path):
    """Successful cudaMalloc / cuMemCreate calls in the trace (PyTorch's num_device_alloc)."""
    out = subprocess.run([vt, "dump", path], check=True, capture_output=True, text=True).stdout
    n = 0
    for line in out.splitlines():
        if ('"api":"cudaMalloc"' in line or '"api":"cuMemCreate"' in line) and '"failed":false' in line:
            n += 1
    return n


def rows(vt):
    facts = [json.loads(line) for line in open(os.path.join(TRACES, "facts.jsonl")) if line.strip()]
    for f in facts:
        path = os.path.join(TRACES, f["trace"])
        rep = json.loads(subprocess.run([vt, "report", "--json", path], check=True,
                                        capture_output=True, text=True).stdout)
        yield f, rep, segments(vt, path)


def tables(vt):
    out = []
    capture = ["| trace | program and arguments | card | outcome | segments vt / torch "
               "| reserved peak MiB vt / torch (Δ) | requested peak MiB vt / torch (Δ) "
               "| allocated (blocks) peak MiB vt / torch (Δ) |",
               "|---|---|---|---|---|---|---|---|"]
    exact = {"segments": 0, "reserved": 0, "requested": 0, "blocks": 0, "oom": 0}
    n = 0
    for f, rep, seg in rows(vt):
        n += 1
        peak = rep["peak"]
        conf, runargs = settings(f["command"])
        card = runargs.replace("--card ", "") or "none (80 GB)"
        outcome = "OOM" if f["oom"] else f"fit, {f['iters']} steps"
        exact["oom"] += (rep.get("oom") is not None) == bool(f["oom"])
        res, req, blk = peak["reserved_bytes"], peak.get("allocated_bytes"), peak.get("allocated_blocks_bytes")
        exact["segments"] += seg == f["num_device_alloc"]
        exact["reserved"] += res == f["max_memory_reserved"]
        exact["requested"] += req == f["requested_bytes_peak"]
        exact["blocks"] += blk == f["max_memory_allocated"]
        capture.append(
            f"| {f['trace'][:-3]} | `{program(f['command'])}`{'' if conf == '' else ' (' + conf + ')'} "
            f"| {card} | {outcome} | {seg} / {f['num_device_alloc']} "
            f"| {mib(res)} / {mib(f['max_memory_reserved'])} ({delta(res, f['max_memory_reserved'])}) "
            f"| {mib(req)} / {mib(f['requested_bytes_peak'])} ({delta(req, f['requested_bytes_peak'])}) "
            f"| {mib(blk)} / {mib(f['max_memory_allocated'])} ({delta(blk, f['max_memory_allocated'])}) |")
    out.append(f"Exact to the byte (or the count) in {n} runs: segments {exact['segments']}, "
               f"reserved peak {exact['reserved']}, requested peak {exact['requested']}, "
               f"allocated peak in blocks {exact['blocks']}; the report's OOM verdict (an OOM found "
               f"or none) agrees with the run in {exact['oom']}.")
    out.append("")
    out.extend(capture)
    return "\n".join(out)


def beyond(vt):
    """Each fit / OOM pair of a workload (the trace names share all but their last two parts)."""
    runs = {}
    for line in open(os.path.join(BEYOND, "facts.jsonl")):
        f = json.loads(line)
        path = os.path.join(BEYOND, f["trace"])
        runs[f["trace"][:-3]] = (f, json.loads(subprocess.run(
            [vt, "report", "--json", path], check=True, capture_output=True, text=True).stdout))
    rows = ["| out-of-memory run (B) | its what-if at the batch that fit | predicted | the fit run "
            "measured | predicted / measured | the fit run's largest micro-batch |",
            "|---|---|---|---|---|---|"]
    for t, (f, r) in sorted(runs.items()):
        if f["oom"]:
            continue
        base = t.rsplit("_", 2)[0]
        for u, (g, s) in sorted(runs.items()):
            if not u.startswith(base + "_") or not g["oom"]:
                continue
            largest = (r["prediction"] or {}).get("largest_batch_size")
            for a in s["advice"] or []:
                if a.get("batch_size") != f["batch_size"]:
                    continue
                meas = r["peak"]["process_bytes"]
                rows.append(f"| {u} ({g['batch_size']}) | {a['change']} | "
                            f"{'at least ' if a['predicted_peak_at_least'] else ''}"
                            f"{a['predicted_peak_bytes'] / 2**30:.2f} GiB | {t}: "
                            f"{meas / 2**30:.2f} GiB | {100.0 * (a['predicted_peak_bytes'] / meas - 1):+.1f} % "
                            f"| {largest} (B={f['batch_size']} fit, B={g['batch_size']} did not) |")
    return "\n".join(rows)


def fill(doc, begin, end, body, name):
    if begin not in doc or end not in doc:
        sys.exit(f"{name}: no {begin} ... {end} lines to fill; add them where the tables go")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the doc's tables differ")
    ap.add_argument("--vt", default=os.path.join(ROOT, "build", "vramtrace"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "validation.md"))
    a = ap.parse_args()
    doc = open(a.doc).read()
    new = fill(fill(doc, BEGIN, END, tables(a.vt), a.doc), BEGIN2, END2, beyond(a.vt), a.doc)
    if a.check:
        if new != doc:
            sys.exit(f"{a.doc}: the tables differ from the traces' (run scripts/validation-doc.py)")
        return
    if new != doc:
        open(a.doc, "w").write(new)


if __name__ == "__main__":
    main()
