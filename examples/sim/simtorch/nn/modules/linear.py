"""simtorch/nn/modules/linear.py — SIMULATION of torch.nn.Linear and Identity: weight (out x in)
and bias made on the CPU; forward is F.linear (addmm with a bias, mm without)."""
from ... import _C
from ..._C import _aten_nn as NN
from ..._C import _tensor as T
from ..parameter import Parameter
from .module import Module


def _cpu(*shape):
    return T.make(shape, _C.float32, _C.new_storage(0, "cpu", "zeros"))


class Identity(Module):
    def forward(self, x):
        return x


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_cpu(out_features, in_features))
        self.bias = Parameter(_cpu(out_features)) if bias else None

    def forward(self, input):  # noqa: A002
        return NN.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}"
