#!/bin/sh
# real_traces.sh — golden test on the real H100 traces (examples/traces/h100-torch2.11): for every
# run that fit, `report --json` is held to the run's own ground truth in facts.jsonl (parameter,
# gradient and optimizer-state bytes counted by the program, its iterations), and the older
# traces (format 1.0: examples/traces/*.vt, tests/data) still read and report.
set -u
cd "$ROOT" || exit 2
command -v python3 >/dev/null 2>&1 || { echo "python3 not found"; exit 77; }
VT="$VT" python3 - <<'EOF'
import json, os, subprocess, sys

vt = os.environ["VT"]
base = "examples/traces/h100-torch2.11"
fail = []
TOOLS = ("cuda_context", "kernel_code", "allocator_cache", "external")


def report(path):
    p = subprocess.run([vt, "report", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        fail.append(f"{path}: report exit {p.returncode}: {p.stderr.strip()[:200]}")
        return None
    return json.loads(p.stdout)


def check(name, ok, what):
    if not ok:
        fail.append(f"{name}: {what}")


def near(v, truth, tol):
    return truth > 0 and abs(v - truth) <= tol * truth


checked, fits, ooms, counted = 0, [], 0, 0
for line in open(f"{base}/facts.jsonl"):
    f = json.loads(line)
    if f.get("params"):
        # P from the trace's own weights, at 4 B each: every one of these runs keeps fp32 weights
        # (autocast, a GradScaler; compiled ones cast inside the graph, which looks like 16-bit
        # weights' runs: no copy, 16-bit logits) — the program's count (+64: a Llama's rotary rows)
        inf = (report(f"{base}/{f['trace']}") or {}).get("inferred") or {}
        p, e = (inf.get("params") or {}).get("value"), (inf.get("param_dtype_bytes") or {}).get("value")
        counted += 1
        check(f["trace"], p is not None and 0 <= p - f["params"] <= 64 and e == 4,
              f"P {p} at {e} B each, the program's {f['params']} fp32 parameters")
    if f["oom"] and f.get("params") and f.get("allocator_backend") == "native":
        # a run that died in its first forward still had its weights: 4 B per parameter (fp32)
        j = report(f"{base}/{f['trace']}")
        if j is not None and j["category_basis"] == "tensors":
            ooms += 1
            check(f["trace"], near(j["categories"]["parameters"], 4 * f["params"], 0.03),
                  f"OOM run: parameters {j['categories']['parameters']} vs 4 x {f['params']} (3 %)")
    if f["oom"] or not f.get("param_bytes"):
        continue  # the other golden figures are those of runs that fit
    fits.append(f)
    path = f"{base}/{f['trace']}"
    if not os.path.exists(path):
        fail.append(f"{path}: missing (facts.jsonl names it)")
        continue
    j = report(path)
    if j is None:
        continue
    checked += 1
    n = f["trace"]
    cats, peaks = j["categories"], j.get("category_peaks") or {}
    pk = lambda k: (peaks.get(k) or {}).get("bytes", 0)
    proc = j["peak"]["process_bytes"]
    tensors = sum(v for k, v in cats.items() if k not in TOOLS)
    check(n, near(cats["parameters"], f["param_bytes"], 0.03),
          f"parameters {cats['parameters']} vs {f['param_bytes']} (3 %)")
    check(n, near(pk("optimizer"), f["optim_state_bytes"], 0.03),
          f"optimizer peak {pk('optimizer')} vs {f['optim_state_bytes']} (3 %)")
    check(n, near(pk("gradients"), f["grad_bytes"], 0.05),
          f"gradients peak {pk('gradients')} vs {f['grad_bytes']} (5 %)")
    check(n, cats["temporaries"] <= 0.20 * proc, f"temporaries {cats['temporaries']} > 20 % of {proc}")
    act = cats["activations"] + cats["logits_loss"]
    check(n, tensors and act >= 0.35 * tensors, f"activations+logits {act} < 35 % of tensors {tensors}")
    check(n, cats["unknown"] <= 0.01 * proc, f"unknown {cats['unknown']} > 1 % of {proc}")
    check(n, sum(cats.values()) == proc, f"categories add up to {sum(cats.values())}, not {proc}")
    check(n, j["iterations"] == f["iters"], f"{j['iterations']} optimizer steps, the run made {f['iters']}")

check("facts", checked >= 5, f"only {checked} fit traces checked")
check("facts", counted >= 15, f"only {counted} traces' parameters counted")
check("facts", ooms >= 8, f"only {ooms} OOM traces checked")

# the trace is read once: through a pipe the report is the file's, category_peaks included
pipe_of = f"{base}/{fits[0]['trace']}"
with open(pipe_of, "rb") as fh:  # a real pipe (a redirected file is seekable)
    p = subprocess.run([vt, "report", "--json", "/dev/stdin"], input=fh.read(), capture_output=True)
    p.stdout = p.stdout.decode()
jp, jf = (json.loads(p.stdout) if p.returncode == 0 else None), report(pipe_of)
if jp is None or jf is None:
    fail.append(f"{pipe_of} through a pipe: exit {p.returncode}")
else:
    check("pipe", jf["category_peaks"] and jp["category_peaks"] == jf["category_peaks"],
          "category_peaks differ from the file's")
    check("pipe", jp.get("category_peaks_note") is None, "a note says category_peaks are missing")
    check("pipe", jp["categories"] == jf["categories"], "categories differ from the file's")

# format 1.0 traces still read and report, their categories adding up to the process peak
old = sorted(f"examples/traces/{x}" for x in os.listdir("examples/traces") if x.endswith(".vt"))
old += ["tests/data/report_rank0.vt", "tests/data/report_rank1.vt"]
for path in old:
    j = report(path)
    if j is not None:
        check(path, sum(j["categories"].values()) == j["peak"]["process_bytes"], "categories do not add up")

# a compiled run's "without torch.compile" what-if against its eager sibling that fit, the same
# command without compiling: HF GPT-2's eager block, not the compiled graph's ratio to the block
# that stands in for it (B=4: 9.47 GiB of tensors predicted, "does not fit", eager took 7.56 and
# fit, until 2026-11-30; advice_real holds the eager runs that ran out of memory)
for comp, eager in (("hf_gpt2_compile_b4", "hf_gpt2_eager_b4"),):
    rc, re_ = report(f"{base}/{comp}.vt"), report(f"{base}/{eager}.vt")
    if rc is None or re_ is None:
        continue
    it = [a for a in rc["advice"] if a["change"].startswith("without torch.compile") or
          a["change"].startswith("compile=False")]
    got, want = it and it[0]["predicted_allocated_bytes"], re_["peak"]["allocated_bytes"]
    roomy = re_["peak"]["process_bytes"] <= 0.85 * rc["prediction"]["capacity_bytes"]
    check(comp, it and abs(got / want - 1) <= 0.08 and (it[0]["fits"] is True or not roomy),
          f"without compile predicted {got} B of tensors ({it and it[0]['fits']}), {eager} took {want}")
for m in fail:
    print("real_traces:", m)
print(f"real_traces: {checked} fit + {ooms} OOM real traces checked, {len(old)} older traces read, "
      f"{len(fail)} failures")
sys.exit(1 if fail else 0)
EOF
