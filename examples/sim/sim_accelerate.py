"""examples/sim/sim_accelerate.py — a SIMULATION of a Hugging Face Accelerate training script in
the shape of transformers' run_clm_no_trainer.py: a causal language model of the simulated
transformers (GPT-2 small or medium, a Llama-style decoder) trained by the script's own loop under
accelerate's Accelerator (gradient_accumulation_steps and mixed_precision given to it; each
micro-batch under `with accelerator.accumulate(model)`, accelerator.backward(loss), then
optimizer.step(), lr_scheduler.step(), optimizer.zero_grad() on every micro-batch, which the
prepared optimizer skips but at the last micro-batch of each step). The flags are
run_clm_no_trainer.py's. No GPU, no PyTorch: the tensors eager PyTorch would allocate, on the fake
CUDA runtime.

    python3 examples/sim/sim_accelerate.py --model gpt2 --per_device_train_batch_size 4 \\
        --gradient_accumulation_steps 2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters; gradients before the first optimizer step and the optimizer's state after
it, read from the program's objects) and the allocator's counters."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import transformers as tf  # noqa: E402
from accelerate import Accelerator  # noqa: E402
from simtorch.utils.data import DataLoader, Dataset  # noqa: E402
from sim_truth import (tensor_bytes, state_tensors, factored_elements, print_truth,  # noqa: E402
                       record_oom)

MODELS = {
    # name: (family, layers, hidden, heads, intermediate, vocab)
    "gpt2": ("gpt2", 12, 768, 12, 3072, 50257),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 4096, 50257),
    "llama-400m": ("llama", 24, 1024, 16, 2816, 32000),
}


def build(name):
    family, layers, hidden, heads, inter, vocab = MODELS[name]
    if family == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads,
                                                vocab_size=vocab, resid_pdrop=0.0,
                                                embd_pdrop=0.0, attn_pdrop=0.0))
    return tf.LlamaForCausalLM(tf.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden,
                                              num_attention_heads=heads,
                                              intermediate_size=inter, vocab_size=vocab))


class Blocks(Dataset):
    """Grouped text blocks (input_ids, attention_mask, labels a copy), as run_clm groups them."""

    def __init__(self, n, vocab, block_size):
        self.n, self.vocab, self.block_size = n, vocab, block_size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, size=(self.block_size,))
        return {"input_ids": ids, "attention_mask": torch.ones(self.block_size, dtype=torch.int64),
                "labels": ids.clone()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="gpt2",
                    help="(the script's --model_name_or_path, as a simulated config)")
    ap.add_argument("--per_device_train_batch_size", type=int, default=8)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--block_size", type=int, default=1024)
    ap.add_argument("--max_train_steps", type=int, default=2)
    ap.add_argument("--learning_rate", type=float, default=5e-5)
    ap.add_argument("--weight_decay", type=float, default=0.0)
    ap.add_argument("--mixed_precision", choices=["no", "fp16", "bf16"], default="bf16",
                    help="(accelerate launch's; the script passes it to its Accelerator)")
    ap.add_argument("--gradient_checkpointing", action="store_true")
    a = ap.parse_args()
    print(f"sim_accelerate.py: {torch.SIMULATION}", flush=True)
    torch.manual_seed(0)
    accelerator = Accelerator(gradient_accumulation_steps=a.gradient_accumulation_steps,
                              mixed_precision=a.mixed_precision)
    family, layers, hidden, heads, _, vocab = MODELS[a.model]
    truth = {"program": "sim_accelerate.py", "loop": "accelerate", "family": family,
             "model": a.model, "batch_size": a.per_device_train_batch_size,
             "seq_len": a.block_size, "grad_accum": a.gradient_accumulation_steps,
             "optimizer": "adamw", "amp": {"no": "none"}.get(a.mixed_precision, a.mixed_precision),
             "dtype": "fp32", "gradient_checkpointing": a.gradient_checkpointing, "lora_rank": 0,
             "ema": False, "ema_bytes": 0, "eval_only": False, "teacher": None,
             "eval_batch_size": 0, "layers": layers, "hidden": hidden, "heads": heads,
             "vocab_size": vocab, "steps": 0, "oom": False, "oom_phase": None,
             "grad_bytes": None, "optim_state_bytes": None}
    model = build(a.model)
    if a.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    truth["use_cache"] = bool(model.config.use_cache)
    params = list(model.parameters())
    truth.update(params=sum(p.numel() for p in params), trainable_params=sum(
        p.numel() for p in params if p.requires_grad), trainable_tensors=len(params),
        factored_elements=factored_elements(params), buffer_elements=0)
    print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)
    no_decay = ["bias", "layer_norm.weight", "ln_f.weight", "norm.weight"]
    named = list(model.named_parameters())
    groups = [{"params": [p for n, p in named if not any(nd in n for nd in no_decay)],
               "weight_decay": a.weight_decay},
              {"params": [p for n, p in named if any(nd in n for nd in no_decay)],
               "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=a.learning_rate)
    steps = a.max_train_steps * a.gradient_accumulation_steps
    train_dataloader = DataLoader(Blocks(a.per_device_train_batch_size * steps, vocab,
                                         a.block_size), shuffle=True,
                                  collate_fn=tf.default_data_collator,
                                  batch_size=a.per_device_train_batch_size)
    lr_scheduler = tf.get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                                    num_training_steps=a.max_train_steps)
    phase = "model"
    try:
        model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
            model, optimizer, train_dataloader, lr_scheduler)
        truth["param_bytes"] = truth["trainable_param_bytes"] = tensor_bytes(params)
        truth["buffer_bytes"] = 0
        completed_steps = 0
        model.train()
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                phase = "forward"
                outputs = model(**batch)
                loss = outputs.loss
                phase = "backward"
                accelerator.backward(loss)
                if accelerator.sync_gradients and truth["grad_bytes"] is None:
                    truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
                phase = "optimizer"
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                completed_steps += 1
                truth["steps"] = completed_steps
                if truth["optim_state_bytes"] is None:
                    truth["optim_state_bytes"] = tensor_bytes(state_tensors(optimizer))
                print(f"step {completed_steps}: (simulated)", flush=True)
            if completed_steps >= a.max_train_steps:
                break
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
