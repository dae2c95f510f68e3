"""simtorch/nn/parameter.py — SIMULATION of torch.nn.Parameter: a leaf tensor that requires a
gradient, made on the CPU (no device memory) until Module.to('cuda') moves it."""
from .. import _C
from .._C import _tensor as T
from .._tensor import Tensor


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = T.make((0,), _C.float32, _C.new_storage(0, "cpu", "zeros"))
        p = T.make(data._shape, data.dtype, data._storage, data._stride, data._offset, cls=cls)
        p.requires_grad = requires_grad
        return p


class Buffer:
    """torch.nn.Buffer is not needed: modules call register_buffer."""
