"""sam_passes.py — a SIMULATED convolutional classifier trained fp32 with SAM (sharpness-aware
minimization, the widely copied `SAM(params, base_optimizer=SGD)` wrapper, written in the program):
each optimizer step runs two forward+backward passes over the same batch. first_step() keeps a copy
of each weight and climbs to w + e(w), then zero_grad: the gradients are freed between the two
passes of one step; second_step() restores the weights and runs the base SGD (momentum, nesterov,
weight decay: its state is made in the first step's second pass; with --wd 0 its later steps
allocate nothing), then zero_grad. With --sam 0 the same model and base SGD train the plain way (one
pass per step). --steps optimizer steps, no gradient accumulation. Prints its truth (VRAMTRACE_TORCH_STATS: steps, backward passes, passes per
step, accumulation, the trainable parameters, their bytes and the optimizer's state: SAM's copy and
the base SGD's momentum). Used by tests/integration/sam_passes.sh."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "sim"))
import simtorch as torch  # noqa: E402
import simtorch.nn as nn  # noqa: E402
import simtorch.nn.functional as F  # noqa: E402
from simtorch.optim.optimizer import Optimizer  # noqa: E402
from sim_truth import finish, record_oom, state_tensors, tensor_bytes  # noqa: E402


class SAM(Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kw):
        super().__init__(params, dict(rho=rho, **kw))
        self.base_optimizer = base_optimizer(self.param_groups, **kw)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state.setdefault(p, {})["old_p"] = p.data.clone()
                e_w = p.grad * 1.0  # p.grad * rho / grad_norm
                p.add_(e_w)
                del e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.copy_(self.state[p]["old_p"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--img", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--sam", type=int, default=1)
    ap.add_argument("--wd", type=float, default=5e-4)
    a = ap.parse_args()
    passes = 2 if a.sam else 1
    truth = {"batch_size": a.batch, "steps": 0, "backward_passes": 0, "passes_per_step": passes,
             "grad_accum": 1, "oom": False, "oom_phase": None}
    phase = "init"
    try:
        model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                              nn.MaxPool2d(2, 2), nn.Conv2d(32, 64, 3, padding=1, bias=False),
                              nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                              nn.Linear(64, 10))
        model.to("cuda")
        params = list(model.parameters())
        truth["trainable_params"] = sum(p.numel() for p in params)
        truth["param_bytes"] = tensor_bytes(params)
        kw = dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=a.wd)
        opt = SAM(params, torch.optim.SGD, **kw) if a.sam else torch.optim.SGD(params, **kw)
        for it in range(a.steps):
            phase = "forward"
            x = torch.randn(a.batch, 3, a.img, a.img).to("cuda")
            y = torch.randint(0, 10, (a.batch,)).to("cuda")
            for k in range(passes):
                phase = "forward"
                loss = F.cross_entropy(model(x), y)
                phase = "backward"
                loss.backward()
                truth["backward_passes"] += 1
                del loss
                phase = "optimizer"
                if not a.sam:
                    opt.step()
                    opt.zero_grad()
                elif k == 0:
                    opt.first_step(zero_grad=True)
                else:
                    opt.second_step(zero_grad=True)
            del x, y
            truth["steps"] = it + 1
            # the optimizer's state: SAM's copy of every weight (old_p) and the base SGD's momentum
            st = state_tensors(opt) + (state_tensors(opt.base_optimizer) if a.sam else [])
            truth["optim_state_bytes"] = tensor_bytes(t for t in st if t.numel() > 1)
            del st
    except torch.OutOfMemoryError as e:
        record_oom(truth, phase, e)
    return finish(torch, truth)


if __name__ == "__main__":
    sys.exit(main())
