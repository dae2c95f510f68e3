#!/usr/bin/env bash
# gpu-validate.sh OUTDIR — the real check, on a GPU machine with PyTorch and no package registry
# (docs/validation.md): builds vramtrace against .debs/ unpacked into .deps/, runs
# examples/gpt/train.py under `vramtrace run` in every allocator mode, compares vramtrace's
# figures with PyTorch's own (VRAMTRACE_TORCH_STATS), measures overhead, tries the robustness
# cases, and writes OUTDIR/validation.md, OUTDIR/results.jsonl, OUTDIR/validate.log and a few
# small traces. Keeps going past failures (each is a row of the table). ~9 minutes on an H100.
#
# env: PYTHON (default /opt/torch/.venv/bin/python3), VALIDATE_BUDGET_S (default 520),
#      VT_RUN_OPTS (extra `vramtrace run` options for every traced run), BUILD_DIR (build/gpu),
#      VALIDATE_SET ours (default) | hf | sweep | final | beyond (scripts/gpu-beyond.sh: BERT,
#      ResNet, ViT, LoRA, checkpointing, ...; with VALIDATE_PROGRAMS=sim or shim it is a dry run
#      without a GPU, and that is what VALIDATE_PROGRAMS alone runs).
set -u
if [ "${VALIDATE_SET:-ours}" = beyond ] || [ -n "${VALIDATE_PROGRAMS:-}" ]; then
    exec sh "$(dirname "$0")/gpu-beyond.sh" "$@"
fi

OUT=${1:?usage: bash scripts/gpu-validate.sh OUTDIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD=${BUILD_DIR:-build/gpu}
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)
BUDGET=${VALIDATE_BUDGET_S:-520}
START=$(date +%s)
W=$(mktemp -d "${TMPDIR:-/tmp}/vtvalidate.XXXXXX")
VT=$ROOT/$BUILD/vramtrace
TRAIN=$ROOT/examples/gpt/train.py
CFG=$ROOT/examples/gpt/config
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
: >"$W/notes.md"
exec > >(tee -a "$OUT/validate.log") 2>&1

left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { printf '\n=== %s  (%ss left)\n' "$*" "$(left)"; }
note() { printf '%s\n' "$*" | tee -a "$W/notes.md"; }

# ---- the comparison helper (Python, reads PyTorch's JSON line, the report and the dump) -------
cat >"$W/compare.py" <<'PYEOF'
"""compare.py — one validation row: vramtrace's figures vs PyTorch's own (gpu-validate.sh)."""
import glob, json, os, sys

def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def torch_stats(log):
    try:
        for line in open(log, errors="replace"):
            if line.startswith("VRAMTRACE_TORCH_STATS "):
                return json.loads(line.split(" ", 1)[1])
    except OSError:
        pass
    return None

def find(obj, names):
    """First value under any of names, searching the JSON tree breadth-first."""
    todo = [obj]
    while todo:
        o = todo.pop(0)
        if isinstance(o, dict):
            for n in names:
                if n in o and isinstance(o[n], (int, float)) and not isinstance(o[n], bool):
                    return o[n]
            todo.extend(o.values())
        elif isinstance(o, list):
            todo.extend(o)
    return None

def dump_figures(path):
    """Replays the dump: successful segment allocations per API and live-byte peaks."""
    counts, live, cur, peak = {}, {}, {}, {}
    pair = {"cudaFree": "cudaMalloc", "cudaFreeAsync": "cudaMallocAsync",
            "cuMemRelease": "cuMemCreate", "cuMemFree": "cuMemAlloc"}
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    for line in f:
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if not isinstance(o, dict) or str(o.get("type", "")).lower() == "oom":
            continue
        api = o.get("api") or o.get("fn") or o.get("call")
        if not isinstance(api, str):
            continue
        flags = o.get("flags") if isinstance(o.get("flags"), list) else []
        res = o.get("result", 0)
        failed = bool(o.get("failed")) or "failed" in flags or res not in (0, None, "0", "cudaSuccess", "CUDA_SUCCESS", "success")
        if failed:
            continue
        addr = o.get("addr", o.get("ptr", o.get("handle")))
        size = o.get("size", 0) or 0
        if isinstance(size, str):
            size = int(size, 0)
        if api in ("cudaMalloc", "cudaMallocAsync", "cuMemCreate", "cuMemAlloc"):
            counts[api] = counts.get(api, 0) + 1
            live[(api, addr)] = size
            cur[api] = cur.get(api, 0) + size
            peak[api] = max(peak.get(api, 0), cur[api])
        elif api in pair:
            size = live.pop((pair[api], addr), 0)
            cur[pair[api]] = cur.get(pair[api], 0) - size
    return {"counts": counts, "peak": peak}

def pct(a, b):
    if a is None or not b:
        return None
    return round(100.0 * (a - b) / b, 3)

def main():
    name, expect, mode, w, rc, base_log = sys.argv[1:7]
    log = os.path.join(w, name + ".log")
    ts = torch_stats(log)
    rep = load_json(os.path.join(w, name + ".report.json"))
    dmp = dump_figures(os.path.join(w, name + ".dump.jsonl"))
    base = torch_stats(base_log) if base_log != "-" else None
    row = {"case": name, "expect": expect, "mode": mode, "rc": int(rc),
           "torch": ts, "problems": []}
    seg_api = {"native": "cudaMalloc", "expandable": "cuMemCreate", "tensors": "cudaMallocAsync"}[mode]
    t_oom = bool(ts and ts.get("oom"))
    row["oom"] = t_oom
    if ts is None:
        row["problems"].append("no VRAMTRACE_TORCH_STATS line (see log)")
    if expect == "oom" and not t_oom:
        row["problems"].append("expected an OOM, none")
    if expect == "fit" and t_oom:
        row["problems"].append("expected to fit, OOM")
    if rep is None:
        row["problems"].append("no report --json")
    else:
        pk = rep.get("peak") if isinstance(rep.get("peak"), dict) else {}
        row["vt_peak_reserved"] = pk.get("reserved_bytes", find(rep, ["peak_reserved_bytes", "peak_reserved"]))
        row["vt_peak_allocated"] = pk.get("allocated_bytes", find(rep, ["peak_allocated_bytes", "peak_allocated"]))
        row["vt_peak_process"] = pk.get("process_bytes", find(rep, ["peak_process_bytes", "peak_process"]))
        # the categories against the program's own count of its tensors (trainers print them)
        cat = rep.get("categories") if isinstance(rep.get("categories"), dict) else {}
        for k, t in (("parameters", "param_bytes"), ("gradients", "grad_bytes"), ("optimizer", "optim_state_bytes")):
            if ts and ts.get(t) and k in cat:
                row[f"{k}_vt_vs_truth"] = [cat[k], ts[t]]
        o = rep.get("oom") if isinstance(rep, dict) else None
        row["vt_oom"] = bool(o) and not (isinstance(o, dict) and
                                         (o.get("occurred") is False or o.get("has_oom") is False))
        adv = rep.get("advice") if isinstance(rep, dict) else None
        if isinstance(adv, list) and adv:
            row["advice0"] = adv[0]
        if expect == "oom" and not row["vt_oom"]:
            row["problems"].append("report shows no OOM")
    if dmp is not None:
        row["vt_segments"] = dmp["counts"].get(seg_api, 0)
        row["vt_dump_peak"] = dmp["peak"].get(seg_api)
        row["vt_counts"] = dmp["counts"]
    else:
        row["problems"].append("no dump")
    if ts is not None:
        nda = ts.get("num_device_alloc")
        # expandable segments: PyTorch counts one device allocation per expansion (a map of
        # several 2 / 20 MiB pages), vramtrace one cuMemCreate per page: compare bytes only
        if mode == "native" and nda is not None and row.get("vt_segments") is not None:
            row["segments_match"] = nda == row["vt_segments"]
            if not row["segments_match"]:
                row["problems"].append(f"segments {row['vt_segments']} ({seg_api}) != num_device_alloc {nda}")
        if mode != "tensors":
            row["reserved_err_pct"] = pct(row.get("vt_peak_reserved"), ts.get("max_memory_reserved"))
            e = row["reserved_err_pct"]
            if e is None or abs(e) > 1.0:
                row["problems"].append(f"peak reserved off by {e} %")
            # tensor+segment (the allocator's trace hooks attached): allocated is exact against
            # PyTorch's requested_bytes peak; max_memory_allocated counts rounded blocks
            row["vt_mode"] = rep.get("mode") if isinstance(rep, dict) else None
            if row["vt_mode"] == "tensor+segment":
                row["allocated_err_pct"] = pct(row.get("vt_peak_allocated"), ts.get("requested_bytes_peak"))
                row["allocated_vs_max_allocated_pct"] = pct(row.get("vt_peak_allocated"), ts.get("max_memory_allocated"))
                e = row["allocated_err_pct"]
                if e is None or abs(e) > 0.1:
                    row["problems"].append(f"peak allocated off by {e} % (vs requested_bytes peak)")
            elif isinstance(rep, dict) and rep.get("tracker_note"):
                row["tracker_note"] = rep["tracker_note"]
        else:
            v = row.get("vt_peak_allocated") or row.get("vt_dump_peak")
            row["allocated_err_pct"] = pct(v, ts.get("max_memory_allocated"))
            e = row["allocated_err_pct"]
            if e is None or abs(e) > 1.0:
                row["problems"].append(f"peak allocated off by {e} %")
        row["ms_traced"] = ts.get("ms_per_iter")
    if base is not None:
        row["ms_plain"] = base.get("ms_per_iter")
        if row.get("ms_traced") and row["ms_plain"]:
            row["overhead_pct"] = pct(row["ms_traced"], row["ms_plain"])
    row["verdict"] = "PASS" if not row["problems"] else "FAIL"
    print(json.dumps(row, sort_keys=True))

main()
PYEOF

# ---- the table writer ------------------------------------------------------------------------
cat >"$W/table.py" <<'PYEOF'
"""table.py — results.jsonl -> validation.md rows (gpu-validate.sh)."""
import json, sys
def mib(b):
    return "—" if b is None else f"{b / 2**20:,.1f}"
def num(x, suffix=""):
    return "—" if x is None else f"{x}{suffix}"
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| case | mode | outcome | segments vt / torch | peak reserved MiB vt / torch (Δ%) "
      "| peak allocated MiB vt / torch (Δ%) | ms/iter traced / plain (overhead) | verdict |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    t = r.get("torch") or {}
    out = f"rc {r['rc']}" + (", OOM" if r.get("oom") else "")
    seg = f"{num(r.get('vt_segments'))} / {num(t.get('num_device_alloc'))}"
    res = f"{mib(r.get('vt_peak_reserved'))} / {mib(t.get('max_memory_reserved'))} ({num(r.get('reserved_err_pct'))})"
    al = f"{mib(r.get('vt_peak_allocated') or (r.get('vt_dump_peak') if r['mode'] == 'tensors' else None))} / {mib(t.get('max_memory_allocated'))} ({num(r.get('allocated_err_pct'))})"
    ms = f"{num(r.get('ms_traced'))} / {num(r.get('ms_plain'))} ({num(r.get('overhead_pct'), ' %')})"
    v = r["verdict"] + ("" if not r["problems"] else ": " + "; ".join(r["problems"]))
    print(f"| {r['case']} | {r['mode']} | {out} | {seg} | {res} | {al} | {ms} | {v} |")
PYEOF

# ---- 0. what this machine has -------------------------------------------------------------------
say "environment"
FATAL=""
for tool in gcc make nm timeout; do
    command -v "$tool" >/dev/null 2>&1 || FATAL="$FATAL $tool"
done
command -v dpkg >/dev/null 2>&1 || command -v ar >/dev/null 2>&1 || FATAL="$FATAL dpkg-or-ar"
"$PY" -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"' 2>"$W/torch.err" ||
    FATAL="$FATAL torch-with-CUDA($(tail -1 "$W/torch.err"))"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | tee "$W/gpu.txt"
"$PY" -c 'import torch,sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null | tee "$W/torch.txt"
write_md() {
    {
        echo "# vramtrace on a real GPU: validation"
        echo
        echo "Produced by \`scripts/gpu-validate.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
        echo "GPU: $(cat "$W/gpu.txt" 2>/dev/null). $(cat "$W/torch.txt" 2>/dev/null). Commit $(git rev-parse --short HEAD 2>/dev/null || echo "unknown (no git checkout here)")."
        echo
        cat "$W/notes.md"
        if [ -s "$RESULTS" ]; then
            echo
            echo "## vramtrace vs PyTorch's own figures"
            echo
            echo "Segments: successful cudaMalloc (native), cuMemCreate (expandable_segments) calls in"
            echo "\`vramtrace dump\` vs \`memory_stats()[\"num_device_alloc\"]\` (must match exactly). Peaks from"
            echo "\`vramtrace report --json\` vs \`max_memory_reserved\` / \`max_memory_allocated\` (within 1 %)."
            echo
            "$PY" "$W/table.py" "$RESULTS"
        fi
    } >"$OUT/validation.md"
}
if [ -n "$FATAL" ]; then
    note "**FATAL: this machine lacks:$FATAL** — nothing can be validated here."
    write_md
    exit 2
fi

# ---- 1. build against the carried .deb files --------------------------------------------------
say "build"
DEPS_ARG=$(sh "$ROOT/scripts/unpack-debs.sh" "$ROOT" 2>"$W/debs.err")
while IFS= read -r l; do note "- $l"; done <"$W/debs.err"
if [ -n "$DEPS_ARG" ]; then
    note "- build dependencies: $(ls .debs/*.deb | wc -l) .deb files unpacked into .deps/"
else
    note "- no .debs/ carried (run scripts/fetch-debs.sh on the dev machine): using system headers"
fi
if ! make -j"$(nproc)" BUILD="$BUILD" $DEPS_ARG all >"$W/build.log" 2>&1; then
    tail -30 "$W/build.log"
    note "**FATAL: the build failed** (make BUILD=$BUILD $DEPS_ARG all):"
    note '```'
    tail -15 "$W/build.log" | tee -a "$W/notes.md" >/dev/null
    note '```'
    write_md
    exit 2
fi
note "- built $BUILD/vramtrace and $BUILD/libvramtrace.so in $(( $(date +%s) - START )) s"

# ---- 2. which binding layers PyTorch uses ---------------------------------------------------------
say "nm -D libc10_cuda.so"
TLIB=$("$PY" -c 'import os,torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
{
    echo
    echo "## PyTorch's CUDA imports (\`nm -D\`)"
    echo
    echo '```'
    for lib in libc10_cuda.so libtorch_cuda.so; do
        [ -f "$TLIB/$lib" ] || continue
        nm -D "$TLIB/$lib" | grep -E ' U (cudaMalloc|cudaFree|cudaGetDriverEntryPoint|cuMem|cuGetProcAddress)' |
            sed "s|^ *|$lib: |"
    done
    echo '```'
} | tee -a "$W/notes.md"

# ---- 3. the per-run helper ------------------------------------------------------------------------
# run_case NAME EXPECT MODE "VT OPTS" BASELINE -- TRAIN ARGS...
#   EXPECT fit|oom|any; MODE native|expandable|tensors (sets PYTORCH_CUDA_ALLOC_CONF and what is
#   compared); BASELINE yes: also run without vramtrace for the overhead. Appends a JSON row to
#   results.jsonl; never fails the script.
run_case() {
    local name=$1 expect=$2 mode=$3 vtopts=$4 baseline=$5
    shift 6
    local conf="" lim rc base_log="-"
    case $mode in
        expandable) conf="expandable_segments:True" ;;
        tensors) conf="backend:cudaMallocAsync" ;;
    esac
    lim=$(( $(left) - 20 ))
    [ "$lim" -gt 240 ] && lim=240
    if [ "$lim" -lt 40 ]; then
        note "- $name: skipped, out of time"
        return 0
    fi
    say "$name ($mode, expect $expect): train.py $*"
    if [ "$baseline" = yes ]; then
        base_log=$W/$name.plain.log
        PYTORCH_CUDA_ALLOC_CONF=$conf timeout "$lim" "$PY" "${PROG:-$TRAIN}" "$@" >"$base_log" 2>&1
        lim=$(( $(left) - 20 ))
        [ "$lim" -gt 240 ] && lim=240
    fi
    # shellcheck disable=SC2086
    PYTORCH_CUDA_ALLOC_CONF=$conf timeout "$lim" "$VT" run -o "$W/$name.vt" $vtopts ${VT_RUN_OPTS:-} -- \
        "$PY" "${PROG:-$TRAIN}" "$@" >"$W/$name.log" 2>&1
    rc=$?
    echo "\$ ${PROG:-$TRAIN} $*  (PYTORCH_CUDA_ALLOC_CONF=$conf, vramtrace run $vtopts)" >"$W/$name.cmd"
    tail -4 "$W/$name.log" | cut -c1-300
    [ "$rc" = 124 ] && note "- $name: timed out after ${lim}s"
    "$VT" report --json "$W/$name.vt" >"$W/$name.report.json" 2>"$W/$name.report.err"
    "$VT" report "$W/$name.vt" >"$W/$name.report.txt" 2>&1
    "$VT" dump "$W/$name.vt" >"$W/$name.dump.jsonl" 2>"$W/$name.dump.err" || rm -f "$W/$name.dump.jsonl"
    "$PY" "$W/compare.py" "$name" "$expect" "$mode" "$W" "$rc" "$base_log" >>"$RESULTS" ||
        echo "{\"case\": \"$name\", \"mode\": \"$mode\", \"expect\": \"$expect\", \"rc\": $rc, \"verdict\": \"FAIL\", \"problems\": [\"compare.py failed\"]}" >>"$RESULTS"
    tail -1 "$RESULTS" | cut -c1-400
}
# advice_args NAME: the --key=value arguments of the first advice item of NAME's report.
advice_args() {
    "$PY" - "$W/$1.report.json" <<'PYEOF'
import json, re, sys
try:
    rep = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
for item in rep.get("advice") or []:
    pairs = re.findall(r"([a-z_]+)=([A-Za-z0-9_.:]+)", str(item.get("change", "")))
    if pairs:
        print(" ".join(f"--{k}={v}" for k, v in pairs))
        break
else:
    sys.exit(1)
PYEOF
}

# ---- 4. the matrix --------------------------------------------------------------------------------
SHORT="--max_iters=8 --eval_iters=2 --eval_interval=1000"
echo >>"$W/notes.md"
echo "## Runs" >>"$W/notes.md"
echo >>"$W/notes.md"
if [ "${VALIDATE_SET:-ours}" = final ]; then
    # overhead, alternating plain / traced modes (more iterations than the matrix: 40)
    say "overhead"
    OV="$CFG/nanogpt-30m-4070.py --compile=False --max_iters=40 --eval_iters=1 --eval_interval=1000"
    for rep in 1 2; do
        for m in plain default tracker_off stacks_none; do
            log=$W/ov_${m}_$rep.log
            case $m in
                plain) timeout 120 "$PY" "$TRAIN" $OV >"$log" 2>&1 ;;
                default) timeout 120 "$VT" run -q -o "$W/ov.vt" -- "$PY" "$TRAIN" $OV >"$log" 2>&1 ;;
                tracker_off) VRAMTRACE_TORCH_TRACKER=0 timeout 120 "$VT" run -q -o "$W/ov.vt" -- "$PY" "$TRAIN" $OV >"$log" 2>&1 ;;
                stacks_none) timeout 120 "$VT" run -q --stacks none -o "$W/ov.vt" -- "$PY" "$TRAIN" $OV >"$log" 2>&1 ;;
            esac
            rm -f "$W/ov.vt"
            printf '%s %s %s\n' "$m" "$rep" "$(grep -h '^VRAMTRACE_TORCH_STATS' "$log" | "$PY" -c 'import sys,json; print(json.loads(sys.stdin.read().split(" ",1)[1]).get("ms_per_iter"))' 2>/dev/null)" | tee -a "$W/overhead.txt"
        done
    done
    "$PY" - "$W/overhead.txt" <<'PYEOF' | tee -a "$W/notes.md"
import statistics, sys
ms = {}
for line in open(sys.argv[1]):
    m, _, v = line.split()
    if v not in ("None", ""):
        ms.setdefault(m, []).append(float(v))
base = statistics.median(ms.get("plain", [0])) or None
print("- overhead, nanoGPT 30M eager, 40 iterations, median ms/iter of 2 runs each: " + ", ".join(
    f"{m} {statistics.median(v):.2f}" + ("" if not base or m == "plain" else f" ({100 * (statistics.median(v) - base) / base:+.1f} %)")
    for m, v in ms.items()))
PYEOF
    # vramtrace fit on the documents' case 2, compiled (nanoGPT's default), 12 GiB card
    if "$VT" fit --help >/dev/null 2>&1 && [ "$(left)" -gt 200 ]; then
        say "fit"
        timeout $(( $(left) - 60 )) "$VT" fit --card 12GiB --iters 2 --max-b 16 -- "$PY" "$TRAIN" "$CFG/gpt2-124m-12gb.py" \
            --max_iters=2 --eval_iters=1 --eval_interval=1000 --batch_size={B} --gradient_accumulation_steps={A} \
            >"$W/fit.txt" 2>"$W/fit.err"
        note "- \`vramtrace fit\` on gpt2-124m-12gb.py (compile=True), 12 GiB, exit $?:"
        note '```'
        tail -25 "$W/fit.txt" >>"$W/notes.md"
        note '```'
    fi
    # the memory_viz export, read by PyTorch's own tool
    if "$VT" export --help >/dev/null 2>&1; then
        say "memory_viz"
        "$VT" export --memory-viz "$W/hf.pickle" "$ROOT/examples/traces/h100-torch2.11/hf_gpt2_eager_b4.vt" >"$W/mv.log" 2>&1
        "$PY" -c "import pickle,sys; from torch.cuda import _memory_viz as mv; s=pickle.load(open(sys.argv[1],'rb')); mv.segsum(s); mv.trace(s); print('segments', len(s['segments']), 'traces', sum(len(t) for t in s['device_traces'])); open(sys.argv[2],'w').write(mv.trace_plot(s))" "$W/hf.pickle" "$W/hf_memviz.html" >>"$W/mv.log" 2>&1
        note "- memory_viz: export exit, and torch.cuda._memory_viz segsum (its accounting asserts), trace and trace_plot on it: $(tail -2 "$W/mv.log" | tr '\n' ' ')"
    fi
elif [ "${VALIDATE_SET:-ours}" = sweep ]; then
    # the measured boundary between fit and OOM on the 12 GiB card (ground truth for the advice)
    HF=$ROOT/examples/hf/hf_train.py
    G12="--max_iters=2 --eval_iters=1 --eval_interval=1000"
    PROG=$HF run_case s_hf_gpt2_eager_b8 any native "--card 12GiB" no -- --model gpt2 --batch-size 8 --steps 3
    run_case s_nano_compile_b12 any native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $G12 --batch_size=12 --gradient_accumulation_steps=4
    PROG=$HF run_case s_llama_fp16_b8 any native "--card 12GiB" no -- --model llama-160m --amp fp16 --batch-size 8 --steps 3
    PROG=$HF run_case s_hf_gpt2_compile_b8 any native "--card 12GiB" no -- --model gpt2 --batch-size 8 --steps 3 --compile
    run_case s_nano_eager_b8 any native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $G12 --compile=False --batch_size=8 --gradient_accumulation_steps=4
    PROG=$HF run_case s_hf_gpt2_eager_b6 any native "--card 12GiB" no -- --model gpt2 --batch-size 6 --steps 3
    PROG=$HF run_case s_llama_fp16_b12 any native "--card 12GiB" no -- --model llama-160m --amp fp16 --batch-size 12 --steps 3
    PROG=$HF run_case s_hf_gpt2_compile_b12 any native "--card 12GiB" no -- --model gpt2 --batch-size 12 --steps 3 --compile
    PROG=$HF run_case s_hf_gpt2_eager_b12 any native "--card 12GiB" no -- --model gpt2 --batch-size 12 --steps 3
    run_case s_nano_compile_b10 any native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $G12 --batch_size=10 --gradient_accumulation_steps=4
elif [ "${VALIDATE_SET:-ours}" = hf ]; then
    # programs this project did not write (a plain Hugging Face loop), and nanoGPT's default
    # compile=True, each with a size that fits and one that does not on the same 12 GiB card
    HF=$ROOT/examples/hf/hf_train.py
    G12="--max_iters=3 --eval_iters=1 --eval_interval=1000"
    PROG=$HF run_case hf_gpt2_eager_b4 fit native "--card 12GiB" no -- --model gpt2 --batch-size 4 --steps 4
    PROG=$HF run_case hf_gpt2_eager_b16 oom native "--card 12GiB" no -- --model gpt2 --batch-size 16 --steps 4
    PROG=$HF run_case hf_llama_fp16_b4 fit native "--card 12GiB" no -- --model llama-160m --amp fp16 --batch-size 4 --steps 4
    PROG=$HF run_case hf_llama_fp16_b24 oom native "--card 12GiB" no -- --model llama-160m --amp fp16 --batch-size 24 --steps 4
    run_case g_compile_b8_12gib any native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $G12 --batch_size=8
    run_case g_compile_b16_12gib oom native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $G12
    PROG=$HF run_case hf_gpt2_compile_b4 fit native "--card 12GiB" no -- --model gpt2 --batch-size 4 --steps 4 --compile
    PROG=$HF run_case hf_gpt2_compile_b16 oom native "--card 12GiB" no -- --model gpt2 --batch-size 16 --steps 4 --compile
else
run_case a_native_compile fit native "" no -- "$CFG/nanogpt-30m-4070.py" $SHORT
run_case a_native_eager fit native "" yes -- "$CFG/nanogpt-30m-4070.py" $SHORT --compile=False
run_case a_expandable_eager fit expandable "" yes -- "$CFG/nanogpt-30m-4070.py" $SHORT --compile=False
run_case a_tensors_eager fit tensors "--tensors" yes -- "$CFG/nanogpt-30m-4070.py" $SHORT --compile=False
B_ARGS="--max_iters=2 --eval_iters=1 --eval_interval=1000 --compile=False"
run_case b_oom_12gib oom native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $B_ARGS
if REC=$(advice_args b_oom_12gib); then
    note "- recommended by the OOM report (advice[0]): \`$REC\`"
    # shellcheck disable=SC2086
    run_case b_recommended_12gib fit native "--card 12GiB" no -- "$CFG/gpt2-124m-12gb.py" $B_ARGS $REC
    "$PY" - "$W/b_oom_12gib.report.json" "$W/b_recommended_12gib.report.json" "$W/b_recommended_12gib.log" <<'PYEOF' | tee -a "$W/notes.md"
import json, sys
def load(p):
    try: return json.load(open(p))
    except (OSError, ValueError): return {}
adv = (load(sys.argv[1]).get("advice") or [{}])[0]
pred = next((adv[k] for k in ("predicted_peak_bytes", "predicted_peak") if k in adv), None)
meas = None
todo = [load(sys.argv[2])]
while todo and meas is None:
    o = todo.pop(0)
    if isinstance(o, dict):
        meas = next((o[k] for k in ("peak_process_bytes", "peak_process") if k in o), None)
        todo.extend(o.values())
ts = {}
for line in open(sys.argv[3], errors="replace"):
    if line.startswith("VRAMTRACE_TORCH_STATS "):
        ts = json.loads(line.split(" ", 1)[1])
f = lambda b: "—" if b is None else f"{b / 2**20:,.0f} MiB"
err = "" if not (pred and meas) else f" (prediction off by {100.0 * (pred - meas) / meas:+.1f} %)"
print(f"- recommended run: predicted peak {f(pred)}, measured peak (process) {f(meas)}{err}; "
      f"PyTorch max_memory_reserved {f(ts.get('max_memory_reserved'))}, OOM: {ts.get('oom')}")
PYEOF
else
    note "- b_recommended_12gib: not run, the OOM report has no advice with a --key=value change"
fi
run_case c_native_reduce_overhead fit native "" no -- "$CFG/nanogpt-30m-4070.py" $SHORT \
    --compile_mode=reduce-overhead --gradient_accumulation_steps=1
run_case c_dataloader_workers fit native "" no -- "$CFG/nanogpt-30m-4070.py" $SHORT --compile=False --num_workers=2
fi

# ---- 5. robustness without a comparison row ---------------------------------------------------
echo >>"$W/notes.md"
echo "## Robustness" >>"$W/notes.md"
echo >>"$W/notes.md"
TORCHRUN=$(dirname "$PY")/torchrun
if [ "${VALIDATE_SET:-ours}" = ours ] && [ "$(left)" -gt 60 ] && [ -x "$TORCHRUN" ]; then
    say "torchrun --standalone --nproc_per_node=1"
    mkdir -p "$W/torchrun" && (cd "$W/torchrun" && timeout $(( $(left) - 30 )) "$VT" run -o "$W/torchrun/tr.vt" -- \
        "$TORCHRUN" --standalone --nproc_per_node=1 "$TRAIN" "$CFG/nanogpt-30m-4070.py" $SHORT --compile=False \
        >"$W/torchrun.log" 2>&1)
    rc=$?
    n=0
    for t in "$W"/torchrun/*.vt; do [ -f "$t" ] && n=$((n + 1)); done
    ok=bad
    for t in "$W"/torchrun/*.vt; do "$VT" report "$t" >/dev/null 2>&1 && ok=readable; done
    note "- torchrun --nproc_per_node=1: exit $rc, $n trace file(s), report: $ok $([ $rc = 0 ] && [ $ok = readable ] && echo PASS || echo FAIL)"
fi
if [ "${VALIDATE_SET:-ours}" = ours ] && [ "$(left)" -gt 45 ]; then
    say "kill -9 mid-run"
    "$VT" run -o "$W/killed.vt" -- "$PY" "$TRAIN" "$CFG/nanogpt-30m-4070.py" --compile=False --max_iters=500 \
        --eval_iters=0 >"$W/killed.log" 2>&1 &
    vpid=$!
    for _ in $(seq 1 60); do
        grep -q '^iter 5:' "$W/killed.log" && break
        kill -0 "$vpid" 2>/dev/null || break
        sleep 1
    done
    target=$(pgrep -P "$vpid" 2>/dev/null | head -1)
    target=${target:-$vpid}
    kill -9 "$target" 2>/dev/null
    wait "$vpid" 2>/dev/null
    "$VT" report "$W/killed.vt" >"$W/killed.report" 2>&1
    rrc=$?
    "$VT" dump "$W/killed.vt" 2>/dev/null | wc -l >"$W/killed.count"
    note "- kill -9 of pid $target after iter 5: report exit $rrc, $(cat "$W/killed.count") dump lines $([ $rrc -le 1 ] && echo PASS || echo FAIL)"
fi

# ---- 6. bring back --------------------------------------------------------------------------------
say "results"
# every case's trace, log, command and reports in one archive (at most 8 files come back);
# traces over 6 MiB stay behind (noted)
(cd "$W" && for f in *.vt; do
    [ -f "$f" ] || continue
    if [ "$(stat -c %s "$f")" -gt $((6 << 20)) ]; then
        note "- ${f%.vt}.vt not kept: $(stat -c %s "$f") bytes (> 6 MiB)"
        rm -f "$f"
    fi
done
tar -czf - --exclude='*.dump.jsonl' --exclude='*.plain.log' ./*.vt ./*.log ./*.cmd ./*.report.json ./*.report.txt 2>/dev/null |
    split -b 15m -a 1 - "$OUT/cases.tgz.")  # cat cases.tgz.* | tar -xz
ls -la "$OUT"
write_md
cat "$OUT/validation.md"
echo "gpu-validate.sh: done in $(( $(date +%s) - START )) s; work files in $W"
