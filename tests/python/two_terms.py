"""two_terms.py — a SIMULATED critic (an MLP) trained the way WGAN and the DCGAN tutorial train
their discriminator: each optimizer step takes ONE batch of --batch real samples, back-propagates
its loss on them (errD_real.backward()), then makes fake samples from a generator under no_grad
(its noise copied onto the device between the two passes) and back-propagates the loss on those
(errD_fake.backward()): two backward passes of one batch, no gradient accumulation. With
--mode micro it accumulates instead: each step takes 2 micro-batches of --batch, each copied after
the last one's backward and freed after its own (--mode micro_held: all kept to the step with an
output of their size; micro_prefetch: also all copied before the first pass). With --mode gan each
iteration is a GAN's: the critic's step of two passes (as terms), then the generator's step of one
pass through the critic, with an optimizer of its own: optimizer steps of 2 and 1 backward passes,
no one count before each. With --nbs N (YOLOv5's nominal batch) --mode micro accumulates
max(round(N / --batch), 2) micro-batches, a count the program sets from its batch; with --rows R
each sample is R rows (a detector's positions over its feature map: activations, not weights,
grow with the batch). Prints its truth (VRAMTRACE_TORCH_STATS: batch_size, the accumulation
steps, backward passes per step). Used by tests/integration/two_terms.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--mode", choices=("terms", "micro", "micro_held", "micro_prefetch", "gan"), default="terms")
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--nbs", type=int, default=0, help="--mode micro: accumulate round(nbs / batch)")
    ap.add_argument("--rows", type=int, default=1, help="--mode micro: rows per sample")
    a = ap.parse_args()
    a.micro = 1 if a.mode in ("terms", "gan") else max(round(a.nbs / a.batch), 2) if a.nbs else 2
    truth = {"batch_size": a.batch, "gradient_accumulation_steps": a.micro,
             "backward_passes_per_step": 2 if a.micro == 1 else a.micro, "steps": 0,
             "optimizer_steps": 0,
             "oom": False, "oom_phase": None}
    phase = "init"
    try:
        netD = nn.Sequential(nn.Linear(a.width, a.width), nn.ReLU(), nn.Linear(a.width, a.width),
                             nn.ReLU(), nn.Linear(a.width, 1)).to("cuda")
        netG = nn.Sequential(nn.Linear(64, a.width), nn.ReLU(), nn.Linear(a.width, a.width)).to("cuda")
        opt = torch.optim.AdamW(list(netD.parameters()), lr=1e-4)
        optG = torch.optim.AdamW(list(netG.parameters()), lr=1e-4) if a.mode == "gan" else None
        for it in range(a.iters):
            opt.zero_grad()
            if a.micro == 1:
                phase = "forward"
                real = torch.randn(a.batch, a.width).to("cuda")
                errD_real = netD(real).mean()
                phase = "backward"
                errD_real.backward()
                phase = "forward"
                noise = torch.randn(a.batch, 64).to("cuda")
                with torch.no_grad():
                    fake = netG(noise)
                errD_fake = -netD(fake).mean()
                phase = "backward"
                errD_fake.backward()
            else:
                # micro_held: each micro-batch and its first layer's output (of its size) kept to
                # the step, as a loop that logs them does; micro_prefetch: those, and every
                # micro-batch copied before the first pass (as Hugging Face's Trainer does)
                pre = [torch.randn(a.batch, a.width).to("cuda") for _ in range(a.micro)] \
                    if a.mode == "micro_prefetch" else None
                held = []
                for k in range(a.micro):
                    phase = "forward"
                    x = pre[k] if pre else torch.randn(a.batch * a.rows, a.width).to("cuda")
                    if a.mode != "micro":
                        with torch.no_grad():
                            held.append((x, netD[0](x)))
                    loss = netD(x).mean() / a.micro
                    phase = "backward"
                    loss.backward()
                    del x, loss
            phase = "optimizer"
            opt.step()
            truth["optimizer_steps"] += 1
            if optG is not None:  # the generator's step: one pass through the critic
                optG.zero_grad()
                phase = "forward"
                noise = torch.randn(a.batch, 64).to("cuda")
                errG = netD(netG(noise)).mean()
                phase = "backward"
                errG.backward()
                del noise, errG
                phase = "optimizer"
                optG.step()
                truth["optimizer_steps"] += 1
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
