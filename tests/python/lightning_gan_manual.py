"""lightning_gan_manual.py — a SIMULATED GAN trained by PyTorch Lightning's manual optimization
(the simulated lightning of examples/sim/simmodels): a LightningModule with
automatic_optimization = False whose training_step takes its two optimizers (opt_g, opt_d =
self.optimizers()) and steps them in turn, as Lightning's GAN example does: the generator
(toggle_optimizer(opt_g): the discriminator's weights need no gradient then; its loss through the
discriminator, manual_backward, opt_g.step(), opt_g.zero_grad(set_to_none=True),
untoggle_optimizer), then the discriminator likewise on real images and the generator's detached
fakes. The two models' gradients are never live at once. Generator and discriminator are MLPs of
clearly different sizes (--g_width, --d_width), each with its own AdamW (no weight decay:
Adam's update; 8 B of state per parameter of its own model). Prints VRAMTRACE_TORCH_STATS with
its truth: each model's parameters (all trainable), each optimizer's state bytes and the
parameters it steps, each model's gradient bytes at its step, steps (optimizer steps: two a
batch). Used by
tests/integration/lightning_gan_manual.sh."""
import argparse
import os
import sys

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim")
sys.path.insert(0, SIM)
sys.path.insert(0, os.path.join(SIM, "simmodels", "site-packages"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
import lightning as L  # noqa: E402
from simtorch.utils.data import DataLoader, Dataset  # noqa: E402
from sim_truth import tensor_bytes, state_tensors, print_truth, record_oom  # noqa: E402

IMAGE = 3 * 32 * 32


class Images(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(IMAGE)


def mlp(sizes, last):
    mods = []
    for a, b in zip(sizes, sizes[1:]):
        mods += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*(mods[:-1] + ([last] if last is not None else [])))


class GAN(L.LightningModule):
    def __init__(self, nz, g_width, d_width, lr, truth):
        super().__init__()
        self.automatic_optimization = False
        self.nz, self.lr, self.truth = nz, lr, truth
        self.generator = mlp([nz, g_width, 2 * g_width, IMAGE], nn.Tanh())
        self.discriminator = mlp([IMAGE, d_width, d_width // 2, 1], None)

    def training_step(self, batch, batch_idx):
        real = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(real.shape[0], self.nz).to(real.device)
        # the generator: its fakes through the discriminator, towards 1
        self.toggle_optimizer(opt_g)
        fake = self.generator(z)
        score = self.discriminator(fake)
        g_loss = F.mse_loss(score, torch.ones_like(score))
        self.manual_backward(g_loss)
        if self.truth["g_grad_bytes"] is None:
            self.truth["g_grad_bytes"] = tensor_bytes(p.grad for p in self.generator.parameters())
            self.truth["d_grad_bytes_in_g_step"] = tensor_bytes(
                p.grad for p in self.discriminator.parameters())
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        self.untoggle_optimizer(opt_g)
        self.log("g_loss", g_loss)
        del score, g_loss
        # the discriminator: real images towards 1, the detached fakes towards 0
        self.toggle_optimizer(opt_d)
        d_real, d_fake = self.discriminator(real), self.discriminator(fake.detach())
        d_loss = 0.5 * (F.mse_loss(d_real, torch.ones_like(d_real)) +
                        F.mse_loss(d_fake, torch.zeros_like(d_fake)))
        self.manual_backward(d_loss)
        if self.truth["d_grad_bytes"] is None:
            self.truth["d_grad_bytes"] = tensor_bytes(p.grad for p in self.discriminator.parameters())
            self.truth["g_grad_bytes_in_d_step"] = tensor_bytes(
                p.grad for p in self.generator.parameters())
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        self.untoggle_optimizer(opt_d)
        self.log("d_loss", d_loss)

    def configure_optimizers(self):
        opt_g = torch.optim.AdamW(self.generator.parameters(), lr=self.lr, betas=(0.5, 0.999),
                                  weight_decay=0.0)
        opt_d = torch.optim.AdamW(self.discriminator.parameters(), lr=self.lr, betas=(0.5, 0.999),
                                  weight_decay=0.0)
        return [opt_g, opt_d]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--nz", type=int, default=128)
    ap.add_argument("--g_width", type=int, default=2048)
    ap.add_argument("--d_width", type=int, default=3072)
    ap.add_argument("--max_steps", type=int, default=4, help="optimizer steps (two a batch)")
    ap.add_argument("--lr", type=float, default=2e-4)
    a = ap.parse_args()
    truth = {"program": "lightning_gan_manual.py", "loop": "lightning.Trainer", "family": "gan",
             "manual_optimization": True, "batch_size": a.batch_size, "grad_accum": 1,
             "optimizer": "adamw", "amp": "none", "dtype": "fp32", "steps": 0, "oom": False,
             "oom_phase": None, "g_grad_bytes": None, "d_grad_bytes": None,
             "optim_state_bytes": None}
    model = GAN(a.nz, a.g_width, a.d_width, a.lr, truth)
    g = sum(p.numel() for p in model.generator.parameters())
    d = sum(p.numel() for p in model.discriminator.parameters())
    truth.update(generator_params=g, discriminator_params=d, params=g + d,
                 generator_trainable=g, discriminator_trainable=d, trainable_params=g + d)
    loader = DataLoader(Images(a.batch_size * a.max_steps), batch_size=a.batch_size)
    trainer = L.Trainer(accelerator="gpu", devices=1, precision="32-true", max_steps=a.max_steps,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False)
    try:
        trainer.fit(model, loader)
    except torch.OutOfMemoryError as e:
        record_oom(truth, "training", e)
    truth["steps"] = trainer.global_step
    truth["param_bytes"] = tensor_bytes(model.parameters())
    if trainer.optimizers:
        opt_g, opt_d = trainer.optimizers
        truth["g_optim_state_bytes"] = tensor_bytes(state_tensors(opt_g))
        truth["d_optim_state_bytes"] = tensor_bytes(state_tensors(opt_d))
        truth["g_optim_params"] = sum(p.numel() for gr in opt_g.param_groups for p in gr["params"])
        truth["d_optim_params"] = sum(p.numel() for gr in opt_d.param_groups for p in gr["params"])
        truth["optim_state_bytes"] = truth["g_optim_state_bytes"] + truth["d_optim_state_bytes"]
        truth["grad_bytes_max"] = max(truth["g_grad_bytes"] or 0, truth["d_grad_bytes"] or 0)
    print_truth(torch, truth)
    return 1 if truth["oom"] else 0


if __name__ == "__main__":
    sys.exit(main())
