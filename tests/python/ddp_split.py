"""ddp_split.py — a SIMULATED training loop of its own (simtorch, examples/sim/): a small CNN, fp32,
plain SGD whose gradients are zeroed in place (they stay allocated; no optimizer state), run as one
rank of a data-parallel job: --batch is the global batch, split over --ngpus processes, so this
process's micro-batch is batch // ngpus and every micro-batch ends in an optimizer step (no
gradient accumulation). Prints a FACTS line of what it ran. Used by tests/integration/batch_flags.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402


class Net(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        layers, c_in = [], 3
        for s in range(3):
            c = width * 2 ** s
            layers += [nn.Conv2d(c_in, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.MaxPool2d(2, 2)]
            c_in = c
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_in, classes)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64, help="global batch, over all processes")
    ap.add_argument("--ngpus", type=int, default=4, help="data-parallel processes; this is one rank")
    ap.add_argument("--img", type=int, default=64)
    ap.add_argument("--iters", type=int, default=2, help="optimizer steps")
    a = ap.parse_args()
    micro = a.batch // a.ngpus
    model = Net(32, 10)
    model.to("cuda")
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    print("FACTS batch_size=%d grad_accum=1 global_batch=%d" % (micro, a.batch), flush=True)
    for it in range(a.iters):
        x = torch.randn(micro, 3, a.img, a.img).to("cuda")
        y = torch.randint(0, 10, (micro,)).to("cuda")
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        del x, y, loss
        opt.step()
        for p in params:  # zero_grad(set_to_none=False): zeroed in place, kept
            p.grad.zero_()
        print("iter %d" % it, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
