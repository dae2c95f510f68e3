"""gen_step.py — a SIMULATED GAN trained the way WGAN trains (its shape reduced to MLPs): each
generator iteration first runs --diters critic steps (the critic's loss on one batch of real
samples back-propagated, then on fakes the generator makes under no_grad: two backward passes and
one critic step), then ONE generator step (the generator's forward keeps what its backward needs,
through the critic, frozen for it; then the generator's own optimizer step). Both models are fp32
and both are trained, each by its own AdamW. At a batch its card cannot hold it runs out of memory
in the generator's first forward with a gradient, after the critic's steps: the generator's weights
have taken no gradient yet, and they train. Prints its truth (VRAMTRACE_TORCH_STATS: the two
models' parameters, the trainable count, their dtype, the steps, where it died). Used by
tests/integration/gen_step.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402


def mlp(n_in, width, layers, n_out):
    mods = [nn.Linear(n_in, width), nn.ReLU()]
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*mods, nn.Linear(width, n_out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batchSize", type=int, default=2048)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--nz", type=int, default=64)
    ap.add_argument("--nc", type=int, default=784)
    ap.add_argument("--g_layers", type=int, default=8)
    ap.add_argument("--Diters", type=int, default=3)
    ap.add_argument("--gen_iters", type=int, default=1)
    a = ap.parse_args()
    netG = mlp(a.nz, a.width, a.g_layers, a.nc)
    netD = mlp(a.nc, a.width, 1, 1)
    pg, pd = list(netG.parameters()), list(netD.parameters())
    truth = {"batch_size": a.batchSize, "generator_params": sum(p.numel() for p in pg),
             "critic_params": sum(p.numel() for p in pd), "param_dtype": "float32",
             "trainable_params": sum(p.numel() for p in pg + pd), "critic_steps": 0,
             "generator_steps": 0, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        netG.to("cuda"), netD.to("cuda")
        truth["param_bytes"] = tensor_bytes(pg + pd)
        optD = torch.optim.AdamW(pd, lr=1e-4)
        optG = torch.optim.AdamW(pg, lr=1e-4)
        for _ in range(a.gen_iters):
            for p in pd:
                p.requires_grad_(True)
            for _ in range(a.Diters):
                phase = "critic forward"
                optD.zero_grad()
                real = torch.randn(a.batchSize, a.nc).to("cuda")
                errD_real = netD(real).mean()
                phase = "critic backward"
                errD_real.backward()
                phase = "critic forward"
                noise = torch.randn(a.batchSize, a.nz).to("cuda")
                with torch.no_grad():
                    fake = netG(noise)
                errD_fake = -netD(fake).mean()
                phase = "critic backward"
                errD_fake.backward()
                phase = "critic step"
                optD.step()
                truth["critic_steps"] += 1
                truth["steps"] += 1
                del real, errD_real, noise, fake, errD_fake
            for p in pd:
                p.requires_grad_(False)
            phase = "generator forward"
            optG.zero_grad()
            noise = torch.randn(a.batchSize, a.nz).to("cuda")
            errG = netD(netG(noise)).mean()
            phase = "generator backward"
            errG.backward()
            phase = "generator step"
            optG.step()
            truth["generator_steps"] += 1
            truth["steps"] += 1
            del noise, errG
    except torch.OutOfMemoryError as e:
        truth["generator_grad_bytes_at_oom"] = tensor_bytes(p.grad for p in pg)
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
