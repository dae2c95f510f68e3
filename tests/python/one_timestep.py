"""one_timestep.py — a SIMULATED diffusion denoiser's training (DDPM's shape): a small
convolutional network over --batch_size noised images of --resolution² (fp32 B·3·H·W), with
--per_batch ONE timestep drawn for the whole batch (torch.randint(0, 1000, (1,)): one int64 beside
the batch of B images), else one per image (B int64), embedded and added to the features; MSE on
the noise, AdamW. Prints its truth (VRAMTRACE_TORCH_STATS: batch_size, resolution, timesteps, the
steps it ran). Used by tests/integration/one_timestep.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class Denoiser(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.t_emb = nn.Linear(1, w)
        self.conv_in = nn.Conv2d(3, w, 3, padding=1)
        self.body = nn.Sequential(nn.SiLU(), nn.Conv2d(w, w, 3, padding=1), nn.SiLU(), nn.Conv2d(w, w, 3, padding=1))
        self.conv_out = nn.Conv2d(w, 3, 3, padding=1)

    def forward(self, x, t):
        emb = self.t_emb((t * torch.ones(x.shape[0], device="cuda")).reshape(x.shape[0], 1))
        h = self.conv_in(x) + emb.reshape(x.shape[0], emb.shape[1], 1, 1)
        return self.conv_out(self.body(h))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--resolution", type=int, default=64)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--per_batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    B, R = a.batch_size, a.resolution
    truth = {"batch_size": B, "resolution": R, "timesteps": 1 if a.per_batch else B, "steps": 0, "oom": False,
             "oom_phase": None}
    phase = "init"
    try:
        model = Denoiser(a.width).to("cuda")
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for it in range(a.steps):
            phase = "forward"
            x = torch.randn(B, 3, R, R).to("cuda")
            noise = torch.randn(B, 3, R, R).to("cuda")
            ts = torch.randint(0, 1000, (truth["timesteps"],)).to("cuda")
            loss = nn.functional.mse_loss(model(x + noise, ts), noise)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            del x, noise, ts, loss
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
