"""pcgrad_tasks.py — a SIMULATED multi-task model trained fp32 with PCGrad (Yu et al. 2020, in the
shape of the widely copied PCGrad wrapper's pc_backward): a shared convolutional trunk and one head
per task (--tasks). Each optimizer step runs ONE forward of the trunk and every head, then for each
task: optimizer.zero_grad(set_to_none=True) (the gradients are freed between the task's backward
passes of that one forward), loss.backward(retain_graph=True), and a flat copy of every parameter's
gradient (torch.cat, zeros where a head got none) kept for all tasks; then the T copies are cloned
and merged (torch.stack(...).sum(0)) into p.grad and AdamW steps. One task's backward reaches the
trunk and its own head, never the other heads: every weight trains, in some pass. --steps optimizer
steps, no gradient accumulation. Prints its truth (VRAMTRACE_TORCH_STATS: steps, backward passes,
passes per step, parameters, the copies' bytes, the phase of an out-of-memory error). Used by
tests/integration/pcgrad_tasks.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from sim_truth import finish, record_oom  # noqa: E402


class MTL(nn.Module):
    def __init__(self, tasks, width, classes):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                   nn.ReLU(), nn.Conv2d(width, width, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(width), nn.ReLU())
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.heads = nn.ModuleList([nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, classes))
                                    for _ in range(tasks)])

    def forward(self, x):
        h = self.pool(self.trunk(x))
        return [head(h) for head in self.heads]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--img", type=int, default=32)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--steps", type=int, default=2)
    a = ap.parse_args()
    truth = {"batch_size": a.batch_size, "tasks": a.tasks, "steps": 0, "backward_passes": 0,
             "passes_per_step": a.tasks, "grad_accum": 1, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = MTL(a.tasks, a.width, 10).to("cuda")
        params = list(model.parameters())
        n = sum(p.numel() for p in params)
        truth.update(params=n, trainable_params=n, param_bytes=4 * n, copies_bytes=a.tasks * 4 * n)
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0)
        for it in range(a.steps):
            phase = "forward"
            x = torch.randn(a.batch_size, 3, a.img, a.img).to("cuda")
            ys = [torch.randint(0, 10, (a.batch_size,)).to("cuda") for _ in range(a.tasks)]
            losses = [F.cross_entropy(o, y) for o, y in zip(model(x), ys)]
            grads = []
            for obj in losses:
                phase = "task backward"
                opt.zero_grad(set_to_none=True)
                obj.backward(retain_graph=True)
                truth["backward_passes"] += 1
                phase = "task gradient copy"
                grads.append(torch.cat([(p.grad.clone() if p.grad is not None else torch.zeros_like(p)).flatten()
                                        for p in params]))
            phase = "projection (after every task's backward, before the step)"
            pc = [g.clone() for g in grads]
            merged = torch.stack(pc).sum(0)
            off = 0
            for p in params:
                k = p.numel()
                p.grad = merged[off:off + k].view(*p.shape).clone()
                off += k
            phase = "optimizer"
            opt.step()
            del x, ys, losses, grads, pc, merged, obj
            truth["steps"] = it + 1
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
