"""simtorch/optim/_adafactor.py — SIMULATION of torch.optim.Adafactor (foreach=False): state made
at the first step(): a host step counter, and for a parameter of 2+ dimensions factored second
moments, a row_var (shape[:-1], 1) and a col_var (shape[:-2], 1, shape[-1]), fp32; for a 1-D
one a full variance. Each step allocates, one parameter at a time, its row and column means and
a variance estimate as large as the parameter (fp32), freed before the next."""
from .. import _C
from .._C import _aten as A
from .optimizer import Optimizer, _use_grad_for_differentiable, _closure_loss


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=False, maximize=False):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state.get(p)
            if not state:
                state = self.state[p] = {"step": A.zeros((), _C.float32, "cpu")}
                g = p.grad
                if g.dim() > 1:
                    state["row_var"] = A.zeros(g._shape[:-1] + (1,), _C.float32, g.device)
                    state["col_var"] = A.zeros(g._shape[:-2] + (1, g._shape[-1]), _C.float32,
                                               g.device)
                else:
                    state["variance"] = A.like(g, "zeros_like")
            row_vars.append(state.get("row_var"))
            col_vars.append(state.get("col_var"))
            variances.append(state.get("variance"))
            steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, row_vars, col_vars, variances, steps)
            _single_tensor_adafactor(params, grads, row_vars, col_vars, variances)
        return loss


def _single_tensor_adafactor(params, grads, row_vars, col_vars, variances):
    for p, g, rv, cv, var in zip(params, grads, row_vars, col_vars, variances):
        if g.dim() > 1:
            row_mean = A.norm(g, -1, keepdim=True)           # then square_, div_, lerp_
            col_mean = A.norm(g, -2, keepdim=True)
            var_estimate = A.like(g, "bmm", dtype=_C.float32)  # row_var @ col_var
            row_var_mean = A.mean(rv, -2, keepdim=True)
            del row_mean, col_mean, row_var_mean
        else:
            sq = A.like(g, "mul_Tensor")                     # grad.square() for lerp_
            var_estimate = A.clone(var)
            del sq
        # clamp_, rsqrt_, mul_(grad) in place; the update's norm: a scalar
        n = A.norm(var_estimate)
        del var_estimate, n
