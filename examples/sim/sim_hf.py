"""examples/sim/sim_hf.py — a SIMULATION of a plain Hugging Face training script (a user's own
loop, argparse flags) on simtorch and the simulated transformers / peft of simmodels/: GPT-2 (small,
medium), a Llama-style SwiGLU decoder (also with grouped-query attention), BERT-base masked LM; AdamW (fused), SGD or Adafactor; bf16
or fp16 autocast (fp16 with a GradScaler); gradient accumulation, gradient checkpointing, LoRA;
or evaluation only (--eval-only: forwards and their losses under torch.no_grad()); knowledge
distillation from a frozen teacher (--teacher).
No GPU, no PyTorch: the tensors eager PyTorch would allocate, on the fake CUDA runtime.

    python3 examples/sim/sim_hf.py --model gpt2-medium --batch-size 4 --grad-accum 2 --steps 2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters, gradients before the first optimizer step, optimizer state, counted from
its objects) and the allocator's counters."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
import transformers as tf  # noqa: E402
from sim_truth import (tensor_bytes, state_tensors, factored_elements, print_truth,  # noqa: E402
                       record_oom)

SIZES = {
    # name: (family, layers, hidden, heads, intermediate, vocab, default sequence length)
    "gpt2": ("gpt2", 12, 768, 12, 3072, 50257, 1024),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 4096, 50257, 1024),
    "llama-160m": ("llama", 12, 768, 12, 2048, 32000, 1024),
    "llama-400m": ("llama", 24, 1024, 16, 2816, 32000, 1024),
    "llama-gqa-300m": ("llama", 16, 1024, 16, 2816, 32000, 1024),
    "bert-base": ("bert", 12, 768, 12, 3072, 30522, 512),
}
KV_HEADS = {"llama-gqa-300m": 4}  # grouped-query attention: fewer key/value heads than heads


def build(name, seq, dropout, attention_bias=False):
    family, layers, hidden, heads, inter, vocab, _ = SIZES[name]
    if family == "gpt2":
        cfg = tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, vocab_size=vocab,
                            n_positions=max(1024, seq), resid_pdrop=dropout, embd_pdrop=dropout,
                            attn_pdrop=dropout)
        return tf.GPT2LMHeadModel(cfg)
    if family == "llama":
        cfg = tf.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                             num_key_value_heads=KV_HEADS.get(name), intermediate_size=inter,
                             vocab_size=vocab, max_position_embeddings=max(2048, seq),
                             attention_bias=attention_bias)
        return tf.LlamaForCausalLM(cfg)
    cfg = tf.BertConfig(num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
                        intermediate_size=inter, vocab_size=vocab,
                        max_position_embeddings=max(512, seq), hidden_dropout_prob=dropout,
                        attention_probs_dropout_prob=dropout)
    return tf.BertForMaskedLM(cfg)


def make_optimizer(name, params, lr):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, fused=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    return torch.optim.Adafactor(params, lr=lr, foreach=False)


def evaluate(model, batch_size, T, vocab, dev, dtype):
    """A validation pass: the model in eval mode, one batch's loss under no_grad."""
    model.eval()
    with torch.no_grad():
        x = torch.randint(0, vocab, (batch_size, T)).to(dev)
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = model(input_ids=x, labels=x).loss
        del loss, x
    model.train()

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(SIZES), default="gpt2")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=None, help="default: 1024 (512 for BERT)")
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--optimizer", choices=["adamw", "sgd", "adafactor"], default="adamw")
    ap.add_argument("--amp", choices=["bf16", "fp16", "none"], default="bf16")
    ap.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32",
                    help="the weights' dtype (model.to(dtype) before the device): bf16 with "
                         "--amp none is pure bf16 training")
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--lora-rank", type=int, default=0, help="LoRA on q/k/v/o (Llama); 0: off")
    ap.add_argument("--lora-alpha", type=int, default=16)
    ap.add_argument("--dropout", type=float, default=None, help="default: 0 (GPT-2), 0.1 (BERT)")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--no-cache", action="store_true",
                    help="use_cache=False: no KV cache in the forward (the config's default is on)")
    ap.add_argument("--ema", action="store_true",
                    help="an EMA copy of the weights (diffusers' EMAModel), stepped after each "
                         "optimizer step")
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
    a = ap.parse_args()
    family, layers, hidden, heads, inter, vocab, default_t = SIZES[a.model]
    T = a.seq_len or default_t
    if a.attention_bias and family != "llama":
        ap.error("--attention-bias: a Llama's option")
    if a.teacher and (SIZES[a.teacher][0] != family or SIZES[a.teacher][5] != vocab or a.eval_only):
        ap.error("--teacher: a model of the same family and vocabulary, in training")
    if a.lora_rank and family != "llama":
        ap.error("--lora-rank: the simulation puts LoRA on Llama's q/k/v/o projections only")
    dropout = a.dropout if a.dropout is not None else (0.1 if family == "bert" else 0.0)
    print(f"sim_hf.py: {torch.SIMULATION}", flush=True)
    dev = "cuda"
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[a.amp]
    truth = {"program": "sim_hf.py", "family": family, "model": a.model, "batch_size": a.batch_size,
             "seq_len": T, "grad_accum": a.grad_accum, "optimizer": a.optimizer, "amp": a.amp, "dtype": a.dtype,
             "gradient_checkpointing": a.gradient_checkpointing, "lora_rank": a.lora_rank,
             "attention_bias": a.attention_bias,
             "layers": layers, "hidden": hidden, "heads": heads, "vocab_size": vocab,
             "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None, "ema": a.ema, "ema_bytes": 0, "eval_only": a.eval_only,
             "teacher": a.teacher, "eval_batch_size": a.eval_batch_size}
    phase = "model"
    teacher = None
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
            from peft import LoraConfig, get_peft_model
            model = get_peft_model(model, LoraConfig(r=a.lora_rank, lora_alpha=a.lora_alpha,
                                                     target_modules=["q_proj", "k_proj",
                                                                     "v_proj", "o_proj"]))
        if a.gradient_checkpointing:
            if a.lora_rank:  # (frozen embeddings: the first block's input needs a gradient for
                model.enable_input_require_grads()  # a reentrant checkpoint to reach LoRA's)
            model.gradient_checkpointing_enable()
        if a.no_cache:
            model.config.use_cache = False
        truth["use_cache"] = bool(getattr(model.config, "use_cache", False))
        params = list(model.parameters()) + (list(teacher.parameters()) if teacher else [])
        trainable = [p for p in params if p.requires_grad]
        truth.update(params=sum(p.numel() for p in params),
                     trainable_params=sum(p.numel() for p in trainable),
                     trainable_tensors=len(trainable),
                     factored_elements=factored_elements(trainable))
        print(f"number of parameters: {truth['params'] / 1e6:.2f}M (trainable "
              f"{truth['trainable_params'] / 1e6:.2f}M)", flush=True)
        model.to(dev)
        if a.dtype != "fp32" and a.cast_on_device:
            model.to({"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype])
        model.train(not a.eval_only)
        truth["param_bytes"] = tensor_bytes(params)
        if a.eval_only:  # forwards and their losses only: nothing is trained
            with torch.no_grad():
                for step in range(a.steps):
                    phase = "forward"
                    x = torch.randint(0, vocab, (a.batch_size, T)).to(dev)
                    with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                        loss = model(input_ids=x, labels=x).loss
                    del loss, x
                    truth["forwards"] = step + 1  # (steps: optimizer steps, none)
                    print(f"eval step {step}: (simulated)", flush=True)
            print_truth(torch, truth)
            return 0
        truth["trainable_param_bytes"] = tensor_bytes(trainable)
        ema = None
        if a.ema:
            from diffusers import EMAModel
            ema = EMAModel(model.parameters())
            truth["ema_bytes"] = tensor_bytes(ema.shadow_params)
        opt = make_optimizer(a.optimizer, trainable, a.lr)
        scaler = torch.amp.GradScaler("cuda", enabled=a.amp == "fp16")
        for step in range(a.steps):
            for _ in range(a.grad_accum):
                phase = "forward"
                x = torch.randint(0, vocab, (a.batch_size, T))
                x = x.to(dev)
                y = x if family != "bert" else torch.randint(0, vocab, (a.batch_size, T)).to(dev)
                with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
                    if teacher is not None:
                        with torch.no_grad():
                            t_logits = teacher(input_ids=x).logits
                    out = model(input_ids=x, labels=y)
                    loss = out.loss
                    if teacher is not None:  # the teacher's logits matched, beside the labels
                        loss = loss + F.mse_loss(out.logits.float(), t_logits.float())
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
                ema.step(model.parameters())
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            opt.zero_grad(set_to_none=True)
            truth["steps"] = step + 1
            if a.eval_batch_size:
                phase = "eval"
                evaluate(model, a.eval_batch_size, T, vocab, dev, dtype)
            print(f"step {step}: (simulated)", flush=True)
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
