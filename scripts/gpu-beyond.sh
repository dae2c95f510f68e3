#!/bin/sh
# gpu-beyond.sh OUTDIR — real traces beyond the decoders (`VALIDATE_SET=beyond bash
# scripts/gpu-validate.sh OUTDIR` runs it): BERT, ResNet-50, ViT-B/16, LoRA, checkpointing,
# Adafactor, a Lightning Trainer, T5, GPT-2 medium, Llama 400M, SGD, each at a size that fits and
# one that runs out of memory under `vramtrace run --card 12GiB`, most informative first, each
# started only while time is left. Writes OUTDIR/results.jsonl (the program's truth line and the
# report's key figures, per run), summary.md, beyond.log and ONE tarball beyond.tgz (traces,
# facts.jsonl, results.jsonl, logs, reports), rewritten after every run: a cut run returns what it
# did. Keeps going past failures. docs/validation.md, "Running the checks", says how to run it.
#
# env: PYTHON (default /opt/torch/.venv/bin/python3), VALIDATE_BUDGET_S (default 480: seconds
#      for the whole script, build included), VALIDATE_PROGRAMS real (default) | sim (the
#      SIMULATED programs of examples/sim/ on the fake CUDA: a dry run without a GPU) | shim (the
#      real programs on the simulation, tests/realonsim), BEYOND_ONLY (run names, comma-separated),
#      BUILD_DIR (default build/gpu; build for sim / shim), KEEP_TRACE_BYTES (default 4 MiB),
#      VALIDATE_COMMIT (the commit said in summary.md where the copy has no .git),
#      VALIDATE_NO_BUILD=1 (use BUILD_DIR's vramtrace as it is: tests).
set -u

OUT=${1:?usage: sh scripts/gpu-beyond.sh OUTDIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
PROGRAMS=${VALIDATE_PROGRAMS:-real}
case $PROGRAMS in
    real) BUILD=${BUILD_DIR:-build/gpu} PY=${PYTHON:-/opt/torch/.venv/bin/python3} ;;
    sim | shim) BUILD=${BUILD_DIR:-${BUILD:-build}} PY=${PYTHON:-python3} ;;
    *) echo "gpu-beyond.sh: VALIDATE_PROGRAMS must be real, sim or shim, not '$PROGRAMS'" >&2; exit 2 ;;
esac
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ -x "$PY" ] || PY=$(command -v "$PY" || command -v python3 || echo python3)
BUDGET=${VALIDATE_BUDGET_S:-480}
KEEP=${KEEP_TRACE_BYTES:-4194304}
COMMIT=${VALIDATE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
START=$(date +%s)
W=$(mktemp -d "${TMPDIR:-/tmp}/vtbeyond.XXXXXX")
VT=$BUILD/vramtrace
CMP=$ROOT/scripts/beyond-compare.py
P=$W/pack # what the tarball holds
mkdir -p "$P/traces" "$P/logs" "$P/reports"
: >"$P/facts.jsonl"
: >"$P/results.jsonl"
: >"$P/notes.md"

left() { echo $((BUDGET - ($(date +%s) - START))); }
say() { printf '\n=== %s  (%ss left)\n' "$*" "$(left)"; }
note() { printf '%s\n' "$*" | tee -a "$P/notes.md"; }

# pack: results, summary and the tarball into OUT (after every run; a piece per 15 MiB)
pack() {
    cp "$P/results.jsonl" "$OUT/results.jsonl"
    {
        echo "# vramtrace beyond the decoders: traces of the $PROGRAMS programs"
        echo
        echo "Produced by \`scripts/gpu-beyond.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $COMMIT."
        echo "Everything is in beyond.tgz (\`tar -xzf beyond.tgz\`, or \`cat beyond.tgz.* | tar -xz\`): pack/traces/,"
        echo "pack/facts.jsonl (each run's truth line, its command and exit code), pack/results.jsonl, logs, reports."
        echo "Environment: $(cat "$P/env.json" 2>/dev/null)"
        echo
        cat "$P/notes.md"
        echo
        [ -s "$P/results.jsonl" ] && "$PY" "$CMP" summary "$P/results.jsonl"
    } >"$P/summary.md" 2>&1
    cp "$P/summary.md" "$OUT/summary.md"
    tar -czf "$W/beyond.tgz" -C "$W" pack 2>/dev/null
    if [ "$(wc -c <"$W/beyond.tgz")" -gt $((15 << 20)) ]; then
        rm -f "$OUT"/beyond.tgz "$OUT"/beyond.tgz.?
        split -b 15m -a 1 "$W/beyond.tgz" "$OUT/beyond.tgz." # cat beyond.tgz.* | tar -xz
    else # the last complete one stays until the new one is whole
        cp "$W/beyond.tgz" "$OUT/beyond.tgz.new" && mv "$OUT/beyond.tgz.new" "$OUT/beyond.tgz"
    fi
}

main() {
    say "gpu-beyond.sh: $PROGRAMS programs, $PY, work files in $W"
    # ---- the build ---------------------------------------------------------------------------
    if [ "$PROGRAMS" = real ] && [ "${VALIDATE_NO_BUILD:-0}" = 1 ]; then
        note "- VALIDATE_NO_BUILD=1: $VT as it is"
    elif [ "$PROGRAMS" = real ]; then
        say "build"
        DEPS_ARG=$(sh "$ROOT/scripts/unpack-debs.sh" "$ROOT" 2>"$W/debs.err")
        while IFS= read -r l; do note "- $l"; done <"$W/debs.err"
        if [ -z "$DEPS_ARG" ]; then
            note "- no .debs/ carried (scripts/fetch-debs.sh on the dev machine): system headers"
        fi
        # shellcheck disable=SC2086
        if ! make -j"$(nproc)" BUILD="$BUILD" $DEPS_ARG all >"$W/build.log" 2>&1; then
            tail -30 "$W/build.log"
            : >"$W/fatal"
            note "- **FATAL: the build failed** (make BUILD=$BUILD $DEPS_ARG all): $(tail -3 "$W/build.log" | tr '\n' ' ')"
            return 2
        fi
        note "- built $BUILD/vramtrace in $(($(date +%s) - START)) s"
    elif [ ! -x "$VT" ] || [ ! -f "$BUILD/examples/libsimtorch.so" ] || [ ! -f "$BUILD/fakecuda/libcudart.so.13" ]; then
        make -j"$(nproc)" BUILD="$BUILD" all fake progs >"$W/build.log" 2>&1 ||
            { tail -20 "$W/build.log"; : >"$W/fatal"; note "- **FATAL: make all fake progs failed**"; return 2; }
    fi
    # ---- what this machine has ---------------------------------------------------------------
    say "environment"
    "$PY" - "$PROGRAMS" "$W/have" >"$P/env.json" 2>"$W/env.err" <<'PYEOF'
import importlib.util, json, platform, sys
programs, have = sys.argv[1], sys.argv[2]
env = {"python": platform.python_version(), "programs": programs}
names = ["torch", "transformers", "peft", "timm", "torchvision", "lightning", "pytorch_lightning"]
found = [n for n in names if importlib.util.find_spec(n) is not None]
if programs == "real":
    from importlib import metadata
    for n in found:
        try:
            env[n] = metadata.version(n.replace("_", "-"))
        except metadata.PackageNotFoundError:
            env[n] = "?"
    try:
        import torch
        env["cuda_available"] = torch.cuda.is_available()
        if env["cuda_available"]:
            env["device"] = torch.cuda.get_device_name()
            env["torch_cuda"] = torch.version.cuda
    except Exception as e:  # the summary says why
        env["cuda_available"], env["torch_error"] = False, f"{type(e).__name__}: {e}"
        print(env["torch_error"], file=sys.stderr)
open(have, "w").write("\n".join(found) + "\n")
print(json.dumps(env, sort_keys=True))
PYEOF
    cat "$P/env.json" "$W/env.err"
    if [ "$PROGRAMS" = real ]; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | tee -a "$P/notes.md"
        grep -q '"cuda_available": true' "$P/env.json" ||
            { : >"$W/fatal"; note "- **FATAL: $PY has no PyTorch with a CUDA device**: $(tail -1 "$W/env.err")"; return 2; }
    else
        export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB # larger than the card
        note "- **$PROGRAMS programs: a SIMULATION on the fake CUDA runtime, not a GPU** (a dry run of this script)"
    fi
    [ "$PROGRAMS" = shim ] && export PYTHONPATH="$ROOT/tests/realonsim:$ROOT/examples/sim/simmodels/site-packages:$ROOT/examples/sim"
    unset PYTORCH_CUDA_ALLOC_CONF
    export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
    echo >>"$P/notes.md"
    # ---- the runs, most informative first: a GAN (generator and discriminator trained in turn
    # by two AdamW optimizers, fp32: its own modules named, its unlabelled images no parameters,
    # its largest micro-batch with the cache at its floor; simulated only), a ViT-B/16 linear probe (every weight frozen but the
    # head's: no formula, the measured bytes scaled; out of memory at B=3022 in its first forward,
    # which frees each frozen weight's 16-bit copy after use: temporaries, lower bounds; simulated
    # only), GPT-2 distilled from GPT-2 medium out of memory in its own first forward (the student
    # told from the teacher by the copies each kept), an evaluation-only run (forwards under no_grad,
    # no backward: its report says nothing was trained, its weights are parameters, its what-ifs
    # add no gradient or optimizer state; simulated only), GPT-2 distilled from a frozen GPT-2
    # medium (the shape is the student's, whose weights get gradients: the teacher's 24 blocks
    # were read as the model trained; simulated only), a validation pass at batch 16 after each
    # step at B=4 (its peak: said as the evaluation's), a grouped-query Llama with biases on its
    # projections (its width was read from the key / value biases before: Qwen2's kind, and its
    # config.json predicted), pure bf16 training (16-bit weights, no autocast:
    # simulated only, its 16-bit parameters and blocks), fp32 training (no autocast: float32 read
    # from the trace, Hugging Face GPT-2's fp32 block simulated only), use_cache=False beside committed runs with the cache
    # (llama400m_lora8_b4_fit, gpt2_adafactor_b4_fit: their reports predict these), grouped-query
    # attention and a Llama at B·T = d (simulated only: the gated block's k / v width, inputs' casts
    # of a weight copy's size), those no GPU has run yet (2026-11-26 ran the 17 from
    # bert_b16_fit on: examples/traces/h100-torch2.11-beyond), and ResNet-50 over 6 steps (in 2
    # its fp16 GradScaler skipped both, so SGD's momentum state was never made) -------------------
    # NAME|EXPECT|PROGRAM|NEEDS|OFFLINE|ARGS. EXPECT: what the simulation gave at these arguments
    # (OFFLINE has sim), else an estimate. NEEDS: modules, ',' all of, '/' one of. OFFLINE: where
    # the run also exists without a GPU (sim: its simulated program; shim: the real one on simtorch).
    while IFS='|' read -r name expect prog needs offline args; do
        case $name in '' | '#'*) continue ;; esac
        one_run "$name" "$expect" "$prog" "$needs" "$offline" "$args"
    done <<'RUNS'
gan_b64_fit|fit|gan|torch|sim,shim|--batch-size 64 --steps 3
gan_b2560_oom|oom|gan|torch|sim,shim|--batch-size 2560 --steps 2
vitb16_probe_b256_fit|fit|vision|timm|sim,shim|--model vit-b16 --freeze-backbone --batch-size 256 --steps 2
vitb16_probe_b3022_oom|oom|vision|timm|sim,shim|--model vit-b16 --freeze-backbone --batch-size 3022 --steps 2
gpt2_kd_gpt2m_b6_oom|oom|hf|transformers|sim,shim|--model gpt2 --teacher gpt2-medium --batch-size 6 --grad-accum 1 --steps 2
gpt2_eval_b16_fit|fit|hf|transformers|sim,shim|--model gpt2 --eval-only --batch-size 16 --steps 3
gpt2_kd_gpt2m_b2_fit|fit|hf|transformers|sim,shim|--model gpt2 --teacher gpt2-medium --batch-size 2 --grad-accum 1 --steps 2
gpt2_evalb16_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --batch-size 4 --eval-batch-size 16 --grad-accum 1 --steps 2
llama_gqa300m_bias_b4_fit|fit|hf|transformers|sim,shim|--model llama-gqa-300m --attention-bias --batch-size 4 --grad-accum 1 --steps 2
llama160m_bf16_b8_a2_fit|fit|hf|transformers|sim,shim|--model llama-160m --amp none --dtype bf16 --batch-size 8 --grad-accum 2 --steps 2
gpt2_bf16_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --amp none --dtype bf16 --batch-size 4 --grad-accum 1 --steps 2
llama160m_bf16_lora8_b8_fit|fit|hf|transformers,peft|sim,shim|--model llama-160m --dtype bf16 --lora-rank 8 --batch-size 8 --grad-accum 1 --steps 2
bert_bf16_b8_fit|fit|hf|transformers|sim,shim|--model bert-base --dtype bf16 --amp none --batch-size 8 --grad-accum 1 --steps 2
gpt2_fp32_sgd_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --optimizer sgd --amp none --batch-size 4 --grad-accum 1 --steps 2
llama160m_fp32_b4_fit|fit|hf|transformers|sim,shim|--model llama-160m --amp none --batch-size 4 --grad-accum 1 --steps 1
llama400m_lora8_nocache_b4_fit|fit|hf|transformers,peft|sim,shim|--model llama-400m --batch-size 4 --lora-rank 8 --no-cache --grad-accum 1 --steps 2
gpt2_nocache_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --batch-size 4 --optimizer adafactor --no-cache --grad-accum 1 --steps 2
llama_gqa300m_b4_fit|fit|hf|transformers|sim,shim|--model llama-gqa-300m --batch-size 4 --grad-accum 1 --steps 2
llama400m_b1_fit|fit|hf|transformers|sim,shim|--model llama-400m --batch-size 1 --grad-accum 1 --steps 2
gpt2_sgd_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --batch-size 4 --optimizer sgd --grad-accum 1 --steps 2
gpt2_sgd_b16_oom|oom|hf|transformers|sim,shim|--model gpt2 --batch-size 16 --optimizer sgd --grad-accum 1 --steps 2
lit_gpt2_b16_oom|oom|lit|lightning/pytorch_lightning,transformers|-|--model gpt2 --batch-size 16 --steps 2
gpt2m_b4_oom|oom|hf|transformers|sim,shim|--model gpt2-medium --batch-size 4 --grad-accum 1 --steps 2
llama400m_b2_fit|fit|hf|transformers|sim,shim|--model llama-400m --batch-size 2 --grad-accum 1 --steps 2
gpt2_ckpt_b16_oom|oom|hf|transformers|sim,shim|--model gpt2 --batch-size 16 --gradient-checkpointing --grad-accum 1 --steps 2
gpt2_ckpt_reentrant_b8_fit|fit|hf|transformers|shim|--model gpt2 --batch-size 8 --gradient-checkpointing --checkpoint-reentrant --grad-accum 1 --steps 2
llama400m_lora8_ckpt_b16|any|hf|transformers,peft|-|--model llama-400m --batch-size 16 --lora-rank 8 --gradient-checkpointing --grad-accum 1 --steps 2
resnet50_b128_s6_fit|fit|vision|torchvision|sim,shim|--model resnet50 --batch-size 128 --steps 6
bert_b16_fit|fit|hf|transformers|sim,shim|--model bert-base --batch-size 16 --grad-accum 1 --steps 2
bert_b32_oom|oom|hf|transformers|sim,shim|--model bert-base --batch-size 32 --grad-accum 1 --steps 2
resnet50_b128_fit|fit|vision|torchvision|sim,shim|--model resnet50 --batch-size 128 --steps 2
resnet50_b320_oom|oom|vision|torchvision|sim,shim|--model resnet50 --batch-size 320 --steps 2
vitb16_b64_fit|fit|vision|timm/torchvision|sim,shim|--model vit-b16 --batch-size 64 --steps 2
vitb16_b256_oom|oom|vision|timm/torchvision|sim,shim|--model vit-b16 --batch-size 256 --steps 2
llama400m_lora8_b4_fit|fit|hf|transformers,peft|sim,shim|--model llama-400m --batch-size 4 --lora-rank 8 --grad-accum 1 --steps 2
llama400m_lora8_b8_oom|oom|hf|transformers,peft|sim,shim|--model llama-400m --batch-size 8 --lora-rank 8 --grad-accum 1 --steps 2
gpt2_ckpt_b8_fit|fit|hf|transformers|sim,shim|--model gpt2 --batch-size 8 --gradient-checkpointing --grad-accum 1 --steps 2
gpt2_ckpt_b32_oom|oom|hf|transformers|sim,shim|--model gpt2 --batch-size 32 --gradient-checkpointing --grad-accum 1 --steps 2
gpt2_adafactor_b4_fit|fit|hf|transformers|sim,shim|--model gpt2 --batch-size 4 --optimizer adafactor --grad-accum 1 --steps 2
gpt2_adafactor_b16_oom|oom|hf|transformers|sim,shim|--model gpt2 --batch-size 16 --optimizer adafactor --grad-accum 1 --steps 2
lit_gpt2_b4_fit|fit|lit|lightning/pytorch_lightning,transformers|-|--model gpt2 --batch-size 4 --steps 2
t5small_b8_fit|fit|hf|transformers|-|--model t5-small --batch-size 8 --grad-accum 1 --steps 2
t5small_b32_oom|oom|hf|transformers|-|--model t5-small --batch-size 32 --grad-accum 1 --steps 2
gpt2m_b1_a2_fit|fit|hf|transformers|sim,shim|--model gpt2-medium --batch-size 1 --grad-accum 2 --steps 2
llama400m_b4_oom|oom|hf|transformers|sim,shim|--model llama-400m --batch-size 4 --grad-accum 1 --steps 2
RUNS
    return 0
}

# has NEEDS: every ','-separated item present, an item being one of its '/' alternatives; the
# items missing go to $missing ("a or b, c")
has() {
    missing=""
    [ "$PROGRAMS" = real ] || return 0
    for item in $(echo "$1" | tr ',' ' '); do
        ok=no
        for alt in $(echo "$item" | tr '/' ' '); do
            grep -qx "$alt" "$W/have" && ok=yes
        done
        [ $ok = yes ] || missing="$missing${missing:+, }$(echo "$item" | sed 's|/| or |g')"
    done
    [ -z "$missing" ]
}

# one_run NAME EXPECT PROGRAM NEEDS OFFLINE ARGS: runs it under vramtrace, compares, packs
one_run() {
    name=$1 expect=$2 prog=$3 needs=$4 offline=$5 args=$6
    if [ -n "${BEYOND_ONLY:-}" ]; then
        case ",$BEYOND_ONLY," in *",$name,"*) ;; *) return 0 ;; esac
    fi
    case $prog in
        hf) real=examples/hf/hf_train.py sim=examples/sim/sim_hf.py ;;
        vision) real=examples/vision/vision_train.py sim=examples/sim/sim_vision.py ;;
        gan) real=examples/vision/gan_train.py sim=examples/sim/sim_gan.py ;;
        lit) real=examples/lightning/lit_train.py sim="" ;;
    esac
    file=$real
    if [ "$PROGRAMS" != real ]; then
        case ",$offline," in
            *",$PROGRAMS,"*) ;;
            *) note "- $name: skipped, no $PROGRAMS counterpart (runs on a GPU only)"; return 0 ;;
        esac
        [ "$PROGRAMS" = sim ] && file=$sim
    fi
    src=estimate
    case ",$offline," in *",sim,"*) src=simulation ;; esac
    if ! has "$needs"; then
        note "- $name: skipped, not installed for $PY: $missing"
        return 0
    fi
    lim=$(($(left) - 15))
    [ "$lim" -gt 150 ] && lim=150
    if [ "$lim" -lt 30 ]; then
        note "- $name: skipped, out of time"
        return 0
    fi
    # a plain AdamW bf16-autocast run of GPT-2 or a Llama also writes its config.json: what
    # `vramtrace predict CONFIG.json` is checked against after it (predict_note)
    cfg=""
    case "$prog $args" in
        *--lora-rank* | *--gradient-checkpointing* | *--ema* | *--optimizer* | *--amp* | *--dtype* | *--eval-only* | *--teacher* | *--eval-batch-size*) ;;
        "hf --model gpt2 "* | "hf --model gpt2-medium "* | "hf --model llama-"*)
            cfg=$W/$name.config.json
            args="$args --save-config $cfg" ;;
    esac
    rm -f "$W/$name.config.json"
    say "$name (expect $expect): $file $args"
    cmd="vramtrace run --card 12GiB -- python $file $args"
    rm -f "$W/$name.vt"*
    # shellcheck disable=SC2086
    timeout "$lim" "$VT" run --card 12GiB -o "$W/$name.vt" -- "$PY" "$file" $args </dev/null >"$W/$name.log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && note "- $name: timed out after ${lim}s"
    tail -3 "$W/$name.log" | cut -c1-240
    "$VT" report --json "$W/$name.vt" >"$W/$name.report.json" 2>"$W/$name.report.err"
    "$VT" report "$W/$name.vt" >"$P/reports/$name.txt" 2>&1
    kept=""
    if [ -f "$W/$name.vt" ]; then
        size=$(wc -c <"$W/$name.vt")
        packed=$(cat "$P"/traces/*.vt 2>/dev/null | wc -c)
        if [ "$size" -gt "$KEEP" ]; then
            note "- $name.vt not packed: $size bytes (> KEEP_TRACE_BYTES=$KEEP)"
        elif [ $((packed + size)) -gt $((48 << 20)) ]; then # the device returns 64 MiB at most
            note "- $name.vt not packed: the packed traces would pass 48 MiB"
        else
            cp "$W/$name.vt" "$P/traces/" && kept=--kept
        fi
    fi
    tail -300 "$W/$name.log" >"$P/logs/$name.log"
    cp "$W/$name.report.json" "$P/reports/$name.json" 2>/dev/null
    "$PY" "$CMP" row --name "$name" --expect "$expect" --expect-source "$src" --rc "$rc" --work "$W" \
        --vt "$VT" --command "$cmd" --facts "$P/facts.jsonl" $kept </dev/null >>"$P/results.jsonl" ||
        echo "{\"case\": \"$name\", \"rc\": $rc, \"verdict\": \"FAIL\", \"problems\": [\"beyond-compare.py failed\"]}" >>"$P/results.jsonl"
    tail -1 "$P/results.jsonl" | cut -c1-300
    [ -n "$cfg" ] && predict_note "$name" "$cfg" "$args"
    pack
}

# predict_note NAME CONFIG ARGS: `vramtrace predict CONFIG` at the run's micro-batch and
# accumulation against what the run measured (its truth line, the last of facts.jsonl): the
# tensors against max_memory_allocated, the verdict on the 12 GiB card against fit / OOM; a
# line in notes.md (summary.md), and the prediction packed in reports/
predict_note() {
    [ -s "$2" ] || { note "- $1: no config.json written: predict not checked"; return 0; }
    b=$(echo "$3" | sed -n 's/.*--batch-size \([0-9]*\).*/\1/p')
    g=$(echo "$3" | sed -n 's/.*--grad-accum \([0-9]*\).*/\1/p')
    cp "$2" "$P/reports/$1.config.json"
    "$VT" predict "$2" --batch-size "${b:-4}" --grad-accum "${g:-1}" --dtype bf16 --card 12GiB \
        --json >"$P/reports/$1.predict.json" 2>"$W/$1.predict.err" ||
        { note "- $1: predict $2 failed: $(tail -1 "$W/$1.predict.err")"; return 0; }
    "$PY" - "$1" "$P/reports/$1.predict.json" "$P/facts.jsonl" >>"$P/notes.md" <<'PYEOF' ||
import json, sys
name, pj, facts = sys.argv[1:]
p = json.load(open(pj))
t = json.loads(open(facts).read().splitlines()[-1])
kv = p.get("kv_cache_not_counted_bytes") or 0
meas = t.get("max_memory_allocated")
gib = lambda b: "%.2f GiB" % (b / 2**30)
line = "- %s: `vramtrace predict` of its config.json: tensors %s (+ %s KV cache not counted)" % (
    name, gib(p["tensor_bytes"]), gib(kv))
if meas and not t.get("oom") and t.get("steps", 0) >= 2:
    line += ", max_memory_allocated %s measured: %+.1f %% (%+.1f %% with the cache)" % (
        gib(meas), 100 * (p["tensor_bytes"] / meas - 1), 100 * ((p["tensor_bytes"] + kv) / meas - 1))
line += "; predicted %s on 12 GiB, the run %s" % (
    "to fit" if p.get("fits") else "not to fit", "ran out of memory" if t.get("oom") else "fit")
print(line)
PYEOF
        note "- $1: predict's check failed"
    tail -1 "$P/notes.md"
}

main 2>&1 | tee "$OUT/beyond.log"
pack
say "results" | tee -a "$OUT/beyond.log"
cat "$OUT/summary.md"
ls -la "$OUT"
echo "gpu-beyond.sh: done in $(($(date +%s) - START)) s; work files in $W" | tee -a "$OUT/beyond.log"
[ ! -e "$W/fatal" ]
