"""examples/sim/sim_lightning.py — a SIMULATION of a PyTorch Lightning training script: a
LightningModule around a causal language model of the simulated transformers (GPT-2 small or
medium, a Llama-style decoder) or a ResNet-50 of the simulated torchvision, trained by
lightning's Trainer (automatic optimization: the optimizer's step runs the closure of forward and
backward, gradients set to None after the first micro-batch's forward, accumulate_grad_batches,
gradient clipping, the precision plugins "32-true", "bf16-mixed", "16-mixed" with a GradScaler,
"bf16-true"), batches from a DataLoader moved by the strategy. The flags are the Trainer's and the
DataLoader's, as Lightning scripts spell them. No GPU, no PyTorch: the tensors eager PyTorch
would allocate, on the fake CUDA runtime.

    python3 examples/sim/sim_lightning.py --model gpt2 --batch-size 4 --accumulate_grad_batches 2

It prints `VRAMTRACE_TORCH_STATS {json}` at the end (also after an out-of-memory error): its
own truth (parameters; gradients at the first optimizer step and the optimizer's state after
the run, read from the module's objects) and the allocator's counters."""
import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
import lightning as L  # noqa: E402
from simtorch.utils.data import DataLoader, Dataset  # noqa: E402
from sim_truth import (tensor_bytes, state_tensors, factored_elements, print_truth,  # noqa: E402
                       record_oom)

LM = {
    # name: (family, layers, hidden, heads, intermediate, vocab)
    "gpt2": ("gpt2", 12, 768, 12, 3072, 50257),
    "gpt2-medium": ("gpt2", 24, 1024, 16, 4096, 50257),
    "llama-400m": ("llama", 24, 1024, 16, 2816, 32000),
}
SEQ = 1024
# the precision plugin's autocast (none: the weights' own dtype, "bf16-true" casts them)
AMP = {"32-true": "none", "bf16-mixed": "bf16", "16-mixed": "fp16", "bf16-true": "none"}
IMAGE, CLASSES = 224, 1000


def build(name):
    import transformers as tf
    if name == "resnet50":
        from torchvision.models import resnet50
        return resnet50(num_classes=CLASSES)
    family, layers, hidden, heads, inter, vocab = LM[name]
    if family == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads,
                                                vocab_size=vocab, resid_pdrop=0.0,
                                                embd_pdrop=0.0, attn_pdrop=0.0))
    return tf.LlamaForCausalLM(tf.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden,
                                              num_attention_heads=heads,
                                              intermediate_size=inter, vocab_size=vocab))


class Samples(Dataset):
    """Token blocks (ids, labels a copy) or images and their class, made on the host."""

    def __init__(self, n, vocab):
        self.n, self.vocab = n, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.vocab is None:
            return torch.randn(3, IMAGE, IMAGE), torch.randint(0, CLASSES, ())
        ids = torch.randint(0, self.vocab, size=(SEQ,))
        return {"input_ids": ids, "labels": ids.clone()}


class LitModel(L.LightningModule):
    def __init__(self, name, optimizer, lr, truth):
        super().__init__()
        self.net = build(name)
        self.optimizer_name, self.lr, self.truth = optimizer, lr, truth

    def loss(self, batch):
        """The language model's loss on token ids, or cross-entropy on images and classes."""
        if isinstance(batch, dict):
            return self.net(input_ids=batch["input_ids"], labels=batch["labels"]).loss
        images, target = batch
        return F.cross_entropy(self.net(images), target)

    def training_step(self, batch, batch_idx):
        loss = self.loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        if self.optimizer_name == "sgd":
            return torch.optim.SGD(params, lr=self.lr, momentum=0.9)
        return torch.optim.AdamW(params, lr=self.lr, weight_decay=0.1)

    def on_before_optimizer_step(self, optimizer):
        if self.truth["grad_bytes"] is None:
            self.truth["grad_bytes"] = tensor_bytes(p.grad for p in self.parameters())


def oom_phase(tb):
    """Where the error came from, by the frames of its traceback (innermost decides)."""
    for name in reversed([f.name for f in traceback.extract_tb(tb)]):
        if name in ("backward", "backward_fn"):
            return "backward"
        if name in ("_fused_adamw", "_multi_tensor_adamw", "_init_group", "clip_grad_norm_"):
            return "optimizer"
        if name == "training_step":
            return "forward"
        if name == "validation_step":
            return "eval"
        if name == "batch_to_device":
            return "data"
    return "model"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(LM) + ["resnet50"], default="gpt2")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--accumulate_grad_batches", type=int, default=1)
    ap.add_argument("--precision", default="bf16-mixed",
                    choices=["32-true", "bf16-mixed", "16-mixed", "bf16-true"])
    ap.add_argument("--gradient_clip_val", type=float, default=1.0)
    ap.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    ap.add_argument("--max_steps", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--val_batch_size", type=int, default=0,
                    help="a validation DataLoader of this batch size (0: none): the sanity check's "
                         "2 batches before training, then limit_val_batches at each epoch's end")
    ap.add_argument("--limit_val_batches", type=int, default=2)
    a = ap.parse_args()
    print(f"sim_lightning.py: {torch.SIMULATION}", flush=True)
    L.seed_everything(0)
    vision = a.model == "resnet50"
    truth = {"program": "sim_lightning.py", "loop": "lightning.Trainer", "model": a.model,
             "family": "resnet" if vision else LM[a.model][0], "batch_size": a.batch_size,
             "seq_len": None if vision else SEQ, "image_size": IMAGE if vision else None,
             "grad_accum": a.accumulate_grad_batches, "precision": a.precision,
             "amp": AMP[a.precision], "dtype": "bf16" if a.precision == "bf16-true" else "fp32",
             "gradient_checkpointing": False, "lora_rank": 0, "ema": False, "ema_bytes": 0,
             "eval_only": False, "teacher": None, "eval_batch_size": a.val_batch_size,
             "optimizer": a.optimizer, "gradient_clip_val": a.gradient_clip_val,
             "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None}
    if not vision:
        _, layers, hidden, heads, _, vocab = LM[a.model]
        truth.update(layers=layers, hidden=hidden, heads=heads, vocab_size=vocab)
    model = LitModel(a.model, a.optimizer, a.lr, truth)
    params = list(model.parameters())
    trainable = [p for p in params if p.requires_grad]
    truth.update(buffer_elements=sum(b.numel() for b in model.buffers()),
                 use_cache=bool(getattr(getattr(model.net, "config", None), "use_cache", False)),
                 params=sum(p.numel() for p in params),
                 trainable_params=sum(p.numel() for p in trainable),
                 trainable_tensors=len(trainable), factored_elements=factored_elements(trainable))
    print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)
    loader = DataLoader(Samples(a.batch_size * a.accumulate_grad_batches * a.max_steps,
                                None if vision else truth["vocab_size"]),
                        batch_size=a.batch_size, num_workers=0)
    val_loader = DataLoader(Samples(a.val_batch_size * a.limit_val_batches,
                                    None if vision else truth["vocab_size"]),
                            batch_size=a.val_batch_size) if a.val_batch_size else None
    trainer = L.Trainer(accelerator="gpu", devices=1, precision=a.precision,
                        max_steps=a.max_steps, accumulate_grad_batches=a.accumulate_grad_batches,
                        gradient_clip_val=a.gradient_clip_val, logger=False,
                        limit_val_batches=a.limit_val_batches,
                        enable_checkpointing=False, enable_progress_bar=False)
    try:
        trainer.fit(model, loader, val_loader)
    except torch.OutOfMemoryError as e:
        record_oom(truth, oom_phase(e.__traceback__), e)
    truth["steps"] = trainer.global_step
    truth["param_bytes"] = tensor_bytes(model.parameters())
    truth["trainable_param_bytes"] = tensor_bytes(p for p in model.parameters() if p.requires_grad)
    truth["buffer_bytes"] = tensor_bytes(model.buffers())
    if trainer.optimizers:
        truth["optim_state_bytes"] = tensor_bytes(state_tensors(trainer.optimizers[0]))
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
