"""simtorch/optim/adamw.py — SIMULATION of torch.optim.AdamW(fused=True): its state (a device
`step` scalar, exp_avg and exp_avg_sq like each parameter, fp32) is created at the first step();
the fused kernel then updates in place (no allocation). zero_grad(set_to_none=True) frees .grad."""
from .. import Tensor


class AdamW:
    def __init__(self, param_groups, lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01, fused=False):
        self.param_groups = [dict(g, lr=lr, betas=betas) for g in param_groups]
        self.fused = fused
        self.state = {}

    def step(self):
        """One optimizer step: lazily creates each parameter's state (8 bytes/param + a step)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p not in self.state:
                    self.state[p] = {
                        "step": Tensor((), "float32"),
                        "exp_avg": Tensor(p.shape, "float32"),
                        "exp_avg_sq": Tensor(p.shape, "float32"),
                    }

    def zero_grad(self, set_to_none=True):
        """Frees every .grad (set_to_none=True, PyTorch's default since 2.0)."""
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None
