"""contrastive_bn.py — a SIMULATED SimCLR in the shape of Spijkervet/SimCLR (--batch_size,
--image_size, --projection_dim, --temperature): a small convolutional encoder with BatchNorm, a
projection head, and NT-Xent over the 2B x 2B similarity matrix of the two views' projections,
whose negatives for each sample are the other 2B - 2 of the batch (in-batch negatives): a
micro-batch of B/2 accumulated twice is another loss, not the same gradients. SGD with momentum.
Prints its truth (VRAMTRACE_TORCH_STATS): the batch, the negatives per sample, the steps. Used by
tests/integration/contrastive_bn.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width)
        self.c2, self.b2 = nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        x = F.relu(self.b1(self.c1(x)))
        x = F.relu(self.b2(self.c2(x)))
        return torch.flatten(self.pool(x), 1)


def nt_xent(z_i, z_j, batch_size, temperature):
    n = 2 * batch_size
    z = torch.cat((z_i, z_j), dim=0)
    sim = torch.matmul(z, z.transpose(0, 1)) / temperature  # 2B x 2B
    positives = torch.cat((sim[:batch_size, 0], sim[batch_size:, 1]), dim=0).reshape(n, 1)
    negatives = sim[:, 2:] * 1.0  # the other samples of the batch
    labels = torch.zeros(n, dtype=torch.int64).to("cuda")
    return F.cross_entropy(torch.cat((positives, negatives), dim=1), labels) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=64)
    ap.add_argument("--image_size", type=int, default=32)
    ap.add_argument("--projection_dim", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.5)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    B = a.batch_size
    truth = {"batch_size": B, "loss": "NT-Xent", "negatives_per_sample": 2 * B - 2, "batchnorm": True,
             "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        enc = Encoder(32).to("cuda")
        proj = nn.Sequential(nn.Linear(64, 64, bias=False), nn.ReLU(),
                             nn.Linear(64, a.projection_dim, bias=False)).to("cuda")
        params = list(enc.parameters()) + list(proj.parameters())
        opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
        for _ in range(a.steps):
            phase = "forward"
            x_i = torch.randn(B, 3, a.image_size, a.image_size).to("cuda")
            x_j = torch.randn(B, 3, a.image_size, a.image_size).to("cuda")
            loss = nt_xent(proj(enc(x_i)), proj(enc(x_j)), B, a.temperature)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            truth["steps"] += 1
            del x_i, x_j, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
