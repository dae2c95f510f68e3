"""global_batch.py — a SIMULATED training loop of its own (simtorch, examples/sim/): a small CNN
(3x3 convolutions, BatchNorm, ReLU, max-pool, a linear classifier), fp32, SGD, whose --batch is
the optimizer's batch: it accumulates --update_every micro-batches of batch // update_every
images before each step (names of its own); with $SPLIT=N it splits --batch into N micro-batches
whatever --update_every says, a split no flag of it gives. Prints a FACTS line of what it ran. Used by
tests/integration/batch_flags.sh."""
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
    ap.add_argument("--batch", type=int, default=64, help="images per optimizer step")
    ap.add_argument("--update_every", type=int, default=4, help="micro-batches per optimizer step")
    ap.add_argument("--img", type=int, default=64)
    ap.add_argument("--momentum", type=float, default=0.0)
    ap.add_argument("--iters", type=int, default=2, help="optimizer steps")
    a = ap.parse_args()
    micro = a.batch // a.update_every
    if os.environ.get("SPLIT"):  # a split of its own, no flag's: --batch is still not the micro-batch
        a.update_every = int(os.environ["SPLIT"])
        micro = a.batch // a.update_every
    model = Net(32, 10)
    model.to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=a.momentum)
    print("FACTS batch_size=%d grad_accum=%d global_batch=%d" % (micro, a.update_every, a.batch), flush=True)
    for it in range(a.iters):
        for _ in range(a.update_every):
            x = torch.randn(micro, 3, a.img, a.img).to("cuda")
            y = torch.randint(0, 10, (micro,)).to("cuda")
            loss = F.cross_entropy(model(x), y) / a.update_every
            loss.backward()
            del x, y, loss
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("iter %d" % it, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
