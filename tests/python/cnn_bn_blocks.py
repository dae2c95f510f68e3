"""cnn_bn_blocks.py — a SIMULATED CIFAR classifier of the shape CIFAR code writes (VGG / PreAct
ResNet): a stem, --blocks identical Conv2d + BatchNorm2d + ReLU blocks of --width channels, a
linear head over --classes (--vgg: VGG16-BN's 13 convolutions, their widths over --vgg, with
max-pooling and its 512-512-classes classifier), SGD with momentum over batches of --batch_size 32x32 images. Each
BatchNorm keeps an int64 num_batches_tracked scalar beside its weights: 8 bytes, two fp32
elements, in every block. With --swa the program keeps its own averaged copy of the model
(torch.optim.swa_utils.AveragedModel's deepcopy, averaged after each step under no_grad). --csp W:
YOLOv5's backbone at base width W (a stem, then stride-2 convolutions to 2W, 4W and 8W, each
followed by a C3 block of its width c: two 1x1 convolutions c -> c/2 side by side, a 1x1 c/2 -> c/2
and a 3x3 bottleneck, the two halves concatenated into a 1x1 c -> c; every convolution with its
BatchNorm and SiLU), fp32 weights and plain SGD. There are no tokens, no attention and no position embedding. Prints its truth (VRAMTRACE_TORCH_STATS:
batch_size, image_size, parameters, the copy's bytes). Used by tests/integration/cnn_not_vit.sh."""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class Conv(nn.Module):  # YOLOv5's: Conv2d (no bias) + BatchNorm2d + SiLU
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn, self.act = nn.BatchNorm2d(c2), nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class C3(nn.Module):  # YOLOv5's CSP block of one bottleneck
    def __init__(self, c):
        super().__init__()
        self.cv1, self.cv2 = Conv(c, c // 2), Conv(c, c // 2)
        self.m = nn.Sequential(Conv(c // 2, c // 2, 1), Conv(c // 2, c // 2, 3))
        self.cv3 = Conv(c, c)

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=256)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--swa", type=int, default=0)
    ap.add_argument("--vgg", type=int, default=0)
    ap.add_argument("--csp", type=int, default=0)
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "image_size": 32, "steps": 0, "oom": False, "oom_phase": None,
             "transformer": False}
    phase = "init"
    try:
        if a.csp:
            w = a.csp
            layers = [Conv(3, w, 6, 2), Conv(w, 2 * w, 3, 2), C3(2 * w), Conv(2 * w, 4 * w, 3, 2), C3(4 * w),
                      Conv(4 * w, 8 * w, 3, 2), C3(8 * w)]
            head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8 * w, a.classes))
        elif a.vgg:
            layers, c = [], 3
            for v in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"):
                if v == "M":
                    layers.append(nn.MaxPool2d(2, 2))
                else:
                    layers += [nn.Conv2d(c, v // a.vgg, 3, padding=1), nn.BatchNorm2d(v // a.vgg), nn.ReLU()]
                    c = v // a.vgg
            head = nn.Sequential(nn.Flatten(), nn.Linear(c, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, a.classes))
        else:
            layers = [nn.Conv2d(3, a.width, 3, padding=1), nn.BatchNorm2d(a.width), nn.ReLU()]
            for _ in range(a.blocks):
                layers += [nn.Conv2d(a.width, a.width, 3, padding=1), nn.BatchNorm2d(a.width), nn.ReLU()]
            head = nn.Sequential(nn.Flatten(), nn.Linear(a.width * 32 * 32, a.classes))
        model = nn.Sequential(nn.Sequential(*layers), head).to("cuda")
        truth["parameters"] = sum(p.numel() for p in model.parameters())
        truth["param_bytes_each"] = 4  # fp32: no .half(), no autocast
        truth["trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        swa = copy.deepcopy(model) if a.swa else None
        truth["copy_bytes"] = sum(p.numel() * 4 for p in swa.parameters()) if swa is not None else 0
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for it in range(a.steps):
            phase = "forward"
            x = torch.randn(a.batch_size, 3, 32, 32).to("cuda")
            y = torch.zeros(a.batch_size, dtype=torch.long).to("cuda")
            loss = nn.functional.cross_entropy(model(x), y)
            phase = "backward"
            loss.backward()
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            if swa is not None:
                with torch.no_grad():
                    for ps, pm in zip(swa.parameters(), model.parameters()):
                        ps.copy_(ps + (pm - ps) / (it + 1))
            del x, y, loss
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
