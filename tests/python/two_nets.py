"""two_nets.py — a SIMULATED NeRF-shaped trainer: a coarse and a fine MLP of the same shape
(--netdepth x --netwidth), both trained by one AdamW, the rays of a step set by --N_rand (NeRF's
batch: its name says nothing of a batch), --N_samples points per ray through each network. Out of
memory in the first forward at a large --N_rand on a small card: no backward told which weights
train, and the fine network's weights repeat the coarse one's sizes. Prints its truth
(VRAMTRACE_TORCH_STATS: the rays per step, both networks' parameters, all trained). Used by
tests/integration/two_nets.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


def mlp(depth, width):
    mods = [nn.Linear(63, width), nn.ReLU()]
    for _ in range(depth - 1):
        mods += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*(mods + [nn.Linear(width, 4)]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--N_rand", type=int, default=1024)
    ap.add_argument("--N_samples", type=int, default=64)
    ap.add_argument("--netdepth", type=int, default=8)
    ap.add_argument("--netwidth", type=int, default=256)
    ap.add_argument("--N_iters", type=int, default=2)
    a = ap.parse_args()
    coarse, fine = mlp(a.netdepth, a.netwidth), mlp(a.netdepth, a.netwidth)
    params = list(coarse.parameters()) + list(fine.parameters())
    truth = {"rays_per_step": a.N_rand, "net_params": sum(p.numel() for p in coarse.parameters()),
             "trainable_params": sum(p.numel() for p in params), "models_same_shape": 2,
             "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        coarse.to("cuda")
        fine.to("cuda")
        opt = torch.optim.AdamW(params, lr=5e-4)
        for it in range(a.N_iters):
            phase = "forward"
            pts = torch.randn(a.N_rand * a.N_samples, 63).to("cuda")
            target = torch.randn(a.N_rand * a.N_samples, 4).to("cuda")
            loss = F.mse_loss(coarse(pts), target) + F.mse_loss(fine(pts), target)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad()
            truth["steps"] = it + 1
            del pts, target, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
