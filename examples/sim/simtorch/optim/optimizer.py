"""simtorch/optim/optimizer.py — SIMULATION of torch.optim.Optimizer: parameter groups, per-
parameter state (made by each optimizer's first step()), zero_grad(set_to_none=True) dropping
every .grad; step() runs with grad mode off inside the same wrappers as torch's, a closure
given to it (Lightning's, LBFGS's) first, with grad mode on (_closure_loss)."""
import functools

from .. import _C


def _use_grad_for_differentiable(func):
    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = _C.set_grad_enabled(False)
        try:
            return func(self, *args, **kwargs)
        finally:
            _C.set_grad_enabled(prev)
    return _use_grad


def _profile_hook_step(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


def _closure_loss(closure):
    """step(closure)'s first act, as torch's optimizers: the closure (a forward and a backward)
    run with grad mode on; its loss, None without one."""
    if closure is None:
        return None
    prev = _C.set_grad_enabled(True)
    try:
        return closure()
    finally:
        _C.set_grad_enabled(prev)


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        params = list(params)
        groups = params if params and isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        for g in groups:
            g = dict(g)
            g["params"] = list(g["params"])
            for k, v in defaults.items():
                g.setdefault(k, v)
            self.param_groups.append(g)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:  # zeroed in place: the buffer kept (no allocation)
                    p.grad.zero_()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _profile_hook_step(cls.step)
