"""cast_output.py — a SIMULATED denoiser written in the program (convolutions, GroupNorm, SiLU),
trained as a diffusion loop trains one: an image batch drawn on the host, moved to the device and
cast there before the forward (x0 = imgs.cuda().float(), alive until the next one), noise added,
the forward under bf16 autocast, and the model's output cast to fp32 for an MSE loss
(F.mse_loss(pred.float(), noise), the cast saved for the loss's backward), AdamW (foreach). The
output's cast is no B*T*V: nothing of a vocabulary tells it from the batch's cast but when it
is made, after the forward. Prints its truth (VRAMTRACE_TORCH_STATS): the output cast's and the
image batch's bytes. Used by tests/integration/cast_output.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class Denoiser(nn.Module):
    def __init__(self, ch, width):
        super().__init__()
        self.inp = nn.Conv2d(ch, width, 3, padding=1)
        self.blocks = nn.ModuleList([nn.Sequential(nn.GroupNorm(8, width), nn.SiLU(),
                                                   nn.Conv2d(width, width, 3, padding=1))
                                     for _ in range(3)])
        self.out = nn.Conv2d(width, ch, 3, padding=1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return self.out(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--image_size", type=int, default=32)
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    B, C, S = a.batch_size, a.channels, a.image_size
    truth = {"batch_size": B, "image_size": S, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = Denoiser(C, a.width).to("cuda")
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
        for it in range(a.steps):
            phase = "forward"
            x0 = torch.randint(0, 256, (B, C, S, S)).cuda().float()
            truth["image_cast_bytes"] = x0.numel() * x0.element_size()
            noise = torch.randn(x0.shape, device="cuda")
            noisy = x0 + noise
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(noisy)
            pred32 = pred.float()
            truth["output_cast_bytes"] = pred32.numel() * pred32.element_size()
            loss = F.mse_loss(pred32, noise)
            del pred, pred32, noisy
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
