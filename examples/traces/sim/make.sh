#!/bin/sh
# make.sh — regenerates the SIMULATION traces of examples/traces/sim/ and their facts.jsonl:
# each program of examples/sim/ runs under `vramtrace run --card 12GiB` on a 24 GiB fake device
# from the repository root; its VRAMTRACE_TORCH_STATS line, the command and the exit code become
# one line of facts.jsonl. Needs `make all fake progs`. env: BUILD (default build), PYTHON.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
OUT=examples/traces/sim
cd "$ROOT" || exit 2
export SIMTORCH_LIB="$BUILD/examples/libsimtorch.so" FAKECUDA_MEM=24GiB
: >"$OUT/facts.jsonl.new"

# run NAME PROGRAM ARGS...: one trace and its facts line (CARD: another emulated card)
run() {
    name=$1
    shift
    rm -f "$OUT/$name.vt"
    "$BUILD/vramtrace" run -q --card "${CARD:-12GiB}" -o "$OUT/$name.vt" -- "$PY" "$@" >"$OUT/$name.out" 2>&1
    rc=$?
    "$PY" - "$OUT/$name.out" "$name.vt" "$rc" "FAKECUDA_MEM=24GiB vramtrace run --card ${CARD:-12GiB} -- python3 $*" \
        >>"$OUT/facts.jsonl.new" <<'PYEOF' || { echo "make.sh: $name: no stats line"; exit 1; }
import json, sys
out, trace, rc, command = sys.argv[1:5]
line = [l for l in open(out) if l.startswith("VRAMTRACE_TORCH_STATS ")][-1]
facts = json.loads(line.split(" ", 1)[1])
facts.update(trace=trace, command=command, exit_code=int(rc))
print(json.dumps(facts, sort_keys=True))
PYEOF
    rm -f "$OUT/$name.out"
    echo "$name: exit $rc, $(wc -c <"$OUT/$name.vt") bytes"
}

run gpt2m_b2_a2_fit examples/sim/sim_hf.py --model gpt2-medium --batch-size 2 --grad-accum 2 --steps 1
run gpt2m_b4_oom_forward examples/sim/sim_hf.py --model gpt2-medium --batch-size 4 --steps 1
run llama400m_b4_fit examples/sim/sim_hf.py --model llama-400m --batch-size 4 --steps 1
run llama400m_b1_fit examples/sim/sim_hf.py --model llama-400m --batch-size 1 --steps 2
# ... at 3: the largest its B=1 run had predicted with its own small cache share (it took 11.63 GiB
# of the 11.40 the 5 % headroom leaves): the cache grows with the tensors
run llama400m_b3_fit examples/sim/sim_hf.py --model llama-400m --batch-size 3 --steps 2
run llama_gqa300m_b4_fit examples/sim/sim_hf.py --model llama-gqa-300m --batch-size 4 --steps 2
run llama_gqa300m_bias_b4_fit examples/sim/sim_hf.py --model llama-gqa-300m --attention-bias --batch-size 4 --steps 2
run llama_gqa300m_b1_t256_fit examples/sim/sim_hf.py --model llama-gqa-300m --batch-size 1 --seq-len 256 --steps 2
# ... at 20: the largest micro-batch its B=1 run predicts, its forward fitted to the activations'
# largest over the run (its own tensors peaked in the backward, the forward's freed)
run llama_gqa300m_b20_t256_fit examples/sim/sim_hf.py --model llama-gqa-300m --batch-size 20 --seq-len 256 --steps 2
run llama400m_lora8_b4_fit examples/sim/sim_hf.py --model llama-400m --batch-size 4 --lora-rank 8 --steps 1
run bert_b16_fit examples/sim/sim_hf.py --model bert-base --batch-size 16 --steps 1
run bert_b32_oom_backward examples/sim/sim_hf.py --model bert-base --batch-size 32 --steps 1
run bert_dropout_b16_fit examples/sim/sim_hf.py --model bert-base --batch-size 16 --dropout 0.1 --steps 2
run gpt2_ckpt_b16_fit examples/sim/sim_hf.py --model gpt2 --batch-size 16 --gradient-checkpointing --steps 1
run gpt2_adafactor_b4_fit examples/sim/sim_hf.py --model gpt2 --batch-size 4 --optimizer adafactor --steps 1
# GPT-2 with SGD cut in its first forward at B=24 (about 55 % of its blocks ran), and the
# accumulation that fits (what the cut forward's per-block activations predict)
run gpt2_sgd_b24_oom_forward examples/sim/sim_hf.py --model gpt2 --batch-size 24 --optimizer sgd --steps 1
run gpt2_sgd_b6_a4_fit examples/sim/sim_hf.py --model gpt2 --batch-size 6 --grad-accum 4 --optimizer sgd --steps 2
# Llama 160M in fp16 cut in its first forward at B=32 (its forward's tensors there larger than its
# embedding), and a configuration that fits
run llama160m_fp16_b32_oom_forward examples/sim/sim_hf.py --model llama-160m --amp fp16 --batch-size 32 --steps 1
run llama160m_fp16_b8_a4_fit examples/sim/sim_hf.py --model llama-160m --amp fp16 --batch-size 8 --grad-accum 4 --steps 2
# a transformer with an EMA copy of its weights (diffusers' EMAModel)
run gpt2_ema_b4_fit examples/sim/sim_hf.py --model gpt2 --batch-size 4 --ema --steps 2
run gpt2_b4_fit examples/sim/sim_hf.py --model gpt2 --batch-size 4 --steps 2
run gpt2_b1_t64_fit examples/sim/sim_hf.py --model gpt2 --batch-size 1 --seq-len 64 --steps 2
# ... at 89: the largest micro-batch its B=1 run predicts (as llama_gqa300m_b20_t256_fit)
run gpt2_b89_t64_fit examples/sim/sim_hf.py --model gpt2 --batch-size 89 --seq-len 64 --steps 2
run llama160m_bf16_b8_a2_fit examples/sim/sim_hf.py --model llama-160m --amp none --dtype bf16 --batch-size 8 --grad-accum 2 --steps 2
run llama160m_bf16_b16_oom_backward examples/sim/sim_hf.py --model llama-160m --amp none --dtype bf16 --batch-size 16 --steps 1
run gpt2_bf16_b4_fit examples/sim/sim_hf.py --model gpt2 --amp none --dtype bf16 --batch-size 4 --steps 2
run llama160m_bf16_lora8_b8_fit examples/sim/sim_hf.py --model llama-160m --dtype bf16 --lora-rank 8 --batch-size 8 --steps 2
run llama160m_bf16_lora8_noamp_b8_fit examples/sim/sim_hf.py --model llama-160m --dtype bf16 --amp none --lora-rank 8 --batch-size 8 --steps 2
run bert_bf16_b8_fit examples/sim/sim_hf.py --model bert-base --dtype bf16 --amp none --batch-size 8 --steps 2
run resnet50_b128_fit examples/sim/sim_vision.py --model resnet50 --batch-size 128 --steps 1
run resnet50_b1_fit examples/sim/sim_vision.py --model resnet50 --batch-size 1 --steps 2
run resnet50_b320_oom_forward examples/sim/sim_vision.py --model resnet50 --batch-size 320 --steps 1
# ResNet-50 with AdamW at B=256: a failed device allocation in its first backward that PyTorch's
# allocator recovered from (no OOM), its last norm's 8192 B just before the images
run resnet50_adamw_b256_fit examples/sim/sim_vision.py --model resnet50 --batch-size 256 --optimizer adamw --steps 1
run vitb16_b64_fit examples/sim/sim_vision.py --model vit-b16 --batch-size 64 --steps 1
run unet_b16_fit examples/sim/sim_diffusion.py --batch-size 16 --image-size 128 --steps 2
run unet_b1_noema_fit examples/sim/sim_diffusion.py --batch-size 1 --image-size 64 --no-ema --steps 2
run unet_b32_oom_forward examples/sim/sim_diffusion.py --batch-size 32 --image-size 128 --steps 1
# ... half-way through its first forward: nothing recommended from its lower bounds (it had been
# recommended B=32 A=3, "may fit": run, B=32 A=3 and B=24 A=4 ran out of memory, B=16 fit)
run unet_b48_a2_oom_forward examples/sim/sim_diffusion.py --batch-size 48 --grad-accum 2 --image-size 128 --steps 1
# a Hugging Face Trainer script: batch size, accumulation, bf16 in its TrainingArguments
run trainer_gpt2_fit examples/sim/sim_trainer.py --model gpt2
run trainer_gpt2m_oom_forward examples/sim/sim_trainer.py --model gpt2-medium
# fp32 training (no autocast): the precision from the trace, float32's formula, a ViT's B
run gpt2_fp32_sgd_b4_fit examples/sim/sim_hf.py --model gpt2 --optimizer sgd --amp none --batch-size 4 --steps 2
run vitb16_fp32_sgd_b32_fit examples/sim/sim_vision.py --model vit-b16 --amp none --optimizer sgd --batch-size 32 --steps 1
run vitb16_384_c10_b8_fit examples/sim/sim_vision.py --model vit-b16 --image-size 384 --num-classes 10 --batch-size 8 --steps 2
run llama160m_fp32_b4_fit examples/sim/sim_hf.py --model llama-160m --amp none --batch-size 4 --steps 1
run gpt2m_fp32_b4_oom_forward examples/sim/sim_hf.py --model gpt2-medium --amp none --batch-size 4 --steps 1
run gpt2m_fp32_b1_a4_fit examples/sim/sim_hf.py --model gpt2-medium --amp none --batch-size 1 --grad-accum 4 --steps 2
# one step fits, the second step's forward (with AdamW's state) does not: llama400m_b4_fit's
# advice predicts these
run llama400m_b4_s2_oom_forward examples/sim/sim_hf.py --model llama-400m --batch-size 4 --steps 2
run llama400m_b2_a2_fit examples/sim/sim_hf.py --model llama-400m --batch-size 2 --grad-accum 2 --steps 2
run gpt2m_b1_a4_fit examples/sim/sim_hf.py --model gpt2-medium --batch-size 1 --grad-accum 4 --steps 2
# the weights, gradients and AdamW's state alone over a 6 GiB card: out of memory in the first
# optimizer step whatever the micro-batch
(CARD=6GiB run llama400m_b1_6gib_oom_optimizer examples/sim/sim_hf.py --model llama-400m --batch-size 1 --steps 2)
(CARD=8GiB run gpt2m_b2_8gib_oom_forward examples/sim/sim_hf.py --model gpt2-medium --batch-size 2 --steps 2)
# the bf16 siblings of the fp32 runs: what their advice's "bf16 mixed precision" predicts
run gpt2_sgd_b4_fit examples/sim/sim_hf.py --model gpt2 --optimizer sgd --batch-size 4 --steps 2
run llama160m_b4_fit examples/sim/sim_hf.py --model llama-160m --batch-size 4 --steps 2
run llama160m_b128_oom_forward examples/sim/sim_hf.py --model llama-160m --batch-size 128 --steps 1
# LoRA over grouped key / value: the adapters' B of k and v (kv×8) are a pair of their own
run llama_gqa300m_lora8_b2_fit examples/sim/sim_hf.py --model llama-gqa-300m --lora-rank 8 --batch-size 2 --steps 2
run llama_gqa300m_lora8_fp32_b2_fit examples/sim/sim_hf.py --model llama-gqa-300m --lora-rank 8 --amp none --batch-size 2 --steps 2
# one step with checkpointing: its tensors peak in the optimizer step, the forward's tensors gone
run llama400m_ckpt_b4_fit examples/sim/sim_hf.py --model llama-400m --gradient-checkpointing --batch-size 4 --steps 1
# ... through a second step: what llama400m_b4_fit's checkpointing what-if predicts (no KV cache:
# transformers turns use_cache off under checkpointing in training)
run llama400m_ckpt_b4_s2_fit examples/sim/sim_hf.py --model llama-400m --gradient-checkpointing --batch-size 4 --steps 2
# ... at 9: the largest micro-batch the one-step run predicts
run llama400m_ckpt_b9_s2_fit examples/sim/sim_hf.py --model llama-400m --gradient-checkpointing --batch-size 9 --steps 2
# evaluation only (forwards and their losses under no_grad): nothing trained
run gpt2_eval_b16_fit examples/sim/sim_hf.py --model gpt2 --eval-only --batch-size 16 --steps 3
run gpt2_eval_b18_fit examples/sim/sim_hf.py --model gpt2 --eval-only --batch-size 18 --steps 2
# ... out of memory at 24 in its first forward's logits: a forward under no_grad, no training
run gpt2_eval_b24_oom_forward examples/sim/sim_hf.py --model gpt2 --eval-only --batch-size 24 --steps 2
# ... in fp32 (no autocast copies: its logits say every block ran), at 16, at 19 (the largest the
# run at 16 predicts) and out of memory at 24
run gpt2_eval_fp32_b16_fit examples/sim/sim_hf.py --model gpt2 --eval-only --amp none --batch-size 16 --steps 2
run gpt2_eval_fp32_b19_fit examples/sim/sim_hf.py --model gpt2 --eval-only --amp none --batch-size 19 --steps 2
run gpt2_eval_fp32_b24_oom_forward examples/sim/sim_hf.py --model gpt2 --eval-only --amp none --batch-size 24 --steps 2
# knowledge distillation from a frozen GPT-2 medium (no_grad forward; its logits matched)
run gpt2_kd_gpt2m_b2_fit examples/sim/sim_hf.py --model gpt2 --teacher gpt2-medium --batch-size 2 --steps 2
run gpt2_kd_gpt2m_b4_fit examples/sim/sim_hf.py --model gpt2 --teacher gpt2-medium --batch-size 4 --steps 2
# ... out of memory in the student's first forward, after the teacher's (whose copies it freed)
run gpt2_kd_gpt2m_b6_oom_forward examples/sim/sim_hf.py --model gpt2 --teacher gpt2-medium --batch-size 6 --steps 2
# ... from a frozen copy of its own shape (as DPO's reference model: its no_grad forward first)
run gpt2_kd_gpt2_b2_fit examples/sim/sim_hf.py --model gpt2 --teacher gpt2 --batch-size 2 --steps 2
run gpt2_kd_gpt2_b4_fit examples/sim/sim_hf.py --model gpt2 --teacher gpt2 --batch-size 4 --steps 2
# a validation pass at batch 16 after each step (evaluate(), no_grad): the peak is the evaluation's
run gpt2_evalb16_b4_fit examples/sim/sim_hf.py --model gpt2 --batch-size 4 --eval-batch-size 16 --steps 2
run gpt2_evalb16_b2_fit examples/sim/sim_hf.py --model gpt2 --batch-size 2 --eval-batch-size 16 --steps 2
# a linear probe: the ViT's weights frozen but its head's (0.9 % train); the largest micro-batch
# its B=256 run predicts, and a batch that runs out of memory in the first forward, which keeps
# nothing for a backward (each frozen weight's 16-bit copy freed after use)
run vit_probe_b256_fit examples/sim/sim_vision.py --model vit-b16 --freeze-backbone --batch-size 256 --steps 2
run vit_probe_b1675_fit examples/sim/sim_vision.py --model vit-b16 --freeze-backbone --batch-size 1675 --steps 2
run vit_probe_b3022_oom_forward examples/sim/sim_vision.py --model vit-b16 --freeze-backbone --batch-size 3022 --steps 2
# a GAN (LSGAN, DCGAN-shaped at 64x64): a generator and a discriminator trained in turn by two
# AdamW optimizers; the largest micro-batch its B=64 run predicts; one out of memory
run gan_b64_fit examples/sim/sim_gan.py --batch-size 64 --steps 3
run gan_b1756_fit examples/sim/sim_gan.py --batch-size 1756 --steps 2
run gan_b2560_oom_forward examples/sim/sim_gan.py --batch-size 2560 --steps 2
# a Llama 160M distilled from a frozen Llama 400M at B·T = 1024, the teacher's width: the
# student's 16-bit B·T×2048 activation gradients are the teacher's fp32 1024×1024 weights' size
run llama160m_kd_llama400m_b2_t512_fit examples/sim/sim_hf.py --model llama-160m --teacher llama-400m --batch-size 2 --seq-len 512 --steps 2
# ... the largest micro-batch it predicts, and the largest that one predicts
run llama160m_kd_llama400m_b10_t512_fit examples/sim/sim_hf.py --model llama-160m --teacher llama-400m --batch-size 10 --seq-len 512 --steps 2
run llama160m_kd_llama400m_b12_t512_fit examples/sim/sim_hf.py --model llama-160m --teacher llama-400m --batch-size 12 --seq-len 512 --steps 2
# a U-Net without autocast (--amp none): fp32 weights and compute; one out of memory in its first
# forward, which shows no precision
# (at B=64 its timesteps' fp32 copy, 256 B, is half a 128-channel bias's size: an autocast copy)
run unet_fp32_b64_i32_fit examples/sim/sim_diffusion.py --batch-size 64 --image-size 32 --amp none --steps 2
run unet_noema_fp32_b24_oom_forward examples/sim/sim_diffusion.py --no-ema --amp none --batch-size 24 --image-size 128 --steps 1
# a Llama 400M at B=8, T=2048 out of memory in its first forward: a micro-batch of 1 fits, none
# keeping the effective batch of 8 does (accumulating keeps the gradients through each forward)
run llama400m_b8_t2048_oom_forward examples/sim/sim_hf.py --model llama-400m --batch-size 8 --seq-len 2048 --steps 1
# GPT-2 in fp16 with SGD at B=6, an evaluation at 8: the process peaks in the evaluation (its
# cache), the tensors in training
run gpt2_fp16_sgd_b6_evalb8_fit examples/sim/sim_hf.py --model gpt2 --amp fp16 --optimizer sgd --batch-size 6 --eval-batch-size 8 --steps 2
# a program that stops after its backward passes, before its first optimizer step (no OOM): what
# its training needs adds the state it never made, and says so
run llama160m_b4_a2_nostep_fit examples/sim/sim_hf.py --model llama-160m --batch-size 4 --grad-accum 2 --steps 1 --exit-before-step
# ResNet-50 with torch's Adafactor: a convolution's kernels are factored over their last two
# dimensions only (4.99 B of state per parameter), measured by one run and counted by one out of
# memory before its first step
run resnet50_adafactor_b64_fit examples/sim/sim_vision.py --model resnet50 --optimizer adafactor --batch-size 64 --steps 2
run resnet50_adafactor_b320_oom_forward examples/sim/sim_vision.py --model resnet50 --optimizer adafactor --batch-size 320 --steps 1
# grouped-query attention with activation checkpointing (on a small card no micro-batch fits: it
# is not offered checkpointing, which it has)
run llama_gqa300m_ckpt_b8_fit examples/sim/sim_hf.py --model llama-gqa-300m --gradient-checkpointing --batch-size 8 --steps 2
# LoRA with activation checkpointing (peft's model forwards gradient_checkpointing_enable to the
# transformers model; enable_input_require_grads first, so the reentrant checkpoint reaches the
# adapters): its largest micro-batch, 15, is predicted to the byte of its run's tensors
run llama400m_lora8_ckpt_b4_fit examples/sim/sim_hf.py --model llama-400m --lora-rank 8 --gradient-checkpointing --batch-size 4 --steps 2
# PyTorch Lightning's loop (sim_lightning.py: its Trainer's automatic optimization, the optimizer
# running the closure of forward and backward, zero_grad after the first micro-batch's forward):
# a Llama 400M out of memory in its second step's forward with the gradients alive (B=2, A=4, which
# the report predicts from it, is run by tests/integration/sim_lightning.sh)
run lightning_gpt2_b4_a2_fit examples/sim/sim_lightning.py --model gpt2 --batch-size 4 --accumulate_grad_batches 2
run lightning_resnet50_16mixed_sgd_b64_fit examples/sim/sim_lightning.py --model resnet50 --batch-size 64 --precision 16-mixed --optimizer sgd
run lightning_llama400m_b4_a2_oom_forward examples/sim/sim_lightning.py --model llama-400m --batch-size 4 --accumulate_grad_batches 2
# ... validating (its sanity check before any training step) at a batch of its own
run lightning_gpt2_b4_val8_fit examples/sim/sim_lightning.py --model gpt2 --batch-size 4 --val_batch_size 8
run lightning_gpt2_b4_val16_oom_eval examples/sim/sim_lightning.py --model gpt2 --batch-size 4 --val_batch_size 16
# one step at B=1: its tensors peak in the optimizer step, the forward's freed; a second step's
# forward holds the gradients too (Lightning zeroes them after it)
run lightning_llama400m_b1_s1_fit examples/sim/sim_lightning.py --model llama-400m --batch-size 1 --max_steps 1
run lightning_llama400m_b1_s2_fit examples/sim/sim_lightning.py --model llama-400m --batch-size 1 --max_steps 2
# ... the largest micro-batch the one-step run predicts (2), and 3, out of memory in its second step
run lightning_llama400m_b2_fit examples/sim/sim_lightning.py --model llama-400m --batch-size 2 --max_steps 2
run lightning_llama400m_b3_oom_forward examples/sim/sim_lightning.py --model llama-400m --batch-size 3 --max_steps 2
# a script of its own loop under accelerate (sim_accelerate.py: run_clm_no_trainer.py's flags,
# Accelerator(gradient_accumulation_steps=...), accelerator.accumulate(model))
run accelerate_gpt2_b4_a2_fit examples/sim/sim_accelerate.py --model gpt2 --per_device_train_batch_size 4 --gradient_accumulation_steps 2
run accelerate_llama400m_b4_a2_oom_forward examples/sim/sim_accelerate.py --model llama-400m --per_device_train_batch_size 4 --gradient_accumulation_steps 2
mv "$OUT/facts.jsonl.new" "$OUT/facts.jsonl"
