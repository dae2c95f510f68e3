"""simtorch — a SIMULATION of the parts of PyTorch a training step uses, for vramtrace's no-GPU
demo and tests: tensors hold only shapes, dtypes and device memory, which comes from the fake
libc10_cuda.so's caching allocator (tests/fakecuda/c10) on the fake CUDA runtime, through the
same allocator trace hooks vramtrace attaches to in real PyTorch. Files are laid out like
torch's (simtorch/nn/modules/linear.py, simtorch/optim/adamw.py, ...), so frame rules that
match torch's paths match these. Not PyTorch; nothing is computed."""


def _disable_dynamo(fn=None, recursive=True):
    """torch._disable_dynamo: calls fn through torch._dynamo.disable (made at the first call);
    defined before the imports below, since simtorch.utils.checkpoint uses it as it loads."""
    def inner(*args, **kwargs):
        disable_fn = getattr(fn, "__dynamo_disable", None)
        if disable_fn is None:
            from . import _dynamo
            disable_fn = _dynamo.disable(fn, recursive)
            fn.__dynamo_disable = disable_fn
        return disable_fn(*args, **kwargs)

    return inner


from . import _C  # noqa: E402 (the imports follow _disable_dynamo)
from ._C import (SIMULATION, OutOfMemoryError, dtype, float32, float16, bfloat16, float64,
                 int64, int32, uint8, promote_types)
from ._C import _aten as _A
from ._C import _aten_nn as _NN
from ._C._tensor import Size
from ._tensor import Tensor
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled,  # noqa: F401
                                 inference_mode)
from . import autograd, nn, optim, amp, cuda, utils  # noqa: F401
from .amp.autocast_mode import autocast

bool = _C.bool_  # noqa: A001 — torch.bool
half, float, long = float16, float32, int64  # noqa: A001
preserve_format = contiguous_format = None


class device:
    """torch.device('cuda') / ('cpu')."""

    def __init__(self, type_, index=None):
        self.type = str(type_).split(":")[0]
        self.index = index

    def __str__(self):
        return self.type

    def __repr__(self):
        return f"device(type='{self.type}')"


def _dev(d):
    if d is None:
        return "cpu"
    return "cuda" if str(d).startswith("cuda") else "cpu"


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def manual_seed(seed):
    return None


def zeros(*size, dtype=None, device=None):
    return _A.zeros(_shape(size), dtype or float32, _dev(device))


def ones(*size, dtype=None, device=None):
    return _A.zeros(_shape(size), dtype or float32, _dev(device), op="ones_like")


def empty(*size, dtype=None, device=None):
    return _A.zeros(_shape(size), dtype or float32, _dev(device), op="empty_like")


def full(size, fill_value, dtype=None, device=None):
    return _A.full(tuple(size), dtype or float32, _dev(device))


def zeros_like(t, dtype=None, memory_format=None):
    return _A.like(t, "zeros_like", dtype)


def ones_like(t, dtype=None, memory_format=None):
    return _A.like(t, "ones_like", dtype)


def empty_like(t, dtype=None, memory_format=None):
    return _A.like(t, "empty_like", dtype)


def arange(start, end=None, device=None, dtype=None):
    n = start if end is None else end - start
    return _A.arange(n, _dev(device), dtype or int64)


def randint(low, high=None, size=None, device=None, dtype=None):
    return _A.randint(tuple(size), _dev(device))


def randn(*size, dtype=None, device=None):
    return _A.randn(_shape(size), _dev(device), dtype or float32)


rand = randn


def tensor(data, dtype=None, device=None):
    n = len(data) if isinstance(data, (list, tuple)) else None
    return _A.zeros(() if n is None else (n,), dtype or float32, _dev(device), op="full")


def cat(tensors, dim=0):
    return _A.cat(list(tensors), dim)


def stack(tensors, dim=0):
    return _A.stack(list(tensors), dim)


def matmul(a, b):
    return _NN.bmm(a, b)


def rsqrt(x):
    return _A.rsqrt(x)


def sqrt(x):
    return _A.sqrt(x)


def tanh(x):
    return _A.tanh(x)


def exp(x):
    return _A.exp(x)


def sin(x):
    return _A.sin(x)


def cos(x):
    return _A.cos(x)


def pow(x, e):  # noqa: A001
    return _A.pow_(x, e)


def mean(x, dim=None, keepdim=False):
    return _A.mean(x, dim, keepdim)


def var(x, dim=None, keepdim=False, unbiased=True):
    return _A.var(x, dim, keepdim)


def norm(x, p=2, dim=None, keepdim=False):
    return _A.norm(x, dim, keepdim)


def reshape(x, shape):
    return x.reshape(shape)


def flatten(x, start_dim=0, end_dim=-1):
    return x.flatten(start_dim, end_dim)


def is_tensor(x):
    return isinstance(x, Tensor)


def compile(model, **kwargs):  # noqa: A001
    """torch.compile is not simulated: the model runs eagerly (the caller should say so)."""
    return model


def isnan(x):
    return _A.compare(x, "isnan")


def isinf(x):
    return _A.compare(x, "isinf")
