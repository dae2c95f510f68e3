"""examples/sim/sim_trainer.py — a SIMULATION of a Hugging Face Trainer script: a causal language
model (GPT-2 small or medium, or a Llama-style decoder) from the simulated transformers, trained by
transformers.Trainer with TrainingArguments written here, in the script (batch size, gradient
accumulation, bf16, optimizer, checkpointing), on a pre-tokenized dataset of 1024-token blocks
(as run_clm.py's grouped texts: input_ids, attention_mask, labels). Its flags pick the model and
turn on the Trainer's auto_find_batch_size (an out-of-memory error halves the batch size and the
training starts again) and set its optimizer steps (--max-steps, default 1). No GPU, no PyTorch: the tensors eager PyTorch would allocate, on the fake CUDA runtime.

    python3 examples/sim/sim_trainer.py --model gpt2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters; gradients just before the first optimizer step and the optimizer's state
after it, read by a TrainerCallback) and the allocator's counters."""
import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
from simtorch.utils.data import Dataset  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM,  # noqa: E402
                          Trainer, TrainerCallback, TrainingArguments, default_data_collator)
from sim_truth import (tensor_bytes, state_tensors, print_truth,  # noqa: E402
                       record_oom)

BLOCK_SIZE = 1024


def build(name):
    if name == "gpt2":
        return GPT2LMHeadModel(GPT2Config(n_layer=12, n_embd=768, n_head=12, resid_pdrop=0.0,
                                          embd_pdrop=0.0, attn_pdrop=0.0))
    if name == "gpt2-medium":
        return GPT2LMHeadModel(GPT2Config(n_layer=24, n_embd=1024, n_head=16, resid_pdrop=0.0,
                                          embd_pdrop=0.0, attn_pdrop=0.0))
    return LlamaForCausalLM(LlamaConfig(num_hidden_layers=24, hidden_size=1024,
                                        num_attention_heads=16, intermediate_size=2816,
                                        vocab_size=32000))


class TokenBlocks(Dataset):
    """Blocks of token ids on the host, labels a copy of the ids (the model shifts them)."""

    def __init__(self, n, vocab):
        self.n, self.vocab = n, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, size=(BLOCK_SIZE,))
        return {"input_ids": ids, "attention_mask": torch.ones(BLOCK_SIZE, dtype=torch.int64),
                "labels": ids.clone()}


class Truth(TrainerCallback):
    """The gradients as the first optimizer step finds them, the optimizer's state after it."""

    def __init__(self, truth):
        self.truth = truth

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        if self.truth["grad_bytes"] is None:
            self.truth["grad_bytes"] = tensor_bytes(p.grad for p in model.parameters())

    def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        if self.truth["optim_state_bytes"] is None:
            self.truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))

    def on_step_end(self, args, state, control, **kwargs):
        self.truth["steps"] = state.global_step
        self.truth["batch_size"] = state.train_batch_size  # (auto_find_batch_size: what it ran)


def oom_phase(tb):
    """Where the error came from, by the frames of its traceback (innermost decides)."""
    names = [f.name for f in traceback.extract_tb(tb)]
    for name in reversed(names):
        if name in ("backward", "_engine_run_backward"):
            return "backward"
        if name in ("clip_grad_norm_", "step") and "training_step" not in names[names.index(name):]:
            return "optimizer"
        if name == "compute_loss":
            return "forward"
        if name in ("send_to_device", "get_batch_samples"):
            return "data"
    return "model"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["gpt2", "gpt2-medium", "llama-400m"], default="gpt2")
    ap.add_argument("--auto-find-batch-size", action="store_true")
    ap.add_argument("--max-steps", type=int, default=1)
    a = ap.parse_args()
    training_args = TrainingArguments(
        output_dir="out-sim-trainer",
        per_device_train_batch_size=4,
        gradient_accumulation_steps=4,
        learning_rate=3e-4,
        weight_decay=0.1,
        warmup_steps=0,
        max_steps=a.max_steps,
        logging_steps=1,
        bf16=True,
        optim="adamw_torch_fused",
        gradient_checkpointing=False,
        save_strategy="no",
        report_to="none",
        auto_find_batch_size=a.auto_find_batch_size,
    )
    print(f"sim_trainer.py: {torch.SIMULATION}", flush=True)
    torch.manual_seed(0)
    model = build(a.model)
    cfg = model.config
    family = "llama" if a.model.startswith("llama") else "gpt2"
    layers = getattr(cfg, "n_layer", None) or cfg.num_hidden_layers
    hidden = getattr(cfg, "n_embd", None) or cfg.hidden_size
    heads = getattr(cfg, "n_head", None) or cfg.num_attention_heads
    params = list(model.parameters())
    truth = {"program": "sim_trainer.py", "loop": "transformers.Trainer", "family": family,
             "model": a.model, "batch_size": training_args.per_device_train_batch_size,
             "seq_len": BLOCK_SIZE, "grad_accum": training_args.gradient_accumulation_steps,
             "optimizer": training_args.optim,
             "amp": "bf16" if training_args.bf16 else "fp16" if training_args.fp16 else "none",
             "gradient_checkpointing": training_args.gradient_checkpointing,
             "max_grad_norm": training_args.max_grad_norm, "lora_rank": 0, "layers": layers,
             "hidden": hidden, "heads": heads, "vocab_size": cfg.vocab_size,
             "params": sum(p.numel() for p in params), "trainable_params":
             sum(p.numel() for p in params if p.requires_grad),
             "trainable_tensors": sum(1 for p in params if p.requires_grad),
             "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None}
    print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)
    dataset = TokenBlocks(training_args.per_device_train_batch_size *
                          training_args.gradient_accumulation_steps * training_args.max_steps,
                          cfg.vocab_size)
    try:
        trainer = Trainer(model=model, args=training_args, train_dataset=dataset,
                          data_collator=default_data_collator, callbacks=[Truth(truth)])
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_param_bytes"] = tensor_bytes(p for p in params if p.requires_grad)
        trainer.train()
    except torch.OutOfMemoryError as e:
        record_oom(truth, oom_phase(e.__traceback__), e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
