"""simtorch/autograd/grad_mode.py — SIMULATION of torch.autograd.grad_mode: no_grad, enable_grad,
set_grad_enabled, inference_mode (per thread, like PyTorch's): with grad mode off no graph is
recorded and nothing is saved for a backward (inference_mode: the same, as far as memory goes)."""
from .. import _C
from ..utils._contextlib import _DecoratorContextManager


def is_grad_enabled():
    return _C.grad_enabled()


class no_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = _C.set_grad_enabled(False)

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = _C.set_grad_enabled(not self.mode and _C.grad_enabled())

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = _C.set_grad_enabled(True)

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    def __init__(self, mode):
        self.prev = _C.set_grad_enabled(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
