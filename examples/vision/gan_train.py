"""examples/vision/gan_train.py — a plain GAN training loop (argparse flags, its own loop): a
least-squares GAN on random 64x64 images, a DCGAN-shaped generator (the latent projected to
512x4x4, four nearest-upsampling + 3x3 convolution + BatchNorm + ReLU stages, a 3x3 convolution
to RGB and tanh) and discriminator (four stride-2 4x4 convolutions, BatchNorm, a linear score),
trained in turn each iteration by two AdamW optimizers (betas 0.5, 0.999): the discriminator on
real images and the generator's detached fakes, then the generator through the discriminator.
fp32, nothing to download.

Flags are the same as the SIMULATION examples/sim/sim_gan.py:

    python examples/vision/gan_train.py --batch-size 64 --steps 3

At the end, and after an out-of-memory error (exit 1), it prints ONE line
`VRAMTRACE_TORCH_STATS {json}`: PyTorch's own memory figures and the ground truth of the
categories (both models' parameters, their gradients before the generator's first step, both
optimizers' state after it, counted from the program's objects; examples/hf/train_truth.py)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hf"))
from train_truth import (torch, need_torch, tensor_bytes, state_tensors,  # noqa: E402
                         record_failure, versions, print_truth)

nn = torch.nn if torch else None
F = torch.nn.functional if torch else None


Module = torch.nn.Module if torch else object  # (--help needs no PyTorch)


class Generator(Module):
    def __init__(self, nz, ngf):
        super().__init__()
        self.ngf = ngf
        self.project = nn.Linear(nz, ngf * 8 * 4 * 4)
        chans = [ngf * 8, ngf * 4, ngf * 2, ngf, ngf // 2]
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(chans, chans[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm2d(b) for b in chans[1:])
        self.to_rgb = nn.Conv2d(chans[-1], 3, 3, padding=1)

    def forward(self, z):
        x = F.relu(self.project(z)).view(z.shape[0], self.ngf * 8, 4, 4)
        for conv, norm in zip(self.convs, self.norms):
            x = F.relu(norm(conv(F.interpolate(x, scale_factor=2))))
        return torch.tanh(self.to_rgb(x))


class Discriminator(Module):
    def __init__(self, ndf):
        super().__init__()
        chans = [3, ndf, ndf * 2, ndf * 4, ndf * 8]
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 4, stride=2, padding=1)
                                   for a, b in zip(chans, chans[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm2d(b) for b in chans[2:])
        self.score = nn.Linear(ndf * 8 * 4 * 4, 1)

    def forward(self, x):
        x = F.relu(self.convs[0](x))
        for conv, norm in zip(self.convs[1:], self.norms):
            x = F.relu(norm(conv(x)))
        return self.score(x.flatten(1))


def parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--nz", type=int, default=128, help="the latent's size")
    ap.add_argument("--width", type=int, default=64, help="ngf = ndf: the models' base width")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--lr", type=float, default=2e-4)
    return ap


def main():
    a = parser().parse_args()
    need_torch()
    dev = "cuda"
    torch.manual_seed(0)
    truth = {"program": "gan_train.py", "args": vars(a), "family": "gan", "model": "lsgan-dcgan64",
             "batch_size": a.batch_size, "image_size": 64, "grad_accum": 1, "optimizer": "adamw",
             "amp": "none", "steps": 0, "iterations": 0, "oom": False, "oom_phase": None, "grad_bytes": None,
             "optim_state_bytes": None}
    phase, rc = "model", 0
    try:
        G, D = Generator(a.nz, a.width), Discriminator(a.width)
        params = list(G.parameters()) + list(D.parameters())
        buffers = list(G.buffers()) + list(D.buffers())
        truth.update(params=sum(p.numel() for p in params),
                     trainable_params=sum(p.numel() for p in params),
                     generator_params=sum(p.numel() for p in G.parameters()),
                     discriminator_params=sum(p.numel() for p in D.parameters()),
                     buffer_elements=sum(b.numel() for b in buffers))
        G.to(dev)
        D.to(dev)
        params = list(G.parameters()) + list(D.parameters())
        truth["param_bytes"] = tensor_bytes(params)
        truth["trainable_param_bytes"] = truth["param_bytes"]
        truth["buffer_bytes"] = tensor_bytes(list(G.buffers()) + list(D.buffers()))
        opt_g = torch.optim.AdamW(G.parameters(), lr=a.lr, betas=(0.5, 0.999), weight_decay=0.0)
        opt_d = torch.optim.AdamW(D.parameters(), lr=a.lr, betas=(0.5, 0.999), weight_decay=0.0)
        for step in range(a.steps):
            phase = "forward"
            real = torch.randn(a.batch_size, 3, 64, 64).to(dev)
            z = torch.randn(a.batch_size, a.nz).to(dev)
            fake = G(z)
            # the discriminator: real images towards 1, the generator's (detached) towards 0
            opt_d.zero_grad(set_to_none=True)
            d_real, d_fake = D(real), D(fake.detach())
            loss_d = 0.5 * (F.mse_loss(d_real, torch.ones_like(d_real)) +
                            F.mse_loss(d_fake, torch.zeros_like(d_fake)))
            phase = "backward"
            loss_d.backward()
            phase = "optimizer"
            opt_d.step()
            # the generator, through the discriminator: its fakes towards 1
            phase = "forward"
            opt_g.zero_grad(set_to_none=True)
            loss_g = 0.5 * F.mse_loss(D(fake), torch.ones_like(d_fake))
            phase = "backward"
            loss_g.backward()
            if step == 0:
                # (the discriminator's too: the generator's backward ran through it)
                truth["grad_bytes"] = tensor_bytes(p.grad for p in params)
            phase = "optimizer"
            opt_g.step()
            if step == 0:
                truth["optim_state_bytes"] = tensor_bytes(state_tensors(opt_g) + state_tensors(opt_d))
            truth.update(steps=2 * (step + 1), iterations=step + 1)  # two optimizer steps each
            print(f"iteration {step}: loss D {loss_d.item():.4f} G {loss_g.item():.4f}", flush=True)
    except Exception as e:  # noqa: BLE001 — OOM (or anything else): the truth line still comes
        rc = record_failure(truth, e, phase)
    truth.update(versions())
    print_truth(truth)
    return rc


if __name__ == "__main__":
    sys.exit(main())
