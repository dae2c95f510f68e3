"""simtorch/optim/adamw.py — SIMULATION of torch.optim.AdamW: each parameter with a gradient gets
its state at the first step() (a step counter: a device scalar for fused, a host one otherwise;
exp_avg and exp_avg_sq shaped like the parameter, fp32: 8 bytes per trainable parameter). The
fused kernel updates everything in place; the foreach path allocates sqrt(exp_avg_sq) for every
parameter at once (4 bytes per parameter, freed at the end of the step); the single-tensor path
allocates two such temporaries per parameter, one parameter at a time."""
from .. import _C
from .._C import _aten as A
from .optimizer import Optimizer, _use_grad_for_differentiable, _closure_loss


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, foreach=None, fused=None, capturable=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.fused = bool(fused)
        self.foreach = (not self.fused) if foreach is None else bool(foreach)
        if self.fused:
            self._step_supports_amp_scaling = True

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state.get(p)
            if not state:
                state = self.state[p] = {}
                state["step"] = (A.zeros((), _C.float32, p.device) if self.fused
                                 else A.zeros((), _C.float32, "cpu"))
                state["exp_avg"] = A.like(p, "zeros_like")
                state["exp_avg_sq"] = A.like(p, "zeros_like")
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps = [], [], [], [], []
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps)
            adamw(params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps,
                  foreach=self.foreach, fused=self.fused)
        return loss


def adamw(params, grads, exp_avgs, exp_avg_sqs, state_steps, foreach=False, fused=False):
    if fused:
        func = _fused_adamw
    elif foreach:
        func = _multi_tensor_adamw
    else:
        func = _single_tensor_adamw
    func(params, grads, exp_avgs, exp_avg_sqs, state_steps)


def _fused_adamw(params, grads, exp_avgs, exp_avg_sqs, state_steps):
    """torch._fused_adamw_: every tensor updated in place."""
    return None


def _multi_tensor_adamw(params, grads, exp_avgs, exp_avg_sqs, state_steps):
    # _foreach_add_(steps, 1), _foreach_mul_(params, 1 - lr * wd), _foreach_lerp_(exp_avgs),
    # _foreach_mul_ / _foreach_addcmul_(exp_avg_sqs): in place
    exp_avg_sq_sqrt = A.foreach(exp_avg_sqs, "_foreach_sqrt")
    # _foreach_div_, _foreach_add_(eps), _foreach_addcdiv_(params): in place
    del exp_avg_sq_sqrt


def _single_tensor_adamw(params, grads, exp_avgs, exp_avg_sqs, state_steps):
    for exp_avg_sq in exp_avg_sqs:
        sq = A.like(exp_avg_sq, "sqrt")
        denom = A.like(exp_avg_sq, "div_Tensor")
        del sq, denom
