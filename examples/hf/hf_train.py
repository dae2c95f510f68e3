"""examples/hf/hf_train.py — a plain Hugging Face training loop, the kind of program vramtrace
did not write: GPT-2 (small, medium), a Llama-style decoder, BERT-base masked LM or T5-small built
from a config (no download, random tokens); AdamW (fused), SGD or Adafactor; AMP (bf16, or fp16
with a GradScaler); gradient accumulation, gradient checkpointing, LoRA (peft), torch.compile.

Flags are argparse's (dashes, no config file), the same as the SIMULATION examples/sim/sim_hf.py:

    python examples/hf/hf_train.py --model gpt2 --batch-size 4 --seq-len 1024 --compile
    python examples/hf/hf_train.py --model llama-400m --batch-size 4 --lora-rank 8 --grad-accum 1

At the end, and after an out-of-memory error (exit 1), it prints ONE line
`VRAMTRACE_TORCH_STATS {json}`: PyTorch's own memory figures and the ground truth of the
categories (parameters, gradients just before the first optimizer step, optimizer state after it,
counted from the program's objects; train_truth.py), which scripts/gpu-validate.sh and
scripts/gpu-beyond.sh compare with what vramtrace says."""
import argparse
import functools
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_truth import (torch, need_torch, tensor_bytes, state_tensors, model_truth,  # noqa: E402
                         record_failure, versions, print_truth)

SIZES = {
    # name: (family, layers, hidden, heads, intermediate, vocab, default sequence length)
    "gpt2": ("gpt2", 12, 768, 12, 3072, 50257, 1024),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 4096, 50257, 1024),
    "llama-160m": ("llama", 12, 768, 12, 2048, 32000, 1024),
    "llama-400m": ("llama", 24, 1024, 16, 2816, 32000, 1024),
    "llama-gqa-300m": ("llama", 16, 1024, 16, 2816, 32000, 1024),
    "bert-base": ("bert", 12, 768, 12, 3072, 30522, 512),
    "t5-small": ("t5", 6, 512, 8, 2048, 32128, 512),
}
KV_HEADS = {"llama-gqa-300m": 4}  # grouped-query attention: fewer key/value heads than heads
# LoRA on the attention projections, by their module names in each family
LORA_TARGETS = {
    "gpt2": ["c_attn", "attn.c_proj"],
    "llama": ["q_proj", "k_proj", "v_proj", "o_proj"],
    "bert": ["query", "key", "value", "attention.output.dense"],
    "t5": ["q", "k", "v", "o"],
}
LORA_TASK = {"gpt2": "CAUSAL_LM", "llama": "CAUSAL_LM", "t5": "SEQ_2_SEQ_LM", "bert": None}


def build(name, seq, dropout, attention_bias=False):
    import transformers as tf
    family, layers, hidden, heads, inter, vocab, _ = SIZES[name]
    if family == "gpt2":
        cfg = tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, vocab_size=vocab,
                            n_positions=max(1024, seq), resid_pdrop=dropout, embd_pdrop=dropout,
                            attn_pdrop=dropout)
        return tf.GPT2LMHeadModel(cfg)
    if family == "llama":
        cfg = tf.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                             num_key_value_heads=KV_HEADS.get(name, heads),
                             intermediate_size=inter, vocab_size=vocab,
                             max_position_embeddings=max(2048, seq),
                             attention_bias=attention_bias)
        return tf.LlamaForCausalLM(cfg)
    if family == "bert":
        cfg = tf.BertConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                            intermediate_size=inter, vocab_size=vocab,
                            max_position_embeddings=max(512, seq), hidden_dropout_prob=dropout,
                            attention_probs_dropout_prob=dropout)
        return tf.BertForMaskedLM(cfg)
    cfg = tf.T5Config(vocab_size=vocab, d_model=hidden, d_kv=hidden // heads, d_ff=inter,
                      num_layers=layers, num_decoder_layers=layers, num_heads=heads,
                      dropout_rate=dropout, feed_forward_proj="relu", decoder_start_token_id=0,
                      pad_token_id=0)
    return tf.T5ForConditionalGeneration(cfg)


def add_lora(model, family, rank, alpha):
    from peft import LoraConfig, get_peft_model
    task = LORA_TASK[family]
    kw = {"task_type": task} if task else {}
    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0,
                                            target_modules=LORA_TARGETS[family], **kw))


def checkpoint_variant(model):
    """use_reentrant of the checkpoint function transformers gave the layers (None: unknown)."""
    for m in model.modules():
        fn = getattr(m, "_gradient_checkpointing_func", None)
        if isinstance(fn, functools.partial):
            return fn.keywords.get("use_reentrant")
    return None


def make_optimizer(name, params, lr):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, fused=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    return torch.optim.Adafactor(params, lr=lr, foreach=False)  # torch >= 2.5


def parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(SIZES), default="gpt2")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=None, help="default: 1024 (512 for BERT, T5)")
    ap.add_argument("--grad-accum", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--optimizer", choices=["adamw", "sgd", "adafactor"], default="adamw")
    ap.add_argument("--amp", choices=["bf16", "fp16", "none"], default="bf16")
    ap.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32",
                    help="the weights' dtype (model.to(dtype) before the device): bf16 with "
                         "--amp none is pure bf16 training")
    ap.add_argument("--gradient-checkpointing", action="store_true",
                    help="model.gradient_checkpointing_enable() (transformers' default variant)")
    ap.add_argument("--checkpoint-reentrant", action="store_true",
                    help="with --gradient-checkpointing: use_reentrant=True (as the simulation)")
    ap.add_argument("--lora-rank", type=int, default=0, help="LoRA on the attention projections; 0: off")
    ap.add_argument("--lora-alpha", type=int, default=16)
    ap.add_argument("--dropout", type=float, default=None, help="default: 0 (GPT-2), 0.1 (BERT, T5)")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--no-cache", action="store_true",
                    help="model.config.use_cache = False: no KV cache in the training forward")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--ema", action="store_true",
                    help="an EMA copy of the weights (torch's AveragedModel with an EMA average), "
                         "updated after each optimizer step")
    ap.add_argument("--attention-bias", action="store_true",
                    help="Llama: biases on q, k, v and o (LlamaConfig(attention_bias=True); "
                         "Qwen2 has them on q, k and v)")
    ap.add_argument("--teacher", choices=sorted(SIZES), default=None,
                    help="knowledge distillation: a frozen teacher of the model's family (no_grad "
                         "forward of each batch, its logits matched by the loss: MSE beside the "
                         "cross-entropy), on the device before the model")
    ap.add_argument("--eval-batch-size", type=int, default=0,
                    help="a validation pass after each optimizer step: one batch of this size, "
                         "its loss under torch.no_grad() in evaluate(); 0: none")
    ap.add_argument("--cast-on-device", action="store_true",
                    help="with --dtype bf16/fp16: cast the weights on the device (model.to(dev), "
                         "then model.to(dtype): each fp32 weight freed there), not before it")
    ap.add_argument("--exit-before-step", action="store_true",
                    help="end after the first optimizer step's backward passes, before the step "
                         "(the gradients are freed as the program exits)")
    ap.add_argument("--eval-only", action="store_true",
                    help="evaluation only: model.eval(), each step a forward and its loss under "
                         "torch.no_grad(); no backward, no optimizer")
    ap.add_argument("--eval-data-first", action="store_true",
                    help="a held-out batch put on the device before the model is built, by a "
                         "function of the program's named load_eval_data")
    ap.add_argument("--save-config", metavar="FILE", default=None,
                    help="write the model's config.json (model.config.to_json_file) to FILE: "
                         "what `vramtrace predict FILE` reads")
    return ap


def evaluate(model, batch_size, T, vocab, dev, dtype):
    """A validation pass: the model in eval mode, one batch's loss under no_grad."""
    model.eval()
    with torch.no_grad():
        x = torch.randint(0, vocab, (batch_size, T), device=dev)
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = model(input_ids=x, labels=x).loss
        del loss, x
    model.train()

def main():
    a = parser().parse_args()
    need_torch()
    family, layers, hidden, heads, inter, vocab, default_t = SIZES[a.model]
    T = a.seq_len or default_t
    dropout = a.dropout if a.dropout is not None else (0.1 if family in ("bert", "t5") else 0.0)
    if a.teacher and (SIZES[a.teacher][0] != family or SIZES[a.teacher][5] != vocab or a.eval_only):
        sys.exit("hf_train.py: --teacher: a model of the same family and vocabulary, in training")
    if a.attention_bias and family != "llama":
        sys.exit("hf_train.py: --attention-bias: a Llama's option")
    dev = "cuda"
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[a.amp]
    truth = {"program": "hf_train.py", "args": vars(a), "family": family, "model": a.model,
             "batch_size": a.batch_size, "seq_len": T, "grad_accum": a.grad_accum,
             "optimizer": a.optimizer, "amp": a.amp, "dtype": a.dtype, "compile": a.compile,
             "gradient_checkpointing": a.gradient_checkpointing, "lora_rank": a.lora_rank,
             "attention_bias": a.attention_bias, "layers": layers, "hidden": hidden,
             "heads": heads, "vocab_size": vocab,
             "steps": 0, "iters": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None, "ema": a.ema, "ema_bytes": 0, "eval_only": a.eval_only,
             "teacher": a.teacher, "eval_batch_size": a.eval_batch_size}
    times, phase, rc, teacher = [], "model", 0, None
    try:
        if a.eval_data_first:  # (its frames say "eval" before any parameter exists)
            def load_eval_data():
                return torch.randint(0, vocab, (a.batch_size, T)).to(dev)
            held_out = load_eval_data()  # noqa: F841 (kept, as a program keeps it)
        if a.teacher:  # frozen, evaluated, on the device first
            teacher = build(a.teacher, T, 0.0)
            teacher.requires_grad_(False)
            teacher.eval()
            teacher.to(dev)
        model = build(a.model, T, dropout, a.attention_bias)
        if a.save_config:
            model.config.to_json_file(a.save_config, use_diff=False)
        if a.dtype != "fp32" and not a.cast_on_device:  # 16-bit weights (LoRA's adapters
            model.to({"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype])  # stay fp32)
        if a.lora_rank:
            model = add_lora(model, family, a.lora_rank, a.lora_alpha)
        if a.gradient_checkpointing:
            kw = {"use_reentrant": True} if a.checkpoint_reentrant else None
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kw)
            if a.lora_rank:  # frozen embeddings: the checkpointed blocks' inputs need a gradient
                model.enable_input_require_grads()
            truth["checkpoint_use_reentrant"] = checkpoint_variant(model)
        if a.no_cache and hasattr(model.config, "use_cache"):
            model.config.use_cache = False
        truth["use_cache"] = bool(getattr(model.config, "use_cache", False))
        model.to(dev)
        if a.dtype != "fp32" and a.cast_on_device:
            model.to({"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype])
        model.train(not a.eval_only)
        trainable = model_truth(model, truth)
        if teacher is not None:  # its weights are the trace's too (no gradient, no state)
            truth["params"] += sum(p.numel() for p in teacher.parameters())
            truth["param_bytes"] += tensor_bytes(teacher.parameters())
        print(f"number of parameters: {truth['params'] / 1e6:.2f}M (trainable "
              f"{truth['trainable_params'] / 1e6:.2f}M)", flush=True)
        if a.eval_only:  # forwards and their losses only: nothing is trained
            with torch.no_grad():
                for step in range(a.steps):
                    t0 = time.perf_counter()
                    phase = "forward"
                    x = torch.randint(0, vocab, (a.batch_size, T), device=dev)
                    with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                        loss = model(input_ids=x, labels=x).loss
                    print(f"eval step {step}: loss {loss.item():.4f}", flush=True)
                    del loss, x
                    torch.cuda.synchronize()
                    times.append((time.perf_counter() - t0) * 1000.0)
                    truth["forwards"] = step + 1  # (steps, iters: optimizer steps, none)
        else:  # training
            ema = None
            if a.ema:
                from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
                ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
                truth["ema_bytes"] = tensor_bytes(ema.module.parameters())
            opt = make_optimizer(a.optimizer, trainable, a.lr)
            scaler = torch.amp.GradScaler("cuda", enabled=a.amp == "fp16")
            step_fn = torch.compile(model) if a.compile else model
            for step in range(a.steps):
                t0 = time.perf_counter()
                for _ in range(a.grad_accum):
                    phase = "forward"
                    x = torch.randint(0, vocab, (a.batch_size, T), device=dev)
                    y = x if family in ("gpt2", "llama") else torch.randint(0, vocab, (a.batch_size, T), device=dev)
                    with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                        if teacher is not None:
                            with torch.no_grad():
                                t_logits = teacher(input_ids=x).logits
                        out = step_fn(input_ids=x, labels=y)
                        loss = out.loss
                        if teacher is not None:  # the teacher's logits matched, beside the labels
                            loss = loss + torch.nn.functional.mse_loss(out.logits.float(),
                                                                       t_logits.float())
                            del t_logits
                        loss = loss / a.grad_accum
                        del out
                    phase = "backward"
                    scaler.scale(loss).backward()
                if step == 0:
                    truth["grad_bytes"] = tensor_bytes(p.grad for p in trainable)
                if a.exit_before_step:
                    break
                phase = "optimizer"
                scaler.step(opt)
                scaler.update()
                if ema is not None:
                    ema.update_parameters(model)
                if step == 0:
                    truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
                opt.zero_grad(set_to_none=True)
                if a.eval_batch_size:
                    phase = "eval"
                    evaluate(model, a.eval_batch_size, T, vocab, dev, dtype)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1000.0)
                truth["steps"] = truth["iters"] = step + 1
                print(f"step {step}: loss {loss.item() * a.grad_accum:.4f}, {times[-1]:.1f} ms", flush=True)
    except Exception as e:  # noqa: BLE001 — OOM (or anything else): the truth line still comes
        rc = record_failure(truth, e, phase)
    skip = max(1, len(times) // 3) if len(times) > 1 else 0
    truth["ms_per_iter"] = round(statistics.median(times[skip:]), 3) if times else None
    truth.update(versions("transformers", "peft"))
    print_truth(truth)
    return rc


if __name__ == "__main__":
    sys.exit(main())
