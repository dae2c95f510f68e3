"""examples/lightning/lit_train.py — a tiny Lightning Trainer program: a Hugging Face GPT-2 or
Llama-style model from a config (examples/hf/hf_train.py's sizes) in a LightningModule, AdamW,
`precision="bf16-mixed"` (or "16-mixed", with Lightning's GradScaler), random tokens from a
DataLoader. The training loop is Lightning's, not the program's: vramtrace sees only its stacks.

    python examples/lightning/lit_train.py --model gpt2 --batch-size 4 --steps 2

At the end, and after an out-of-memory error (exit 1), it prints ONE line
`VRAMTRACE_TORCH_STATS {json}` with the fields of hf_train.py, counted from inside Lightning's
hooks (parameters at on_train_start, gradients at on_before_optimizer_step, optimizer state after
the first step), since Lightning moves the model back to the host when fit() ends or fails."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hf"))
from train_truth import (torch, need_torch, tensor_bytes, state_tensors, model_truth,  # noqa: E402
                         record_failure, versions, print_truth)
from hf_train import SIZES, build  # noqa: E402

PRECISION = {"bf16": "bf16-mixed", "fp16": "16-mixed", "none": "32-true"}


def lightning():
    try:
        import lightning as L
    except ImportError:
        import pytorch_lightning as L
    return L


def make_module(L, model, lr, truth):
    class LitLM(L.LightningModule):
        """The model, its loss, the optimizer, and the hooks that count the truth."""

        def __init__(self):
            super().__init__()
            self.model = model

        def on_train_start(self):
            model_truth(self.model, truth)
            print(f"number of parameters: {truth['params'] / 1e6:.2f}M", flush=True)

        def training_step(self, batch, batch_idx):
            truth["_phase"] = "forward"
            (x,) = batch
            return self.model(input_ids=x, labels=x).loss

        def on_before_backward(self, loss):
            truth["_phase"] = "backward"

        def on_before_optimizer_step(self, optimizer):
            truth["_phase"] = "optimizer"
            if truth["grad_bytes"] is None:
                truth["grad_bytes"] = tensor_bytes(p.grad for p in self.parameters())

        def on_train_batch_end(self, outputs, batch, batch_idx):
            opt = self.trainer.optimizers[0]
            if truth["optim_state_bytes"] is None and opt.state:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt))
            truth["steps"] = self.trainer.global_step

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=lr, weight_decay=0.01)

    return LitLM()


def parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=[m for m in sorted(SIZES) if SIZES[m][0] in ("gpt2", "llama")],
                    default="gpt2")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--amp", choices=sorted(PRECISION), default="bf16")
    ap.add_argument("--lr", type=float, default=3e-4)
    return ap


def main():
    a = parser().parse_args()
    need_torch()
    L = lightning()
    from torch.utils.data import DataLoader, TensorDataset
    family, layers, hidden, heads, inter, vocab, _ = SIZES[a.model]
    torch.manual_seed(0)
    truth = {"program": "lit_train.py", "args": vars(a), "trainer": "lightning", "family": family,
             "model": a.model, "batch_size": a.batch_size, "seq_len": a.seq_len,
             "grad_accum": a.grad_accum, "optimizer": "adamw", "amp": a.amp,
             "precision": PRECISION[a.amp], "gradient_checkpointing": False, "lora_rank": 0,
             "layers": layers, "hidden": hidden, "heads": heads, "vocab_size": vocab,
             "steps": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None, "_phase": "model"}
    rc = 0
    try:
        module = make_module(L, build(a.model, a.seq_len, 0.0), a.lr, truth)
        n = a.batch_size * a.grad_accum * a.steps
        data = TensorDataset(torch.randint(0, vocab, (n, a.seq_len)))
        loader = DataLoader(data, batch_size=a.batch_size, num_workers=0)
        trainer = L.Trainer(accelerator="gpu", devices=1, precision=PRECISION[a.amp],
                            max_steps=a.steps, max_epochs=1, accumulate_grad_batches=a.grad_accum,
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False, num_sanity_val_steps=0)
        trainer.fit(module, train_dataloaders=loader)
        truth["steps"] = trainer.global_step
    except Exception as e:  # noqa: BLE001 — OOM (or anything else): the truth line still comes
        rc = record_failure(truth, e, truth["_phase"])
    truth.pop("_phase")
    truth.update(versions("lightning", "pytorch_lightning", "transformers"))
    print_truth(truth)
    return rc


if __name__ == "__main__":
    sys.exit(main())
