"""sgd_plain.py — a SIMULATED convolutional network trained fp32 with plain SGD
(torch.optim.SGD with the learning rate alone: no momentum, so no state) and its gradients zeroed in place
(p.grad.zero_(), as zero_grad(set_to_none=False) does: they stay allocated), accumulating
--update_every micro-batches of --batch images per optimizer step, for --iters steps. Its steps
allocate and free nothing. It makes no torch.optim.AdamW(params, lr=0.1), whose two moments
would be 8 B of state per parameter (the name, in this docstring, is no call). Prints its truth
(VRAMTRACE_TORCH_STATS: steps, backward passes). Used by tests/integration/sgd_plain.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--update_every", type=int, default=2)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--img", type=int, default=64)
    a = ap.parse_args()
    truth = {"batch_size": a.batch, "steps": 0, "backward_passes": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                              nn.MaxPool2d(2, 2), nn.Conv2d(32, 64, 3, padding=1, bias=False),
                              nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                              nn.Linear(64, 10))
        params = list(model.parameters())
        model.to("cuda")
        opt = torch.optim.SGD(params, lr=0.1)
        for it in range(a.iters):
            for _ in range(a.update_every):
                phase = "forward"
                x = torch.randn(a.batch, 3, a.img, a.img).to("cuda")
                y = torch.randint(0, 10, (a.batch,)).to("cuda")
                loss = F.cross_entropy(model(x), y) / a.update_every
                phase = "backward"
                loss.backward()
                truth["backward_passes"] += 1
                del x, y, loss
            phase = "optimizer"
            opt.step()
            for p in params:  # zero_grad(set_to_none=False): zeroed in place, kept
                p.grad.zero_()
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
