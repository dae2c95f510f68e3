"""device_cache.py — a SIMULATED image classifier that keeps its whole training set on the device
(the common speed-up for small images: every image copied once into storage preallocated with
torch.zeros(..., device="cuda") in a plain class, no DataLoader after). The set's size is the
script's constants N_TRAIN and N_TEST (500000 and 100000 uint8 images of 3 x 32 x 32), never a
flag: --batch-size only says how many images each step takes from it (the class is told it, and
keeps it), and it divides the set's bytes (1,536,000,000 = 32 x 48,000,000), as --epochs may. Prints its truth
(VRAMTRACE_TORCH_STATS): the set's bytes (planned, and made), the batch size, the optimizer steps;
an out-of-memory error says where (oom_phase "cache": making the sets, "train": a step). Used by
tests/integration/replay_buffer.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom, tensor_bytes  # noqa: E402

N_TRAIN, N_TEST = 500000, 100000


class DeviceCache:
    def __init__(self, n, device, batch_size=64):
        self.batch_size = batch_size
        self.images = torch.zeros(n, 3, 32, 32, dtype=torch.uint8, device=device)
        self.test_images = torch.zeros(N_TEST, 3, 32, 32, dtype=torch.uint8, device=device)

    def tensors(self):
        return [self.images, self.test_images]

    def batch(self, i):
        idx = torch.randint(0, N_TRAIN, (self.batch_size,)).to("cuda")
        return self.images[idx].float(), torch.randint(0, 10, (self.batch_size,)).to("cuda")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.1)
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "n_train": N_TRAIN, "steps": 0, "oom": False, "oom_phase": None,
             "data_bytes_planned": (N_TRAIN + N_TEST) * 3 * 32 * 32}
    try:
        cache = DeviceCache(N_TRAIN, "cuda", batch_size=a.batch_size)
    except torch.OutOfMemoryError as e:
        record_oom(truth, "cache", e)
        return finish(torch, truth)
    truth["data_bytes"] = tensor_bytes(cache.tensors())
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(16 * 32 * 32, 10)).to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    try:
        for step in range(2 * a.epochs):
            x, y = cache.batch(step)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            truth["steps"] += 1
            del x, y, loss
    except torch.OutOfMemoryError as e:
        record_oom(truth, "train", e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
