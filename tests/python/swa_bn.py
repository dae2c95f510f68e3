"""swa_bn.py — SIMULATED stochastic weight averaging in the shape of timgaripov/swa's train.py with
torch.optim.swa_utils' recipe: a VGG16-BN for CIFAR (13 Conv2d + BatchNorm2d layers, a 512-512-
classes classifier; --div divides its widths), SGD with momentum over batches of --batch_size
32x32 images; the program's own AveragedModel (a deepcopy of the model, averaged after each epoch
from --swa_start on under no_grad) and update_bn (the averaged model's forwards in train mode
under no_grad, --bn_batches of them, to recompute its BatchNorm statistics). fp32. Its reserved
memory over its tensors grows with the batch (the caching allocator's blocks), so a run at one
batch under-counts the cache of a larger one. Prints its truth (VRAMTRACE_TORCH_STATS:
batch_size, optimizer steps, update_bn forwards, the copy's bytes). Used by
tests/integration/swa_largest.sh."""
import argparse
import copy
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402

CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def vgg16bn(div, classes):
    layers, c = [], 3
    for v in CFG:
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(c, v // div, 3, padding=1), nn.BatchNorm2d(v // div), nn.ReLU()]
            c = v // div
    return nn.Sequential(nn.Sequential(*layers), nn.Flatten(), nn.Linear(c, 512), nn.ReLU(),
                         nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, classes))


@torch.no_grad()
def update_bn(batches, model):
    model.train()
    for inp in batches:
        x = inp.to("cuda")
        out = model(x)
        del x, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size", type=int, default=128)
    ap.add_argument("--div", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps_per_epoch", type=int, default=2)
    ap.add_argument("--swa_start", type=int, default=1)
    ap.add_argument("--bn_batches", type=int, default=2)
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "image_size": 32, "steps": 0, "update_bn_forwards": 0, "oom": False,
             "oom_phase": None}
    phase = "init"
    try:
        model = vgg16bn(a.div, 100).to("cuda")
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
        swa = copy.deepcopy(model)
        truth["copy_bytes"] = sum(t.numel() * t.element_size() for t in list(swa.parameters()) + list(swa.buffers()))
        for ep in range(a.epochs):
            for _ in range(a.steps_per_epoch):
                phase = "forward"
                x = torch.randn(a.batch_size, 3, 32, 32).to("cuda")
                y = torch.randint(0, 100, (a.batch_size,)).to("cuda")
                loss = nn.functional.cross_entropy(model(x), y)
                phase = "backward"
                opt.zero_grad()
                loss.backward()
                phase = "optimizer"
                opt.step()
                truth["steps"] += 1
                del x, y, loss
            if ep + 1 > a.swa_start:
                phase = "swa update"
                with torch.no_grad():
                    for ps, pm in zip(swa.parameters(), model.parameters()):
                        ps.copy_(ps + (pm - ps) / (ep + 1 - a.swa_start))
                phase = "update_bn"
                update_bn([torch.randn(a.batch_size, 3, 32, 32) for _ in range(a.bn_batches)], swa)
                truth["update_bn_forwards"] += a.bn_batches
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
