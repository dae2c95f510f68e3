"""video_clips.py — a SIMULATED video action classifier of TSM / TSN's shape (mit-han-lab's
temporal-shift-module): a batch of -b/--batch-size clips, each --num_segments frames of 3x--size
x--size, put on the device as B x (T*3) x H x W and viewed as (B*T) x 3 x H x W (input.view(-1, 3,
H, W)) through a small 2D CNN (Conv2d + BatchNorm2d + ReLU blocks, global average pooling, a
linear head); the logits viewed B x T x classes and averaged over the segments; SGD with momentum.
With 4 (or 16) segments, B x (3T) x H x W fp32 is as many bytes as B images of 3 x (H*sqrt(T))^2.
The batch flag is argparse's "-b", "--batch-size": the command line gives -b. Prints its truth
(VRAMTRACE_TORCH_STATS: batch_size, num_segments, image_size, frames). Used by
tests/integration/video_frames.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class TSN(nn.Module):
    def __init__(self, width, classes, num_segments):
        super().__init__()
        self.num_segments = num_segments
        self.base = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                                  nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(width, classes)

    def forward(self, input):  # noqa: A002
        base_out = self.base(input.view(-1, 3, input.size()[-2], input.size()[-1]))
        base_out = self.fc(base_out)
        return base_out.view(-1, self.num_segments, base_out.size()[-1]).mean(dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--batch-size", type=int, default=64)
    ap.add_argument("--num_segments", type=int, default=8)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "num_segments": a.num_segments, "image_size": a.size,
             "frames": a.batch_size * a.num_segments, "steps": 0, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = TSN(a.width, a.classes, a.num_segments).to("cuda")
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for it in range(a.steps):
            phase = "forward"
            x = torch.randn(a.batch_size, a.num_segments * 3, a.size, a.size).to("cuda")
            y = torch.zeros(a.batch_size, dtype=torch.long).to("cuda")
            loss = nn.functional.cross_entropy(model(x), y)
            phase = "backward"
            opt.zero_grad()
            loss.backward()
            phase = "optimizer"
            opt.step()
            del x, y, loss
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
