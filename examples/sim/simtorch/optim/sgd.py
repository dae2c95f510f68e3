"""simtorch/optim/sgd.py — SIMULATION of torch.optim.SGD: with momentum, each parameter's
momentum buffer is made at the first step() as a copy of its (weight-decayed) gradient, fp32:
4 bytes per trainable parameter; without momentum there is no state. The foreach path (the
default on CUDA) with weight decay first adds the decay into a new list of gradients (4 bytes
per parameter, freed at the end of the step); everything else is in place."""
from .._C import _aten as A
from .optimizer import Optimizer, _use_grad_for_differentiable, _closure_loss


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False, foreach=None, fused=None):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))
        self.foreach = True if foreach is None else bool(foreach)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state.get(p, {}).get("momentum_buffer"))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            self._init_group(group, params, grads, bufs)
            func = _multi_tensor_sgd if self.foreach else _single_tensor_sgd
            func(params, grads, bufs, group["weight_decay"], group["momentum"], group["nesterov"])
            if group["momentum"] != 0:
                for p, b in zip(params, bufs):
                    self.state.setdefault(p, {})["momentum_buffer"] = b
        return loss


def _multi_tensor_sgd(params, grads, momentum_buffer_list, weight_decay, momentum, nesterov):
    if weight_decay != 0:
        grads = A.foreach(grads, "_foreach_add_List")  # _foreach_add(grads, params, alpha=wd)
    if momentum != 0:
        if all(b is not None for b in momentum_buffer_list):
            pass  # _foreach_mul_ / _foreach_add_ in place
        else:
            for i, b in enumerate(momentum_buffer_list):
                if b is None:
                    momentum_buffer_list[i] = A.clone(grads[i]).detach()
        # nesterov: _foreach_add_(grads, bufs); else grads = bufs
    # _foreach_add_(params, grads, alpha=-lr): in place
    del grads


def _single_tensor_sgd(params, grads, momentum_buffer_list, weight_decay, momentum, nesterov):
    for i, g in enumerate(grads):
        if weight_decay != 0:
            g = A.like(g, "add_Tensor")
        if momentum != 0 and momentum_buffer_list[i] is None:
            momentum_buffer_list[i] = A.clone(g).detach()
        if momentum != 0 and nesterov:
            g = A.like(g, "add_Tensor")
        del g
