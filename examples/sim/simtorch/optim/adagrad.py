"""simtorch/optim/adagrad.py — SIMULATION of torch.optim.Adagrad: unlike AdamW and SGD, its state
is made at construction: __init__ gives every parameter a "sum" (torch.full_like(p,
initial_accumulator_value), fp32: 4 bytes per parameter) and a host step counter, before any
step. The foreach step (the default on CUDA) updates the sums in place and allocates their
square roots for every parameter at once (4 bytes per parameter, freed at the end of the step)."""
from .. import _C
from .._C import _aten as A
from .optimizer import Optimizer, _use_grad_for_differentiable, _closure_loss


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps))
        self.foreach = True if foreach is None else bool(foreach)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p] = {}
                state["step"] = A.zeros((), _C.float32, "cpu")
                state["sum"] = A.like(p, "full_like")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            sums = [self.state[p]["sum"] for p in group["params"] if p.grad is not None]
            if self.foreach:
                # _foreach_addcmul_(sums, grads, grads): in place; std = _foreach_sqrt(sums)
                std = A.foreach(sums, "_foreach_sqrt")
                # _foreach_add_(std, eps), _foreach_addcdiv_(params, grads, std): in place
                del std
            else:
                for s in sums:
                    std = A.like(s, "sqrt")
                    del std
        return loss
