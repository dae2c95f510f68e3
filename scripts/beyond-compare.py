"""beyond-compare.py — the comparisons of scripts/gpu-beyond.sh, one run at a time (`row`: the
program's own truth line, vramtrace's report and dump -> one line of results.jsonl and one of
facts.jsonl) and at the end (`summary`: results.jsonl -> summary.md). Standard library only.

    python3 scripts/beyond-compare.py row --name N --expect fit|oom|any --expect-source S \
        --rc RC --work DIR --vt build/vramtrace --command CMD --facts FACTS [--kept]
    python3 scripts/beyond-compare.py summary results.jsonl"""
import argparse
import json
import os
import subprocess
import sys

# the program's family -> the family vramtrace's report should recognize
FAMILY = {"gpt2": "decoder_transformer", "llama": "decoder_transformer",
          "bert": "encoder_transformer", "vit": "vision_transformer", "resnet": "convolutional"}
# the keys true of it too where the evidence does not tell the family itself (recognized.family
# as the text says it: a model told from its tensor sizes, a vision transformer by its stem alone)
HEDGED = {"decoder_transformer": ("transformer_language_model", "transformer"),
          "encoder_transformer": ("transformer_language_model", "transformer"),
          "vision_transformer": ("conv_stem_transformer",)}
# the program's optimizer -> the kind vramtrace should read from its state
OPTIM = {"adamw": "adam", "sgd": "momentum", "adafactor": "factored"}


def truth_line(log):
    """The last VRAMTRACE_TORCH_STATS line of the program's output, or None."""
    found = None
    try:
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("VRAMTRACE_TORCH_STATS "):
                    try:
                        found = json.loads(line.split(" ", 1)[1])
                    except ValueError:
                        pass
    except OSError:
        pass
    return found


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def segments(vt, trace):
    """Successful cudaMalloc calls in `vramtrace dump` (PyTorch's num_device_alloc), streamed."""
    try:
        p = subprocess.Popen([vt, "dump", trace], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, errors="replace")
    except OSError:
        return None
    n = 0
    for line in p.stdout:
        if '"api":"cudaMalloc"' not in line or '"type":"alloc"' not in line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if not o.get("failed") and o.get("result") in (0, None):
            n += 1
    return n if p.wait() == 0 else None


def get(obj, *path):
    for k in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(k)
    return obj


def report_figures(rep):
    """The report's key figures (vramtrace's side of the row)."""
    adv = rep.get("advice") if isinstance(rep.get("advice"), list) else []
    rec = rep.get("recognized") if isinstance(rep.get("recognized"), dict) else {}
    return {
        "mode": rep.get("mode"),
        "events": rep.get("events"),
        "iterations": rep.get("iterations"),
        "peak_reserved": get(rep, "peak", "reserved_bytes"),
        "peak_allocated": get(rep, "peak", "allocated_bytes"),
        "peak_allocated_blocks": get(rep, "peak", "allocated_blocks_bytes"),
        "peak_process": get(rep, "peak", "process_bytes"),
        "categories": rep.get("categories"),
        # each category's largest live bytes over the run: what a program's own count of its
        # parameters, gradients (before the step) and optimizer state (after it) compares with
        "category_peaks": {k: v.get("bytes") for k, v in (rep.get("category_peaks") or {}).items()
                           if isinstance(v, dict)},
        "oom": bool(rep.get("oom")),
        "oom_cause": get(rep, "oom", "cause"),
        "oom_phase": get(rep, "oom", "phase"),
        "oom_requested": get(rep, "oom", "requested_bytes"),
        "family": rec.get("family"),
        "model_class": rec.get("model_class"),
        "optimizer": get(rec, "optimizer", "kind"),
        "checkpointing": get(rec, "activation_checkpointing", "on"),
        "lora": get(rec, "lora", "on"),
        "compile": get(rec, "torch_compile", "on"),
        "trainable_params": rec.get("trainable_params"),
        # a run of forwards only (no backward, no optimizer step): what an --eval-only run is
        "no_training": get(rep, "prediction", "run_shape", "no_training"),
        "advice0": {k: adv[0].get(k) for k in ("change", "predicted_peak_bytes", "fits")} if adv else None,
    }


def checks(t, vt, row):
    """Capture figures that must equal PyTorch's (problems) and what the report should have
    recognized from the program's own description of itself (recognition)."""
    problems, recog = row["problems"], row["recognition"]
    if vt["segments"] is not None and t.get("num_device_alloc") is not None \
            and vt["segments"] != t["num_device_alloc"]:
        problems.append(f"segments {vt['segments']} != num_device_alloc {t['num_device_alloc']}")
    if vt["peak_reserved"] != t.get("max_memory_reserved"):
        problems.append(f"reserved peak {vt['peak_reserved']} != max_memory_reserved {t.get('max_memory_reserved')}")
    if vt["mode"] == "tensor+segment" and vt["peak_allocated"] != t.get("requested_bytes_peak"):
        problems.append(f"allocated peak {vt['peak_allocated']} != requested_bytes.all.peak {t.get('requested_bytes_peak')}")
    if vt["mode"] != "tensor+segment":
        problems.append(f"mode {vt['mode']}, not tensor+segment (allocator hooks not attached)")
    if vt["oom"] != bool(t.get("oom")):
        problems.append(f"report OOM {vt['oom']}, program OOM {bool(t.get('oom'))}")
    want = FAMILY.get(t.get("family"))
    if want and vt["family"] != want and vt["family"] not in HEDGED.get(want, ()):
        recog.append(f"family {vt['family']}, expected {want}")
    if bool(vt.get("no_training")) != bool(t.get("eval_only")):
        recog.append(f"no_training {vt.get('no_training')}, program eval_only {t.get('eval_only')}")
    want = OPTIM.get(t.get("optimizer"))
    if want and t.get("steps") and not t.get("eval_only") and vt["optimizer"] != want:
        recog.append(f"optimizer {vt['optimizer']}, expected {want}")
    if vt["checkpointing"] is not None and bool(vt["checkpointing"]) != bool(t.get("gradient_checkpointing")):
        recog.append(f"checkpointing {vt['checkpointing']}, program {t.get('gradient_checkpointing')}")
    if vt["lora"] is not None and bool(vt["lora"]) != bool(t.get("lora_rank")):
        recog.append(f"LoRA {vt['lora']}, program rank {t.get('lora_rank')}")


def row_main(a):
    w = a.work
    t = truth_line(os.path.join(w, a.name + ".log"))
    trace = os.path.join(w, a.name + ".vt")
    row = {"case": a.name, "command": a.command, "rc": a.rc, "expect": a.expect,
           "expect_source": a.expect_source, "torch": t, "problems": [], "recognition": []}
    if t is None:
        row["outcome"] = "no-truth"
        row["problems"].append("no VRAMTRACE_TORCH_STATS line (see the log)")
    else:
        row["outcome"] = "error" if t.get("error") else ("oom" if t.get("oom") else "fit")
        if t.get("error"):
            row["problems"].append("program error: " + str(t["error"]))
    row["as_expected"] = None if a.expect == "any" or t is None else row["outcome"] == a.expect
    rep = load_json(os.path.join(w, a.name + ".report.json"))
    if rep is None:
        row["problems"].append("no report --json")
    else:
        vt = report_figures(rep)
        vt["segments"] = segments(a.vt, trace) if os.path.exists(trace) else None
        row["vt"] = vt
        if t is not None and not t.get("error"):
            checks(t, vt, row)
            cat = vt["category_peaks"]
            row["categories_vt_vs_truth"] = {
                k: [cat.get(k), t.get(f)] for k, f in (("parameters", "param_bytes"),
                                                       ("gradients", "grad_bytes"),
                                                       ("optimizer", "optim_state_bytes"))}
    row["verdict"] = "PASS" if not row["problems"] else "FAIL"
    size = os.path.getsize(trace) if os.path.exists(trace) else None
    if t is not None:
        facts = dict(t)
        facts.update(trace=(a.name + ".vt") if a.kept else None, trace_bytes=size,
                     command=a.command, exit_code=a.rc)
        with open(a.facts, "a") as f:
            f.write(json.dumps(facts, sort_keys=True) + "\n")
    print(json.dumps(row, sort_keys=True))


def mib(b):
    return "—" if not isinstance(b, (int, float)) else f"{b / 2**20:,.1f}"


def summary_main(path):
    rows = []
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    n_pass = sum(r["verdict"] == "PASS" for r in rows)
    n_exp = sum(r.get("as_expected") is True for r in rows)
    n_judged = sum(r.get("as_expected") is not None for r in rows)
    print(f"{len(rows)} runs: vramtrace's figures equal the program's own in {n_pass}; the outcome "
          f"(fit / OOM) was the expected one in {n_exp} of {n_judged}; "
          f"{sum(bool(r.get('recognition')) for r in rows)} with a recognition to look at.")
    print()
    print("| run | outcome (expected) | steps | segments vt / torch | reserved MiB vt / torch "
          "| requested MiB vt / torch | recognized | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, vt = r.get("torch") or {}, r.get("vt") or {}
        rec = ", ".join(str(x) for x in (vt.get("family"), vt.get("optimizer"),
                                         "ckpt" if vt.get("checkpointing") else None,
                                         "lora" if vt.get("lora") else None) if x)
        if r.get("recognition"):
            rec += " (" + "; ".join(r["recognition"]) + ")"
        phase = f" in {t['oom_phase']}" if t.get("oom_phase") else ""
        verdict = r["verdict"] + ("" if not r["problems"] else ": " + "; ".join(r["problems"]))
        print(f"| {r['case']} | {r['outcome']}{phase} ({r['expect']}, {r['expect_source']}) "
              f"| {t.get('steps', '—')} | {vt.get('segments', '—')} / {t.get('num_device_alloc', '—')} "
              f"| {mib(vt.get('peak_reserved'))} / {mib(t.get('max_memory_reserved'))} "
              f"| {mib(vt.get('peak_allocated'))} / {mib(t.get('requested_bytes_peak'))} "
              f"| {rec or '—'} | {verdict} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("row")
    r.add_argument("--name", required=True)
    r.add_argument("--expect", choices=["fit", "oom", "any"], required=True)
    r.add_argument("--expect-source", default="estimate")
    r.add_argument("--rc", type=int, required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--vt", required=True)
    r.add_argument("--command", required=True)
    r.add_argument("--facts", required=True)
    r.add_argument("--kept", action="store_true", help="the trace goes into the tarball")
    s = sub.add_parser("summary")
    s.add_argument("results")
    a = ap.parse_args()
    if a.cmd == "row":
        row_main(a)
    else:
        summary_main(a.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
