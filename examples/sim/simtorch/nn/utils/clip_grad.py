"""simtorch/nn/utils/clip_grad.py — SIMULATION of torch.nn.utils.clip_grad_norm_: per-gradient
norms (_foreach_norm, with a scratch), their stack and total norm, the clip coefficient (small
device tensors); the gradients are scaled in place. Returns the total norm tensor."""
import functools

from ... import _C
from ..._C import _aten as A


def _no_grad(func):
    @functools.wraps(func)
    def _no_grad_wrapper(*args, **kwargs):
        prev = _C.set_grad_enabled(False)
        try:
            return func(*args, **kwargs)
        finally:
            _C.set_grad_enabled(prev)
    return _no_grad_wrapper


@_no_grad
def _get_total_norm(tensors, norm_type=2.0):
    grads = [g for g in tensors if g is not None]
    if not grads:
        return A.full((), _C.float32, "cpu")
    scratch = A.zeros((len(grads) * 2360,), _C.uint8, grads[0].device, op="_foreach_norm_Scalar")
    norms = [A.zeros((), _C.float32, g.device, op="_foreach_norm_Scalar") for g in grads]
    del scratch
    stacked = A.stack(norms)
    return A.norm(stacked)


@_no_grad
def _clip_grads_with_norm_(parameters, max_norm, total_norm):
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = A.clamp(clip_coef)
    del clip_coef, clip_coef_clamped  # _foreach_mul_ in place


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = list(parameters)
    total_norm = _get_total_norm([p.grad for p in parameters], norm_type)
    _clip_grads_with_norm_(parameters, max_norm, total_norm)
    return total_norm
